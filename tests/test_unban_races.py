"""Races around a ban's unban: a hand unban while the bot's own try is under way, a temporary ban overturned while
its refused end waits for its retry or while its end's unban is under way, an owed unban answered "not banned"."""

from __future__ import annotations

import asyncio

from bot.core.models import Action, ActionKind
from bot.core.ports import ActionResult
from bot.workflow import sanctions
from tests.fakes import Call
from tests.test_temp_ban_end_lifts import _until
from tests.test_workflow import MOD, SERVER


def _ended_posts(w, number: int) -> list:
    return [e for e in w.desk.log if e.title == f"Case #{number}: temporary ban ended"]


async def test_a_hand_unban_during_the_end_s_try_is_not_noted_as_a_failed_unban(world, monkeypatch):  # noqa: F811
    """The bot's unban at a ban's end is under way when a moderator unbans by hand: Discord answers the bot's call
    404 Unknown Ban. The member is unbanned, so the case is not noted "unban FAILED ... tried again", the mod log
    post is not a failure, and no retry is scheduled."""
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None

    async def beaten_by_hand(server_id: str, member_id: str, reason: str) -> ActionResult:
        world.enforcer.calls.append(Call("unban", (member_id,)))
        assert await world.workflow.member_unbanned(server_id, member_id) == [ban.case_number]
        return ActionResult(Action(ActionKind.BAN), False, "404 Not Found (error code: 10026): Unknown Ban")

    monkeypatch.setattr(world.enforcer, "unban", beaten_by_hand)
    await _until(lambda: bool(_ended_posts(world, ban.case_number)))
    await asyncio.sleep(0.1)
    (post,) = _ended_posts(world, ban.case_number)
    assert not post.failed
    assert "FAILED" not in post.lines[1] and "unbanned" in post.lines[1]
    ((failure, lifted),) = world.rows("SELECT failure, lifted_at IS NOT NULL FROM cases WHERE number = ?",
                                      (ban.case_number,))
    assert lifted == 1
    assert "FAILED" not in (failure or "")
    assert world.workflow._timers == {} and world.workflow._lift_holds == {}


async def test_overturning_a_temporary_ban_waiting_for_its_end_s_retry_unbans_now(world, monkeypatch):  # noqa: F811
    """The end's unban was refused once (this process holds the retry for UNBAN_RETRY_S), then the ban is
    overturned on appeal: the bot tries the unban at once, not "another process of the bot is trying"."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 600)
    world.enforcer.refuse["unban"] = "503 Service Unavailable"
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None
    await _until(lambda: len(_ended_posts(world, ban.case_number)) == 1)
    del world.enforcer.refuse["unban"]
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert "another process" not in decided.text
    assert "ban lifted" in decided.text
    assert len(world.enforcer.called("unban")) == 2
    await asyncio.sleep(0.1)
    assert world.workflow._timers == {} and world.workflow._lift_holds == {}
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (ban.case_number,)) == [(1,)]


async def test_an_owed_unban_of_an_overturned_ban_answered_not_banned_is_settled(world, monkeypatch):  # noqa: F811
    """An overturned ban's unban refused once, then the member is unbanned by hand while no event reaches the bot:
    the retry at the next start is answered "not banned" (NOT_BANNED), so the case is lifted, the post is no
    failure, and nothing is owed any more."""
    from bot.workflow.ports import NOT_BANNED

    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    world.enforcer.refuse["unban"] = "Missing Permissions (50013)"
    assert "try 1 of 5" in (await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)).text
    await world.workflow.close()  # a clean stop hands the next try back

    async def not_banned(server_id: str, member_id: str, reason: str) -> ActionResult:
        world.enforcer.calls.append(Call("unban", (member_id,)))
        return ActionResult(Action(ActionKind.BAN), False, "Unknown Ban (not banned) (10026)", {NOT_BANNED: "1"})

    monkeypatch.setattr(world.enforcer, "unban", not_banned)
    (line,) = await world.workflow.retry_owed_lifts()
    assert "unbanned meanwhile on the platform" in line and "FAILED" not in line
    (post,) = [e for e in world.desk.log if e.title == f"Case #{ban.case_number}: overturned ban"]
    assert not post.failed
    assert world.rows("SELECT lifted_at IS NOT NULL, lift_tries FROM cases WHERE number = ?",
                      (ban.case_number,)) == [(1, 1)]
    ((failure,),) = world.rows("SELECT failure FROM cases WHERE number = ?", (ban.case_number,))
    assert "try 1 of 5" in failure  # the earlier refusal, then what settled it
    assert failure.endswith("; unbanned meanwhile on the platform (the bot's own unban was answered: Unknown Ban (not "
                            "banned) (10026))")
    assert await world.workflow.retry_owed_lifts() == []


async def test_overturning_a_temporary_ban_while_its_end_s_unban_is_under_way_lets_that_try_finish(
        world, monkeypatch):  # noqa: F811
    """The ban's end is calling the platform's unban when the ban is overturned on appeal: that try is not
    cancelled mid-call (its outcome would be lost and the unban sent twice), the answer does not blame another
    process, and the unban is sent once and posted."""
    monkeypatch.setattr(sanctions, "LIFT_HOLD_S", 0.3)
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    gate, sent = asyncio.Event(), asyncio.Event()

    async def slow_unban(server_id: str, member_id: str, reason: str) -> ActionResult:
        world.enforcer.calls.append(Call("unban", (member_id,)))
        sent.set()
        await gate.wait()
        return ActionResult(Action(ActionKind.BAN), True)

    monkeypatch.setattr(world.enforcer, "unban", slow_unban)
    await asyncio.wait_for(sent.wait(), 3)
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert "another process" not in decided.text and "under way" in decided.text
    gate.set()
    await _until(lambda: bool(_ended_posts(world, ban.case_number)))
    assert _ended_posts(world, ban.case_number)[0].lines[1] == "unbanned"
    await _until(lambda: world.workflow._timers == {})
    assert len(world.enforcer.called("unban")) == 1
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (ban.case_number,)) == [(1,)]


async def test_an_end_s_unban_refused_after_its_ban_was_overturned_meanwhile_is_tried_again(
        world, monkeypatch):  # noqa: F811
    """As above, but the try under way is refused: the overturned ban's unban goes on being owed and is tried again
    (UNBAN_RETRY_S later), granted then, and the case is lifted."""
    monkeypatch.setattr(sanctions, "LIFT_HOLD_S", 0.3)
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.3)
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    gate, sent = asyncio.Event(), asyncio.Event()

    async def slow_unban(server_id: str, member_id: str, reason: str) -> ActionResult:
        world.enforcer.calls.append(Call("unban", (member_id,)))
        sent.set()
        if len(world.enforcer.called("unban")) > 1:
            return ActionResult(Action(ActionKind.BAN), True)
        await gate.wait()
        return ActionResult(Action(ActionKind.BAN), False, "503 Service Unavailable")

    monkeypatch.setattr(world.enforcer, "unban", slow_unban)
    await asyncio.wait_for(sent.wait(), 3)
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert "under way" in decided.text
    gate.set()
    await _until(lambda: world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?",
                                    (ban.case_number,)) == [(1,)])
    await _until(lambda: world.workflow._timers == {})
    await asyncio.sleep(0.4)
    assert len(world.enforcer.called("unban")) == 2
    assert [e.lines[1] for e in world.desk.log if e.title == f"Case #{ban.case_number}: overturned ban"] == [
        "ban lifted (tried again)"]


async def test_an_end_s_retry_answered_not_banned_closes_the_refusals_noted_on_the_case(world, monkeypatch):  # noqa: F811
    """The end's unban refused once, then its retry is answered "not banned": the case is lifted, the post is no
    failure, and the case's notes end with what settled the refusal noted before."""
    from bot.workflow.ports import NOT_BANNED

    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.2)

    async def unban(server_id: str, member_id: str, reason: str) -> ActionResult:
        world.enforcer.calls.append(Call("unban", (member_id,)))
        if len(world.enforcer.called("unban")) == 1:
            return ActionResult(Action(ActionKind.BAN), False, "503 Service Unavailable")
        return ActionResult(Action(ActionKind.BAN), False, "Unknown Ban (not banned) (10026)", {NOT_BANNED: "1"})

    monkeypatch.setattr(world.enforcer, "unban", unban)
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None
    await _until(lambda: len(_ended_posts(world, ban.case_number)) == 2)
    assert [p.failed for p in _ended_posts(world, ban.case_number)] == [True, False]
    ((failure, lifted),) = world.rows("SELECT failure, lifted_at IS NOT NULL FROM cases WHERE number = ?",
                                      (ban.case_number,))
    assert lifted == 1 and failure.startswith("ban's end: unban FAILED: 503 Service Unavailable (try 1 of 5")
    assert failure.endswith("; ban's end: unbanned meanwhile on the platform (the bot's own unban was answered: "
                            "Unknown Ban (not banned) (10026))")
    await asyncio.sleep(0.3)
    assert len(world.enforcer.called("unban")) == 2 and world.workflow._timers == {}
