"""The one lifecycle (bot.workflow.lifecycle) with a real SQLite mod log and a recording workflow: a failed
recover is logged and catch-up still runs, a reconnect runs nothing again, a write refused for good reaches the
adapter once, and a second shutdown runs nothing twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import DEFAULT_POLICY_PATH
from bot.core.errors import StoreError, StoreRefused
from bot.core.policy_registry import PolicyRegistry
from bot.core.store_port import ModStore
from bot.store import open_store
from bot.workflow.lifecycle import STEPS, Lifecycle


class Workflow:
    """Records recover / shutdown calls; ``recover`` raises when ``broken``."""

    def __init__(self, *, broken: bool = False) -> None:
        self.broken = broken
        self.calls: list[str] = []

    async def recover(self) -> list[str]:
        self.calls.append("recover")
        if self.broken:
            raise RuntimeError("cannot read pending cases")
        return []

    async def shutdown(self) -> None:
        self.calls.append("shutdown")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ModStore]:
    s = await open_store(tmp_path / "m.db")
    yield s
    await s.close()


async def test_failed_recover_is_logged_and_catch_up_still_runs(store: ModStore,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """recover raising: one logged error, catch_up runs; a second connected() (reconnect) does nothing."""
    wf = Workflow(broken=True)
    life = Lifecycle("slack", workflow=wf, store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH))
    caught: list[int] = []

    async def catch_up() -> None:
        caught.append(1)

    await life.start()
    with caplog.at_level(logging.ERROR, logger="bot.workflow.lifecycle"):
        assert await life.connected(catch_up) is True
    assert caught == [1] and wf.calls == ["recover"]
    assert [r.getMessage() for r in caplog.records] == ["recovering pending cases, expiries and raid mode failed"]
    assert await life.connected(catch_up) is False
    assert caught == [1] and life.steps == list(STEPS[:4])

    async def nothing() -> None:
        return None

    await life.shutdown(nothing, nothing)
    await life.shutdown(nothing, nothing)
    assert life.steps == list(STEPS) and wf.calls == ["recover", "shutdown"]


async def test_a_write_refused_for_good_reaches_the_adapter_once(store: ModStore) -> None:
    """The service's failure future resolving sets fatal and stopped and awaits on_failure with the error; the
    adapter's close from there (shutdown inside the watch) completes without cancelling itself."""
    failure: asyncio.Future[StoreError] = asyncio.get_running_loop().create_future()
    seen: list[StoreError] = []
    closed: list[str] = []
    life: Lifecycle

    async def disconnect() -> None:
        closed.append("disconnect")

    async def close_runtime() -> None:
        closed.append("close_runtime")

    async def on_failure(exc: StoreError) -> None:
        seen.append(exc)
        await life.shutdown(disconnect, close_runtime)

    life = Lifecycle("discord", workflow=Workflow(), store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                     failure=failure, on_failure=on_failure)
    await life.start()
    err = StoreRefused("m.db", "database or disk is full")
    failure.set_result(err)
    await asyncio.wait_for(life.stopped.wait(), 5)
    for _ in range(5):
        await asyncio.sleep(0)
    assert life.fatal is err and seen == [err]
    assert closed == ["disconnect", "close_runtime"] and life.steps == ["retention", "watch", *STEPS[4:]]
