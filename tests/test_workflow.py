"""The moderation workflow without any platform: a fake enforcer and desk implementing the ports, the real judging
pipeline, a real SQLite mod log."""

from __future__ import annotations

import ast
import asyncio
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.models import ActionKind, ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from bot.workflow import Actor, Capability, ModerationWorkflow, Permission, Refused
from tests.fakes import ALL_CAPABILITIES, FakeDesk, FakeEnforcer, FakeScorer

SERVER = "g1"
MOD = Actor("mod", "Mod", frozenset({Permission.MANAGE_MESSAGES, Permission.MODERATE_MEMBERS,
                                     Permission.KICK_MEMBERS, Permission.BAN_MEMBERS}), rank=10)
HELPER = Actor("helper", "Helper", frozenset({Permission.MANAGE_MESSAGES}), rank=10)
SCORES = {
    "vermin": {"identity_attack": 0.97, "toxicity": 0.9},  # over identity_attack's act tier: delete
    "borderline": {"insult": 0.9},  # review only
    "threatword": {"threat": 0.99, "toxicity": 0.9},  # threat act tier: timeout 1 h
}
WORKFLOW = Path(__file__).resolve().parents[1] / "bot" / "workflow"


@dataclass
class World:
    store: SqliteStore
    service: ModerationService
    enforcer: FakeEnforcer
    desk: FakeDesk
    workflow: ModerationWorkflow
    servers: Path
    n: int = 0

    def message(self, author: str, text: str, *, channel: str = "c1", thread_of: str | None = None,
                mid: str | None = None, edited: datetime | None = None, at: datetime | None = None) -> Message:
        self.n += 1
        old = datetime(2020, 1, 1, tzinfo=UTC)
        return Message(server=ServerRef("discord", SERVER), channel=ChannelRef(
            channel, parent_id=thread_of, is_thread=thread_of is not None),
            author=MemberRef(author, author, joined_at=old, created_at=old), id=mid or f"m{self.n}", text=text,
            created_at=at or datetime.now(UTC), edited_at=edited)

    async def judge(self, msg: Message):
        outcome = await self.service.handle(msg)
        await self.workflow.carry_out(outcome)
        return outcome

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        import sqlite3

        con = sqlite3.connect(self.store.path)
        try:
            return [tuple(r) for r in con.execute(sql, params)]
        finally:
            con.close()


async def make_world(tmp_path: Path, policy: str = "", capabilities=ALL_CAPABILITIES,
                     db: Path | None = None, server: str = "") -> World:
    servers = tmp_path / "servers"
    servers.mkdir(exist_ok=True)
    (servers / f"discord-{SERVER}.toml").write_text(
        '[server]\nreview_channel = "100000000000000100"\nmod_log_channel = "100000000000000101"\n'
        'moderator_roles = ["100000000000000102"]\n' + server +
        '[identity_target]\nrequired = false\n' + policy)
    store = await SqliteStore.open(db or tmp_path / "modlog.db")
    registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers)
    service = ModerationService(scorer=FakeScorer(SCORES), store=store, policies=registry, max_delay_s=0)
    await service.start()
    enforcer = FakeEnforcer(capabilities)
    for uid in ("alice", "bob", "carol"):
        enforcer.add(uid)
    enforcer.add("mod", rank=10)
    enforcer.add("helper", rank=10)
    enforcer.add("owner", owner=True, rank=99)
    desk = FakeDesk()
    workflow = ModerationWorkflow(platform="discord", store=store, enforcer=enforcer, desk=desk, policies=registry,
                                  ledger=service.ledger, raid_control=service)
    return World(store, service, enforcer, desk, workflow, servers)


# ``world``: tests/conftest.py (the world of make_world, closed after the test)


# ------------------------------------------------------------------ boundary


@pytest.mark.parametrize("path", sorted(WORKFLOW.rglob("*.py")), ids=lambda p: p.name)
def test_workflow_imports_no_platform_driver_or_model(path):
    """bot/workflow imports neither a platform library, the database driver, the store, an adapter nor the model."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    bad = {n for n in names if n.split(".")[0] in {"discord", "slack_bolt", "slack_sdk", "aiosqlite", "sqlite3",
                                                   "torch", "detoxify"}
           or n.startswith(("bot.store", "bot.adapters", "bot.scoring", "cogs"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"


# ------------------------------------------------------------------ automod verdicts


async def test_automod_delete_is_carried_out_recorded_and_reviewed(world):
    """An identity attack over the act tier is deleted once, its case applied, one mod-log entry and one card."""
    outcome = await world.judge(world.message("alice", "you vermin"))
    assert world.enforcer.called("delete_message") == [("c1", outcome.verdict.message.id)]
    assert world.rows("SELECT action, status FROM cases") == [("delete", "applied")]
    assert [e.title for e in world.desk.log] == [f"Case #{outcome.case_number}: delete"]
    assert [c.review_id for c in world.desk.reviews] == [outcome.review_id]


async def test_refused_delete_is_recorded_on_the_case_and_the_card(world):
    """A delete the platform refuses marks the case failed with the platform's reason, shown on the card."""
    world.enforcer.refuse["delete_message"] = "Missing Permissions (50013)"
    await world.judge(world.message("alice", "you vermin"))
    assert world.rows("SELECT status, failure FROM cases") == [("failed", "delete: Missing Permissions (50013)")]
    assert world.desk.log[0].failed and "(FAILED)" in world.desk.log[0].title
    assert world.desk.reviews[0].notes == ("delete: Missing Permissions (50013)",)


async def test_platform_without_delete_falls_back_to_review(tmp_path):
    """Where the platform cannot delete (Slack with a bot token), the message goes to review with a note, even
    when the policy would not queue automatic actions."""
    w = await make_world(tmp_path, server="review_auto_actions = false\n",
                         policy='[rules.blocklist]\nterms = ["zzbadword"]\naction = "delete"\n',
                         capabilities=ALL_CAPABILITIES - {Capability.DELETE})
    try:
        outcome = await w.judge(w.message("alice", "zzbadword here"))
        assert outcome.review_id is None  # the policy itself did not ask for review...
        assert w.enforcer.called("delete_message") == []
        assert len(w.desk.reviews) == 1  # ...the fallback did
        assert "does not let the bot delete" in w.desk.reviews[0].notes[0]
        assert w.rows("SELECT source FROM review_items") == [("automod",)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_reflagged_edit_updates_its_card_instead_of_adding_one(world):
    """An edit that is flagged again updates the open review item's card; there is still one item and one card."""
    first = world.message("alice", "borderline text", mid="m-edit")
    await world.judge(first)
    edit = replace(first, text="borderline again", edited_at=first.created_at + timedelta(seconds=5))
    second = await world.judge(edit)
    assert second.review_updated
    assert world.rows("SELECT COUNT(*) FROM review_items") == [(1,)]
    assert len(world.desk.reviews) == 1 and len(world.desk.review_updates) == 1


# ------------------------------------------------------------------ authorization


@pytest.mark.parametrize("actor,kind,target,expected", [
    (HELPER, ActionKind.BAN, "alice", "Ban Members"),
    (HELPER, ActionKind.TIMEOUT, "alice", "Moderate Members"),
    (HELPER, ActionKind.KICK, "alice", "Kick Members"),
    (MOD, ActionKind.BAN, "owner", "owner"),
    (MOD, ActionKind.BAN, "helper", "ranks at or above you"),
    (MOD, ActionKind.WARN, "mod", "yourself"),
    (Actor("anyone"), ActionKind.WARN, "alice", "Manage Messages"),
])
async def test_sanction_refusals_change_nothing(world, actor, kind, target, expected):
    """Missing permission, the owner, a member ranked at or above the moderator, oneself: refused, nothing done."""
    with pytest.raises(Refused, match=expected):
        await world.workflow.sanction(actor, SERVER, target, kind, "test")
    assert world.enforcer.calls == [] and world.rows("SELECT COUNT(*) FROM cases") == [(0,)]


async def test_bot_below_target_refuses_before_calling_the_platform(world):
    """A target ranked at or above the bot's highest role is refused with the hierarchy reason."""
    world.enforcer.add("bigshot", rank=60)
    boss = replace(MOD, rank=70)
    with pytest.raises(Refused, match="bot's highest role"):
        await world.workflow.sanction(boss, SERVER, "bigshot", ActionKind.BAN, "x")
    assert world.enforcer.calls == []


def test_moderator_roles_holding_the_server_id_are_refused(tmp_path):
    """A policy whose moderator_roles contains the server id (@everyone) is refused with a clear error."""
    servers = tmp_path / "servers"
    servers.mkdir()
    (servers / "discord-777777777777777777.toml").write_text('[server]\nmoderator_roles = ["777777777777777777"]\n')
    registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers)
    with pytest.raises(PolicyError, match="@everyone"):
        asyncio.run(registry.get("discord", "777777777777777777"))
    with pytest.raises(PolicyError, match="discord-777777777777777777.toml: server.moderator_roles"):
        registry.validate_servers("discord")


# ------------------------------------------------------------------ sanctions, strikes, notices


async def test_warning_counts_when_the_dm_cannot_be_delivered(world):
    """A warning to a member with DMs closed is applied, earns its strike, and the case notes the DM failure."""
    world.enforcer.dms_closed.add("alice")
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "be nice")
    assert res.ok and "not delivered" in res.text
    assert world.rows("SELECT action, status, failure FROM cases") == [
        ("warn", "applied", "dm: not delivered: cannot send messages to this user (50007)")]
    assert world.rows("SELECT points FROM strikes") == [(1,)]


async def test_warn_dm_off_sends_nothing_but_still_counts(tmp_path):
    """With server.warn_dm = false no DM is sent and the warning still earns its strike."""
    w = await make_world(tmp_path, server="warn_dm = false\n")
    try:
        res = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "be nice")
        assert res.ok and w.enforcer.called("notify") == []
        assert w.rows("SELECT points FROM strikes") == [(1,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_ban_notifies_before_the_ban_and_timeout_after(world):
    """The member hears of a ban while the bot still shares a server with them; of a timeout once it holds."""
    await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "raid")
    await world.workflow.sanction(MOD, SERVER, "bob", ActionKind.TIMEOUT, "cool off", duration_s=600)
    order = [c.method for c in world.enforcer.calls]
    assert order == ["notify", "ban", "timeout", "notify"]
    notice = world.enforcer.called("notify")[0][1]
    assert notice.case_number == 1 and notice.action is ActionKind.BAN and notice.appealable


async def test_temporary_ban_is_lifted_when_due_and_rescheduled_after_a_restart(tmp_path):
    """A temporary ban is recorded with its end; a new workflow (a restart) reschedules and lifts it."""
    w = await make_world(tmp_path)
    res = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
    assert res.ok
    await w.workflow.close()  # the process stops before the ban ends
    import sqlite3

    con = sqlite3.connect(w.store.path)
    con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00'")  # the end is now due
    con.commit()
    con.close()
    again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                               policies=w.workflow.policies, ledger=w.service.ledger)
    await again.recover()
    await asyncio.wait_for(asyncio.gather(*again._timers.values()), 2)
    assert w.enforcer.called("unban") == [("alice",)]
    assert w.rows("SELECT lifted_at IS NOT NULL FROM cases") == [(1,)]
    await again.close()
    await w.service.close()
    await w.store.close()


async def test_ladder_escalates_a_moderators_warnings(world):
    """Three warnings cross the ladder's 3-point step: an escalation timeout is its own applied case."""
    for _ in range(3):
        res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "again")
    assert "escalation: case #4 timeout (1 hour)" in res.text
    assert world.rows("SELECT number, action, status FROM cases WHERE number = 4") == [(4, "timeout", "applied")]


# ------------------------------------------------------------------ review decisions


async def review_item(world, text="borderline thing"):
    outcome = await world.judge(world.message("alice", text))
    assert outcome.review_id is not None
    return outcome


async def test_two_moderators_deciding_one_card_only_one_acts(world):
    """Warn and Ban pressed at once on one card: exactly one decision is carried out, the other is told who won."""
    outcome = await review_item(world)
    world.enforcer.delay_s = 0.05
    mod2 = replace(MOD, id="mod2")
    world.enforcer.add("mod2", rank=10)
    results = await asyncio.gather(
        world.workflow.decide_review(MOD, SERVER, outcome.review_id, "warn"),
        world.workflow.decide_review(mod2, SERVER, outcome.review_id, "ban", reason="confirmed on the card"),
        return_exceptions=True)
    refused = [r for r in results if isinstance(r, Refused)]
    assert len(refused) == 1 and "already decided" in str(refused[0])
    sanctions = [c.method for c in world.enforcer.calls if c.method in ("ban", "notify")]
    assert sanctions in (["notify"], ["notify", "ban"])
    assert len(world.rows("SELECT 1 FROM cases WHERE moderator_id IS NOT NULL")) == 1


async def test_dismissing_an_automatic_timeout_lifts_it(world):
    """Dismissing the card of an automatic timeout overturns the case, pardons the strike and lifts the timeout."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    assert world.enforcer.called("timeout") == [("alice", 3600)]
    res = await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
    assert "timeout lifted" in res.text
    assert world.enforcer.called("remove_timeout") == [("alice",)]
    assert world.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,)) == [("overturned",)]
    assert world.rows("SELECT pardoned_at IS NOT NULL FROM strikes") == [(1,)]


async def test_ban_on_a_card_counts_a_bans_points(world):
    """Automod deleted the message (1 point); a moderator bans for it: the message's one strike is raised to 5."""
    outcome = await world.judge(world.message("alice", "you vermin"))
    assert world.rows("SELECT points FROM strikes") == [(1,)]
    res = await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "ban", reason="confirmed on the card")
    assert res.ok
    assert world.rows("SELECT points FROM strikes") == [(5,)]


async def test_decision_needs_the_actions_permission(world):
    """A member with Manage Messages only can dismiss but not ban from a card; the refused click changes nothing."""
    outcome = await review_item(world)
    with pytest.raises(Refused, match="Ban Members"):
        await world.workflow.decide_review(HELPER, SERVER, outcome.review_id, "ban", reason="confirmed on the card")
    assert world.rows("SELECT decision FROM review_items") == [("open",)]
    res = await world.workflow.decide_review(HELPER, SERVER, outcome.review_id, "dismiss")
    assert res.card is not None and res.card.decision == "dismissed (false positive)"


async def test_ban_and_kick_ask_for_a_reason_first(world):
    """Ban and Kick on a card ask first: without a reason they are refused and change nothing; the confirmation is
    prefilled with the card's reason and fits Discord's modal limits; other decisions do not ask."""
    from bot.workflow.confirm import REASON_MAX, asks_first

    outcome = await review_item(world)
    for choice in ("ban", "kick"):
        with pytest.raises(Refused, match="asks for a reason first"):
            await world.workflow.decide_review(MOD, SERVER, outcome.review_id, choice)
    assert world.rows("SELECT decision FROM review_items") == [("open",)]
    assert world.enforcer.called("ban") == [] and world.enforcer.called("kick") == []
    ask = await world.workflow.confirm_review(MOD, SERVER, outcome.review_id, "ban")
    assert ask.title == f"Ban member (review #{outcome.review_id})" and len(ask.title) <= 45
    assert ask.default.startswith(f"review #{outcome.review_id}: ") and ask.max_length == REASON_MAX
    assert [c for c in ("dismiss", "delete", "warn", "timeout", "investigating", "kick", "ban") if asks_first(c)] \
        == ["kick", "ban"]


async def test_the_reason_typed_is_the_case_reason_and_in_the_mod_log(world):
    """The confirmed reason becomes the ban case's reason as typed, the member's notice says it, and the mod log
    entry of the decision shows it."""
    outcome = await review_item(world)
    res = await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "ban",
                                             reason="  slurs in three channels  ")
    assert res.ok
    assert world.rows("SELECT action, reason FROM cases WHERE moderator_id = ?", ("mod",)) == [
        ("ban", "slurs in three channels")]
    assert world.enforcer.called("ban") == [("alice",)]
    (entry,) = [e for e in world.desk.log if e.title.startswith(f"Review #{outcome.review_id}")]
    assert "Reason: slurs in three channels" in entry.lines


@pytest.mark.parametrize("reason", ["x" * 501, "  ", None])
async def test_a_missing_or_too_long_reason_changes_nothing(world, reason):
    """A reason over 500 characters, blank or missing is refused with a sentence that says why; the item stays open
    and nothing is sent to the platform."""
    outcome = await review_item(world)
    with pytest.raises(Refused, match="501 characters; at most 500|at least 3|asks for a reason"):
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "ban", reason=reason)
    assert world.rows("SELECT decision FROM review_items") == [("open",)]
    assert world.rows("SELECT COUNT(*) FROM cases WHERE moderator_id IS NOT NULL") == [(0,)]
    assert world.enforcer.called("ban") == []


async def test_only_a_moderator_with_the_permission_gets_the_confirmation(world):
    """A member with Manage Messages only is refused Ban's confirmation (no modal), and a decided card asks
    nothing more."""
    outcome = await review_item(world)
    with pytest.raises(Refused, match="Ban Members"):
        await world.workflow.confirm_review(HELPER, SERVER, outcome.review_id, "ban")
    await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "kick", reason="spam again")
    with pytest.raises(Refused, match="already decided"):
        await world.workflow.confirm_review(MOD, SERVER, outcome.review_id, "ban")


async def test_another_servers_review_item_is_not_found(world):
    """A decision naming a review item of another server is refused as unknown."""
    outcome = await review_item(world)
    with pytest.raises(Refused, match="does not exist"):
        await world.workflow.decide_review(MOD, "other-server", outcome.review_id, "dismiss")


# ------------------------------------------------------------------ appeals


async def test_appeal_overturned_lifts_the_ban_and_only_one_decision_wins(world):
    """A member appeals their ban; of two moderators deciding at once one wins; overturning unbans."""
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "spam")
    filed = await world.workflow.appeal("alice", SERVER, res.case_number, "it was my brother")
    assert "appeal #1" in filed.text and world.desk.reviews[-1].appeal_id == 1
    with pytest.raises(Refused, match=r"^You have no case #\d+ in that server: you can only appeal your own cases\.$"):
        await world.workflow.appeal("bob", SERVER, res.case_number, "me too")
    mod2 = replace(MOD, id="mod2")
    results = await asyncio.gather(world.workflow.decide_appeal(MOD, SERVER, 1, uphold=False),
                                   world.workflow.decide_appeal(mod2, SERVER, 1, uphold=True),
                                   return_exceptions=True)
    assert sum(isinstance(r, Refused) for r in results) == 1
    overturned = not isinstance(results[0], Refused)
    assert world.enforcer.called("unban") == ([("alice",)] if overturned else [])
    assert world.rows("SELECT status FROM cases") == [("overturned" if overturned else "applied",)]


async def test_overturning_a_ban_needs_ban_members(world):
    """Upholding needs Manage Messages; overturning a ban needs Ban Members."""
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "spam")
    await world.workflow.appeal("alice", SERVER, res.case_number, "please")
    with pytest.raises(Refused, match="Ban Members"):
        await world.workflow.decide_appeal(HELPER, SERVER, 1, uphold=False)


# ------------------------------------------------------------------ forget, restart


async def test_forgotten_member_reoffending_escalates_as_before(world):
    """After /mydata forget the member's strikes still count: the next warnings cross the ladder's step."""
    await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "one")
    await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "two")
    await world.store.forget_member("discord", SERVER, "alice")
    world.workflow.ledger.forget("discord", SERVER, "alice")
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "three")
    assert "escalation" in res.text and "timeout" in res.text


async def test_pending_case_is_carried_out_after_a_restart(world):
    """A case a stop left pending is carried out at startup (young) or marked failed with the reason (old)."""
    young = await world.store.open_case("discord", SERVER, "alice", ActionKind.KICK, "flood")
    old = await world.store.open_case("discord", SERVER, "bob", ActionKind.BAN, "raid",
                                      now=datetime.now(UTC) - timedelta(hours=3))
    lines = await world.workflow.recover()
    assert world.enforcer.called("kick") == [("alice",)] and world.enforcer.called("ban") == []
    assert world.rows("SELECT number, status FROM cases ORDER BY number") == [(young.number, "applied"),
                                                                              (old.number, "failed")]
    assert len(lines) == 2 and any("not done late" in line for line in lines)


# ------------------------------------------------------------------ raids


async def test_raid_gives_one_card_bulk_deletes_and_few_log_posts(tmp_path):
    """Eight raiders posting attacks: one raid alert card, the raid's deletes in bulk, no card per message, and
    the mod log holds the first deletes, the alert and nothing per later message."""
    w = await make_world(tmp_path)
    try:
        t0 = datetime.now(UTC)
        for i in range(8):
            await w.judge(w.message(f"raider{i}", "you vermin", at=t0 + timedelta(seconds=i)))
            w.enforcer.add(f"raider{i}")
        await w.workflow.drain()
        assert len(w.desk.raids) == 1 and w.desk.raids[0].reason == "flagged_burst"
        single = w.enforcer.called("delete_message")
        assert len(single) == 4  # before the burst was recognised (flagged_burst = 5)
        assert w.enforcer.bulk_sizes == [4]  # the fifth message onwards: one bulk request
        assert len(w.desk.reviews) == 4
        assert len([e for e in w.desk.log if e.kind == "raid"]) == 1
        assert w.enforcer.slowmode == {"c1": 30}
        assert w.rows("SELECT COUNT(*) FROM cases WHERE status = 'applied'") == [(8,)]
        with pytest.raises(Refused, match="Ban all asks for a reason first"):
            await w.workflow.raid_action(MOD, SERVER, 1, "ban")
        assert w.enforcer.called("ban") == []
        ask = await w.workflow.confirm_raid(MOD, SERVER, 1, "ban")
        assert ask.title == "Ban all 8 (raid #1)" and ask.default == "raid #1 (flagged messages)"
        text = await w.workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed")
        assert text.startswith("ban: 8 of 8")
        assert w.rows("SELECT reason FROM cases WHERE action = 'ban'") == [("raid confirmed",)] * 8
        (summary,) = [e for e in w.desk.log if e.title == "Raid #1: ban all"]
        assert "Reason: raid confirmed" in summary.lines
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_raid_in_a_thread_slows_the_thread_itself(world):
    """A raid in a thread puts slowmode on the thread, not only its parent channel."""
    t0 = datetime.now(UTC)
    for i in range(5):
        await world.judge(world.message(f"r{i}", "you vermin", channel="t1", thread_of="c1",
                                        at=t0 + timedelta(seconds=i)))
    assert world.enforcer.slowmode == {"t1": 30}


async def test_raid_mode_survives_a_restart_and_its_slowmode_is_lifted(tmp_path):
    """Raid mode saved with its end: a restarted workflow restores it while due, and lifts the slowmode of one that
    ended while the bot was down."""
    w = await make_world(tmp_path)
    t0 = datetime.now(UTC)
    for i in range(5):
        await w.judge(w.message(f"r{i}", "you vermin", at=t0 + timedelta(seconds=i)))
    await w.workflow.close()
    rows = w.rows("SELECT channel_id, slowmode_s FROM raid_modes")
    assert rows == [("c1", 30)]
    # restart 1: still due
    again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                               policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
    lines = await again.recover()
    assert any("restored" in line for line in lines)
    assert w.service.raid_mode("discord", SERVER, "c1", datetime.now(UTC))
    await again.close()
    # restart 2: it ended while down
    import sqlite3

    con = sqlite3.connect(w.store.path)
    con.execute("UPDATE raid_modes SET until = '2000-01-01T00:00:00.000000+00:00'")
    con.commit()
    con.close()
    third = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                               policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
    lines = await third.recover()
    assert any("slowmode lifted" in line for line in lines)
    assert w.enforcer.slowmode == {"c1": 0}
    assert w.rows("SELECT COUNT(*) FROM raid_modes") == [(0,)]
    await third.close()
    await w.service.close()
    await w.store.close()


async def test_join_burst_raises_one_alert_with_lockdown(world):
    """Twelve accounts joining within seconds raise one join-burst alert whose card offers pausing invites."""
    t0 = datetime.now(UTC)
    boards = [await world.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i)) for i in range(12)]
    assert sum(b is not None for b in boards) == 1
    card = world.desk.raids[0]
    assert card.reason == "join_burst" and "pause_invites" in card.actions_offered
    owner = Actor("owner", is_owner=True, rank=99)
    text = await world.workflow.raid_action(owner, SERVER, 1, "pause_invites")
    assert text == "Invites paused for 24 hours."
    assert len(world.enforcer.called("pause_invites")) == 1


async def test_platform_without_bans_does_not_offer_them(tmp_path):
    """A platform without timeouts and bans (Slack) gets no such buttons and a clear refusal."""
    w = await make_world(tmp_path, capabilities=ALL_CAPABILITIES - {Capability.BAN, Capability.TIMEOUT})
    try:
        with pytest.raises(Refused, match="cannot ban"):
            await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "x")
        outcome = await review_item(w)
        assert {"ban", "timeout"} <= w.desk.reviews[0].capabilities_missing
        assert outcome.review_id
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


SLACK_LIKE = frozenset({Capability.DM, Capability.REMOVE_FROM_CHANNEL, Capability.EPHEMERAL})


async def test_platform_without_delete_tells_the_author_privately_and_queues_review(tmp_path):
    """Slack with a bot token only: an attack over the act tier is not deleted; its author gets a private notice
    naming the case, the card says deletion needs an admin, and the case is failed with that reason."""
    w = await make_world(tmp_path, capabilities=SLACK_LIKE)
    try:
        outcome = await w.judge(w.message("alice", "you vermin"))
        (notice,) = w.enforcer.called("notify_in_channel")
        assert notice[:2] == ("c1", "alice") and f"case #{outcome.case_number}" in notice[2]
        assert "needs an admin" in w.desk.reviews[0].notes[0]
        assert w.rows("SELECT status FROM cases") == [("failed",)]
        assert {"delete", "timeout", "ban"} <= w.desk.reviews[0].capabilities_missing
        assert "kick" not in w.desk.reviews[0].capabilities_missing  # removal from the channel is possible
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_kick_decided_on_slack_removes_the_member_from_the_channel(tmp_path):
    """Where a platform cannot kick from the server but can remove from a channel, a card's Kick removes the member
    from the message's channel and counts a kick's strike points."""
    w = await make_world(tmp_path, capabilities=SLACK_LIKE)
    try:
        outcome = await w.judge(w.message("alice", "borderline stuff"))
        res = await w.workflow.decide_review(MOD, SERVER, outcome.review_id, "kick", reason="confirmed on the card")
        assert res.ok and w.enforcer.called("remove_from_channel") == [("c1", "alice")]
        assert w.enforcer.called("kick") == []
        assert w.rows("SELECT points FROM strikes") == [(3,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_an_upheld_appeal_cannot_be_filed_again(world):
    """One appeal per case: once a moderator upheld it, the member cannot file the same appeal again."""
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "rude")
    await world.workflow.appeal("alice", SERVER, res.case_number, "please reconsider")
    await world.workflow.decide_appeal(MOD, SERVER, 1, uphold=True)
    with pytest.raises(Refused, match="appeal was upheld"):
        await world.workflow.appeal("alice", SERVER, res.case_number, "please, again")
    assert world.rows("SELECT COUNT(*) FROM appeals") == [(1,)]
