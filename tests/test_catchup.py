"""Where catch-up after a restart starts per channel (bot.workflow.catchup.start_of) and the store query it uses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef, Verdict
from bot.core.ports import VerdictRecord
from bot.store.sqlite import SqliteStore
from bot.workflow.catchup import CatchupBounds, start_of

NOW = datetime(2026, 6, 2, 12, 0, tzinfo=UTC)
BOUNDS = CatchupBounds(messages=200, hours=24)


def test_recorded_channel_starts_after_its_last_message() -> None:
    """A channel with a recent recorded message starts right after it."""
    at = NOW - timedelta(hours=2)
    assert start_of({"c1": ("m9", at)}, "c1", NOW, BOUNDS) == ("m9", at)


def test_old_last_message_is_capped_at_the_hours_bound() -> None:
    """A channel last recorded 3 days ago starts 24 h ago, by time, not after the old message."""
    assert start_of({"c1": ("m9", NOW - timedelta(days=3))}, "c1", NOW, BOUNDS) == (None, NOW - timedelta(hours=24))


def test_new_channel_starts_at_the_servers_last_recorded_time() -> None:
    """A channel with nothing recorded, in a server with records, starts at the server's latest record time."""
    latest = {"c1": ("m1", NOW - timedelta(hours=5)), "c2": ("m2", NOW - timedelta(hours=3))}
    assert start_of(latest, "c3", NOW, BOUNDS) == (None, NOW - timedelta(hours=3))


def test_fresh_install_and_zero_bound_mean_no_catch_up() -> None:
    """No record in the server at all, or a bound of 0 messages: no catch-up."""
    assert start_of({}, "c1", NOW, BOUNDS) is None
    assert start_of({"c1": ("m1", NOW)}, "c1", NOW, CatchupBounds(messages=0)) is None


async def test_latest_messages_per_channel(tmp_path: Path) -> None:
    """latest_messages gives each channel's latest recorded message by time (numeric ids of any length), only
    for that server and platform."""
    server = ServerRef("discord", "g1")
    author = MemberRef(id="u1", name="u1")

    def rec(mid: str, channel: str, at: datetime, srv: ServerRef = server) -> VerdictRecord:
        m = Message(server=srv, channel=ChannelRef(id=channel), author=author, id=mid, text="hi", created_at=at)
        return VerdictRecord(verdict=Verdict(message=m, scores=None), excerpt="hi")

    async with await SqliteStore.open(tmp_path / "mod.db") as store:
        await store.record_batch([
            rec("999", "c1", NOW - timedelta(minutes=3)), rec("1000", "c1", NOW - timedelta(minutes=1)),
            rec("5", "c2", NOW - timedelta(minutes=2)), rec("7", "c9", NOW, ServerRef("discord", "g2")),
        ])
        latest = await store.latest_messages("discord", "g1")
        assert latest == {"c1": ("1000", NOW - timedelta(minutes=1)), "c2": ("5", NOW - timedelta(minutes=2))}
        assert await store.latest_messages("slack", "g1") == {}
