"""Breaking the Discord bot's enforcer as a moderator would, through the real discord.py client against the fake
Discord (a real SQLite mod log). Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, guild_requests, mod_on, text_opt

pytestmark = pytest.mark.discord


async def test_a_kick_whose_connection_is_reset_is_recorded_as_failed(env):
    """``/mod kick`` while the connection to Discord is reset (discord.py does not retry that): the case records
    the kick as failed with the network's reason, the moderator is told, and the kick is not sent again. Before,
    the aiohttp error escaped the enforcer, so the case stayed ``pending`` with no failure recorded and the
    moderator got "Something went wrong"."""
    env.fake.reset_connection("DELETE", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}", times=5)
    cb = await mod_on(env, "kick", env.alice, text_opt("reason", "raiding"))
    assert ephemeral_text(cb) == (f"Case #1: kick <@{env.alice['id']}> FAILED: network error: could not reach "
                                  "Discord (ServerDisconnectedError: Server disconnected)\n"
                                  "dm: sent before the kick, which failed; a correction was sent")
    kicks = guild_requests(env, "DELETE", "members", env.alice)  # aiohttp itself tries a reused connection twice
    assert kicks and all(k.response == {"status": 0, "code": 0} for k in kicks)
    ((status, failure),) = env.rows("SELECT status, failure FROM cases")
    assert status == "failed" and "network" in failure, failure
