"""Break-it: raid mode and a raid card's End count the moderator's Manage Channels IN the channel concerned
(Discord: roles plus that channel's permission overwrites), through the real discord.py client against the fake."""

from __future__ import annotations

import asyncio

import pytest

from tests.discord.fake_discord import MANAGE_CHANNELS, MANAGE_MESSAGES
from tests.discord.helpers import ephemeral_text
from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord


async def _lead_denied_manage_channels_in_general(env):
    """A lead whose role grants Manage Messages and Manage Channels server-wide, and an overwrite on #general that
    takes Manage Channels away from that lead there (Discord then refuses them slowmode in #general)."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MANAGE_CHANNELS, 4)
    await env.fake.set_overwrite(env.guild, env.general, lead["id"], deny=MANAGE_CHANNELS)
    for _ in range(100):
        ch = env.bot.get_channel(int(env.general))
        if ch is not None and any(str(t.id) == lead["id"] for t in ch.overwrites):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("overwrite never reached the bot's cache")
    assert not env.fake.permissions(env.guild, lead["id"], env.general) & MANAGE_CHANNELS  # Discord's own answer
    assert env.fake.permissions(env.guild, lead["id"], env.review) & MANAGE_CHANNELS
    return lead


async def test_raidmode_on_is_refused_where_an_overwrite_denies_the_moderator_manage_channels(env):
    """/raidmode on in #general by a lead whom #general's overwrite denies Manage Channels: Discord would refuse
    them the slowmode there, so the bot must not set it for them (nor switch #general's stricter tiers on)."""
    lead = await _lead_denied_manage_channels_in_general(env)
    cb = await env.fake.slash(env.guild, lead, "raidmode", [{"name": "state", "type": 3, "value": "on"}],
                              channel_id=env.general)
    assert "You need Manage Channels" in ephemeral_text(cb)
    assert env.fake.find("PATCH", rf"/channels/{env.general}") == []
    assert env.rows("SELECT COUNT(*) FROM raid_modes")[0][0] == 0


async def test_raid_cards_end_is_refused_where_an_overwrite_denies_the_moderator_manage_channels(env):
    """A raid puts #general in raid mode (30 s slowmode). The raid card (in #review, where the lead does hold
    Manage Channels) offers End raid mode, which lifts #general's slowmode: a lead denied Manage Channels in
    #general is refused, and the slowmode and raid mode stay."""
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    assert [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")] == [30]
    lead = await _lead_denied_manage_channels_in_general(env)
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    cb = await env.fake.click(env.guild, lead, card, f"mod:raid:{env.guild['id']}:1:end")
    assert "You need Manage Channels" in ephemeral_text(cb)
    assert [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")] == [30]
    assert env.rows("SELECT COUNT(*) FROM raid_modes")[0][0] == 1
