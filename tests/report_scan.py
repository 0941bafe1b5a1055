"""A small synthetic scan for the report tests: the real moderation service, a fake scorer and a real SQLite file.

Two servers with the same channel name: a Discord guild (DiscordChatExporter-style, platform ``"export"``, real
snowflake ids) and a Slack workspace. In the Discord #general, a celebration post gets a brigade of six new members
replying with attacks within a minute (one raid alert, then raid mode); in Slack one thread gets an insult.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.ingest.stream import BEFORE_ALL
from bot.report import policy_provenance, scan_row
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

T0 = datetime(2026, 6, 1, 17, 0, tzinfo=UTC)
GUILD = ServerRef("export", "880000000000000001", "Harbor <Lights>")
GENERAL = ChannelRef("880000000000000010", "general")
TEAM = ServerRef("slack", "T0HARBOR01")
SLACK_GENERAL = ChannelRef("C0GENERAL1", "general")
BRIGADE_TEXT = "trans freak, get out of here #{i}"


def snowflake(at: datetime, seq: int) -> str:
    """A Discord snowflake whose encoded time is ``at`` (so the report counts it as a real id)."""
    ms = int((at - datetime(2015, 1, 1, tzinfo=UTC)).total_seconds() * 1000)
    return str((ms << 22) + seq)


def messages() -> list[Message]:
    """The synthetic export: 24 Discord messages, 4 Slack messages, in time order per server."""
    old = T0 - timedelta(days=900)
    sam = MemberRef("508792563302400003", "sam", joined_at=old)
    jules = MemberRef("508792563302400009", "jules", joined_at=old)
    priya = MemberRef("508792563302400005", "priya", joined_at=old)
    out: list[Message] = []
    for i in range(10):  # ordinary chat over the afternoon
        at = T0 + timedelta(minutes=9 * i)
        out.append(Message(GUILD, GENERAL, priya, snowflake(at, i), f"chat line {i}", at))
    post_at = T0 + timedelta(minutes=95)
    post = Message(GUILD, GENERAL, jules, snowflake(post_at, 50), "one year as myself today! 🎉", post_at)
    out.append(post)
    raid_at = post_at + timedelta(minutes=3)
    for i in range(6):
        at = raid_at + timedelta(seconds=5 * i)
        m = MemberRef(f"90000000000000000{i}", f"raider{i}", joined_at=at - timedelta(minutes=5))
        out.append(Message(GUILD, GENERAL, m, snowflake(at, 60 + i), BRIGADE_TEXT.format(i=i), at, reply_to=post.id))
    late = raid_at + timedelta(seconds=45)
    # untargeted, under raid mode, from a member without history in the server (so raid mode's tiers apply to him)
    out.append(Message(GUILD, GENERAL, sam, snowflake(late, 70), "you freak", late))
    for i in range(6):
        at = post_at + timedelta(minutes=20 + 7 * i)
        out.append(Message(GUILD, GENERAL, jules, snowflake(at, 80 + i), f"thanks all {i}", at))
    root_ts = T0.timestamp() + 600
    ana = MemberRef("U0ANA00000", "ana")
    leo = MemberRef("U0LEO00000", "leo")
    root_id = f"C0GENERAL1:{root_ts:.6f}"
    thread = ChannelRef(root_id, "general", parent_id="C0GENERAL1", is_thread=True)
    out += [
        Message(TEAM, SLACK_GENERAL, ana, root_id, "what do you think of the new map?", T0 + timedelta(minutes=10)),
        Message(TEAM, thread, leo, f"C0GENERAL1:{root_ts + 60:.6f}", "love it", T0 + timedelta(minutes=11),
                reply_to=root_id),
        Message(TEAM, thread, MemberRef("U0TROLL000", "troll"), f"C0GENERAL1:{root_ts + 120:.6f}",
                "only an idiot likes it", T0 + timedelta(minutes=12), reply_to=root_id),
        Message(TEAM, SLACK_GENERAL, leo, f"C0GENERAL1:{root_ts + 3600:.6f}", "good night", T0 + timedelta(minutes=70)),
    ]
    return out


async def synthetic_scan(tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Judge :func:`messages` as ``scan`` does (no enforcement) and return ``(summary, rows)`` for the report."""
    msgs = sorted(messages(), key=lambda m: m.created_at or BEFORE_ALL)
    store = await SqliteStore.open(tmp_path / "mod.db")
    registry = PolicyRegistry(DEFAULT_POLICY_PATH)
    try:
        async with ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=registry, enforce=False,
                                     max_delay_s=0.001) as service:
            outcomes = [await service.handle(m) for m in msgs]
        rows = [scan_row(o.verdict) for o in outcomes]
        servers = sorted({(m.server.platform, m.server.id) for m in msgs})
        raids = [{**asdict(r), "platform": platform}
                 for platform, server in servers for r in await store.list_raids(platform, server)]
        summary = await store.scan_summary(servers)
        doc = {
            "title": "Synthetic scan",
            "messages": summary.messages,
            "flagged": summary.flagged,
            "label_counts": dict(summary.flagged_per_label),
            "action_counts": dict(summary.actions),
            "raids": raids,
            "top_members": [(m.platform, m.server_id, m.member_id, m.points) for m in summary.top_members],
            "inputs": "synthetic",
            "model": "fake 1",
            "policies": await policy_provenance(registry, servers),
        }
    finally:
        await store.close()
    return doc, rows
