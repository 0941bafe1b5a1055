"""The sanction registry (bot/workflow/sanction_kinds.py): every kind is offered and carried out on every platform
that can do it (Discord's and Slack's real capability sets, their real renderers and custom-id parsing, the
workflow on a fake enforcer and a real SQLite mod log), and a kind added by a fixture that touches only the
registry becomes a decision, a button on both platforms, a confirmation and a raid-card bulk action."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import discord
import pytest

from bot.adapters.discord.enforcer import DiscordEnforcer
from bot.adapters.discord.views import RaidButton, ReviewButton, ReviewTimeoutSelect, raid_view, review_view
from bot.adapters.slack import blocks
from bot.core.models import ActionKind, ReviewDecision
from bot.workflow.authz import REQUIRED
from bot.workflow.common import DECISIONS
from bot.workflow.permissions import Permission
from bot.workflow.ports import Capability
from bot.workflow.raids import RaidBoard
from bot.workflow.sanction_kinds import ACTION_WORDS, REGISTRY, SanctionKind, Style
from tests.test_workflow import MOD, SERVER, make_world

PLATFORMS = {
    "discord": DiscordEnforcer.capabilities,
    "slack": blocks.SLACK_CAN,
    "slack+admin": blocks.SLACK_CAN | {Capability.DELETE},
}
#: A Discord-shaped server id for raid cards' custom ids (a raid card is rendered without the mod log).
GUILD = "100000000000000001"
#: What each platform can do, written out (not computed from the registry).
EXPECTED = {"discord": {"dismiss", "delete", "warn", "timeout", "kick", "ban", "investigating"},
            "slack": {"dismiss", "warn", "kick", "investigating"},
            "slack+admin": {"dismiss", "delete", "warn", "kick", "investigating"}}
#: The enforcer call that carries each action out (the fake enforcer records it), per platform kind of kick.
CALLS = {ActionKind.DELETE: "delete_message", ActionKind.WARN: "notify", ActionKind.TIMEOUT: "timeout",
         ActionKind.BAN: "ban"}


def discord_ids(view: discord.ui.View) -> list[str]:
    return [str(getattr(item, "custom_id", "")) for item in view.children]


def slack_ids(rendered: tuple[str, list[dict]]) -> list[str]:
    return [e["action_id"] for b in rendered[1] if b["type"] == "actions" for e in b["elements"]]


def can(kind: SanctionKind, caps: frozenset[Capability], channel: str | None = "c1") -> bool:
    return REGISTRY.capable(kind, caps, channel)


def test_the_registry_is_consistent_with_authorization_and_the_reports_words():
    """Each action's permission in authz is its registry entry's, every card decision is a registry kind, and the
    report has words for every action."""
    assert list(DECISIONS) == [k.key for k in REGISTRY]
    for kind in REGISTRY:
        assert REQUIRED[kind.action] is kind.permission
        assert DECISIONS[kind.key] == (kind.decision, kind.action, kind.outcome)
    assert set(ACTION_WORDS) == {a.label for a in ActionKind}
    assert ACTION_WORDS["ban"] == ("would ban", "banned") and ACTION_WORDS["review"][1] == "sent to review"


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("key", [k.key for k in REGISTRY])
async def test_every_kind_is_offered_and_carried_out_where_the_platform_can(tmp_path: Path, platform, key):
    """On each platform: a review card offers kind ``key`` exactly when the platform can do it (Discord's buttons
    and Slack's blocks, with the registry's custom id, which Discord routes to the right component); deciding it
    records its decision and carries it out with the platform call; a raid card offers its bulk action likewise."""
    caps = PLATFORMS[platform]
    kind = REGISTRY.get(key)
    assert kind is not None
    w = await make_world(tmp_path, capabilities=caps)
    try:
        outcome = await w.judge(w.message("alice", "borderline stuff"))
        card = await w.workflow.review_card(outcome.review_id)
        assert card is not None
        offered = can(kind, caps)
        assert offered is (key in EXPECTED[platform])
        assert (key not in card.capabilities_missing) is offered
        custom_id = f"mod:review:{outcome.review_id}:{key}"
        if kind.on_card:
            render = (lambda c: discord_ids(review_view(c))) if platform == "discord" else \
                (lambda c: slack_ids(blocks.review(c)))
            assert (custom_id in render(card)) is offered
        component = ReviewButton if kind.on_card else ReviewTimeoutSelect
        assert component.__discord_ui_compiled_template__.fullmatch(custom_id)
        assert all(other.__discord_ui_compiled_template__.fullmatch(custom_id) is None
                   for other in (ReviewButton, ReviewTimeoutSelect) if other is not component)
        if kind.raid_label:
            board = RaidBoard(raid_id=1, server_id=GUILD, place="c1", channel_id="c1", reason="flagged_burst",
                              started_at=datetime.now(UTC), until=None, members=["bob"])
            raid = await w.workflow.raid_view(board)
            assert (key in raid.actions_offered) is offered
            raid_id = f"mod:raid:{GUILD}:1:{key}"
            assert RaidButton.__discord_ui_compiled_template__.fullmatch(raid_id)
            if platform == "discord":
                assert (raid_id in discord_ids(raid_view(raid))) is offered
        if not offered:
            return
        reason = "registry check" if kind.asks_first else None
        res = await w.workflow.decide_review(MOD, SERVER, outcome.review_id, key,
                                             duration_s=3600 if kind.action is ActionKind.TIMEOUT else None,
                                             reason=reason)
        assert res.ok, res.text
        assert w.rows("SELECT decision FROM review_items") == [(kind.decision.value,)]
        call: str | None
        if kind.action is ActionKind.KICK:
            call = "remove_from_channel" if REGISTRY.by_channel(kind, caps) else "kick"
        else:
            call = CALLS.get(kind.action)
        if call is not None:
            assert w.enforcer.called(call), f"{key} on {platform}: no {call}"
        else:
            assert w.rows("SELECT COUNT(*) FROM cases WHERE moderator_id IS NOT NULL") == [(0,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


@pytest.fixture
def shun() -> Iterator[SanctionKind]:
    """A new kind, "shun" (a kick by another name, with its own label, outcome and bulk action), registered by
    touching only the registry."""
    kind = SanctionKind("shun", ActionKind.KICK, ReviewDecision.KICKED, "shunned", Permission.KICK_MEMBERS, "Shun",
                        Style.DANGER, capability=Capability.KICK, channel_capability=Capability.REMOVE_FROM_CHANNEL,
                        channel_label="Shun from channel", raid_label="Shun all",
                        raid_channel_label="Shun all from channel", asks_first=True, raid_asks_first=True)
    REGISTRY.register(kind, before="investigating")
    try:
        yield kind
    finally:
        REGISTRY.unregister("shun")


async def test_a_kind_added_to_the_registry_alone_is_offered_and_carried_out(tmp_path: Path, shun):
    """The fixture's kind is a card decision, a button on Discord and on Slack (with its channel label there), a
    Discord custom id routed to the review button, a confirmation, a carried-out kick whose card says "shunned",
    and a raid card bulk action."""
    assert "shun" in DECISIONS
    w = await make_world(tmp_path)
    try:
        outcome = await w.judge(w.message("alice", "borderline stuff"))
        card = await w.workflow.review_card(outcome.review_id)
        assert card is not None
        custom_id = f"mod:review:{outcome.review_id}:shun"
        ids = discord_ids(review_view(card))
        assert custom_id in ids and ids.index(custom_id) == ids.index(
            f"mod:review:{outcome.review_id}:investigating") - 1
        slack_card = blocks.review(card)
        assert custom_id in slack_ids(slack_card) and "Shun from channel" in str(slack_card[1])
        assert ReviewButton.__discord_ui_compiled_template__.fullmatch(custom_id)
        ask = await w.workflow.confirm_review(MOD, SERVER, outcome.review_id, "shun")
        assert ask.title == f"Kick member (review #{outcome.review_id})"
        res = await w.workflow.decide_review(MOD, SERVER, outcome.review_id, "shun", reason="shunned for spam")
        assert res.ok and res.card is not None and res.card.decision == "shunned"
        assert w.enforcer.called("kick") == [("alice",)]
        assert w.rows("SELECT action, reason FROM cases WHERE moderator_id = 'mod'") == [("kick", "shunned for spam")]
        # A shun is a kick: it earns a kick's strike points (3 by default), recorded on the case.
        assert shun.strike_points() == 3
        case = w.rows("SELECT number FROM cases WHERE moderator_id = 'mod'")[0][0]
        assert w.rows("SELECT member_id, points, case_number FROM strikes") == [("alice", 3, case)]
        board = RaidBoard(raid_id=1, server_id=GUILD, place="c1", channel_id="c1", reason="flagged_burst",
                          started_at=datetime.now(UTC), until=None, members=["bob"])
        raid = await w.workflow.raid_view(board)
        assert "shun" in raid.actions_offered
        assert f"mod:raid:{GUILD}:1:shun" in discord_ids(raid_view(raid))
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_a_kind_added_to_the_registry_earns_the_servers_points_for_its_action(tmp_path: Path, shun):
    """A server that overrides a kick's points (``[strikes] points = { kick = 4 }``) gives a shun 4 points, and the
    other actions keep their defaults."""
    w = await make_world(tmp_path, policy="[strikes]\npoints = { kick = 4 }\n")
    try:
        policy = await w.workflow.policies.get("discord", SERVER)
        assert shun.strike_points(policy) == 4
        assert {k.key: k.strike_points(policy) for k in REGISTRY} == {
                "dismiss": 0, "delete": 1, "warn": 1, "timeout": 2, "kick": 4, "ban": 5, "shun": 4, "investigating": 0}
        outcome = await w.judge(w.message("alice", "borderline stuff"))
        res = await w.workflow.decide_review(MOD, SERVER, outcome.review_id, "shun", reason="shunned")
        assert res.ok
        assert w.rows("SELECT points FROM strikes WHERE member_id = 'alice'") == [(4,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


def test_the_registry_shows_each_kinds_default_strike_points():
    """Every entry's default points are its action's (delete 1, warn 1, timeout 2, kick 3, ban 5; none for dismiss
    and investigating), written out here rather than read from the table."""
    assert {k.key: k.strike_points() for k in REGISTRY} == {
        "dismiss": 0, "delete": 1, "warn": 1, "timeout": 2, "kick": 3, "ban": 5, "investigating": 0}


def test_the_registry_refuses_a_duplicate_or_malformed_kind_or_disagreeing_permission():
    """Keys are unique lower-case words (they go into custom ids); kinds of one action need one permission."""
    ban = REGISTRY.get("ban")
    assert ban is not None
    with pytest.raises(ValueError, match="already registered"):
        REGISTRY.register(ban)
    from dataclasses import replace

    with pytest.raises(ValueError, match="lower-case"):
        REGISTRY.register(replace(ban, key="Ban:all"))
    with pytest.raises(ValueError, match="different permissions"):
        REGISTRY.register(replace(ban, key="ban_soft", permission=Permission.KICK_MEMBERS))
    assert "ban_soft" not in REGISTRY
