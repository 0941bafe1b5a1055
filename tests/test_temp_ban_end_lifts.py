"""A temporary ban whose unban at its end the platform refuses: tried again every UNBAN_RETRY_S and at each start,
at most LIFT_TRIES refused tries in all (counted in the mod log, so a restart keeps the count), each refusal noted
on the case, the last one asking the moderators to unban by hand."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable

from bot.core.models import ActionKind
from bot.workflow import ModerationWorkflow, common, sanctions
from tests.test_workflow import MOD, SERVER, World, make_world


def _restarted(w: World) -> ModerationWorkflow:
    return ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                              policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)


def _end_now(w: World) -> None:
    """The temporary bans' end is due (the bot was stopped past it)."""
    con = sqlite3.connect(w.store.path)
    con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00' WHERE expires_at IS NOT NULL")
    con.commit()
    con.close()


async def _until(check: Callable[[], bool], timeout_s: float = 3.0) -> None:
    for _ in range(int(timeout_s / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out waiting")


def _ended_posts(w: World, number: int) -> list[str]:
    return [e.lines[1] for e in w.desk.log if e.title == f"Case #{number}: temporary ban ended"]


async def test_refused_unbans_at_a_ban_s_end_stop_after_the_cap_across_restarts(tmp_path):
    """Each start tries the refused unban once more; the count lives in the mod log, so after LIFT_TRIES restarts
    no later start calls the platform or posts again, and the case holds every refusal."""
    w = await make_world(tmp_path)
    try:
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
        assert ban.ok and ban.case_number is not None
        number = ban.case_number
        await w.workflow.close()
        _end_now(w)
        w.enforcer.refuse["unban"] = "Missing Permissions (50013)"
        for start in range(1, common.LIFT_TRIES + 3):
            again = _restarted(w)
            await again.recover()
            if start <= common.LIFT_TRIES:
                await _until(lambda: len(_ended_posts(w, number)) == start)  # noqa: B023
            else:
                await asyncio.sleep(0.1)
                assert again._timers == {}  # nothing left to try in this process
            await again.close()
        assert len(w.enforcer.called("unban")) == common.LIFT_TRIES
        posts = _ended_posts(w, number)
        assert len(posts) == common.LIFT_TRIES
        assert posts[0] == ("unban FAILED: Missing Permissions (50013) (try 1 of 5; tried again in 10 minutes and "
                            "at the next start)")
        assert posts[-1].endswith("(try 5 of 5; not tried again, unban the member by hand)")
        ((failure, tries, lifted),) = w.rows("SELECT failure, lift_tries, lifted_at IS NOT NULL FROM cases "
                                             "WHERE number = ?", (number,))
        assert (tries, lifted) == (common.LIFT_TRIES, 0)
        assert [failure.count(f"ban's end: unban FAILED: Missing Permissions (50013) (try {i} of 5")
                for i in range(1, 6)] == [1] * 5
        assert failure.endswith("not tried again, unban the member by hand)")
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_the_retry_timer_stops_after_the_cap_and_a_restart_keeps_the_count(tmp_path, monkeypatch):
    """In the running bot the refusal is retried by its timer; two refused tries there, then a restart: the new
    process goes on from try 3 and stops at LIFT_TRIES."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.3)
    w = await make_world(tmp_path)
    try:
        w.enforcer.refuse["unban"] = "503 Service Unavailable"
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
        assert ban.ok and ban.case_number is not None
        number = ban.case_number
        await _until(lambda: len(w.enforcer.called("unban")) == 2)
        await w.workflow.close()
        assert w.rows("SELECT lift_tries FROM cases WHERE number = ?", (number,)) == [(2,)]
        again = _restarted(w)
        await again.recover()
        await _until(lambda: len(_ended_posts(w, number)) == common.LIFT_TRIES)
        await asyncio.sleep(0.8)  # past two more retry delays: no sixth try
        assert len(w.enforcer.called("unban")) == common.LIFT_TRIES
        assert [p.split("(try ")[1][:6] for p in _ended_posts(w, number)] == [f"{i} of 5" for i in range(1, 6)]
        assert again._timers == {} and again._lift_holds == {}
        await again.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_an_unban_at_the_end_granted_after_refusals_is_noted_and_done_once(world, monkeypatch):  # noqa: F811
    """Refused once, granted on the retry: the case is lifted, its notes say both, and no later try follows."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.2)
    world.enforcer.refuse["unban"] = "503 Service Unavailable"
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None
    await _until(lambda: len(world.enforcer.called("unban")) == 1)
    del world.enforcer.refuse["unban"]
    await _until(lambda: len(_ended_posts(world, ban.case_number)) == 2)
    await asyncio.sleep(0.5)
    assert len(world.enforcer.called("unban")) == 2
    assert _ended_posts(world, ban.case_number)[-1] == "unbanned"
    ((failure, lifted),) = world.rows("SELECT failure, lifted_at IS NOT NULL FROM cases WHERE number = ?",
                                      (ban.case_number,))
    assert lifted == 1
    assert failure.startswith("ban's end: unban FAILED: 503 Service Unavailable (try 1 of 5")
    assert failure.endswith("; unbanned at the ban's end (tried again)")
    assert world.workflow._timers == {}


async def test_overturning_a_temporary_ban_whose_end_gave_up_says_to_unban_by_hand(world, monkeypatch):  # noqa: F811
    """The end's unban refused LIFT_TRIES times, then the ban is overturned on appeal: the count is shared, so the
    platform is not called again and the answer asks for an unban by hand (not "lifted already")."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.05)
    world.enforcer.refuse["unban"] = "Missing Permissions (50013)"
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    assert ban.case_number is not None
    await _until(lambda: len(_ended_posts(world, ban.case_number)) == common.LIFT_TRIES)
    await world.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert not decided.ok
    assert "FAILED: ban not lifted: the unban was refused 5 times already" in decided.text
    assert decided.text.endswith("unban the member by hand")
    ((failure,),) = world.rows("SELECT failure FROM cases WHERE number = ?", (ban.case_number,))
    assert failure.endswith("; ban not lifted: the unban was refused 5 times already (at the ban's end); not tried "
                            "again, unban the member by hand")
    assert len(world.enforcer.called("unban")) == common.LIFT_TRIES


async def test_a_twenty_year_ban_keeps_its_end_across_a_restart(tmp_path):
    """A temporary ban longer than ten years (20 years) is rescheduled at start-up like any other: before, recovery
    read only ten years ahead, so after a restart the ban never ended."""
    w = await make_world(tmp_path)
    try:
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "very long", duration_s=20 * 365 * 86400)
        assert ban.ok and ban.case_number is not None
        assert (SERVER, ban.case_number) in w.workflow._timers
        await w.workflow.close()
        again = _restarted(w)
        await again.recover()
        assert (SERVER, ban.case_number) in again._timers
        await again.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_a_stop_during_a_refused_unban_try_still_counts_the_try(tmp_path, monkeypatch):
    """The bot stopped while an unban try was under way (the platform's refusal on its way back): close() cancelled
    the timer before the mod log counted the try, so the count was lost and the next start allowed a sixth try
    (seen as a flaky test under load). close() now lets a try under way record its outcome first."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 30)
    w = await make_world(tmp_path)
    try:
        w.enforcer.refuse["unban"] = "503 Service Unavailable"
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
        assert ban.ok and ban.case_number is not None
        w.enforcer.delay_s = 0.5  # the platform answers slowly: the stop lands while the try is under way
        await _until(lambda: (SERVER, ban.case_number) in w.workflow._lift_trying)
        await w.workflow.close()
        assert len(w.enforcer.called("unban")) == 1
        assert w.rows("SELECT lift_tries FROM cases WHERE number = ?", (ban.case_number,)) == [(1,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()
