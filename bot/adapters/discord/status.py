"""The Discord side of :mod:`bot.workflow.status`: the ready line and ``/modbot status`` facts of a running bot.

Layer: ``bot.adapters.discord``. Gathers the bot's servers, policies, database location and model, and hands them
to the platform-neutral functions; the text itself is :mod:`bot.workflow.status`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

import discord

from bot.adapters.discord.translate import PLATFORM
from bot.logs import READY_LOGGER
from bot.workflow.status import ServerView, database_location, ready_line

if TYPE_CHECKING:
    from bot.core.policy import Policy
    from bot.settings import Settings

ready_log = logging.getLogger(READY_LOGGER)


class StatusBot(Protocol):
    """What this module reads of the running bot (:class:`bot.adapters.discord.client.ModBot`, which imports this
    module: named by what is used, no import cycle)."""

    settings: Settings
    ready_at: datetime | None

    @property
    def guilds(self) -> Sequence[discord.Guild]: ...

    @property
    def user(self) -> discord.ClientUser | None: ...

    async def policy(self, guild_id: int | str) -> Policy: ...


async def server_view(bot: StatusBot, guild: discord.Guild) -> ServerView:
    """A guild with its effective policy."""
    return ServerView(id=str(guild.id), name=guild.name, policy=await bot.policy(guild.id))


def model_of(bot: object) -> tuple[str, str]:
    """``(name, version)`` of the bot's loaded scorer (``("?", "?")`` before ``setup_hook`` loaded it)."""
    scorer = getattr(bot, "scorer", None)
    return str(getattr(scorer, "name", "?")), str(getattr(scorer, "version", "?"))


async def announce_ready(bot: StatusBot) -> str:
    """Log the ready line (:func:`bot.workflow.status.ready_line`, shown at the default log level) and remember
    when the bot first became ready (``bot.ready_at``, UTC) for ``/modbot status``. Returns the line."""
    if bot.ready_at is None:
        bot.ready_at = datetime.now(UTC)
    servers = [await server_view(bot, g) for g in sorted(bot.guilds, key=lambda g: g.id)]
    name, version = model_of(bot)
    line = ready_line(PLATFORM, servers, database=database_location(bot.settings.db_path), model=name,
                      model_version=version, identity=str(bot.user) if bot.user else "")
    ready_log.info(line)
    return line
