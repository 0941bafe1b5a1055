"""A member unbanned on the platform outside the bot (a moderator's unban by hand, seen as an event): the workflow
marks their bans lifted and stops the end-of-ban timers and owed unbans, as the bot's own /unban does."""

from __future__ import annotations

import asyncio
import sqlite3

from bot.core.models import ActionKind
from bot.workflow import ModerationWorkflow, sanctions
from bot.workflow.ports import Capability
from tests.fakes import ALL_CAPABILITIES
from tests.test_workflow import MOD, SERVER, World, make_world


def _restarted(w: World) -> ModerationWorkflow:
    return ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                              policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)


async def test_a_hand_unban_ends_a_temporary_ban_s_timer_and_its_end_unbans_no_one(tmp_path):
    """Temporary ban, then the member is unbanned by hand: the case is lifted, its timer cancelled, and a start
    after the ban's end does not call the platform's unban nor post the ban's end."""
    w = await make_world(tmp_path)
    try:
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
        assert ban.ok and list(w.workflow._timers) == [(SERVER, ban.case_number)]
        assert await w.workflow.member_unbanned(SERVER, "alice") == [ban.case_number]
        assert w.workflow._timers == {}
        assert w.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (ban.case_number,)) == [(1,)]
        assert await w.workflow.member_unbanned(SERVER, "alice") == []  # the bot's own unban's event: nothing
        await w.workflow.close()
        con = sqlite3.connect(w.store.path)
        con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00'")
        con.commit()
        con.close()
        again = _restarted(w)
        await again.recover()
        await asyncio.sleep(0.1)
        assert w.enforcer.called("unban") == []
        assert not [e for e in w.desk.log if "temporary ban ended" in e.title]
        await again.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_a_hand_unban_settles_an_owed_unban_of_an_overturned_ban(world, monkeypatch):  # noqa: F811
    """An overturned ban whose unban was refused (owed, retried by a timer): a hand unban settles it, so the timer
    and the next start try nothing."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.2)
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    world.enforcer.refuse["unban"] = "Missing Permissions (50013)"
    assert "try 1 of 5" in (await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)).text
    del world.enforcer.refuse["unban"]
    assert await world.workflow.member_unbanned(SERVER, "alice") == [ban.case_number]
    assert world.workflow._timers == {}
    await asyncio.sleep(0.4)
    assert len(world.enforcer.called("unban")) == 1  # the refused one only
    assert await world.workflow.retry_owed_lifts() == []
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (ban.case_number,)) == [(1,)]


async def test_a_hand_unban_of_a_permanent_ban_leaves_no_unban_owed_by_a_later_overturn(world):  # noqa: F811
    """A permanent ban lifted by hand, then overturned on appeal: the bot does not call the platform (it would
    answer Unknown Ban) and says the ban was lifted already."""
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    assert await world.workflow.member_unbanned(SERVER, "alice") == [ban.case_number]
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert "lifted already" in decided.text
    assert world.enforcer.called("unban") == []


async def test_an_unban_event_during_the_bot_s_own_try_lets_the_try_finish(world, monkeypatch):  # noqa: F811
    """The bot's own unban at a ban's end sends the unban event while its try is under way: the timer is not
    cancelled mid-try, so its outcome is still recorded and posted."""
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    real = world.enforcer.unban
    seen: list[list[int]] = []

    async def unban_with_event(server_id: str, member_id: str, reason: str):
        res = await real(server_id, member_id, reason)
        seen.append(await asyncio.create_task(world.workflow.member_unbanned(server_id, member_id)))
        return res

    monkeypatch.setattr(world.enforcer, "unban", unban_with_event)
    for _ in range(300):
        if [e for e in world.desk.log if e.title == f"Case #{ban.case_number}: temporary ban ended"]:
            break
        await asyncio.sleep(0.01)
    (post,) = [e for e in world.desk.log if e.title == f"Case #{ban.case_number}: temporary ban ended"]
    assert post.lines[1] == "unbanned"
    assert seen == [[ban.case_number]]  # the event lifted it in the mod log; the timer still finished
    assert world.workflow._timers == {} and world.workflow._lift_trying == set()


async def test_slack_has_no_bans_so_an_unban_event_does_nothing(tmp_path):
    """A platform without unbans (Slack): nothing is lifted."""
    w = await make_world(tmp_path, capabilities=ALL_CAPABILITIES - {Capability.UNBAN})
    try:
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
        assert ban.ok
        assert await w.workflow.member_unbanned(SERVER, "alice") == []
        assert w.rows("SELECT lifted_at FROM cases WHERE number = ?", (ban.case_number,)) == [(None,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()

