"""Automod: every new or edited guild message goes through the core; the verdict's actions are carried out.

Layer: cogs (discord.py extension). Thin: translation in ``bot.adapters.discord.translate``, decisions in
``bot.core.service``, platform calls in ``bot.adapters.discord.enforcer``. A failed action (missing permission
50013, role hierarchy, message already gone 10008...) is recorded on the case as failed with the reason and shown
in the mod log; the bot keeps running.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot.adapters.discord.translate import PLATFORM, to_core
from bot.core.models import ActionKind, CaseStatus

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: Slowmode (seconds per member) applied to a channel when raid mode switches on.
RAID_SLOWMODE_S = 30


class Automod(commands.Cog):
    """Listens to messages and edits; carries out verdicts; raid alerts."""

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot
        self.slowmode_lifts: dict[tuple[str, str], asyncio.Task[None]] = {}

    async def cog_unload(self) -> None:
        """Cancel pending slowmode lifts (raid mode state is in memory and ends with the process)."""
        for task in self.slowmode_lifts.values():
            task.cancel()
        await asyncio.gather(*self.slowmode_lifts.values(), return_exceptions=True)
        self.slowmode_lifts.clear()

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

    async def judge(self, message: discord.Message, *, edited: bool) -> Any:
        """Run one message through the core and carry out the outcome. Returns the :class:`Outcome`."""
        try:
            outcome = await self.bot.service.handle(to_core(message, edited=edited))
        except Exception:
            log.exception("judging message %s failed", message.id, extra={"server": message.guild.id})  # type: ignore[union-attr]
            return None
        if not outcome.duplicate:
            try:
                await self.carry_out(outcome)
            except Exception:
                log.exception("carrying out verdict on %s failed", message.id)
        self.bot.dispatch("moderation_outcome", outcome)  # observers (tests, metrics): on_moderation_outcome
        return outcome

    async def carry_out(self, outcome: Any) -> None:
        """Raid alert first, then the actions (unless shadow), case status, mod log entry and review card."""
        verdict = outcome.verdict
        msg = verdict.message
        if verdict.raid is not None:
            await self.on_raid(verdict.raid)
        failures: list[str] = []
        done: list[str] = []
        if not verdict.shadow:
            for action in verdict.actions:
                if action.kind <= ActionKind.REVIEW:
                    continue
                result = await self.bot.enforcer.apply(msg, action, case_number=outcome.case_number)
                if result.ok:
                    done.append(action.kind.label)
                    if result.extra.get("delete"):
                        failures.append(f"delete: {result.extra['delete']}")
                else:
                    failures.append(f"{action.kind.label}: {result.reason}")
                    log.warning("action failed: %s %s", action.kind.label, result.reason,
                                extra={"server": msg.server.id, "message_id": msg.id, "case": outcome.case_number})
        if outcome.case_number is not None and not verdict.shadow and verdict.action > ActionKind.REVIEW:
            status = CaseStatus.FAILED if failures else CaseStatus.APPLIED
            await self.bot.store.set_case_status(PLATFORM, msg.server.id, outcome.case_number, status,
                                                 failure="; ".join(failures) or None)
        if outcome.case_number is not None and verdict.action > ActionKind.REVIEW:
            await self.post_case(outcome, done, failures)
        if outcome.review_id is not None:
            review = self.bot.get_cog("Review")
            if review is not None:
                await review.post_card(outcome.review_id, verdict=verdict, case_number=outcome.case_number,
                                       failures=failures)

    async def post_case(self, outcome: Any, done: list[str], failures: list[str]) -> None:
        """One mod log entry for an automod case: what was done, and why an action failed."""
        verdict = outcome.verdict
        msg = verdict.message
        failed = bool(failures)
        title = f"Case #{outcome.case_number}: {verdict.action.label}" + (" (FAILED)" if failed else "")
        if verdict.shadow:
            title += " [shadow mode: not carried out]"
        embed = discord.Embed(title=title, colour=discord.Colour.red() if failed else discord.Colour.orange(),
                              timestamp=datetime.now(UTC))
        embed.add_field(name="Member", value=f"<@{msg.author.id}> ({msg.author.id})")
        embed.add_field(name="Channel", value=f"<#{msg.channel.id}>")
        reasons = ", ".join(verdict.labels) or ", ".join(h.rule for h in verdict.rule_hits) or "-"
        embed.add_field(name="Why", value=reasons[:1000], inline=False)
        if done:
            embed.add_field(name="Done", value=", ".join(done))
        if failures:
            embed.add_field(name="Failed", value="\n".join(failures)[:1000], inline=False)
        await self.bot.mod_log(msg.server.id, "", embed=embed)

    async def on_raid(self, alert: Any) -> None:
        """One summary in the mod log; with ``rules.raid.raid_mode``, slowmode on the channel until raid mode ends.

        The core's raid detector itself keeps the channel in (automatic) raid mode for ``raid_mode_duration_s``
        seconds after the burst's last activity; the slowmode is lifted when that ends (or on ``/raidmode off``).
        """
        now = datetime.now(UTC)
        policy = await self.bot.policy(alert.server_id)
        raid_mode = policy.rules.raid.raid_mode
        slow = await self.bot.enforcer.set_slowmode(alert.channel_id, RAID_SLOWMODE_S) if raid_mode else None
        title = "Raid alert: raid mode on" if raid_mode else "Raid alert"
        embed = discord.Embed(title=title, colour=discord.Colour.dark_red(), timestamp=now)
        embed.description = (f"{alert.count} messages from {len(alert.members)} member(s) in <#{alert.channel_id}> "
                             f"({alert.reason.replace('_', ' ')}), since {discord.utils.format_dt(alert.started_at, 'T')}.")
        embed.add_field(name="Members", value=" ".join(f"<@{m}>" for m in alert.members[:40])[:1000] or "-",
                        inline=False)
        if slow is not None:
            embed.add_field(name="Slowmode", value=f"{RAID_SLOWMODE_S}s" if slow.ok else f"failed: {slow.reason}")
            embed.set_footer(text=f"lifted {int(policy.rules.raid.raid_mode_duration_s)}s after the raid ends, "
                                  "or /raidmode off")
        await self.bot.mod_log(alert.server_id, "", embed=embed)
        if slow is not None and slow.ok:
            self.schedule_slowmode_lift(alert.server_id, alert.channel_id)

    def schedule_slowmode_lift(self, server_id: str, channel_id: str) -> None:
        """Lift the raid slowmode of a channel once its automatic raid mode has ended (one task per channel)."""
        key = (server_id, channel_id)
        task = self.slowmode_lifts.get(key)
        if task is not None and not task.done():
            return  # the running task re-checks raid mode, so a later burst simply extends it
        self.slowmode_lifts[key] = asyncio.create_task(self._lift_when_over(server_id, channel_id),
                                                       name=f"modbot-slowmode-{channel_id}")

    def cancel_slowmode_lift(self, server_id: str, channel_id: str) -> None:
        """Forget a pending lift (``/raidmode off`` sets slowmode 0 itself)."""
        task = self.slowmode_lifts.pop((server_id, channel_id), None)
        if task is not None:
            task.cancel()

    async def _lift_when_over(self, server_id: str, channel_id: str) -> None:
        """Sleep ``rules.raid.raid_mode_duration_s`` (seconds) at a time until raid mode is off, then slowmode 0.

        A moderator's ``/raidmode off`` sets slowmode 0 itself; raid mode switched on by hand keeps slowmode
        (this task waits until it is off).
        """
        try:
            while True:
                policy = await self.bot.policy(server_id)
                await asyncio.sleep(policy.rules.raid.raid_mode_duration_s)
                if not self.bot.service.raid_mode(PLATFORM, server_id, channel_id, datetime.now(UTC)):
                    break
            res = await self.bot.enforcer.set_slowmode(channel_id, 0)
            text = f"Raid mode ended in <#{channel_id}>: slowmode " + ("lifted." if res.ok else
                                                                       f"could not be lifted: {res.reason}")
            await self.bot.mod_log(server_id, text, title="Raid mode off", colour=discord.Colour.green())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("lifting raid slowmode failed", extra={"server": server_id})
        finally:
            if self.slowmode_lifts.get((server_id, channel_id)) is asyncio.current_task():
                del self.slowmode_lifts[(server_id, channel_id)]


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Automod(bot))
