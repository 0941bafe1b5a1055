"""Review queue, reports, appeals and raid cards: the interactions of the persistent components in
``bot.adapters.discord.views``.

Layer: cogs (discord.py extension). Thin: every handler acknowledges the interaction first (Discord's 3 seconds),
translates the member into an ``Actor`` and asks :class:`bot.workflow.ModerationWorkflow`, which authorizes
server-side with the member's own Discord permissions and does the work; the handler renders the result.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot.adapters.discord import cards
from bot.adapters.discord.interact import actor_of, answer, guarded
from bot.adapters.discord.views import (
    CONFIRM_PREFIX,
    AppealForm,
    ReasonModal,
    ReportForm,
    ReportModal,
    read_form,
    review_view,
)
from bot.workflow.authz import Actor, Refused
from bot.workflow.confirm import CONFIRM_TTL_S, EXPIRED, Confirmation, asks_first, raid_asks_first

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: Reported messages' texts kept for open report forms (the newest; each at most 4,000 characters).
EXCERPTS_KEPT = 500


class Review(commands.Cog):
    """Review card decisions, appeal decisions, raid card actions, reports and appeals."""

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot
        #: open reason modals by custom id, and the submit interactions they took
        self._confirms: dict[str, ReasonModal] = {}
        self._taken: set[int] = set()
        #: seconds a reason modal stays open (the workflow's :data:`~bot.workflow.confirm.CONFIRM_TTL_S`)
        self.confirm_timeout_s: float = CONFIRM_TTL_S
        #: reported messages' text by message id, while their report forms are open (oldest first)
        self._excerpts: dict[str, str] = {}

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
        """A moderator pressed a card button (or picked a timeout duration). A decision that asks first (Kick,
        Ban) opens the reason modal instead; it is carried out on submit (:meth:`on_review_confirmed`)."""
        if asks_first(decision):
            gid = str(interaction.guild_id)
            await self._ask(interaction, f"review:{review_id}:{decision}",
                            lambda actor: self.bot.workflow.confirm_review(actor, gid, review_id, decision),
                            lambda inter, reason: self.on_review_confirmed(inter, review_id, decision, reason))
            return

        async def work() -> None:
            actor = await self._actor(interaction)
            result = await self.bot.workflow.decide_review(actor, str(interaction.guild_id), review_id, decision,
                                                           duration_s=seconds)
            await self._show(interaction, result.card)
            if not result.ok:
                await answer(interaction, result.text)

        await guarded(interaction, work, update=True)

    async def on_review_confirmed(self, interaction: discord.Interaction, review_id: int, decision: str,
                                  reason: str) -> None:
        """The reason modal of a card decision was submitted: decide with the reason (every check again, with the
        submitter's permissions now) and replace the card with its decided version."""
        async def work() -> None:
            actor = await self._actor(interaction)
            result = await self.bot.workflow.decide_review(actor, str(interaction.guild_id), review_id, decision,
                                                           reason=reason)
            await self._show(interaction, result.card)
            if not result.ok:
                await answer(interaction, result.text)

        await guarded(interaction, work, update=interaction.message is not None)

    async def _ask(self, interaction: discord.Interaction, what: str,
                   confirmation: Callable[[Actor], Awaitable[Confirmation]],
                   on_reason: Callable[[discord.Interaction, str], Awaitable[None]]) -> None:
        """Open the reason modal (the interaction's initial response, within Discord's 3 seconds) after the
        workflow's quick checks; a refusal is answered ephemerally instead and no modal opens."""
        try:
            actor = await self._actor(interaction)
            asked = await confirmation(actor)
        except Refused as exc:
            await answer(interaction, cards.refusal(exc))
            return
        except Exception:
            log.exception("confirmation failed", extra={"server": interaction.guild_id})
            await answer(interaction, "Something went wrong; it was logged.")
            return

        async def submitted(inter: discord.Interaction, reason: str) -> None:
            self._taken.add(inter.id)  # before any await: the stale-modal listener must not answer it too
            try:
                await on_reason(inter, reason)
            finally:
                self._taken.discard(inter.id)

        modal = ReasonModal(asked, what, submitted, self._closed, timeout=self.confirm_timeout_s)
        self._confirms[modal.custom_id] = modal
        try:
            await interaction.response.send_modal(modal)
        except discord.HTTPException as exc:  # too late (10062): the member clicks again
            self._confirms.pop(modal.custom_id, None)
            modal.stop()
            log.warning("reason modal could not be opened: %s", exc)

    def _closed(self, modal: ReasonModal) -> None:
        """A reason modal was submitted or timed out: it takes no more submits."""
        self._confirms.pop(modal.custom_id, None)

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A member's appeal or report form submitted (:func:`~bot.adapters.discord.views.read_form`: whenever it
        comes, after a restart too) is filed. A reason modal submitted after it expired, after a restart or a
        second time: nobody holds it any more, so nothing is done; the moderator is told (discord.py alone would
        leave "This interaction failed")."""
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        form = read_form(data)
        if isinstance(form, AppealForm):
            await self.file_appeal(interaction, form.server_id, form.case_number, form.text)
            return
        if isinstance(form, ReportForm):
            await self.file_report(interaction, member_id=form.member_id, channel_id=form.channel_id,
                                   message_id=form.message_id, excerpt=self._excerpt(form), reason=form.reason)
            return
        custom_id = str(data.get("custom_id", ""))
        if not custom_id.startswith(CONFIRM_PREFIX):
            return
        if interaction.id in self._taken:
            self._taken.discard(interaction.id)
            return
        if custom_id in self._confirms:  # the open modal takes it (its task runs first)
            return
        try:
            await answer(interaction, EXPIRED)
        except discord.HTTPException as exc:
            log.info("stale reason modal could not be answered: %s", exc)

    def remember_excerpt(self, modal: ReportModal) -> None:
        """Keep the reported message's text while its report form is open (the newest
        :data:`EXCERPTS_KEPT`), for the card when automod kept none of it; a submit after a restart goes without."""
        if modal.message_id and modal.excerpt:
            self._excerpts.pop(modal.message_id, None)
            self._excerpts[modal.message_id] = modal.excerpt
            while len(self._excerpts) > EXCERPTS_KEPT:
                self._excerpts.pop(next(iter(self._excerpts)))

    def _excerpt(self, form: ReportForm) -> str:
        return self._excerpts.get(form.message_id, "") if form.message_id else ""

    async def on_appeal_click(self, interaction: discord.Interaction, appeal_id: int, decision: str) -> None:
        """Uphold or overturn an appeal (overturning lifts a timeout or ban)."""
        async def work() -> None:
            actor = await self._actor(interaction)
            result = await self.bot.workflow.decide_appeal(actor, str(interaction.guild_id), appeal_id,
                                                           uphold=decision == "uphold")
            await self._show(interaction, result.card)

        await guarded(interaction, work, update=True)

    async def on_raid_click(self, interaction: discord.Interaction, raid_id: int, action: str) -> None:
        """A bulk action on a raid card; the answer lists who was not acted on and why. A bulk sanction asks
        first (the reason modal); it is carried out on submit."""
        gid = str(interaction.guild_id)
        if raid_asks_first(action):
            await self._ask(interaction, f"raid:{raid_id}:{action}",
                            lambda actor: self.bot.workflow.confirm_raid(actor, gid, raid_id, action),
                            lambda inter, reason: self.on_raid_confirmed(inter, raid_id, action, reason))
            return

        async def work() -> None:
            actor = await self._actor(interaction)
            text = await self.bot.workflow.raid_action(actor, gid, raid_id, action)
            await answer(interaction, cards.said(text))

        await guarded(interaction, work)

    async def on_raid_confirmed(self, interaction: discord.Interaction, raid_id: int, action: str,
                                reason: str) -> None:
        """The reason modal of a bulk sanction was submitted: act on every raider with the reason."""
        async def work() -> None:
            actor = await self._actor(interaction)
            text = await self.bot.workflow.raid_action(actor, str(interaction.guild_id), raid_id, action,
                                                       reason=reason)
            await answer(interaction, cards.said(text))

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
