"""Wire tests: the ready line the Discord bot logs when it starts, and ``/modbot status`` for moderators."""

from __future__ import annotations

import logging

import pytest

from bot.logs import READY_LOGGER
from tests.discord.helpers import ephemeral_text

pytestmark = pytest.mark.discord


async def status(env, user):
    return await env.fake.slash(env.guild, user, "modbot", [{"name": "status", "type": 1, "options": []}])


async def test_ready_line_names_servers_database_model_and_unset_channels(env, caplog):
    """On ready the bot logs one line with both servers, the absolute database path, the model and its version,
    and which server has no review or mod-log channel yet."""
    await env.stop()
    (env.policy_dir / "servers" / f"discord-{env.other['id']}.toml").write_text(
        f'[server]\nmoderator_roles = ["{env.other["mod_role"]}"]\n')
    with caplog.at_level(logging.INFO, logger=READY_LOGGER):
        await env.start()
    lines = [r.getMessage() for r in caplog.records if r.name == READY_LOGGER]
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("discord bot ready as ")
    assert f"in 2 servers: Main ({env.guild['id']}), Other ({env.other['id']})" in line
    assert f"database {env.db.resolve()};" in line and env.db.is_absolute()
    assert "model fake version 1" in line
    assert f"not set yet: Other ({env.other['id']}) review_channel, mod_log_channel" in line
    assert f"Main ({env.guild['id']}) review_channel" not in line


async def test_modbot_status_tells_a_moderator_how_the_bot_is_doing(env):
    """/modbot status answers a moderator ephemerally with the model, the database, both channels, the open
    review items and the messages judged since start."""
    await env.post(env.alice, "identityhate now")
    await env.fake.wait_for("POST", rf"/channels/{env.review}/messages")
    cb = await status(env, env.mod)
    assert cb.body["data"]["flags"] & 64
    text = cb.body["data"]["embeds"][0]["description"]
    assert "Model: fake version 1." in text
    assert f"Database: {env.db.resolve()}." in text
    assert f"review_channel (review cards): <#{env.review}>." in text
    assert f"mod_log_channel (the mod log): <#{env.modlog}>." in text
    assert "Open review items: 1." in text
    assert "Messages judged since then: 1." in text


async def test_modbot_status_is_refused_for_members(env):
    """/modbot status by a member without moderator rights is refused ephemerally and shows nothing."""
    text = ephemeral_text(await status(env, env.bob))
    assert "You need Manage Messages" in text and "Database" not in text
