"""Adversarial checks of the platform-neutral moderation workflow: authorization holes, double actions and lost
records found by trying to break it (each test states what should happen)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.models import ActionKind
from bot.workflow import Capability, Refused
from bot.workflow.cases import change_reason
from tests.fakes import ALL_CAPABILITIES, FakeDesk
from tests.test_workflow import HELPER, MOD, SERVER, make_world


@pytest.fixture
async def world(tmp_path):
    w = await make_world(tmp_path)
    yield w
    await _close(w)


async def _close(w) -> None:
    await w.workflow.close()
    await w.service.close()
    await w.store.close()


# ------------------------------------------------------------------ authorization


async def test_breakit_manage_messages_only_cannot_lift_an_automatic_timeout_by_dismissing(world):
    """A member with Manage Messages only (no Moderate Members) may not lift an automatic timeout by dismissing
    its card: lifting a timeout needs the timeout permission, as overturning an appeal already does."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    assert world.enforcer.called("timeout") == [("alice", 3600)]
    with pytest.raises(Refused, match="Moderate Members"):
        await world.workflow.decide_review(HELPER, SERVER, outcome.review_id, "dismiss")
    assert world.enforcer.called("remove_timeout") == []


async def test_breakit_moderator_cannot_dismiss_the_review_item_about_their_own_message(world):
    """A moderator whose own message was flagged and struck cannot dismiss its card (which pardons their own
    strike and overturns their own case): nobody decides on themselves."""
    outcome = await world.judge(world.message("helper", "you vermin"))
    assert world.rows("SELECT member_id, pardoned_at FROM strikes") == [("helper", None)]
    with pytest.raises(Refused, match="yourself"):
        await world.workflow.decide_review(HELPER, SERVER, outcome.review_id, "dismiss")
    assert world.rows("SELECT pardoned_at FROM strikes") == [(None,)]


async def test_breakit_moderator_cannot_pardon_their_own_case(world):
    """A moderator cannot pardon a case about themselves (their strikes would vanish from the ladder)."""
    outcome = await world.judge(world.message("helper", "you vermin"))
    with pytest.raises(Refused, match="yourself"):
        await world.workflow.pardon(HELPER, SERVER, outcome.case_number)
    assert world.rows("SELECT pardoned_at FROM strikes") == [(None,)]


async def test_breakit_moderator_cannot_overturn_their_own_appeal(world):
    """A moderator who appealed their own case cannot decide that appeal themselves."""
    outcome = await world.judge(world.message("helper", "you vermin"))
    filed = await world.workflow.appeal("helper", SERVER, outcome.case_number, "it was a joke, honest")
    assert filed.ok
    with pytest.raises(Refused, match="yourself"):
        await world.workflow.decide_appeal(HELPER, SERVER, 1, uphold=False)
    assert world.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,)) == [("applied",)]


# ------------------------------------------------------------------ lost records


async def test_breakit_refused_sanction_after_the_claim_leaves_the_review_item_open(tmp_path):
    """A card decision the platform cannot carry out (a forged Timeout on a platform without timeouts) is refused
    and the review item stays open; it must not be recorded as timed out with nothing done."""
    w = await make_world(tmp_path, capabilities=ALL_CAPABILITIES - {Capability.TIMEOUT, Capability.BAN})
    try:
        outcome = await w.judge(w.message("alice", "borderline text"))
        with pytest.raises(Refused):
            await w.workflow.decide_review(MOD, SERVER, outcome.review_id, "timeout", duration_s=600)
        assert w.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,)) == [("open",)]
    finally:
        await _close(w)


async def test_breakit_member_leaving_between_check_and_sanction_leaves_the_item_open(world):
    """A member who leaves while a Warn is being decided: the click is refused and the item stays open (not
    recorded as warned with no case and no strike)."""
    outcome = await world.judge(world.message("alice", "borderline text"))
    real_member = world.enforcer.member
    calls = 0

    async def member_then_gone(server_id, member_id):
        nonlocal calls
        calls += 1
        return await real_member(server_id, member_id) if calls == 1 else None

    world.enforcer.member = member_then_gone
    try:
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "warn")
    except Refused:
        pass
    decision = world.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))
    cases = world.rows("SELECT COUNT(*) FROM cases WHERE moderator_id = 'mod'")
    assert decision == [("open",)] or cases == [(1,)], (decision, cases)


async def test_breakit_recovered_moderator_warning_still_counts_a_strike(world):
    """A moderator's warning cut off by a stop (case pending) and carried out at startup adds its strike, as the
    same warning without the stop does."""
    await world.store.open_case("discord", SERVER, "alice", ActionKind.WARN, "spam", moderator_id="mod")
    await world.workflow.recover()
    assert world.rows("SELECT status FROM cases") == [("applied",)]
    assert world.rows("SELECT COUNT(*) FROM strikes WHERE member_id = 'alice'") == [(1,)]


# ------------------------------------------------------------------ double actions


class SlowDesk(FakeDesk):
    """A review channel whose posts take a while (Discord under a rate limit)."""

    async def post_review(self, card):
        await asyncio.sleep(0.05)
        return await super().post_review(card)


async def test_breakit_edit_racing_its_original_gives_one_card(world):
    """A message and its re-flagged edit carried out at the same time (two tracked tasks) give one card, not two."""
    world.workflow.desk = world.desk = SlowDesk()
    first = world.message("alice", "borderline text", mid="m-race")
    o1 = await world.service.handle(first)
    edit = replace(first, text="borderline again", edited_at=first.created_at + timedelta(seconds=2))
    o2 = await world.service.handle(edit)
    assert o1.review_id == o2.review_id
    await asyncio.gather(world.workflow.carry_out(o1), world.workflow.carry_out(o2))
    assert len(world.desk.reviews) == 1, [c.review_id for c in world.desk.reviews]


async def test_breakit_raid_ban_all_pressed_twice_bans_each_raider_once(world):
    """Two moderators (or one double click) pressing "Ban all" on one raid card: each raider is banned once and
    has one case."""
    t0 = datetime.now(UTC)
    for i in range(12):
        await world.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i))
        world.enforcer.add(f"new{i}")
    world.enforcer.delay_s = 0.01
    await asyncio.gather(world.workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed"),
                         world.workflow.raid_action(replace(MOD, id="mod2"), SERVER, 1, "ban",
                                                    reason="raid confirmed"),
                         return_exceptions=True)
    raiders = len((await world.store.get_raid("discord", SERVER, 1)).members)  # the 2 joiners after the alert too
    bans = world.enforcer.called("ban")
    assert len(set(bans)) == raiders == 12
    assert len(bans) == raiders
    assert world.rows("SELECT COUNT(*) FROM cases WHERE action = 'ban'") == [(raiders,)]


async def test_breakit_review_only_case_is_not_left_pending_and_recovered_at_restart(world):
    """A message flagged for review only (no automatic action) does not leave its case ``pending``: a restart
    must not "carry it out" (or, an hour later, mark it failed as if the bot had died) nor post it in the mod log."""
    await world.judge(world.message("alice", "borderline text"))
    lines = await world.workflow.recover()
    assert lines == []
    assert world.desk.log == []
    assert world.rows("SELECT status FROM cases") != [("pending",)]


async def test_breakit_report_decided_delete_is_a_case_the_member_can_appeal(world):
    """A moderator's Delete on a REPORTED message records a case (with the moderator), and the strike it adds
    points to that case, so the member can see and appeal it; a strike with no case cannot be appealed."""
    msg = world.message("alice", "nothing the model flags")
    await world.judge(msg)
    filed = await world.workflow.report("bob", SERVER, "alice", "harassing me", message_id=msg.id,
                                        channel_id=msg.channel.id)
    assert filed.ok
    (review_id,) = world.rows("SELECT id FROM review_items WHERE source = 'report'")[0]
    res = await world.workflow.decide_review(MOD, SERVER, review_id, "delete")
    assert res.ok and world.enforcer.called("delete_message") == [("c1", msg.id)]
    assert world.rows("SELECT COUNT(*) FROM cases WHERE moderator_id = 'mod'") == [(1,)]
    assert world.rows("SELECT case_number IS NOT NULL FROM strikes") == [(1,)]


async def test_breakit_raid_ban_all_posts_one_mod_log_summary_not_one_per_raider(world):
    """"Ban all" on a raid card of ten joiners posts one summary in the mod log, not ten entries (the mod-log
    channel's rate limit would hold the raid response back for tens of seconds)."""
    t0 = datetime.now(UTC)
    for i in range(10):
        await world.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i))
        world.enforcer.add(f"new{i}")
    before = len(world.desk.log)
    text = await world.workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed")
    assert text.startswith("ban: 10 of 10")
    assert len(world.desk.log) - before <= 1


async def test_breakit_one_member_reporting_another_again_and_again_does_not_flood_the_queue(world):
    """A member sending /report about the same member five times (no message) gets one open review item and one
    card; a hostile member must not be able to fill the moderators' review channel."""
    for i in range(5):
        await world.workflow.report("bob", SERVER, "alice", f"annoying {i}")
    assert world.rows("SELECT COUNT(*) FROM review_items WHERE decision = 'open'") == [(1,)]
    assert len(world.desk.reviews) == 1


async def test_breakit_several_reporters_of_one_message_share_one_card(world):
    """Three members reporting the same message give one open review item (and card) for that message, as an
    edit re-flagged by automod does; every report is still recorded."""
    msg = world.message("alice", "nothing the model flags")
    await world.judge(msg)
    for reporter in ("bob", "carol", "mod"):
        await world.workflow.report(reporter, SERVER, "alice", "rude", message_id=msg.id, channel_id="c1")
    assert world.rows("SELECT COUNT(*) FROM reports") == [(3,)]
    assert world.rows("SELECT COUNT(*) FROM review_items WHERE decision = 'open'") == [(1,)]
    assert len(world.desk.reviews) == 1


async def test_breakit_failed_unban_at_a_temporary_bans_end_is_not_recorded_as_lifted(tmp_path):
    """When Discord refuses the unban at a temporary ban's end (a 503, a rate limit), the case is not marked
    lifted: it stays due, so the next start (or a retry) lifts it; otherwise the member stays banned for good
    while the mod log's record says the ban ended."""
    w = await make_world(tmp_path)
    try:
        res = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
        assert res.ok
        await w.workflow.close()
        import sqlite3

        con = sqlite3.connect(w.store.path)
        con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00'")
        con.commit()
        con.close()
        w.enforcer.refuse["unban"] = "503 Service Unavailable"
        await w.workflow.recover()
        for _ in range(200):  # the due unban runs at once (its first timer), then a retry is scheduled
            if w.enforcer.called("unban"):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert w.enforcer.called("unban") == [("alice",)]
        assert w.rows("SELECT lifted_at IS NULL FROM cases") == [(1,)]
        assert list(w.workflow._timers) == [(SERVER, res.case_number)]  # tried again later
        assert "unban FAILED: 503 Service Unavailable" in w.desk.log[-1].lines[1]
    finally:
        await _close(w)


async def test_breakit_member_can_still_appeal_their_case_after_mydata_forget(world):
    """After /mydata forget the case still counts against the member (by design), so the member can still appeal
    it: the Appeal button of their notice must not answer "not about you"."""
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "rude")
    await world.workflow.forget_member(SERVER, "alice")
    filed = await world.workflow.appeal("alice", SERVER, res.case_number, "I apologised already")
    assert filed.ok



async def test_breakit_raid_mode_slowmode_needs_manage_channels(world):
    """/raidmode on sets a channel's slowmode, which Discord reserves to Manage Channels: a helper holding only
    Manage Messages (or only a moderator role) is refused and no slowmode is set."""
    with pytest.raises(Refused, match="Manage Channels"):
        await world.workflow.manual_raid_mode(HELPER, SERVER, "c1", True)
    assert world.enforcer.slowmode == {}


class CardGoneDesk(FakeDesk):
    """A review channel where the first card was deleted by someone (an edit of it fails: 10008)."""

    async def update_review(self, card, card_message_id):
        self.review_updates.append((card_message_id, card))
        return False


async def test_breakit_reflagged_item_whose_card_was_deleted_gets_a_new_card(world):
    """When the card of an open review item was deleted (a moderator tidying the channel), the next re-flag posts
    a new card instead of silently editing a message that no longer exists; the item must stay visible."""
    world.workflow.desk = world.desk = CardGoneDesk()
    first = world.message("alice", "borderline text", mid="m-gone")
    await world.judge(first)
    edit = replace(first, text="borderline again", edited_at=first.created_at + timedelta(seconds=5))
    await world.judge(edit)
    assert len(world.desk.reviews) == 2


async def test_a_moderator_who_used_mydata_forget_still_cannot_decide_on_their_own_case(world):
    """``/mydata forget`` puts a keyed pseudonym on the member's cases, review items and appeals; the self-checks of
    a review decision, an appeal's decision and a reason change compared the raw id only, so a moderator who had
    forgotten themselves could dismiss the card of their own flagged message, overturn their own appeal and reword
    their own case. Nobody decides on themselves, whatever id the record now carries."""
    outcome = await world.judge(world.message("helper", "you vermin"))
    filed = await world.workflow.appeal("helper", SERVER, outcome.case_number, "it was a joke, honest")
    assert filed.ok
    await world.workflow.forget_member(SERVER, "helper")
    assert world.rows("SELECT member_id FROM cases WHERE number = ?", (outcome.case_number,)) != [("helper",)]
    with pytest.raises(Refused, match="yourself"):
        await world.workflow.decide_review(HELPER, SERVER, outcome.review_id, "dismiss")
    with pytest.raises(Refused, match="yourself"):
        await world.workflow.decide_appeal(HELPER, SERVER, 1, uphold=False)
    with pytest.raises(Refused, match="yourself"):
        await change_reason(world.store, world.workflow.platform, HELPER, SERVER, outcome.case_number,
                            "it was fine after all")
    assert world.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,)) == [("applied",)]
    assert world.rows("SELECT pardoned_at FROM strikes") == [(None,)]
