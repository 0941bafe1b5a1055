"""Break-it round on the mod log store (thirtieth session): a PostgreSQL connection lost while the bot runs, two
moderators changing one policy override at once, and what ``/mydata forget`` leaves of a member in the mod log.
The tests run on both backends unless they name one (the PostgreSQL server is the session's throwaway cluster of
tests/conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.core.errors import StoreBusy
from bot.core.ports import RecordResult
from bot.store import open_store
from tests.store_factories import make_record

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
async def database(request, pg_url: str, tmp_path: Path) -> str:
    """The mod log's location: a SQLite file or a fresh PostgreSQL database."""
    return pg_url if request.param == "postgresql" else str(tmp_path / "modlog.db")


@pytest.fixture
async def store(database: str):
    s = await open_store(database)
    yield s
    await s.close()


# -- a lost PostgreSQL connection -------------------------------------------------------------------------------------


async def _drop_connections(url: str) -> int:
    """Close every other connection to the database at ``url`` from the server's side (what a server restart, a
    failover or an idle-connection timeout of a proxy does to the bot's connection); returns how many."""
    admin = await asyncpg.connect(url)
    try:
        return int(await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"))
    finally:
        await admin.close()


async def test_a_lost_postgresql_connection_is_opened_again_on_the_next_try(pg_url):
    """The store holds one connection for the process's life. When the server dropped it (a restart, a failover),
    every later operation raised StoreBusy ("connection lost: connection is closed"), which the port documents as
    "retrying may succeed", and the moderation service retried the batch every 5 s for ever: the bot recorded and
    acted on nothing again until it was restarted. The try that meets the lost connection may fail (StoreBusy,
    nothing written); a later one opens a new connection and succeeds, and case numbers go on without a gap."""
    store = await open_store(pg_url)
    try:
        [first] = await store.record_batch([make_record("m1", open_case=True)])
        assert first.case_number == 1
        assert await _drop_connections(pg_url) == 1
        results: list[list[RecordResult] | None] = []
        for i in range(2, 5):
            try:
                results.append(await store.record_batch([make_record(f"m{i}", open_case=True)]))
            except StoreBusy:  # the try that finds the connection gone: nothing written, told to retry
                results.append(None)
        assert results[0] is None or results[0][0].case_number == 2
        assert results[-1] is not None, results
        numbers = [c.number for c in await store.list_cases("discord", "g1")]
        assert numbers == list(range(len(numbers), 0, -1)) and len(numbers) >= 3
    finally:
        await store.close()


# -- two moderators changing one policy override ----------------------------------------------------------------------

KEY = "labels.insult.review"


@pytest.mark.parametrize("existing", [True, False], ids=["overridden", "not-overridden"])
async def test_two_changes_of_one_override_at_once_audit_the_value_each_replaced(database, existing):
    """Every ``/policy set`` writes an audit row "old -> new". Two moderators (two bot processes on one PostgreSQL)
    setting one key at the same moment: on SQLite the second waits for the first (``BEGIN IMMEDIATE``) and its row
    names the first one's value as the old one; on PostgreSQL both read the value before either wrote (READ
    COMMITTED), so both rows named the value before them (or "no override") and the trail never showed the first
    change being replaced: the audit no longer explained the value in force."""
    from tests.test_store_postgres import _concurrently

    a, b = await open_store(database), await open_store(database)
    try:
        if existing:
            await a.set_policy_override("discord", "g1", "server", KEY, 0.5, "mod0")
        await _concurrently(database, "policy_overrides",
                            lambda: a.set_policy_override("discord", "g1", "server", KEY, 0.6, "mod-a"),
                            lambda: b.set_policy_override("discord", "g1", "server", KEY, 0.7, "mod-b"))
        trail = [(c.old, c.new) for c in reversed(await a.policy_changes("discord", "g1"))][-2:]
        in_force = await a.get_policy_override("discord", "g1", "server", KEY)
        first = 0.7 if in_force == 0.6 else 0.6
        assert sorted(trail, key=str) == sorted([(0.5 if existing else None, first), (first, in_force)], key=str)
    finally:
        await a.close()
        await b.close()


async def test_a_reset_between_a_changes_read_and_its_write_is_audited(database, monkeypatch):
    """A ``/policy reset`` of a key committed while a ``/policy set`` of it is under way (after the set read the
    value it replaces, before it wrote): on PostgreSQL the set's audit row named the value the reset had already
    removed (0.5 -> 0.6 after "0.5 -> none"), so the trail showed 0.5 replaced twice. The set must see what the
    reset left (no override), or keep the reset waiting until it is done (SQLite: ``BEGIN IMMEDIATE``)."""
    a, b = await open_store(database), await open_store(database)
    reset_done = asyncio.Event()
    read_once = a._one  # type: ignore[attr-defined]  # noqa: SLF001 - the set pauses after its read, as a slow process

    async def read_then_wait(sql: str, params: Iterable[Any] = ()) -> Any:
        row = await read_once(sql, params)
        if sql.startswith("SELECT value FROM policy_overrides"):
            with contextlib.suppress(TimeoutError):  # SQLite: the reset waits for this transaction, never done
                await asyncio.wait_for(reset_done.wait(), 1.0)
        return row

    async def reset() -> None:
        await asyncio.sleep(0.2)  # the set is in its transaction, past its read
        try:
            await b.reset_policy_override("discord", "g1", "server", KEY, "mod-b")
        finally:
            reset_done.set()

    try:
        await a.set_policy_override("discord", "g1", "server", KEY, 0.5, "mod0")
        monkeypatch.setattr(a, "_one", read_then_wait)
        await asyncio.gather(a.set_policy_override("discord", "g1", "server", KEY, 0.6, "mod-a"), reset())
        trail = [(c.action, c.old, c.new) for c in reversed(await a.policy_changes("discord", "g1"))][1:]
        if await a.get_policy_override("discord", "g1", "server", KEY) is None:  # the set first, then the reset
            assert trail == [("set", 0.5, 0.6), ("reset", 0.6, None)]
        else:  # the reset first, then the set on no override
            assert trail == [("reset", 0.5, None), ("set", None, 0.6)]
    finally:
        await a.close()
        await b.close()
