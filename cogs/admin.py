"""Bot administration: sync slash commands to one server on a moderator's request.

Layer: cogs (discord.py extension). Commands are never synced globally on start (discord.py's advice): a member
with Manage Server (or the application owner) runs ``/modbot sync`` or, before any slash command exists in the
server, mentions the bot with ``sync`` (``@ModBot sync``), which needs no slash command and no prefix.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)


class Admin(commands.Cog):
    """``/modbot sync`` and the mention fallback ``@ModBot sync``."""

    modbot = app_commands.Group(name="modbot", description="Bot administration",
                                default_permissions=discord.Permissions(manage_guild=True), guild_only=True)

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    async def sync_guild(self, guild: discord.Guild) -> int:
        """Copy the global command tree to ``guild`` and sync it there; returns the number of commands."""
        self.bot.tree.copy_global_to(guild=guild)
        cmds = await self.bot.tree.sync(guild=guild)
        log.info("synced %d commands to server %s", len(cmds), guild.id)
        return len(cmds)

    async def sync_answer(self, guild: discord.Guild) -> str:
        """Sync to ``guild`` and say how it went: ``Synced N commands to this server.``, or, when Discord refuses
        (403 Missing Access when the bot was invited without the ``applications.commands`` scope, a 5xx...),
        why nothing was synced and what to do."""
        try:
            n = await self.sync_guild(guild)
        except discord.HTTPException as exc:
            log.warning("syncing commands to server %s failed: %s %s", guild.id, exc.status, exc.code)
            why = f"{exc.text or 'HTTP error'} ({exc.code or exc.status})"
            hint = (" The bot was probably invited without the `applications.commands` scope: open its invite URL "
                    "again (scope `bot applications.commands`, see the setup guide), then sync again."
                    if exc.status == 403 else " Try again in a minute.")
            return f"Nothing was synced: Discord refused ({why}).{hint}"
        return f"Synced {n} commands to this server."

    async def _allowed(self, member: discord.abc.User, guild: discord.Guild) -> bool:
        if isinstance(member, discord.Member) and (member.guild_permissions.manage_guild or member.id == guild.owner_id):
            return True
        return await self.bot.is_owner(member)

    @modbot.command(name="sync", description="Sync the bot's slash commands to this server")
    async def sync(self, interaction: discord.Interaction) -> None:
        """Sync commands to this server (Manage Server only, checked server-side)."""
        guild = interaction.guild
        if guild is None or not (interaction.permissions.manage_guild or await self.bot.is_owner(interaction.user)):
            await interaction.response.send_message("Only members with Manage Server can sync commands.",
                                                    ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        await interaction.followup.send(await self.sync_answer(guild), ephemeral=True)

    @commands.command(name="sync")
    @commands.guild_only()
    async def sync_mention(self, ctx: commands.Context[ModBot]) -> None:
        """``@ModBot sync``: the first sync, before slash commands exist in the server."""
        assert ctx.guild is not None
        if not await self._allowed(ctx.author, ctx.guild):
            await ctx.reply("Only members with Manage Server can sync commands.", mention_author=False)
            return
        await ctx.reply(await self.sync_answer(ctx.guild), mention_author=False)


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Admin(bot))
