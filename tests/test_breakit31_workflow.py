"""The workflow between the platform and the mod log (a break-it pass over the thirtieth session): a raid held on
by hand that spreads on. Real SQLite mod log and the strict fake enforcer (``tests/test_workflow.py``'s world)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.models import RaidAlert
from bot.workflow import Actor, Permission
from tests.test_workflow import SERVER, make_world

LEAD = Actor("mod", "Lead", frozenset({Permission.MANAGE_MESSAGES, Permission.MANAGE_CHANNELS}), rank=10)


async def test_a_held_raid_spreading_to_another_channel_keeps_the_hand_set_raid_mode(tmp_path):
    """A join raid spreads into #c2, which a lead had put in raid mode by hand (until switched off): the raid is
    held (no end). When it then spreads into #c3 too, that spread gave the raid an end again and started its timer,
    which, when the time was up, lifted the slowmode of #c2 as well, deleted the lead's saved raid mode there and
    switched the stricter tiers off."""
    w = await make_world(tmp_path, policy="[rules.raid]\nraid_mode_duration_s = 0.5\n")
    try:
        t0 = datetime.now(UTC)
        for i in range(12):
            w.enforcer.add(f"new{i}")
            await w.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i * 0.1))
        policy = await w.workflow.policies.get("discord", SERVER)
        board = w.workflow.open_join_raid(SERVER, policy)
        assert board is not None
        assert (await w.workflow.manual_raid_mode(LEAD, SERVER, "c2", True)).startswith("Raid mode on")
        for n, channel in enumerate(("c2", "c3")):
            alert = RaidAlert(server_id=SERVER, channel_id=channel, started_at=t0 + timedelta(seconds=5 + n),
                              members=("new0", "new1"), count=5, reason="flagged_burst")
            raid_id = await w.store.record_raid("discord", alert)
            assert raid_id is not None
            await w.workflow.raid_spread(board, alert, raid_id, None)
        await asyncio.sleep(1.0)  # past the raid's own raid_mode_duration_s
        assert not board.closed
        assert ("c2", None) in [tuple(r) for r in w.rows("SELECT channel_id, until FROM raid_modes")]
        assert w.service.raid_mode("discord", SERVER, "c2", datetime.now(UTC))
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()
