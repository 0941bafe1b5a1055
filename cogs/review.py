"""Review queue: cards in the server's review channel, moderators' decisions, reports and appeals.

Layer: cogs (discord.py extension). The persistent components in ``bot.adapters.discord.views`` call into this
cog. Every click is checked here, server-side: only members with Manage Messages or one of the policy's
``server.moderator_roles`` may decide; anyone else gets an ephemeral refusal and nothing changes.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot.adapters.discord import cards
from bot.adapters.discord.escalate import forget_member, strike_and_escalate
from bot.adapters.discord.translate import PLATFORM
from bot.adapters.discord.views import appeal_view, review_view
from bot.core.models import (
    Action,
    ActionKind,
    CaseStatus,
    ChannelRef,
    MemberRef,
    Message,
    ReviewDecision,
    ServerRef,
)
from bot.store.errors import AppealError, CaseNotFound, ReviewAlreadyDecided, ReviewNotFound

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: Card button -> (review decision, action carried out, past-tense outcome).
DECISIONS: dict[str, tuple[ReviewDecision, ActionKind, str]] = {
    "dismiss": (ReviewDecision.DISMISSED, ActionKind.NONE, "dismissed (false positive)"),
    "delete": (ReviewDecision.DELETED, ActionKind.DELETE, "message deleted"),
    "warn": (ReviewDecision.WARNED, ActionKind.WARN, "warned"),
    "timeout": (ReviewDecision.TIMED_OUT, ActionKind.TIMEOUT, "timed out"),
    "kick": (ReviewDecision.KICKED, ActionKind.KICK, "kicked"),
    "ban": (ReviewDecision.BANNED, ActionKind.BAN, "banned"),
    "investigating": (ReviewDecision.INVESTIGATING, ActionKind.NONE, "investigating"),
}


async def refuse(interaction: discord.Interaction, text: str) -> None:
    """Answer ephemerally (or follow up when already answered); nothing else changes."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True)
    else:
        await interaction.response.send_message(text, ephemeral=True)


class Review(commands.Cog):
    """Review cards, decisions, reports and appeals."""

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    # ------------------------------------------------------------------ helpers
    async def is_moderator(self, interaction: discord.Interaction) -> bool:
        """Manage Messages in this channel, or one of the policy's moderator roles (checked server-side)."""
        if interaction.guild is None or not isinstance(interaction.user, discord.Member):
            return False
        if interaction.permissions.manage_messages or interaction.permissions.administrator:
            return True
        policy = await self.bot.policy(interaction.guild.id)
        return policy.is_moderator([str(r.id) for r in interaction.user.roles])

    async def review_channel(self, guild_id: int | str) -> discord.abc.Messageable | None:
        """The server's review channel, or ``None`` when unset or gone (deleted / no access)."""
        policy = await self.bot.policy(guild_id)
        cid = policy.server.review_channel
        if not cid:
            return None
        try:
            return self.bot.get_channel(int(cid)) or await self.bot.fetch_channel(int(cid))  # type: ignore[return-value]
        except (discord.HTTPException, ValueError):
            return None

    async def _send_card(self, guild_id: str, review_id: int, embed: discord.Embed,
                         view: discord.ui.View) -> discord.Message | None:
        channel = await self.review_channel(guild_id)
        msg = None
        if channel is not None:
            try:
                msg = await channel.send(embed=embed, view=view)
            except discord.HTTPException as exc:
                log.error("cannot post review card %s: %s", review_id, exc, extra={"server": guild_id})
        if msg is None:
            await self.bot.mod_log(guild_id, f"Review #{review_id} could not be posted: the review channel is not "
                                   "set or cannot be reached. Set `server.review_channel` with /policy set.")
            return None
        await self.bot.store.set_review_card(review_id, str(msg.id))
        return msg

    async def post_card(self, review_id: int, *, verdict: Any = None, case_number: int | None = None,
                        failures: list[str] | None = None, text: str | None = None) -> discord.Message | None:
        """Post the card of review item ``review_id`` (automod verdict or report) in the review channel."""
        item = await self.bot.store.get_review(review_id)
        if item is None:
            return None
        policy = await self.bot.policy(item.server_id)
        now = datetime.now(UTC)
        strikes = await self.bot.store.active_strikes(PLATFORM, item.server_id, item.member_id, now)
        guild = self.bot.get_guild(int(item.server_id))
        member = guild.get_member(int(item.member_id)) if guild else None
        channel = ChannelRef(item.channel_id or "")
        scores = dict(verdict.scores.as_dict()) if verdict is not None and verdict.scores else dict(item.scores)
        embed = cards.review_card(
            review_id=item.id, server_id=item.server_id, source=item.source, member_id=item.member_id, member=member,
            joined_at=member.joined_at if member else None,
            strikes=len(strikes), points=sum(s.points for s in strikes), channel_id=item.channel_id,
            message_id=item.message_id, text=verdict.message.text if verdict is not None else (text or ""),
            scores={k: v for k, v in scores.items()}, thresholds=policy.thresholds_for(channel),
            rules=[f"{h.rule}: {h.detail}" if h.detail else h.rule for h in (verdict.rule_hits if verdict else ())],
            reason=item.reason, case_number=case_number if case_number is not None else item.case_number,
            failures=failures or [])
        return await self._send_card(item.server_id, item.id, embed, review_view(item.id))

    # ------------------------------------------------------------------ review decisions
    async def on_review_click(self, interaction: discord.Interaction, review_id: int, decision: str,
                              seconds: int | None) -> None:
        """A moderator pressed a card button (or picked a timeout duration)."""
        guild = interaction.guild
        if guild is None or not await self.is_moderator(interaction):
            await refuse(interaction, "Only moderators (Manage Messages or the moderator role) can decide review "
                                      "items. Nothing was changed.")
            return
        item = await self.bot.store.get_review(review_id, PLATFORM, str(guild.id))
        if item is None:
            await refuse(interaction, f"Review item #{review_id} does not exist in this server.")
            return
        if item.decision not in (ReviewDecision.OPEN, ReviewDecision.INVESTIGATING):
            await refuse(interaction, f"Review #{review_id} was already decided ({item.decision.value} by "
                                      f"<@{item.moderator_id}>).")
            return
        rdecision, kind, outcome = DECISIONS[decision]
        if kind is ActionKind.TIMEOUT and not seconds:
            await refuse(interaction, "Pick a timeout duration.")
            return
        if kind in (ActionKind.WARN, ActionKind.TIMEOUT, ActionKind.KICK) and await self._member(
                guild, item.member_id) is None:
            await refuse(interaction, f"<@{item.member_id}> is no longer in this server; nothing was changed "
                                      "(Ban still works).")
            return
        now = datetime.now(UTC)
        mod = interaction.user
        note = ""
        if kind is not ActionKind.NONE:
            note = await self._act(guild, item, kind, seconds, str(mod.id))
        try:
            await self.bot.store.decide_review(review_id, rdecision, str(mod.id), now, platform=PLATFORM,
                                               server_id=str(guild.id))
        except (ReviewAlreadyDecided, ReviewNotFound) as exc:
            await refuse(interaction, f"Review #{review_id}: {exc}")
            return
        if rdecision is ReviewDecision.DISMISSED and item.case_number is not None:
            try:
                await self.bot.store.pardon(PLATFORM, str(guild.id), case_number=item.case_number,
                                            moderator_id=str(mod.id), now=now)
                await self.bot.store.set_case_status(PLATFORM, str(guild.id), item.case_number,
                                                     CaseStatus.OVERTURNED, now=now)
            except CaseNotFound:
                pass
            forget_member(self.bot, guild.id, item.member_id)
        if kind is ActionKind.TIMEOUT:
            outcome += f" for {seconds}s"
        base = interaction.message.embeds[0] if interaction.message and interaction.message.embeds else (
            discord.Embed(title=f"Review #{review_id}"))
        embed = cards.decided(base, outcome=outcome, moderator=mod, when=now,
                              dismissed=rdecision is ReviewDecision.DISMISSED, note=note)
        final = rdecision is not ReviewDecision.INVESTIGATING
        await interaction.response.edit_message(embed=embed, view=review_view(review_id, disabled=final))
        await self.bot.mod_log(guild.id, f"Review #{review_id} (<@{item.member_id}>): **{outcome}** by {mod.mention}"
                               + (f"\n{note}" if note else ""), title="Review decision",
                               colour=discord.Colour.blue())
        log.info("review %s decided %s by %s", review_id, rdecision.value, mod.id, extra={"server": guild.id})

    async def _member(self, guild: discord.Guild, member_id: str) -> discord.Member | None:
        member = guild.get_member(int(member_id))
        if member is None:
            try:
                member = await guild.fetch_member(int(member_id))
            except discord.HTTPException:
                return None
        return member

    async def _act(self, guild: discord.Guild, item: Any, kind: ActionKind, seconds: int | None, mod_id: str) -> str:
        """Carry out a moderator's decision; a sanction opens a case. Returns a note on failures ('' if none)."""
        reason = f"review #{item.id}: {item.reason}"[:400]
        message = Message(ServerRef(PLATFORM, str(guild.id)), ChannelRef(item.channel_id or "0"),
                          MemberRef(item.member_id), item.message_id or "0", "", datetime.now(UTC))
        if kind is ActionKind.DELETE:
            if not item.message_id or not item.channel_id:
                return "no message to delete"
            res = await self.bot.enforcer.delete_message(item.channel_id, item.message_id)
            if not res.ok:
                return f"delete failed: {res.reason}"
            return await strike_and_escalate(self.bot, guild, item.member_id, kind, reason,
                                             case_number=item.case_number, message_id=item.message_id)
        expires = None
        if kind is ActionKind.TIMEOUT and seconds:
            expires = datetime.now(UTC) + timedelta(seconds=seconds)
        case = await self.bot.store.open_case(PLATFORM, str(guild.id), item.member_id, kind, reason,
                                              moderator_id=mod_id, message_id=item.message_id, expires_at=expires)
        action = Action(kind, reason=reason, duration_s=seconds, source="review",
                        delete_message=bool(item.message_id and item.channel_id))
        res = await self.bot.enforcer.apply(message, action, case_number=case.number)
        failure = None if res.ok else res.reason
        await self.bot.store.set_case_status(PLATFORM, str(guild.id), case.number,
                                             CaseStatus.APPLIED if res.ok else CaseStatus.FAILED, failure=failure)
        note = f"case #{case.number}" + (f" FAILED: {failure}" if failure else "")
        if res.ok:
            more = await strike_and_escalate(self.bot, guild, item.member_id, kind, reason, case_number=case.number,
                                             duration_s=seconds, message_id=item.message_id)
            note += f"; {more}" if more else ""
        return note

    # ------------------------------------------------------------------ reports
    async def file_report(self, interaction: discord.Interaction, *, member_id: str, channel_id: str | None,
                          message_id: str | None, excerpt: str, reason: str) -> None:
        """Record a member's report and post its card; ephemeral confirmation (or error, nothing recorded)."""
        guild = interaction.guild
        if guild is None:
            await refuse(interaction, "Reports only work inside a server.")
            return
        if await self.review_channel(guild.id) is None:
            await refuse(interaction, "This server's moderators have no working review channel, so reports cannot "
                                      "be filed right now. Please contact a moderator directly.")
            await self.bot.mod_log(guild.id, "A member tried to report, but the review channel is not set or "
                                   "cannot be reached.")
            return
        item = await self.bot.store.add_report(PLATFORM, str(guild.id), str(interaction.user.id), member_id,
                                               reason[:1000], message_id=message_id, channel_id=channel_id)
        await interaction.response.send_message(f"Thanks. Your report (review #{item.id}) was sent to the "
                                                "moderators.", ephemeral=True)
        if item.decision is ReviewDecision.OPEN:
            await self.post_card(item.id, text=excerpt or f"(report) {reason}")

    # ------------------------------------------------------------------ appeals
    async def file_appeal(self, interaction: discord.Interaction, server_id: str, case_number: int,
                          text: str) -> None:
        """File an appeal of one of the member's own cases and post the appeal card."""
        try:
            appeal_id = await self.bot.store.open_appeal(PLATFORM, server_id, case_number, str(interaction.user.id),
                                                         text[:1500])
        except CaseNotFound:
            await refuse(interaction, f"There is no case #{case_number} in this server.")
            return
        except AppealError as exc:
            msg = {"NotCaseMember": f"Case #{case_number} is not about you; you can only appeal your own cases.",
                   "AppealAlreadyOpen": f"Case #{case_number} already has an open appeal."}.get(
                type(exc).__name__, f"Case #{case_number} cannot be appealed: {exc}")
            await refuse(interaction, msg)
            return
        await interaction.response.send_message(f"Your appeal of case #{case_number} was filed (appeal "
                                                f"#{appeal_id}). A moderator will look at it.", ephemeral=True)
        appeal = await self.bot.store.get_appeal(appeal_id)
        case = await self.bot.store.get_case(PLATFORM, server_id, case_number)
        embed = cards.appeal_card(appeal_id=appeal_id, case=case, member_id=str(interaction.user.id), text=text)
        if appeal is not None and appeal.review_id is not None:
            await self._send_card(server_id, appeal.review_id, embed, appeal_view(appeal_id))

    async def on_appeal_click(self, interaction: discord.Interaction, appeal_id: int, decision: str) -> None:
        """Uphold or overturn an appeal (moderators only); overturning lifts a timeout or ban."""
        guild = interaction.guild
        if guild is None or not await self.is_moderator(interaction):
            await refuse(interaction, "Only moderators can decide appeals. Nothing was changed.")
            return
        appeal = await self.bot.store.get_appeal(appeal_id)
        if appeal is None or appeal.server_id != str(guild.id):
            await refuse(interaction, f"Appeal #{appeal_id} does not exist in this server.")
            return
        try:
            appeal = await self.bot.store.decide_appeal(appeal_id, decision == "uphold", str(interaction.user.id))
        except AppealError as exc:
            await refuse(interaction, f"Appeal #{appeal_id}: {exc}")
            return
        note = ""
        if decision == "overturn":
            forget_member(self.bot, guild.id, appeal.member_id)
            note = await self._lift(guild, appeal.case_number)
        base = interaction.message.embeds[0] if interaction.message and interaction.message.embeds else (
            discord.Embed(title=f"Appeal #{appeal_id}"))
        outcome = "upheld" if decision == "uphold" else "overturned"
        embed = cards.decided(base, outcome=outcome, moderator=interaction.user, when=datetime.now(UTC), note=note)
        await interaction.response.edit_message(embed=embed, view=appeal_view(appeal_id, disabled=True))
        await self.bot.mod_log(guild.id, f"Appeal #{appeal_id} of case #{appeal.case_number}: **{outcome}** by "
                               f"{interaction.user.mention}", title="Appeal decision", colour=discord.Colour.blue())

    async def _lift(self, guild: discord.Guild, case_number: int) -> str:
        case = await self.bot.store.get_case(PLATFORM, str(guild.id), case_number)
        if case is None:
            return ""
        try:
            if case.action is ActionKind.TIMEOUT:
                member = await self._member(guild, case.member_id)
                if member is not None:
                    await member.timeout(None, reason=f"case #{case_number} overturned")
            elif case.action is ActionKind.BAN:
                await guild.unban(discord.Object(int(case.member_id)), reason=f"case #{case_number} overturned")
        except discord.HTTPException as exc:
            return f"could not lift the {case.action.label}: {exc.text or exc.status}"
        return ""


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Review(bot))
