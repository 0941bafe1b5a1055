"""Break-it: /raidmode on during an automatic raid mode keeps raid mode on until switched off, through the real
discord.py client against the fake."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from tests.discord.fake_discord import MANAGE_CHANNELS, MANAGE_MESSAGES
from tests.discord.helpers import ephemeral_text
from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord


async def test_raidmode_on_during_an_automatic_raid_mode_is_not_ended_by_its_timer(env):
    """A raid switches raid mode on in #general for raid_mode_duration_s (30 s slowmode). A lead then runs
    /raidmode on in #general: raid mode on until switched off. When the automatic raid mode's time was up, its timer
    ended raid mode anyway: slowmode back to 0, the lead's saved raid mode deleted, the stricter tiers off."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MANAGE_CHANNELS, 4)
    env.write_policy(env.guild, env.review, env.modlog, "[rules.raid]\nraid_mode_duration_s = 2.0\n")
    env.bot.policies.invalidate()
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}")
    (board,) = env.bot.workflow._boards.values()
    timer = board.end_task
    assert timer is not None and not timer.done()
    cb = await env.fake.slash(env.guild, lead, "raidmode", [{"name": "state", "type": 3, "value": "on"}],
                              channel_id=env.general)
    assert "Raid mode on" in ephemeral_text(cb)
    await asyncio.wait({timer}, timeout=5)
    await asyncio.sleep(0.2)
    slow = [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")]
    assert 0 not in slow, slow
    assert [tuple(r) for r in env.rows("SELECT channel_id, until FROM raid_modes")] == [(env.general, None)]
    assert env.bot.service.raid_mode("discord", env.guild["id"], env.general, datetime.now(UTC))
    # switched off by hand, it ends: slowmode lifted
    cb = await env.fake.slash(env.guild, lead, "raidmode", [{"name": "state", "type": 3, "value": "off"}],
                              channel_id=env.general)
    assert ephemeral_text(cb).startswith("Raid mode off")
    assert [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")][-1] == 0
    assert env.rows("SELECT COUNT(*) FROM raid_modes")[0][0] == 0


async def test_a_raid_in_a_channel_already_in_raid_mode_by_hand_does_not_end_it(env):
    """A lead switched raid mode on in #general by hand (until switched off). A raid then bursts there: its
    automatic raid mode must not end the lead's when its time is up (it lifted the slowmode, deleted the saved
    raid mode and switched the stricter tiers off)."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MANAGE_CHANNELS, 4)
    env.write_policy(env.guild, env.review, env.modlog, "[rules.raid]\nraid_mode_duration_s = 1.0\n")
    env.bot.policies.invalidate()
    cb = await env.fake.slash(env.guild, lead, "raidmode", [{"name": "state", "type": 3, "value": "on"}],
                              channel_id=env.general)
    assert "Raid mode on" in ephemeral_text(cb)
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    assert len(env.rows("SELECT * FROM raids")) == 1
    boards = list(env.bot.workflow._boards.values())
    timers = {b.end_task for b in boards if b.end_task is not None}
    if timers:
        await asyncio.wait(timers, timeout=5)
    await asyncio.sleep(0.2)
    slow = [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")]
    assert 0 not in slow, slow
    assert [tuple(r) for r in env.rows("SELECT channel_id, until FROM raid_modes")] == [(env.general, None)]
    assert env.bot.service.raid_mode("discord", env.guild["id"], env.general, datetime.now(UTC))
