"""Wire tests: /modbot setup picks the review and mod-log channels and a moderator role, validated (the bot must
be able to post there) and written as audited server overrides; refused for non-admins."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.discord.helpers import ephemeral_text
from tests.discord.replies import server_admin

pytestmark = pytest.mark.discord

SEND_MESSAGES = 1 << 11


def channel_opt(env, name: str, channel_id: str) -> tuple[dict, dict]:
    """A channel option (type 7) with its ``resolved.channels`` entry, as Discord sends it."""
    ch = next(c for c in env.guild["channels"] if c["id"] == channel_id)
    return ({"name": name, "type": 7, "value": channel_id},
            {"channels": {channel_id: {"id": channel_id, "type": ch["type"], "name": ch["name"], "permissions": "0",
                                       "guild_id": env.guild["id"], "parent_id": None}}})


async def new_channel(env, name: str, overwrites: list | None = None) -> str:
    """A text channel created after the bot started (dispatched, cached by the bot)."""
    cid = env.fake.add_channel(env.guild, name, overwrites=overwrites)
    ch = next(c for c in env.guild["channels"] if c["id"] == cid)
    created = asyncio.ensure_future(env.bot.wait_for("guild_channel_create", check=lambda c: str(c.id) == cid,
                                                     timeout=5))
    await env.fake.dispatch("CHANNEL_CREATE", ch)
    await created
    return cid


async def setup_cmd(env, user, *opts):
    options: list[dict[str, Any]] = []
    resolved: dict[str, dict[str, Any]] = {}
    for opt, res in opts:
        options.append(opt)
        for k, v in res.items():
            resolved.setdefault(k, {}).update(v)
    return await env.fake.slash(env.guild, user, "modbot", [{"name": "setup", "type": 1, "options": options}],
                                resolved=resolved)


async def test_setup_writes_channels_and_role_as_audited_overrides(env):
    """An admin picks two new channels and a role: the effective policy uses them, each change is audited."""
    admin = await server_admin(env)
    cards = await new_channel(env, "cards")
    log = await new_channel(env, "log")
    role = env.guild["mod_role"]
    role_opt = ({"name": "moderator_role", "type": 8, "value": role},
                {"roles": {role: next(r for r in env.guild["roles"] if r["id"] == role)}})
    text = ephemeral_text(await setup_cmd(env, admin, channel_opt(env, "review_channel", cards),
                                          channel_opt(env, "mod_log_channel", log), role_opt))
    assert text == f"Set up: review channel: <#{cards}>; mod-log channel: <#{log}>; moderator role: <@&{role}>."
    policy = await env.bot.policy(env.guild["id"])
    assert (policy.server.review_channel, policy.server.mod_log_channel) == (cards, log)
    assert policy.server.moderator_roles == [role]
    audit = [r[0] for r in env.rows("SELECT key FROM policy_changes ORDER BY id")]
    assert audit == ["server.review_channel", "server.mod_log_channel", "server.moderator_roles"]


async def test_setup_refuses_a_channel_the_bot_cannot_post_in(env):
    """A channel where the bot's Send Messages is denied is refused with the reason; nothing is changed."""
    admin = await server_admin(env)
    closed = await new_channel(env, "closed", overwrites=[
        {"id": env.fake.bot_user["id"], "type": 1, "allow": "0", "deny": str(SEND_MESSAGES)}])
    text = ephemeral_text(await setup_cmd(env, admin, channel_opt(env, "review_channel", closed)))
    # Discord: without Send Messages, Embed Links is denied too (discord.py applies the same rule)
    assert f"the bot lacks send_messages, embed_links in <#{closed}>" in text and "Nothing was changed" in text
    assert env.rows("SELECT * FROM policy_overrides") == []


async def test_setup_refused_for_moderators(env):
    """/modbot setup by a moderator without Manage Server changes nothing."""
    text = ephemeral_text(await setup_cmd(env, env.mod, channel_opt(env, "review_channel", env.review)))
    assert "You need Manage Server" in text
    assert env.rows("SELECT * FROM policy_overrides") == []
