"""Members' names: judge a member's display name (nickname, else global display name, else username) when they
join and whenever it changes (issue 25 item 16).

Layer: cogs (discord.py extension), thin: the judging, the case and the review card live in
:mod:`bot.workflow.names`. Needs the members intent (``bot_intents`` requests it): ``GUILD_MEMBER_ADD`` and
``GUILD_MEMBER_UPDATE``. A name event is never a message: it does not reach the spam or raid windows.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)


def shown_name(member: discord.Member) -> tuple[str, str]:
    """``(name, kind)``: what other members see and what Discord calls it (nickname / display name / username)."""
    if member.nick:
        return member.nick, "nickname"
    if member.global_name:
        return member.global_name, "display name"
    return member.name, "username"


class Names(commands.Cog):
    """Judges members' names on join and on change."""

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    async def _judge(self, member: discord.Member) -> None:
        if self.bot.closing or member.bot:
            return
        name, kind = shown_name(member)
        try:
            await self.bot.workflow.names.name_seen(str(member.guild.id), str(member.id), name, kind=kind)
        except Exception:  # a failed judgement of a name must not stop the bot; logged with the member id
            log.exception("judging the name of member %s failed", member.id, extra={"server": str(member.guild.id)})

    @commands.Cog.listener()
    async def on_member_join(self, member: discord.Member) -> None:
        """A member joined: judge the name they joined with."""
        await self._judge(member)

    @commands.Cog.listener()
    async def on_member_update(self, before: discord.Member, after: discord.Member) -> None:
        """A member changed: judge the name only when the shown name changed (roles, timeouts are ignored)."""
        if shown_name(before) != shown_name(after):
            await self._judge(after)

    @commands.Cog.listener()
    async def on_user_update(self, before: discord.User, after: discord.User) -> None:
        """The account's global display name or username changed: discord.py reports it here, not in
        ``on_member_update`` (the member's copy shares the user). Judged in each guild where no nickname hides it."""
        if (before.global_name, before.name) == (after.global_name, after.name):
            return
        for guild in after.mutual_guilds:
            member = guild.get_member(after.id)
            if member is not None and not member.nick:
                await self._judge(member)


async def setup(bot: ModBot) -> None:
    """discord.py extension entry point."""
    await bot.add_cog(Names(bot))
