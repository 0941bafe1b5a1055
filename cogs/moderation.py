"""Moderator commands: /mod warn|timeout|kick|ban|unban|pardon|note, /case show|list, /policy show|set|reset,
/modstats, /raidmode on|off.

Layer: cogs (discord.py extension). Every command checks server-side that the caller moderates this server
(Manage Messages or a policy moderator role); the ``default_permissions`` only hide commands in the client.
Every case lookup is scoped to the calling server, so nobody can act on another server's cases.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.escalate import forget_member, strike_and_escalate
from bot.adapters.discord.translate import PLATFORM
from bot.core.models import MAX_TIMEOUT_S, Action, ActionKind, CaseStatus
from bot.core.policy import PolicyError
from bot.store.errors import CaseNotFound

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

MOD_PERMS = discord.Permissions(manage_messages=True)
MAX_CASE = 10_000_000


class NotModerator(app_commands.CheckFailure):
    """The caller may not moderate this server."""


async def _is_mod(interaction: discord.Interaction) -> bool:
    cog = interaction.client.get_cog("Review")  # type: ignore[attr-defined]
    if cog is None or not await cog.is_moderator(interaction):
        raise NotModerator("Only moderators (Manage Messages or the moderator role) can use this. Nothing was changed.")
    return True


mod_only = app_commands.check(_is_mod)


class Moderation(commands.Cog):
    """Manual moderation, cases, policy, statistics and raid mode."""

    mod = app_commands.Group(name="mod", description="Moderate a member", default_permissions=MOD_PERMS,
                             guild_only=True)
    case = app_commands.Group(name="case", description="Moderation cases", default_permissions=MOD_PERMS,
                              guild_only=True)
    policy = app_commands.Group(name="policy", description="This server's moderation policy",
                                default_permissions=MOD_PERMS, guild_only=True)

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    async def cog_app_command_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        """Refusals and bad input become an ephemeral message; anything else is logged with context."""
        if isinstance(error, (NotModerator, app_commands.TransformerError, app_commands.CheckFailure)):
            text = str(error)
        else:
            log.error("command %s failed", interaction.command and interaction.command.qualified_name,
                      exc_info=error, extra={"server": interaction.guild_id})
            text = "Something went wrong; it was logged. Nothing was changed."
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)

    # ------------------------------------------------------------------ /mod
    async def _sanction(self, interaction: discord.Interaction, user: discord.User | discord.Member, kind: ActionKind,
                        reason: str, duration_s: int | None = None, need_member: bool = True) -> None:
        guild = interaction.guild
        assert guild is not None
        member = guild.get_member(user.id)
        if need_member and member is None:
            await interaction.response.send_message(f"{user.mention} is not a member of this server; nothing was "
                                                    "changed.", ephemeral=True)
            return
        if user.id == interaction.user.id or (self.bot.user and user.id == self.bot.user.id):
            await interaction.response.send_message("You cannot do that to yourself or the bot.", ephemeral=True)
            return
        gid = str(guild.id)
        expires = datetime.now(UTC) + timedelta(seconds=duration_s) if duration_s else None
        case = await self.bot.store.open_case(PLATFORM, gid, str(user.id), kind, reason,
                                              moderator_id=str(interaction.user.id), expires_at=expires)
        res = await self.bot.enforcer.sanction(guild, str(user.id), Action(kind, reason, duration_s, "moderator"),
                                               case_number=case.number)
        await self.bot.store.set_case_status(PLATFORM, gid, case.number,
                                             CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                             failure=None if res.ok else res.reason)
        note = ""
        if res.ok and kind >= ActionKind.WARN:
            note = await strike_and_escalate(self.bot, guild, str(user.id), kind, reason, case_number=case.number,
                                             duration_s=duration_s)
        text = f"Case #{case.number}: {kind.label} {user.mention}" + (f" ({duration_s}s)" if duration_s else "")
        text += " done." if res.ok else f" FAILED: {res.reason}"
        if note:
            text += f"\n{note}"
        await interaction.response.send_message(text, ephemeral=True)
        await self.bot.mod_log(gid, f"{text}\nReason: {reason}\nModerator: {interaction.user.mention}",
                               title="Moderator action",
                               colour=discord.Colour.orange() if res.ok else discord.Colour.red())

    @mod.command(name="warn", description="Warn a member (DM with the case number and an Appeal button)")
    @mod_only
    async def warn(self, interaction: discord.Interaction, member: discord.User, reason: str) -> None:
        await self._sanction(interaction, member, ActionKind.WARN, reason)

    @mod.command(name="timeout", description="Time a member out (1 minute to 28 days)")
    @app_commands.describe(minutes="Length in minutes, 1 to 40320 (28 days)")
    @mod_only
    async def timeout(self, interaction: discord.Interaction, member: discord.User, minutes: int,
                      reason: str) -> None:
        if not 1 <= minutes <= MAX_TIMEOUT_S // 60:
            await interaction.response.send_message(f"minutes must be between 1 and {MAX_TIMEOUT_S // 60} (28 days);"
                                                    " nothing was changed.", ephemeral=True)
            return
        await self._sanction(interaction, member, ActionKind.TIMEOUT, reason, duration_s=minutes * 60)

    @mod.command(name="kick", description="Kick a member")
    @mod_only
    async def kick(self, interaction: discord.Interaction, member: discord.User, reason: str) -> None:
        await self._sanction(interaction, member, ActionKind.KICK, reason)

    @mod.command(name="ban", description="Ban a user (also works after they left)")
    @mod_only
    async def ban(self, interaction: discord.Interaction, member: discord.User, reason: str) -> None:
        await self._sanction(interaction, member, ActionKind.BAN, reason, need_member=False)

    @mod.command(name="unban", description="Lift a ban")
    @app_commands.describe(user_id="The banned user's id")
    @mod_only
    async def unban(self, interaction: discord.Interaction, user_id: str, reason: str) -> None:
        assert interaction.guild is not None
        if not user_id.isdigit() or len(user_id) > 20:
            await interaction.response.send_message("user_id must be a numeric Discord id.", ephemeral=True)
            return
        try:
            await interaction.guild.unban(discord.Object(int(user_id)), reason=reason)
        except discord.HTTPException as exc:
            await interaction.response.send_message(f"Unban failed: {exc.text or exc.status}", ephemeral=True)
            return
        case = await self.bot.store.open_case(PLATFORM, str(interaction.guild.id), user_id, ActionKind.LOG,
                                              f"unban: {reason}"[:1000], moderator_id=str(interaction.user.id),
                                              status=CaseStatus.APPLIED)
        await interaction.response.send_message(f"Unbanned <@{user_id}> (case #{case.number}).", ephemeral=True)
        await self.bot.mod_log(interaction.guild.id, f"<@{user_id}> unbanned by {interaction.user.mention}: {reason}",
                               title="Unban", colour=discord.Colour.green())

    @mod.command(name="pardon", description="Pardon a case's strikes")
    @mod_only
    async def pardon(self, interaction: discord.Interaction, case: int) -> None:
        assert interaction.guild is not None
        if not 1 <= case <= MAX_CASE:
            await interaction.response.send_message(f"There is no case #{case} in this server.", ephemeral=True)
            return
        try:
            n = await self.bot.store.pardon(PLATFORM, str(interaction.guild.id), case_number=case,
                                            moderator_id=str(interaction.user.id))
        except CaseNotFound:
            await interaction.response.send_message(f"There is no case #{case} in this server.", ephemeral=True)
            return
        found = await self.bot.store.get_case(PLATFORM, str(interaction.guild.id), case)
        if found is not None:
            forget_member(self.bot, interaction.guild.id, found.member_id)
        await interaction.response.send_message(f"Case #{case} pardoned ({n} strike(s)).", ephemeral=True)
        await self.bot.mod_log(interaction.guild.id, f"Case #{case} pardoned by {interaction.user.mention}",
                               title="Pardon", colour=discord.Colour.green())

    @mod.command(name="note", description="Add a note about a member (a case with no action)")
    @mod_only
    async def note(self, interaction: discord.Interaction, member: discord.User, text: str) -> None:
        assert interaction.guild is not None
        case = await self.bot.store.open_case(PLATFORM, str(interaction.guild.id), str(member.id), ActionKind.LOG,
                                              text[:1000], moderator_id=str(interaction.user.id),
                                              status=CaseStatus.APPLIED)
        await interaction.response.send_message(f"Note saved as case #{case.number}.", ephemeral=True)

    # ------------------------------------------------------------------ /case
    @case.command(name="show", description="Show one case of this server")
    @mod_only
    async def case_show(self, interaction: discord.Interaction, number: int) -> None:
        assert interaction.guild is not None
        c = await self.bot.store.get_case(PLATFORM, str(interaction.guild.id), number) if 1 <= number <= MAX_CASE \
            else None
        if c is None:
            await interaction.response.send_message(f"There is no case #{number} in this server.", ephemeral=True)
            return
        embed = discord.Embed(title=f"Case #{c.number}: {c.action.label} ({c.status.value})", description=c.reason)
        embed.add_field(name="Member", value=f"<@{c.member_id}>")
        embed.add_field(name="Moderator", value=f"<@{c.moderator_id}>" if c.moderator_id else "automod")
        embed.add_field(name="Opened", value=discord.utils.format_dt(c.created_at, "f"))
        if c.failure:
            embed.add_field(name="Failure", value=c.failure, inline=False)
        await interaction.response.send_message(embed=embed, ephemeral=True)

    @case.command(name="list", description="Latest cases of this server (optionally of one member)")
    @mod_only
    async def case_list(self, interaction: discord.Interaction, member: discord.User | None = None) -> None:
        assert interaction.guild is not None
        cases = await self.bot.store.list_cases(PLATFORM, str(interaction.guild.id),
                                                str(member.id) if member else None, limit=20)
        lines = [f"#{c.number} {c.action.label} <@{c.member_id}> {c.status.value}: {c.reason[:60]}" for c in cases]
        await interaction.response.send_message("\n".join(lines) or "No cases.", ephemeral=True)

    # ------------------------------------------------------------------ /policy
    @policy.command(name="show", description="Show the effective policy (or one key)")
    @mod_only
    async def policy_show(self, interaction: discord.Interaction, key: str | None = None) -> None:
        assert interaction.guild is not None
        doc: Any = (await self.bot.policy(interaction.guild.id)).model_dump(mode="json")
        for part in (key.split(".") if key else []):
            if not isinstance(doc, dict) or part not in doc:
                await interaction.response.send_message(f"Unknown policy key `{key}`.", ephemeral=True)
                return
            doc = doc[part]
        text = json.dumps(doc, indent=1)
        await interaction.response.send_message(f"```json\n{text[:1900]}\n```", ephemeral=True)

    @policy.command(name="set", description="Override one policy key (audited), e.g. thresholds.toxicity.review 0.9")
    @app_commands.describe(key="Dotted key, e.g. thresholds.insult.review or channels.<id>.exempt",
                           value="JSON value (0.9, true, [\"123\"]) or plain text")
    @mod_only
    async def policy_set(self, interaction: discord.Interaction, key: str, value: str) -> None:
        await self._policy_change(interaction, key, _parse_value(value))

    @policy.command(name="reset", description="Remove an override (back to the file's value; audited)")
    @mod_only
    async def policy_reset(self, interaction: discord.Interaction, key: str) -> None:
        await self._policy_change(interaction, key, None)

    async def _policy_change(self, interaction: discord.Interaction, key: str, value: Any) -> None:
        assert interaction.guild is not None
        try:
            await self.bot.policies.set_override(PLATFORM, str(interaction.guild.id), key, value,
                                                 str(interaction.user.id))
        except PolicyError as exc:
            await interaction.response.send_message(f"Refused `{exc.key}`: {exc.reason}. Nothing was changed.",
                                                    ephemeral=True)
            return
        what = f"`{key}` = `{json.dumps(value)}`" if value is not None else f"`{key}` reset"
        await interaction.response.send_message(f"Policy updated: {what}.", ephemeral=True)
        await self.bot.mod_log(interaction.guild.id, f"{what} by {interaction.user.mention}", title="Policy change",
                               colour=discord.Colour.blue())

    # ------------------------------------------------------------------ /modstats, /raidmode
    @app_commands.command(name="modstats", description="Flags, false positives and overturns (7 and 30 days)")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    @mod_only
    async def modstats(self, interaction: discord.Interaction) -> None:
        assert interaction.guild is not None
        now = datetime.now(UTC)
        embed = discord.Embed(title="Moderation statistics", colour=discord.Colour.blurple())
        for days in (7, 30):
            stats = await self.bot.store.modstats(PLATFORM, str(interaction.guild.id), now - timedelta(days=days))
            lines = [_stat_line(kind, name, st) for kind, table in (("label", stats.per_label),
                                                                    ("rule", stats.per_rule))
                     for name, st in table.items() if st.flags]
            embed.add_field(name=f"Last {days} days", value="\n".join(lines)[:1024] or "nothing flagged", inline=False)
        await interaction.response.send_message(embed=embed, ephemeral=True)

    @app_commands.command(name="raidmode", description="Switch raid mode (stricter thresholds, slowmode) on or off")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    @app_commands.choices(state=[app_commands.Choice(name="on", value="on"),
                                 app_commands.Choice(name="off", value="off")])
    @mod_only
    async def raidmode(self, interaction: discord.Interaction, state: app_commands.Choice[str],
                       channel: discord.TextChannel | None = None) -> None:
        assert interaction.guild is not None
        from cogs.automod import RAID_SLOWMODE_S

        on = state.value == "on"
        target = channel or interaction.channel
        cid = str(target.id) if target is not None else None
        self.bot.service.set_raid_mode(PLATFORM, str(interaction.guild.id), cid, on, datetime.now(UTC))
        slow = await self.bot.enforcer.set_slowmode(cid, RAID_SLOWMODE_S if on else 0) if cid else None
        automod = self.bot.get_cog("Automod")
        if not on and cid and automod is not None:
            automod.cancel_slowmode_lift(str(interaction.guild.id), cid)
        note = "" if slow is None or slow.ok else f" (slowmode failed: {slow.reason})"
        await interaction.response.send_message(f"Raid mode {state.value} in <#{cid}>{note}.", ephemeral=True)
        await self.bot.mod_log(interaction.guild.id, f"Raid mode {state.value} in <#{cid}> by "
                               f"{interaction.user.mention}{note}", title="Raid mode", colour=discord.Colour.dark_red())


def _pct(rate: float | None) -> str:
    return "" if rate is None else f" ({rate:.0%})"


def _stat_line(kind: str, name: str, st: Any) -> str:
    """One ``/modstats`` line: flags, decisions, dismissals (false-positive rate), cases, overturns (rate)."""
    return (f"{kind} `{name}`: flags {st.flags}, decided {st.decisions}, dismissed {st.dismissals}"
            f"{_pct(st.false_positive_rate)}, cases {st.cases}, overturned {st.overturned}{_pct(st.overturn_rate)}")


def _parse_value(raw: str) -> Any:
    """JSON if it parses (numbers, booleans, lists), else the plain string."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Moderation(bot))
