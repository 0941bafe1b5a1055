"""Wire test (thirty-sixth session's break-it pass, area "config"): the real discord.py client against the local
fake Discord names a server's file that no server of the bot reads."""

from __future__ import annotations

import logging

import pytest

pytestmark = pytest.mark.discord


async def test_a_server_file_for_a_server_the_bot_is_not_in_is_named_at_ready(env, caplog):
    """``discord-<id>.toml`` with one digit of the guild id mistyped is a well-formed name, so it passed the start
    check and was never read: the guild ran on the default policy and nothing said so. Once the bot knows its
    servers it logs a warning naming the file; the files of its own servers are not named."""
    await env.stop()
    typo = env.policy_dir / "servers" / f"discord-{int(env.guild['id']) + 1}.toml"
    typo.write_text('[thresholds]\nthreat = { review = 0.4 }\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="bot.adapters.discord.client"):
        await env.start()
        await env.bot.caught_up.wait()
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "bot.adapters.discord.client" and r.levelno == logging.WARNING]
    assert warnings == [f"{typo}: this bot is in no server with the id in its name (a typo in the server id, or a "
                        "server the bot has left?); no server reads it"]
