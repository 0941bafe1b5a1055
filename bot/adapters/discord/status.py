"""The Discord side of :mod:`bot.workflow.status`: the ready line and ``/modbot status`` facts of a running bot.

Layer: ``bot.adapters.discord``. Gathers the bot's servers, policies, database location and model, and hands them
to the platform-neutral functions; the text itself is :mod:`bot.workflow.status`'s.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import discord

from bot.adapters.discord.translate import PLATFORM
from bot.logs import READY_LOGGER
from bot.workflow.status import ServerView, database_location, ready_line

ready_log = logging.getLogger(READY_LOGGER)


async def server_view(bot: Any, guild: discord.Guild) -> ServerView:
    """A guild with its effective policy."""
    return ServerView(id=str(guild.id), name=guild.name, policy=await bot.policy(guild.id))


def model_of(bot: Any) -> tuple[str, str]:
    """``(name, version)`` of the loaded scorer (``("?", "?")`` before ``setup_hook`` loaded it)."""
    return str(getattr(bot.scorer, "name", "?")), str(getattr(bot.scorer, "version", "?"))


async def announce_ready(bot: Any) -> str:
    """Log the ready line (:func:`bot.workflow.status.ready_line`, shown at the default log level) and remember
    when the bot first became ready (``bot.ready_at``, UTC) for ``/modbot status``. Returns the line."""
    if getattr(bot, "ready_at", None) is None:
        bot.ready_at = datetime.now(UTC)
    servers = [await server_view(bot, g) for g in sorted(bot.guilds, key=lambda g: g.id)]
    name, version = model_of(bot)
    line = ready_line(PLATFORM, servers, database=database_location(bot.settings.db_path), model=name,
                      model_version=version, identity=str(bot.user) if bot.user else "")
    ready_log.info(line)
    return line
