"""Breakit 34: what happens later, or across a restart (temporary bans' ends, recovery)."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.core.models import ActionKind, Case, CaseStatus
from bot.workflow import ModerationWorkflow, sanctions
from tests.test_workflow import MOD, SERVER, World, make_world


def _restarted(w: World) -> ModerationWorkflow:
    return ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                              policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)


async def _close(w: World) -> None:
    await w.workflow.close()
    await w.service.close()
    await w.store.close()


async def test_a_ladder_ban_step_crossed_by_automod_is_a_temporary_ban(tmp_path):
    """A message automod deletes crosses ``{points = 2, action = "ban", duration_s = 604800}``: the step's ban was
    recorded with no end and no timer (banned for good), where the same step crossed by a moderator's warning
    ends after a week. It now ends after its duration, and a start after that end unbans the member once."""
    w = await make_world(tmp_path, policy='[strikes]\nladder = [{points = 2, action = "ban", duration_s = 604800}]\n')
    try:
        t0 = datetime.now(UTC)
        await w.judge(w.message("alice", "you vermin", at=t0))
        await w.judge(w.message("alice", "you vermin", at=t0 + timedelta(seconds=1)))
        assert w.enforcer.called("ban") == [("alice",)]
        (number, created, expires), = w.rows("SELECT number, created_at, expires_at FROM cases WHERE action = 'ban'")
        assert expires is not None
        assert (datetime.fromisoformat(expires) - datetime.fromisoformat(created)).total_seconds() == 604800
        assert (SERVER, number) in w.workflow._timers
        await w.workflow.close()
        con = sqlite3.connect(w.store.path)
        con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00' WHERE expires_at IS NOT NULL")
        con.commit()
        con.close()
        again = _restarted(w)
        await again.recover()
        await asyncio.wait_for(asyncio.gather(*again._timers.values()), 3)
        assert w.enforcer.called("unban") == [("alice",)]
        await again.close()
    finally:
        await _close(w)


async def test_overturning_a_timeout_that_is_over_removes_no_timeout(tmp_path):
    """A moderator's 10-minute timeout (case #1) ended long ago; the member is timed out now by hand on the
    platform (not in the mod log). Their appeal of case #1 is overturned: the bot called the platform's timeout
    removal, which lifted the timeout standing now (a member holds one), and said "timeout lifted". A ladder step
    already over is skipped, and so is an owed removal at a start (retry_owed_timeouts); the decided case is now
    too: its debt is settled without the platform, and the answer says it was over."""
    w = await make_world(tmp_path)
    try:
        res = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "cool off", duration_s=600)
        assert res.ok and res.case_number == 1
        con = sqlite3.connect(w.store.path)
        con.execute("UPDATE cases SET created_at = '2000-01-01T00:00:00.000000+00:00', "
                    "expires_at = '2000-01-01T00:10:00.000000+00:00' WHERE number = 1")
        con.commit()
        con.close()
        filed = await w.workflow.appeal("alice", SERVER, 1, "it was my brother")
        assert filed.ok
        done = await w.workflow.decide_appeal(replace(MOD, id="mod2"), SERVER, 1, uphold=False)
        assert w.enforcer.called("remove_timeout") == [], "a timeout standing now was removed"
        assert "timeout lifted" not in done.text
        assert w.rows("SELECT status, lifted_at IS NOT NULL, lift_tries FROM cases WHERE number = 1") == [
            ("overturned", 1, 0)]
        assert await _restarted(w).recover() == []  # nothing owed at the next start either
        assert w.enforcer.called("remove_timeout") == []
    finally:
        await _close(w)


async def test_a_start_after_many_bans_ended_reads_the_temporary_bans_once(tmp_path, monkeypatch):
    """Many temporary bans ended while the bot was down (a raid's bans of a week): each ban's end read every
    temporary ban of the mod log to check it was still due, so a start was quadratic in them (measured: 1,000
    ended bans took 14 s, 2,000 took 47 s, before catch-up could begin; 4.5 s now). The start reads them once; each
    end reads its own case."""
    w = await make_world(tmp_path)
    try:
        ended = datetime.now(UTC) - timedelta(seconds=1)
        for i in range(30):
            await w.store.open_case("discord", SERVER, f"raider{i}", ActionKind.BAN, "raid", moderator_id="mod",
                                    status=CaseStatus.APPLIED, expires_at=ended)
        reads = 0
        real = w.store.due_expiries

        async def counted(platform: str, before: datetime) -> list[Case]:
            nonlocal reads
            reads += 1
            return await real(platform, before)

        monkeypatch.setattr(w.store, "due_expiries", counted)
        again = _restarted(w)
        await again.recover()
        await asyncio.wait_for(asyncio.gather(*again._timers.values()), 5)
        assert len(w.enforcer.called("unban")) == 30
        assert reads <= 2, f"the temporary bans were read {reads} times for 30 ends"
        await again.close()
    finally:
        await _close(w)


async def test_raid_mode_extended_by_the_raid_going_on_survives_a_restart_until_its_new_end(tmp_path):
    """Raid mode lasts raid_mode_duration_s (900 s) after the raid's last message: at 570 s the raid goes on, so it
    runs until 1,470 s. Only the end set when it began (900 s) was saved, so a restart at 1,000 s lifted the
    slowmode ("ended while the bot was stopped") in the middle of the raid. The extended end is saved."""
    w = await make_world(tmp_path)
    try:
        t0 = datetime.now(UTC)
        now = [t0]
        w.workflow.clock = lambda: now[0]
        for i in range(5):
            await w.judge(w.message(f"r{i}", "you vermin", at=t0 + timedelta(seconds=i)))
        assert w.rows("SELECT channel_id, slowmode_s FROM raid_modes") == [("c1", 30)]
        now[0] = t0 + timedelta(seconds=570)
        await w.judge(w.message("r1", "you vermin", at=now[0]))
        await w.workflow.close()
        (until,), = w.rows("SELECT until FROM raid_modes WHERE channel_id = 'c1'")
        assert datetime.fromisoformat(until) == t0 + timedelta(seconds=1470)
        again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                                   policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service,
                                   clock=lambda: t0 + timedelta(seconds=1000))
        lines = await again.recover()
        assert any("restored until" in line for line in lines), lines
        assert w.enforcer.slowmode == {"c1": 30}
        await again.close()
    finally:
        await _close(w)


async def test_a_temporary_ban_s_end_follows_the_clock_set_back_or_forward(tmp_path, monkeypatch):
    """The end timer slept once, on asyncio's monotonic clock, for the time the clock gave when it was scheduled.
    The clock set back an hour after a 1-second ban: the member was unbanned when the clock said an hour was left.
    The clock jumped forward past an hour's ban (a suspended host, a paused VM): the unban waited the whole hour
    more. The timer looks at the clock again (at least every END_CHECK_S)."""
    monkeypatch.setattr(sanctions, "END_CHECK_S", 0.05, raising=False)
    w = await make_world(tmp_path)
    try:
        t0 = datetime.now(UTC)
        now = [t0]
        w.workflow.clock = lambda: now[0]
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
        assert ban.ok
        await asyncio.sleep(0.1)  # the timer is asleep
        now[0] = t0 - timedelta(hours=1)  # set back: the ban has an hour and a second left
        await asyncio.sleep(1.3)
        assert w.enforcer.called("unban") == [], "unbanned an hour before the ban's end"
        now[0] = t0 + timedelta(seconds=2)
        await asyncio.wait_for(asyncio.gather(*w.workflow._timers.values()), 2)
        assert w.enforcer.called("unban") == [("alice",)]

        long_ban = await w.workflow.sanction(MOD, SERVER, "bob", ActionKind.BAN, "cool off", duration_s=3600)
        assert long_ban.ok
        await asyncio.sleep(0.1)
        now[0] += timedelta(seconds=3601)  # jumped forward past its end
        await asyncio.wait_for(asyncio.gather(*w.workflow._timers.values()), 2)
        assert w.enforcer.called("unban") == [("alice",), ("bob",)]
    finally:
        await _close(w)
