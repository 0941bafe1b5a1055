"""The moderation workflow under a tester's attacks (twenty-eighth session's break-it pass): concurrent decisions,
a stop between the platform call and the mod log, overturned cases and the ladder steps they triggered. Real SQLite
mod log and the strict fake enforcer (``tests/test_workflow.py``'s world)."""

from __future__ import annotations

import asyncio

import pytest

from bot.core.models import ActionKind
from bot.workflow import Actor
from bot.workflow.permissions import Permission
from tests.test_workflow import MOD, SERVER, make_world

MOD2 = Actor("mod2", "Mod2", MOD.permissions, rank=10)
#: A moderator who may also lift slowmode (Manage Channels): ending a raid that slowed a channel needs it.
LEAD = Actor("lead", "Lead", MOD.permissions | {Permission.MANAGE_CHANNELS}, rank=10)


async def _close(w) -> None:
    await w.workflow.close()
    await w.service.close()
    await w.store.close()


async def test_warns_decided_together_all_count_toward_the_ladder(tmp_path):
    """Three warns of one member decided at once (two moderators on two cards): each caller loaded the member's
    strikes from the mod log and kept its own copy, so the ledger held one strike of three and the ladder's 3-point
    step (timeout 1 h) never came, nor at a later fourth warn. All three now count and the step is taken once."""
    w = await make_world(tmp_path)
    w.enforcer.add("mod2", rank=10)
    try:
        await asyncio.gather(*(w.workflow.sanction(a, SERVER, "alice", ActionKind.WARN, f"warn {i}")
                               for i, a in enumerate((MOD, MOD2, MOD))))
        active = await w.service.ledger.active("discord", SERVER, "alice", w.workflow.clock())
        assert sum(s.points for s in active) == 3
        assert w.rows("SELECT count(*) FROM cases WHERE action = 'timeout'") == [(1,)]
        assert len(w.enforcer.called("timeout")) == 1
    finally:
        await _close(w)


class _Stop(BaseException):
    """The process stopping (a kill): not an error any handler catches."""


async def test_a_stop_after_the_platform_deleted_leaves_the_case_applied_and_posts_its_card(tmp_path):
    """The platform deleted the message, then the process stopped before the mod log heard back. At the next
    start, recovery deleted again, got Unknown Message (10008) and marked the done case failed; and the open review
    item never got its card (the message delivered again is a duplicate). Now a delete that finds the message gone
    counts as done, and recovery posts the cards a stop left unposted."""
    from bot.workflow import ModerationWorkflow

    w = await make_world(tmp_path)
    real = w.enforcer.delete_message

    async def delete_then_stop(sid, cid, mid):
        await real(sid, cid, mid)
        raise _Stop

    w.enforcer.delete_message = delete_then_stop  # type: ignore[method-assign]
    outcome = await w.service.handle(w.message("alice", "you vermin"))
    try:
        await w.workflow.carry_out(outcome)
    except _Stop:
        pass
    assert w.rows("SELECT status FROM cases") == [("pending",)] and not w.desk.reviews
    w.enforcer.delete_message = real  # type: ignore[method-assign]
    again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                               policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
    try:
        lines = await again.recover()
        assert w.rows("SELECT status, failure FROM cases") == [("applied", None)]
        assert [c.review_id for c in w.desk.reviews] == [outcome.review_id]
        assert any("carried out after a restart" in line and "FAILED" not in line for line in lines)
        assert any(f"review card #{outcome.review_id} posted" in line for line in lines)
        assert w.rows("SELECT card_message_id IS NOT NULL FROM review_items") == [(1,)]
        assert await again.recover() == []  # nothing twice
    finally:
        await again.close()
        await _close(w)


async def test_automod_delete_of_a_message_its_author_deleted_first_is_not_a_failure(tmp_path):
    """The author deleted the message before the bot did: the delete's goal is met, the case is applied with a
    note, and no fallback review is opened for a refused delete."""
    w = await make_world(tmp_path)
    try:
        msg = w.message("alice", "you vermin")
        w.enforcer.deleted.add(msg.id)
        out = await w.judge(msg)
        assert w.rows("SELECT status, failure FROM cases WHERE number = ?", (out.case_number,)) == [
            ("applied", "delete: the message was already gone")]
    finally:
        await _close(w)


async def test_overturning_the_warn_that_crossed_a_ladder_step_lifts_the_step(tmp_path):
    """Warn, warn, warn: the third crossed the 3-point step (case #4, a 1-hour timeout). Its appeal was overturned:
    case #3 said overturned but the timeout it set off stood (no remove_timeout). The step is now overturned
    with it and the timeout removed; the appeal's answer says so."""
    w = await make_world(tmp_path)
    try:
        for why in ("one", "two", "three (wrong member)"):
            await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, why)
        assert w.rows("SELECT number, action, status, escalated_from FROM cases WHERE number = 4") == [
            (4, "timeout", "applied", 3)]
        await w.workflow.appeal("alice", SERVER, 3, "that was not me")
        (appeal_id,), = w.rows("SELECT id FROM appeals")
        res = await w.workflow.decide_appeal(MOD2, SERVER, appeal_id, uphold=False)
        assert w.rows("SELECT number, status FROM cases WHERE number >= 3 ORDER BY number") == [
            (3, "overturned"), (4, "overturned")]
        assert w.enforcer.called("remove_timeout") == [("alice",)]
        assert "case #4 (timeout) overturned with it: timeout lifted" in res.text
        # the member's standing: two warns' points, the ladder ready to step again at the next
        active = await w.service.ledger.active("discord", SERVER, "alice", w.workflow.clock())
        assert sum(s.points for s in active) == 2
    finally:
        await _close(w)


async def test_a_join_wave_that_goes_on_after_the_moderators_ended_the_raid_is_alerted_again(tmp_path):
    """12 joins raise a join raid; a moderator ends it; 40 more accounts join, one a second. Each join pushed the
    quiet period 10 minutes on and the closed raid took no members, so the wave was never alerted and its accounts
    never recorded. Joins after the end are counted afresh: the wave is a second raid with its own card."""
    from datetime import UTC, datetime, timedelta

    w = await make_world(tmp_path)
    try:
        t0 = datetime.now(UTC)
        for i in range(12):
            await w.workflow.member_joined(SERVER, f"a{i}", t0 + timedelta(seconds=i))
        await w.workflow.raid_action(MOD, SERVER, 1, "end")
        for i in range(40):
            await w.workflow.member_joined(SERVER, f"b{i}", t0 + timedelta(seconds=60 + i))
        raids = w.rows("SELECT id, reason FROM raids ORDER BY id")
        assert [r[1] for r in raids] == ["join_burst", "join_burst"]
        assert len(w.desk.raids) == 2
        second = w.rows("SELECT members FROM raids WHERE id = ?", (raids[1][0],))[0][0]
        assert "b0" in second and "b39" in second and "a0" not in second
    finally:
        await _close(w)


async def test_a_ladder_ban_step_with_a_duration_is_a_temporary_ban(tmp_path):
    """``ladder = [{points = 2, action = "ban", duration_s = 604800}]`` passed validation but banned for good
    (no end, no unban timer). The step's ban now ends after its duration, like a moderator's temporary ban."""
    w = await make_world(tmp_path, policy='[strikes]\nladder = [{points = 2, action = "ban", duration_s = 604800}]\n')
    try:
        await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "one")
        res = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "two")
        assert "escalation: case #3 ban (7 days)" in res.text
        (created, expires), = w.rows("SELECT created_at, expires_at FROM cases WHERE action = 'ban'")
        from datetime import datetime
        assert (datetime.fromisoformat(expires) - datetime.fromisoformat(created)).total_seconds() == 604800
        assert (SERVER, 3) in w.workflow._timers  # the unban is scheduled
    finally:
        await _close(w)


async def test_a_duration_the_platform_cannot_hold_is_refused_before_anything_is_recorded(tmp_path):
    """``sanction`` with a 40-day timeout was sent capped at 28 days while the case said 40; a negative duration
    was sent to the platform and recorded as ending before it began. Both are refused, nothing recorded."""
    import pytest

    from bot.workflow import Refused

    w = await make_world(tmp_path)
    try:
        for kind, seconds in ((ActionKind.TIMEOUT, 40 * 86400), (ActionKind.TIMEOUT, -60), (ActionKind.BAN, 0)):
            with pytest.raises(Refused, match="not possible"):
                await w.workflow.sanction(MOD, SERVER, "alice", kind, "x", duration_s=seconds)
        assert w.rows("SELECT count(*) FROM cases") == [(0,)] and w.enforcer.called("timeout") == []
    finally:
        await _close(w)


async def test_dismiss_counts_the_moderators_permissions_in_the_messages_channel(tmp_path):
    """A moderator denied Manage Messages in #c1 by an overwrite was refused Delete on a card about a message there
    and Overturn on its appeal, but Dismiss (which overturns the case and pardons the strike) went through. It is
    refused too, and nothing changes."""
    import pytest

    from bot.workflow import Permission, Refused

    w = await make_world(tmp_path)

    async def perms(server_id, channel_id, member_id):
        return frozenset() if channel_id == "c1" else frozenset({Permission.MANAGE_MESSAGES})

    w.enforcer.member_permissions = perms  # type: ignore[attr-defined]
    helper = Actor("helper", "Helper", frozenset({Permission.MANAGE_MESSAGES}), rank=10)
    try:
        out = await w.judge(w.message("alice", "you vermin"))
        with pytest.raises(Refused):
            await w.workflow.decide_review(helper, SERVER, out.review_id, "dismiss")
        assert w.rows("SELECT status FROM cases") == [("applied",)]
        assert w.rows("SELECT pardoned_at IS NULL FROM strikes") == [(1,)]
        assert w.rows("SELECT decision FROM review_items") == [("open",)]
    finally:
        await _close(w)


@pytest.mark.parametrize("restart", [False, True])
async def test_a_join_raid_that_spreads_to_two_channels_is_ended_in_both(tmp_path, restart):
    """A join raid whose accounts then flood #c1 and #c2: only #c1 was slowed, #c2's raid mode was saved as slowed,
    and "End raid mode" lifted #c2 only, so #c1 stayed slowed with its raid-mode row. Each channel the raid
    reaches is now slowed and recorded as it is, and the end lifts and clears them all."""
    from datetime import UTC, datetime, timedelta

    w = await make_world(tmp_path)
    try:
        t0 = datetime.now(UTC)
        for i in range(12):
            w.enforcer.add(f"new{i}")
            await w.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i * 0.1))
        for ch in ("c1", "c2"):
            for i in range(6):
                await w.judge(w.message(f"new{i}", "you vermin", channel=ch, at=datetime.now(UTC)))
        await w.workflow.drain()
        assert w.enforcer.slowmode == {"c1": 30, "c2": 30}
        assert sorted(w.rows("SELECT channel_id, slowmode_s FROM raid_modes")) == [("c1", 30), ("c2", 30)]
        if restart:  # the second tester's: a restart mid-raid restored one board per channel and ended only one
            from bot.workflow import ModerationWorkflow

            await w.workflow.close()
            w.workflow = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                                            policies=w.workflow.policies, ledger=w.service.ledger,
                                            raid_control=w.service)
            await w.workflow.recover()
        note = await w.workflow.raid_action(LEAD, SERVER, 1, "end")
        assert w.enforcer.slowmode == {"c1": 0, "c2": 0}
        assert w.rows("SELECT count(*) FROM raid_modes") == [(0,)]
        assert "slowmode lifted in c1" in str(note) and "slowmode lifted in c2" in str(note)
        now = datetime.now(UTC)
        assert not w.service.raid_mode("discord", SERVER, "c1", now)
        assert not w.service.raid_mode("discord", SERVER, "c2", now)
    finally:
        await _close(w)


async def test_a_helpers_deletes_never_set_off_a_step_the_helper_may_not_take(tmp_path):
    """A helper (moderator role: Manage Messages only, rank 10) is refused a warn on a senior member (rank 20), yet
    pressing Delete on three report cards about the senior's messages crossed the 3-point step and timed the senior
    out. The strikes still count; the step is not carried out, and the mod log asks a moderator who may."""
    import pytest

    from bot.workflow import Refused

    w = await make_world(tmp_path)
    w.enforcer.add("senior", rank=20)
    helper = Actor("helper", "Helper", frozenset(), rank=10, moderator_role=True)
    try:
        with pytest.raises(Refused):
            await w.workflow.sanction(helper, SERVER, "senior", ActionKind.WARN, "x")
        texts = []
        for i in range(3):
            msg = w.message("senior", f"ordinary text {i}")
            await w.judge(msg)
            await w.workflow.report("carol", SERVER, "senior", "rude", message_id=msg.id, channel_id="c1")
            (item,), = w.rows("SELECT id FROM review_items ORDER BY id DESC LIMIT 1")
            texts.append((await w.workflow.decide_review(helper, SERVER, item, "delete")).text)
        assert w.enforcer.called("timeout") == []
        assert w.rows("SELECT count(*) FROM cases WHERE action = 'timeout'") == [(0,)]
        assert "escalation to timeout (1 hour) not carried out" in texts[-1]
        assert "You need Moderate Members" in texts[-1]  # the first thing the helper lacks for it
        assert any(e.title.startswith("Escalation needs a moderator: timeout") for e in w.desk.log)
        active = await w.service.ledger.active("discord", SERVER, "senior", w.workflow.clock())
        assert sum(s.points for s in active) == 3
        # a card a moderator who may can act on (the second tester: the withheld step was otherwise lost for good)
        (item_id, reason), = w.rows("SELECT id, reason FROM review_items WHERE reason LIKE 'ladder step withheld%'")
        assert "timeout (1 hour)" in reason and item_id in [c.review_id for c in w.desk.reviews]
        boss = Actor("boss", "Boss", MOD.permissions, rank=40)  # above the senior member, below the bot
        res = await w.workflow.decide_review(boss, SERVER, item_id, "timeout", duration_s=3600)
        assert res.ok and w.enforcer.called("timeout") == [("senior", 3600)]  # the step, no strike of its own
    finally:
        await _close(w)


async def test_overturning_a_case_never_lifts_a_step_the_moderator_may_not_lift_or_one_still_earned(tmp_path):
    """The second tester's: a helper (no Ban Members) overturning the warn that crossed a ban step unbanned the
    member through the cascade; and a step the member's other strikes still reach was lifted. Both steps now
    stand, and the answer says why."""
    w = await make_world(tmp_path, policy='[strikes]\nladder = [{points = 3, action = "ban"}]\n')
    helper = Actor("helper", "Helper", frozenset(), rank=10, moderator_role=True)
    try:
        for why in ("one", "two", "three"):
            await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, why)
        await w.workflow.appeal("alice", SERVER, 3, "not me")
        (appeal_id,), = w.rows("SELECT id FROM appeals")
        res = await w.workflow.decide_appeal(helper, SERVER, appeal_id, uphold=False)
        assert "ladder step case #4 (ban) stands: You need Ban Members" in res.text
        assert w.enforcer.called("unban") == [] and w.rows("SELECT status FROM cases WHERE number = 4") == [
            ("applied",)]
    finally:
        await _close(w)
    (tmp_path / "b").mkdir()
    w = await make_world(tmp_path / "b")
    try:
        for why in ("one", "two", "three", "four"):  # the third crossed the 3-point timeout step
            await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, why)
        await w.workflow.appeal("alice", SERVER, 3, "not me")
        (appeal_id,), = w.rows("SELECT id FROM appeals")
        res = await w.workflow.decide_appeal(MOD2, SERVER, appeal_id, uphold=False)
        assert "stands: the member's other strikes still reach it (3 points)" in res.text
        assert w.enforcer.called("remove_timeout") == []
    finally:
        await _close(w)


async def test_recovery_sends_a_ladder_step_to_a_moderator_instead_of_acting_for_an_absent_one(tmp_path):
    """A moderator's warn left pending by a stop is carried out at the next start; the ladder step it crosses was
    carried out too, on behalf of a moderator whose permissions nobody checked (a helper's warn timed a member
    out). It now goes to a review card."""
    from bot.workflow import ModerationWorkflow

    w = await make_world(tmp_path)
    try:
        for why in ("one", "two"):
            await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, why)
        await w.store.open_case("discord", SERVER, "alice", ActionKind.WARN, "three", moderator_id="helper")
        again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                                   policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
        lines = await again.recover()
        await again.close()
        assert any("case #3 (warn) carried out after a restart" in line for line in lines)
        assert w.enforcer.called("timeout") == []
        assert w.rows("SELECT count(*) FROM review_items WHERE reason LIKE 'ladder step withheld%'") == [(1,)]
    finally:
        await _close(w)
