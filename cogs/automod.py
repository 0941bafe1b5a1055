"""Automod: every new or edited guild message goes through the core; the workflow carries out the verdict. Joins
feed the join-burst raid signal.

Layer: cogs (discord.py extension). Thin: translation in ``bot.adapters.discord.translate``, decisions in
``bot.core.service``, what happens to a verdict (actions, case, mod log, review card, raid response) in
``bot.workflow``. Each message is handled as a task the workflow tracks, so shutdown waits for verdicts being
carried out before the Discord session closes.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from bot.adapters.discord.translate import to_core

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot
    from bot.core.service import Outcome

log = logging.getLogger(__name__)


class Automod(commands.Cog):
    """Listens to messages, edits and joins."""

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        """Judge a new guild message (not the bot's own)."""
        if message.guild is None or message.author.id == self.bot.user.id:  # type: ignore[union-attr]
            return
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return
        await self.judge(message, edited=False)

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        """Judge an edited guild message, cached or not; embed-only updates (no content change) are skipped."""
        if payload.guild_id is None or "content" not in payload.data or "author" not in payload.data:
            return
        cached = payload.cached_message
        if cached is not None and cached.content == payload.data.get("content"):
            return
        message = payload.message
        if message.author.id == self.bot.user.id or message.edited_at is None:  # type: ignore[union-attr]
            return
        await self.judge(message, edited=True)

    @commands.Cog.listener()
    async def on_member_join(self, member: discord.Member) -> None:
        """Count the join towards a join burst (many accounts joining within seconds)."""
        if self.bot.closing:
            return
        await self.bot.workflow.member_joined(str(member.guild.id), str(member.id), datetime.now(UTC))

    @commands.Cog.listener()
    async def on_guild_channel_update(self, before: discord.abc.GuildChannel, after: discord.abc.GuildChannel
                                      ) -> None:
        """A channel changed (permissions, name): try the mod-log and review channels again."""
        self.bot.desk.forget_problems(str(after.id))

    async def judge(self, message: discord.Message, *, edited: bool) -> Outcome | None:
        """Run one message through the workflow (judge, then carry out); observers get ``on_moderation_outcome``."""
        if self.bot.closing:
            return None
        return await self.bot.workflow.moderate(
            to_core(message, edited=edited), observers=(lambda o: self.bot.dispatch("moderation_outcome", o),))


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Automod(bot))
