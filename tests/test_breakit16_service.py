"""Hostile-tester findings on the moderation service's write path (round 16): a real SqliteStore on ``tmp_path``,
the real service, the suite's keyword FakeScorer."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _msg(mid: str, text: str = "hello there") -> Message:
    return Message(server=ServerRef("slack", "T1", "team"), channel=ChannelRef("C1", "general"),
                   author=MemberRef("U1", "u"), id=mid, text=text, created_at=T0)


async def test_a_message_the_mod_log_can_never_store_fails_alone_and_the_queue_goes_on(tmp_path: Path):
    """A message id holding a lone UTF-16 surrogate (a platform event or importer that lets one through) can never
    be written as UTF-8, however often it is tried. The service retried that batch for ever (the retry loop takes
    every error for a passing one), so no later message of the bot was ever recorded again. Such a batch now fails
    at once, on one error line; the next message is judged and recorded, and one whose text holds a lone surrogate
    (which stalled the queue the same way) is judged and recorded with U+FFFD in its place."""
    async with await SqliteStore.open(tmp_path / "mod.db") as store:
        service = ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                                    enforce=False, max_delay_s=0.001)
        await service.start()
        try:
            bad = service.submit(_msg("1600000000.000100\ud800"))
            done, _ = await asyncio.wait([bad], timeout=10)
            assert done, "the unstorable message was still being retried after 10 s"
            assert isinstance(bad.exception(), ValueError) and "lone UTF-16 surrogate" in str(bad.exception())
            good = await asyncio.wait_for(service.handle(_msg("1600000001.000100")), 10)
            assert not good.duplicate
            # a lone surrogate in the text: judged and recorded, the surrogate shown as U+FFFD (as scans do)
            odd = await asyncio.wait_for(service.handle(_msg("1600000002.000100", "you idiot \udc80")), 10)
            assert not odd.duplicate and odd.verdict.message.text == "you idiot \ufffd"
        finally:
            tasks = list(service._tasks)
            try:
                await asyncio.wait_for(service.close(), 10)
            except TimeoutError:  # the stuck writer: stop it so the test fails instead of hanging
                for t in tasks:
                    t.cancel()
        assert await store.get_verdict("slack", "T1", "1600000001.000100") is not None
        excerpt = await store.message_excerpt("slack", "T1", "1600000002.000100")
        assert excerpt is not None and excerpt[1] == "you idiot \ufffd"
