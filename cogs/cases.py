"""Cases in chat: ``/case search`` (filters and pages), ``/case reason`` (audited) and ``/member info``.

Layer: cogs (discord.py extension, loaded after ``cogs.moderation``, whose ``/case`` group it adds two subcommands
to). Thin: acknowledged at once, the member translated into an ``Actor`` with their own permissions in this server,
then :mod:`bot.workflow.cases` authorizes, reads only this server's cases and writes the answer; a reason change is
also posted to the mod log.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.interact import actor_of, answer, guarded
from bot.adapters.discord.translate import PLATFORM
from bot.workflow.cases import MAX_REASON, change_reason, member_info, search_cases
from bot.workflow.views import LogEntry

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)


def search_command(bot: ModBot) -> app_commands.Command:
    """``/case search [member] [moderator] [action] [label] [text] [page]``."""

    @app_commands.describe(member="Cases about this member", moderator="Cases this moderator opened",
                           action="warn, timeout, kick, ban, delete, review, log", label="A label, e.g. insult",
                           text="Words in the reason", page="Page of results (10 per page)")
    async def search(interaction: discord.Interaction, member: discord.User | None = None,
                     moderator: discord.User | None = None, action: str | None = None, label: str | None = None,
                     text: str | None = None, page: app_commands.Range[int, 1, 100_000] = 1) -> None:
        async def work() -> None:
            actor = actor_of(interaction, await bot.policy(interaction.guild_id or 0))
            result = await search_cases(bot.store, PLATFORM, actor, str(interaction.guild_id),
                                        member=str(member.id) if member else None,
                                        moderator=str(moderator.id) if moderator else None, action=action,
                                        label=label, text=text, page=page)
            if not result.total:
                await answer(interaction, "No case matches these filters.")
                return
            head = f"{result.total} matching case(s), page {result.page} of {result.pages}:"
            more = f"\nNext: `/case search ... page:{result.page + 1}`" if result.page < result.pages else ""
            await answer(interaction, head + "\n" + "\n".join(result.lines) + more)

        await guarded(interaction, work)

    return app_commands.Command(name="search", description="Search this server's cases (filters, pages)",
                                callback=search)


def reason_command(bot: ModBot) -> app_commands.Command:
    """``/case reason number reason``: correct a case's reason (audited)."""

    @app_commands.describe(number="Case number", reason=f"The new reason (at most {MAX_REASON} characters)")
    async def reason(interaction: discord.Interaction, number: int, reason: str) -> None:
        async def work() -> None:
            actor = actor_of(interaction, await bot.policy(interaction.guild_id or 0))
            gid = str(interaction.guild_id)
            text = await change_reason(bot.store, PLATFORM, actor, gid, number, reason)
            await answer(interaction, text)
            await bot.desk.post_mod_log(gid, LogEntry(title=f"Case #{number}: reason changed", lines=(
                text, f"Moderator: {actor.id}"), moderator_id=actor.id, kind="case"))

        await guarded(interaction, work)

    return app_commands.Command(name="reason", description="Change a case's reason (audited)", callback=reason)


class Cases(commands.Cog):
    """``/member info``."""

    member = app_commands.Group(name="member", description="A member's moderation record",
                                default_permissions=discord.Permissions(manage_messages=True), guild_only=True)

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    @member.command(name="info", description="A member's cases, strikes, notes and appeals in this server")
    async def info(self, interaction: discord.Interaction, member: discord.User) -> None:
        async def work() -> None:
            actor = actor_of(interaction, await self.bot.policy(interaction.guild_id or 0))
            lines = await member_info(self.bot.store, PLATFORM, actor, str(interaction.guild_id), str(member.id))
            await answer(interaction, "\n".join(lines))

        await guarded(interaction, work)


async def setup(bot: ModBot) -> None:
    """Extension entry point: ``/member info``, and ``search`` / ``reason`` in ``cogs.moderation``'s ``/case``."""
    group = bot.tree.get_command("case")
    if not isinstance(group, app_commands.Group):
        raise RuntimeError("cogs.cases needs cogs.moderation (the /case group) loaded first")
    group.add_command(search_command(bot))
    group.add_command(reason_command(bot))
    await bot.add_cog(Cases(bot))


async def teardown(bot: ModBot) -> None:
    """Extension exit: remove the added subcommands (a reload adds them afresh)."""
    group = bot.tree.get_command("case")
    if isinstance(group, app_commands.Group):
        group.remove_command("search")
        group.remove_command("reason")
