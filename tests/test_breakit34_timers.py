"""Breakit 34: what happens later, or across a restart (temporary bans' ends, recovery)."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

from bot.workflow import ModerationWorkflow
from tests.test_workflow import SERVER, World, make_world


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
