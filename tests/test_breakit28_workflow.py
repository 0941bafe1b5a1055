"""The moderation workflow under a tester's attacks (twenty-eighth session's break-it pass): concurrent decisions,
a stop between the platform call and the mod log, overturned cases and the ladder steps they triggered. Real SQLite
mod log and the strict fake enforcer (``tests/test_workflow.py``'s world)."""

from __future__ import annotations

import asyncio

from bot.core.models import ActionKind
from bot.workflow import Actor
from tests.test_workflow import MOD, SERVER, make_world

MOD2 = Actor("mod2", "Mod2", MOD.permissions, rank=10)


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
