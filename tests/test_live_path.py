"""The live path under store faults: a batch whose write fails is kept and retried (nothing lost, nothing counted
that the mod log does not hold), a write refused for good stops the service with one line, and a bounded queue
makes callers wait for a slot instead of growing without end (issue 24)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.errors import StoreRefused
from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.ports import RecordResult, VerdictRecord
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SERVER = ServerRef("discord", "g1", "guild")
GENERAL = ChannelRef(id="c1", name="general")
OLD = T0 - timedelta(days=400)


def member(mid: str) -> MemberRef:
    return MemberRef(id=mid, name=mid, joined_at=OLD, created_at=OLD)


def msg(mid: str, text: str, author: str, at: datetime) -> Message:
    return Message(server=SERVER, channel=GENERAL, author=member(author), id=mid, text=text, created_at=at)


def ten_messages() -> list[Message]:
    """Ten messages a second apart: an identity attack, two insults from one member, the rest clean."""
    texts = ["good morning all", "you people are freaks", "what an idiot", "ok", "see you later",
             "you absolute idiot", "nice picture", "thanks!", "lunch?", "bye"]
    authors = ["u0", "u1", "u2", "u3", "u4", "u2", "u5", "u6", "u7", "u8"]
    return [msg(f"m{i}", t, a, T0 + timedelta(seconds=i)) for i, (t, a) in enumerate(zip(texts, authors, strict=True))]


def hold_write_lock(path: Path, seconds: float, taken: threading.Event) -> threading.Thread:
    """Another connection takes SQLite's write lock (``BEGIN IMMEDIATE``) and releases it after ``seconds``."""

    def hold() -> None:
        con = sqlite3.connect(path, isolation_level=None)
        try:
            con.execute("BEGIN IMMEDIATE")
            taken.set()
            threading.Event().wait(seconds)
            con.execute("COMMIT")
        finally:
            con.close()

    t = threading.Thread(target=hold, name="lock-holder", daemon=True)
    t.start()
    return t


async def open_service(tmp_path: Path, store: SqliteStore | None = None, **kwargs: object
                       ) -> tuple[ModerationService, SqliteStore]:
    store = store or await SqliteStore.open(tmp_path / "mod.db")
    service = ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                                max_delay_s=0.001, **kwargs)  # type: ignore[arg-type]
    await service.start()
    return service, store


async def test_write_lock_held_past_the_busy_timeout_loses_no_message_and_invents_no_strike(
        tmp_path: Path, short_busy_timeout: float) -> None:
    """With the write lock held by another connection past the busy timeout (7 s against 5 s in production; here 4
    times the short timeout of the fixture, 2 s), all 10 messages are judged and recorded exactly once, the identity
    attack reaches review, and the ledger holds exactly the strikes the mod log holds."""
    service, store = await open_service(tmp_path)
    try:
        taken = threading.Event()
        holder = hold_write_lock(tmp_path / "mod.db", 4 * short_busy_timeout, taken)
        assert await asyncio.to_thread(taken.wait, 5)
        messages = ten_messages()
        outcomes = await asyncio.wait_for(asyncio.gather(*(service.handle(m) for m in messages)), 60)
        await asyncio.to_thread(holder.join, 10)
        assert [o.duplicate for o in outcomes] == [False] * 10
        for m in messages:
            assert await store.get_verdict("discord", "g1", m.id) is not None, m.id
        again = await asyncio.gather(*(service.handle(m) for m in messages))
        assert all(o.duplicate for o in again)
        attack = outcomes[1]
        assert attack.verdict.flagged and attack.review_id is not None
        review = await store.get_review(attack.review_id)
        assert review is not None and review.message_id == "m1"
        now = T0 + timedelta(minutes=1)
        for uid in ("u0", "u1", "u2", "u3"):
            counted = await service.ledger.active("discord", "g1", uid, now)
            stored = await store.active_strikes("discord", "g1", uid, now)
            assert [(s.message_id, s.points) for s in counted] == [(s.message_id, s.points) for s in stored], uid
        assert len(await store.active_strikes("discord", "g1", "u1", now)) == 1
        assert service.stats["write_retries"] >= 1
    finally:
        await service.close()
        await store.close()


class RefusingStore(SqliteStore):
    """A real SQLite mod log whose batch writes are refused for good, as the store maps a full disk or a read-only
    file (``StoreRefused``); reads work."""

    writes = 0

    async def record_batch(self, records: Sequence[VerdictRecord], *, model_version: str | None = None
                           ) -> list[RecordResult]:
        self.writes += 1
        raise StoreRefused(str(self.path), "database or disk is full")


async def test_refused_write_stops_the_service_with_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                                             ) -> None:
    """A write refused for good fails the batch, sets ``failure`` to the error, logs ONE line naming the database
    and the cause (no traceback), takes no further message, tries no further write and keeps no strike in the
    ledger that the mod log does not hold."""
    base = await SqliteStore.open(tmp_path / "mod.db")
    await base.close()
    store = await RefusingStore.open(tmp_path / "mod.db")
    service, _ = await open_service(tmp_path, store)
    caplog.set_level(logging.WARNING, logger="bot.core.service")
    try:
        futures = [service.submit(m) for m in ten_messages()]
        results = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 10)
        assert all(isinstance(r, StoreRefused) for r in results)
        assert service.failure is not None
        failure = await asyncio.wait_for(asyncio.shield(service.failure), 1)
        assert isinstance(failure, StoreRefused) and str(tmp_path / "mod.db") in str(failure)
        lines = [r for r in caplog.records if r.name == "bot.core.service" and r.levelno >= logging.ERROR]
        assert len(lines) == 1 and lines[0].exc_info is None
        assert "database or disk is full" in lines[0].getMessage() and str(tmp_path) in lines[0].getMessage()
        assert store.writes == 1
        with pytest.raises(StoreRefused):
            service.submit(msg("late", "hello", "u9", T0 + timedelta(minutes=5)))
        now = T0 + timedelta(minutes=1)
        assert await service.ledger.active("discord", "g1", "u1", now) == []
    finally:
        await service.close()
        await store.close()


async def test_bounded_queue_makes_callers_wait_for_a_slot(tmp_path: Path) -> None:
    """With ``max_pending=4`` and the write lock held, at most 4 messages are held at once; the rest wait in
    ``enqueue`` and all 12 are recorded once the lock is released."""
    service, store = await open_service(tmp_path, max_pending=4, batch_size=2)
    try:
        taken = threading.Event()
        holder = hold_write_lock(tmp_path / "mod.db", 1.5, taken)
        assert await asyncio.to_thread(taken.wait, 5)
        messages = [msg(f"b{i}", f"hello {i}", f"u{i}", T0 + timedelta(seconds=i)) for i in range(12)]
        tasks = [asyncio.create_task(service.handle(m)) for m in messages]
        peak = 0
        for _ in range(20):
            await asyncio.sleep(0.05)
            peak = max(peak, service.pending)
        assert peak == 4
        assert sum(t.done() for t in tasks) == 0
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks), 30)
        await asyncio.to_thread(holder.join, 10)
        assert [o.duplicate for o in outcomes] == [False] * 12
        assert service.stats["peak_pending"] == 4
    finally:
        await service.close()
        await store.close()
