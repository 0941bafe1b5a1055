"""The Discord raid card's Members field: whole mentions only, within a field value's 1,024 characters."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from bot.adapters.discord.cards import FIELD_VALUE_MAX, raid_embed
from bot.workflow.views import RaidCard


def _members_field(n: int) -> str:
    card = RaidCard(raid_id=1, server_id="1", channel_id="2", reason="flagged_burst",
                    started_at=datetime(2026, 6, 1, tzinfo=UTC),
                    members=tuple(str(1_100_000_000_000_000_000 + i) for i in range(n)))
    [field] = [f for f in raid_embed(card).fields if f.name == "Members"]
    assert field.value is not None
    return field.value


def test_sixty_raiders_keep_whole_mentions_and_say_how_many_more():
    """Sixty 19-digit mentions are 1,319 characters: the embed's cut at 1,024 left a broken ``<@11000...`` at the
    end and never said how many raiders were not shown."""
    value = _members_field(60)
    assert len(value) <= FIELD_VALUE_MAX
    shown = re.findall(r"<@(\d+)>", value)
    more = re.fullmatch(r".*> \+(\d+) more", value)
    assert more is not None and len(shown) + int(more.group(1)) == 60
    assert value.count("<@") == len(shown)  # no half mention


def test_a_few_raiders_are_all_shown():
    assert _members_field(3) == " ".join(f"<@{1_100_000_000_000_000_000 + i}>" for i in range(3))
    assert _members_field(0) == "-"


def test_the_slack_raid_card_says_how_many_raiders_it_does_not_show():
    """Slack's card shows the first 60 members (a section's 3,000 characters hold them) and dropped the rest
    without a word."""
    from bot.adapters.slack.blocks import raid

    card = RaidCard(raid_id=1, server_id="T1", channel_id="C1", reason="flagged_burst",
                    started_at=datetime(2026, 6, 1, tzinfo=UTC), members=tuple(f"U{i:010d}" for i in range(75)))
    _, blocks = raid(card)
    [text] = [b["text"]["text"] for b in blocks if b.get("type") == "section" and "*Members:*" in b["text"]["text"]]
    assert text.count("<@U") == 60 and text.endswith(" +15 more")
