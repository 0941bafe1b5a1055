"""Review queue, reports, appeals and raid cards: the interactions of the persistent components in
``bot.adapters.discord.views``.

Layer: cogs (discord.py extension). Thin: every handler acknowledges the interaction first (Discord's 3 seconds),
translates the member into an ``Actor`` and asks :class:`bot.workflow.ModerationWorkflow`, which authorizes
server-side with the member's own Discord permissions and does the work; the handler renders the result.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from bot.adapters.discord import cards
from bot.adapters.discord.interact import actor_of, answer, guarded
from bot.adapters.discord.views import review_view
from bot.workflow.authz import Refused

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)


class Review(commands.Cog):
    """Review card decisions, appeal decisions, raid card actions, reports and appeals."""

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    async def _actor(self, interaction: discord.Interaction):  # noqa: ANN202
        if interaction.guild is None:
            raise Refused("This only works inside the server.")
        return actor_of(interaction, await self.bot.policy(interaction.guild.id))

    async def _show(self, interaction: discord.Interaction, card) -> None:  # noqa: ANN001
        """Replace the clicked card with its decided version (an edit of the original response)."""
        if card is not None:
            await interaction.edit_original_response(embed=cards.review_embed(card), view=review_view(card))

    async def on_review_click(self, interaction: discord.Interaction, review_id: int, decision: str,
                              seconds: int | None) -> None:
        """A moderator pressed a card button (or picked a timeout duration)."""
        async def work() -> None:
            actor = await self._actor(interaction)
            result = await self.bot.workflow.decide_review(actor, str(interaction.guild_id), review_id, decision,
                                                           duration_s=seconds)
            await self._show(interaction, result.card)
            if not result.ok:
                await answer(interaction, result.text)

        await guarded(interaction, work, update=True)

    async def on_appeal_click(self, interaction: discord.Interaction, appeal_id: int, decision: str) -> None:
        """Uphold or overturn an appeal (overturning lifts a timeout or ban)."""
        async def work() -> None:
            actor = await self._actor(interaction)
            result = await self.bot.workflow.decide_appeal(actor, str(interaction.guild_id), appeal_id,
                                                           uphold=decision == "uphold")
            await self._show(interaction, result.card)

        await guarded(interaction, work, update=True)

    async def on_raid_click(self, interaction: discord.Interaction, raid_id: int, action: str) -> None:
        """A bulk action on a raid card; the answer lists who was not acted on and why."""
        async def work() -> None:
            actor = await self._actor(interaction)
            text = await self.bot.workflow.raid_action(actor, str(interaction.guild_id), raid_id, action)
            await answer(interaction, text)

        await guarded(interaction, work)

    async def file_report(self, interaction: discord.Interaction, *, member_id: str, channel_id: str | None,
                          message_id: str | None, excerpt: str, reason: str) -> None:
        """Record a member's report and queue it with a card (ephemeral confirmation)."""
        async def work() -> None:
            if interaction.guild is None:
                raise Refused("Reports only work inside a server.")
            result = await self.bot.workflow.report(str(interaction.user.id), str(interaction.guild.id), member_id,
                                                    reason, message_id=message_id, channel_id=channel_id,
                                                    excerpt=excerpt)
            await answer(interaction, result.text)

        await guarded(interaction, work)

    async def file_appeal(self, interaction: discord.Interaction, server_id: str, case_number: int,
                          text: str) -> None:
        """File an appeal of one of the member's own cases (also from the notice DM, outside the server)."""
        async def work() -> None:
            result = await self.bot.workflow.appeal(str(interaction.user.id), server_id, case_number, text)
            await answer(interaction, result.text)

        await guarded(interaction, work)


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Review(bot))
