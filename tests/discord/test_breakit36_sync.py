"""Break-it: the first step of setting the bot up, syncing its slash commands to a server, fails when the bot was
invited without the ``applications.commands`` scope (Discord answers 403 Missing Access, 50001). The server
manager was told nothing: ``@ModBot sync`` got no reply and ``/modbot sync`` kept "thinking" for good. Through
the real discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text
from tests.discord.replies import server_admin

pytestmark = pytest.mark.discord

COMMANDS = r"/applications/.*/guilds/.*/commands"


async def test_mention_sync_refused_by_discord_says_why_and_what_to_do(env):
    """The owner's ``@ModBot sync`` while Discord refuses the sync: the bot replies that nothing was synced,
    with Discord's reason and the missing scope, and stays up (a later sync works)."""
    owner = env.fake.owner
    env.fake.add_member(env.guild, owner)
    await env.fake.dispatch("GUILD_MEMBER_ADD", {**env.fake.member(env.guild, owner["id"]),
                                                 "guild_id": env.guild["id"]})
    env.fake.fail("PUT", COMMANDS, status=403, code=50001, message="Missing Access")
    await env.post(owner, f"<@{env.fake.bot_user['id']}> sync")
    reply = await env.fake.wait_for("POST", rf"/channels/{env.general}/messages",
                                    pred=lambda r: "sync" in (r.body.get("content") or "").lower())
    text = reply.body["content"]
    assert text.startswith("Nothing was synced: Discord refused (Missing Access"), text
    assert "applications.commands" in text
    await env.fake.post(env.guild, env.general, owner, f"<@{env.fake.bot_user['id']}> sync please")
    await env.fake.wait_for("POST", rf"/channels/{env.general}/messages",
                            pred=lambda r: (r.body.get("content") or "").startswith("Synced "))


async def test_slash_sync_refused_by_discord_says_why(env):
    """``/modbot sync`` by a server manager while Discord refuses the sync is answered (ephemerally) with the
    reason and the missing scope; it said "Something went wrong"."""
    admin = await server_admin(env)
    env.fake.fail("PUT", COMMANDS, status=403, code=50001, message="Missing Access")
    cb = await env.fake.slash(env.guild, admin, "modbot", [{"name": "sync", "type": 1, "options": []}])
    text = ephemeral_text(cb)
    assert text.startswith("Nothing was synced: Discord refused (Missing Access"), text
    assert "applications.commands" in text
