"""``/modbot status``: how the running bot is doing in this server, for its moderators.

Layer: cogs (discord.py extension, loaded after ``cogs.admin``, whose ``/modbot`` group it adds a subcommand to).
Thin: acknowledged at once, the member translated into an ``Actor`` with their own permissions in this server, the
lines written by :func:`bot.workflow.status.status_report` (which refuses anyone but a moderator), answered
ephemerally as one embed.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.adapters.discord.interact import actor_of, add_to_modbot_group, answer, guarded, remove_from_modbot_group
from bot.adapters.discord.status import model_of, server_view
from bot.adapters.discord.translate import PLATFORM
from bot.workflow.status import database_location, status_report

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: The embed description's limit (Discord: 4,096 characters).
DESCRIPTION_MAX = 4096


def missing_permissions(bot: ModBot, guild: discord.Guild) -> list[str]:
    """The bot's :data:`~bot.adapters.discord.client.REQUIRED_PERMISSIONS` it lacks in ``guild`` (none with
    Administrator), as one sentence per problem, with the startup problems (a missing intent) first."""
    from bot.adapters.discord.client import REQUIRED_PERMISSIONS

    problems = list(bot.startup_problems)
    me = guild.me
    if me is not None and not me.guild_permissions.administrator:
        lacking = [name for name, value in REQUIRED_PERMISSIONS if value and not getattr(me.guild_permissions, name)]
        if lacking:
            problems.append("the bot lacks permissions: " + ", ".join(lacking))
    return problems


def status_command(bot: ModBot) -> app_commands.Command:
    """The ``status`` subcommand, bound to ``bot``."""

    async def status(interaction: discord.Interaction) -> None:
        async def work() -> None:
            guild = interaction.guild
            assert guild is not None
            view = await server_view(bot, guild)
            name, version = model_of(bot)
            lines = await status_report(
                actor_of(interaction, view.policy), bot.store, PLATFORM, view,
                database=database_location(bot.settings.db_path), model=name, model_version=version,
                started_at=getattr(bot, "ready_at", None) or datetime.now(UTC),
                service_stats=getattr(bot.service, "stats", None), problems=missing_permissions(bot, guild))
            embed = discord.Embed(title=f"ModBot in {guild.name}", description="\n".join(lines)[:DESCRIPTION_MAX],
                                  colour=discord.Colour.blurple())
            await answer(interaction, embed=embed)

        await guarded(interaction, work)

    return app_commands.Command(name="status", description="How the bot is doing in this server (moderators)",
                                callback=status)


async def setup(bot: ModBot) -> None:
    """Extension entry point: add ``status`` to the ``/modbot`` group of ``cogs.admin``."""
    add_to_modbot_group(bot, status_command(bot), "cogs.status")


async def teardown(bot: ModBot) -> None:
    """Extension exit: remove the subcommand again (a reload adds it afresh)."""
    remove_from_modbot_group(bot, "status")
