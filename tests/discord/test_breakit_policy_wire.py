"""``/policy set`` of a channel key is a setup by another door (issue 28's "Bad input": a setup that picks a
channel the bot cannot post in gets a clear answer and nothing changes), through the real discord.py client
against the fake Discord. Each test failed on main before its fix."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, text_opt
from tests.discord.replies import server_admin
from tests.discord.test_setup_wire import SEND_MESSAGES, new_channel

pytestmark = pytest.mark.discord


async def test_policy_set_of_a_channel_the_bot_cannot_post_in_is_refused(env):
    """``/policy set server.review_channel <id>`` naming a channel where the bot's Send Messages is denied is
    refused with what it lacks, as ``/modbot setup`` is; before, it was stored and review cards silently failed."""
    admin = await server_admin(env)
    closed = await new_channel(env, "closed", overwrites=[
        {"id": env.fake.bot_user["id"], "type": 1, "allow": "0", "deny": str(SEND_MESSAGES)}])
    cb = await mod_cmd(env, "set", text_opt("key", "server.review_channel"), text_opt("value", closed),
                       user=admin, group="policy")
    text = ephemeral_text(cb)
    assert f"the bot lacks send_messages, embed_links in <#{closed}>" in text and "Nothing was changed" in text
    assert env.rows("SELECT * FROM policy_overrides") == []


async def test_policy_set_of_a_channel_of_another_server_is_refused(env):
    """A well-formed id that is no channel of this server is refused; nothing is stored."""
    admin = await server_admin(env)
    cb = await mod_cmd(env, "set", text_opt("key", "server.mod_log_channel"), text_opt("value", "123456789012345678"),
                       user=admin, group="policy")
    text = ephemeral_text(cb)
    assert "no channel 123456789012345678 in this server" in text and "Nothing was changed" in text
    assert env.rows("SELECT * FROM policy_overrides") == []


async def test_policy_set_of_a_channel_mention_stores_its_id(env):
    """``<#id>`` (what Discord inserts when an admin picks a channel while typing) is taken as that channel."""
    admin = await server_admin(env)
    cards = await new_channel(env, "cards")
    cb = await mod_cmd(env, "set", text_opt("key", "server.review_channel"), text_opt("value", f"<#{cards}>"),
                       user=admin, group="policy")
    assert ephemeral_text(cb).startswith("Policy updated: `server.review_channel`")
    assert (await env.bot.policy(env.guild["id"])).server.review_channel == cards
