"""Break-it: the startup problems posted to a server's mod log (a missing permission, the Message Content intent)
are posted once per start, not again every time Discord makes the bot identify afresh (an invalidated session after
a long disconnect fires ``on_ready`` again), where they buried the mod log in copies. Through the real discord.py
client against the fake Discord."""

from __future__ import annotations

import asyncio

import pytest

from tests.discord.fake_discord import BOT_PERMS, KICK_MEMBERS

pytestmark = pytest.mark.discord


def problem_posts(env):
    return [p for p in env.modlog_posts() if p.body["embeds"][0]["title"] == "Startup problem"]


async def test_a_startup_problem_is_posted_once_across_a_fresh_identify(env):
    """The bot's role loses Kick Members; after a restart the mod log gets one "Startup problem" naming it. Discord
    then invalidates the session and the bot identifies again (on_ready fires a second time): still one post."""
    bot_role = next(r for r in env.guild["roles"] if r["name"] == "ModBot")
    await env.fake.set_role_permissions(env.guild, bot_role["id"], BOT_PERMS & ~KICK_MEMBERS)
    await env.stop()
    await env.start()
    await env.fake.wait_until(lambda: len(problem_posts(env)) == 1)
    assert "kick_members" in problem_posts(env)[0].body["embeds"][0]["description"]
    env.bot.ready_event.clear()  # on_ready sets it again once it has reported (event-based: no sleeping)
    await env.fake.drop_connection(4000, hold_resume=True)
    env.fake.sessions.clear()
    env.fake.allow_resume()
    await asyncio.wait_for(env.bot.ready_event.wait(), 10)
    assert len(env.fake.identifies) == 3  # the first start, the restart, the fresh identify
    assert len(problem_posts(env)) == 1
