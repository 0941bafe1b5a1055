"""Moderator commands: /mod warn|timeout|kick|ban|unban|pardon|note, /case show (``cogs.cases`` adds list, search
and reason), /policy show|set|reset, /modstats, /raidmode on|off, /purge; and a moderator's unban done by hand in
Discord (``on_member_unban``), handed to the workflow.

Layer: cogs (discord.py extension). Thin: each command is acknowledged at once (Discord's 3 seconds), the member is
translated into an ``Actor`` with their own server permissions, and the workflow authorizes and acts. The
``default_permissions`` only hide commands in the client; the check that counts is the workflow's, server-side.
Every case lookup is scoped to the calling server.
"""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.cards import md
from bot.adapters.discord.interact import actor_of, answer, guarded
from bot.adapters.discord.translate import PLATFORM
from bot.core.models import MAX_TIMEOUT_S, ActionKind
from bot.workflow import words
from bot.workflow.authz import Actor, Refused, authorize
from bot.workflow.cases import case_title
from bot.workflow.fit import fit_escaped
from bot.workflow.policy_admin import change_policy, parse_value, show_policy

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot
    from bot.core.records import SignalStats

log = logging.getLogger(__name__)

MOD_PERMS = discord.Permissions(manage_messages=True)
MAX_CASE = 10_000_000
#: Longest JSON of one policy key shown inline (a code block inside Discord's 2,000 characters); else a file.
INLINE_POLICY_MAX = 1900
#: Longest temporary ban offered, in days.
MAX_BAN_DAYS = 365
#: Most messages one /purge looks at.
MAX_PURGE = 500


class Moderation(commands.Cog):
    """Manual moderation, cases, policy, statistics, raid mode and purge."""

    mod = app_commands.Group(name="mod", description="Moderate a member", default_permissions=MOD_PERMS,
                             guild_only=True)
    case = app_commands.Group(name="case", description="Moderation cases", default_permissions=MOD_PERMS,
                              guild_only=True)
    policy = app_commands.Group(name="policy", description="This server's moderation policy",
                                default_permissions=MOD_PERMS, guild_only=True)

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_member_unban(self, guild: discord.Guild, user: discord.User) -> None:
        """``GUILD_BAN_REMOVE`` (the moderation intent): a member was unbanned, by a moderator by hand in Discord or
        by the bot itself. The workflow marks their bans lifted, so no end-of-ban timer or owed unban acts on them
        again (:meth:`bot.workflow.ModerationWorkflow.member_unbanned`).

        Discord is asked first whether the member is banned now: an event that comes late (the gateway lags behind
        the REST answers, or replays events on a resume) after the member was banned again lifts nothing. When
        Discord cannot say (an error other than 404 Unknown Ban), the event is trusted."""
        if self.bot.closing:
            return
        try:
            await guild.fetch_ban(user)
        except discord.NotFound:
            pass  # not banned: the unban stands
        except (discord.HTTPException, OSError, TimeoutError) as exc:
            log.warning("could not check the ban of member %s after an unban event (%s); the event is trusted",
                        user.id, type(exc).__name__, extra={"server": str(guild.id)})
        else:
            log.info("unban event for member %s, who is banned again: nothing lifted", user.id,
                     extra={"server": str(guild.id)})
            return
        try:
            await self.bot.workflow.member_unbanned(str(guild.id), str(user.id))
        except Exception:  # the next start re-reads the mod log; the event must not stop the bot
            log.exception("recording the unban of member %s failed", user.id, extra={"server": str(guild.id)})

    async def _actor(self, interaction: discord.Interaction) -> Actor:
        assert interaction.guild is not None
        return actor_of(interaction, await self.bot.policy(interaction.guild.id))

    # ------------------------------------------------------------------ /mod
    async def _sanction(self, interaction: discord.Interaction, user: discord.abc.User, kind: ActionKind,
                        reason: str, duration_s: int | None = None) -> None:
        async def work() -> None:
            if self.bot.user is not None and user.id == self.bot.user.id:
                raise Refused("The bot does not moderate itself.")
            result = await self.bot.workflow.sanction(await self._actor(interaction), str(interaction.guild_id),
                                                      str(user.id), kind, reason, duration_s=duration_s)
            await answer(interaction, result.text)

        await guarded(interaction, work)

    @mod.command(name="warn", description="Warn a member (DM with the case number and an Appeal button)")
    async def warn(self, interaction: discord.Interaction, member: discord.User, reason: str) -> None:
        await self._sanction(interaction, member, ActionKind.WARN, reason)

    @mod.command(name="timeout", description="Time a member out (1 minute to 28 days)")
    @app_commands.describe(minutes="Length in minutes, 1 to 40320 (28 days)")
    async def timeout(self, interaction: discord.Interaction, member: discord.User, minutes: int,
                      reason: str) -> None:
        if not 1 <= minutes <= MAX_TIMEOUT_S // 60:
            await answer(interaction, f"minutes must be between 1 and {MAX_TIMEOUT_S // 60} (28 days); nothing was "
                                      "changed.")
            return
        await self._sanction(interaction, member, ActionKind.TIMEOUT, reason, duration_s=minutes * 60)

    @mod.command(name="kick", description="Kick a member")
    async def kick(self, interaction: discord.Interaction, member: discord.User, reason: str) -> None:
        await self._sanction(interaction, member, ActionKind.KICK, reason)

    @mod.command(name="ban", description="Ban a user (also after they left); days makes it temporary")
    @app_commands.describe(days=f"Temporary ban length in days (1 to {MAX_BAN_DAYS}); leave empty for a permanent ban")
    async def ban(self, interaction: discord.Interaction, member: discord.User, reason: str,
                  days: int | None = None) -> None:
        if days is not None and not 1 <= days <= MAX_BAN_DAYS:
            await answer(interaction, f"days must be between 1 and {MAX_BAN_DAYS}; nothing was changed.")
            return
        await self._sanction(interaction, member, ActionKind.BAN, reason,
                             duration_s=days * 86400 if days else None)

    @mod.command(name="unban", description="Lift a ban")
    @app_commands.describe(user_id="The banned user's id")
    async def unban(self, interaction: discord.Interaction, user_id: str, reason: str) -> None:
        async def work() -> None:
            # ASCII digits only: str.isdigit holds for other scripts' digits too (int reads them), and the case
            # would be recorded under an id no other record of the member has
            if not (user_id.isascii() and user_id.isdigit()) or not 15 <= len(user_id) <= 20:
                raise Refused("user_id must be a numeric Discord id.")
            result = await self.bot.workflow.unban(await self._actor(interaction), str(interaction.guild_id),
                                                   user_id, reason)
            await answer(interaction, result.text)

        await guarded(interaction, work)

    @mod.command(name="pardon", description="Pardon a case's strikes")
    async def pardon(self, interaction: discord.Interaction, case: int) -> None:
        async def work() -> None:
            if not 1 <= case <= MAX_CASE:
                raise Refused(f"There is no case #{case} in this server.")
            result = await self.bot.workflow.pardon(await self._actor(interaction), str(interaction.guild_id), case)
            await answer(interaction, result.text)

        await guarded(interaction, work)

    @mod.command(name="note", description="Add a note about a member (a case with no action)")
    async def note(self, interaction: discord.Interaction, member: discord.User, text: str) -> None:
        async def work() -> None:
            result = await self.bot.workflow.note(await self._actor(interaction), str(interaction.guild_id),
                                                  str(member.id), text)
            await answer(interaction, result.text)

        await guarded(interaction, work)

    # ------------------------------------------------------------------ /case
    @case.command(name="show", description="Show one case of this server")
    async def case_show(self, interaction: discord.Interaction, number: int) -> None:
        async def work() -> None:
            c = await self.bot.workflow.case(await self._actor(interaction), str(interaction.guild_id), number)
            # a reason may quote a member (a flagged name, a reporter's words): shown as text, as /case list does
            embed = discord.Embed(title=case_title(c),
                                  description=fit_escaped(words.rule_detail(c.reason), 4000, md, empty="-"))
            embed.add_field(name="Member", value=f"<@{c.member_id}>")
            embed.add_field(name="Moderator", value=f"<@{c.moderator_id}>" if c.moderator_id else "automod")
            embed.add_field(name="Opened", value=discord.utils.format_dt(c.created_at, "f"))
            if c.expires_at:
                embed.add_field(name="Ends", value=discord.utils.format_dt(c.expires_at, "f"))
            if c.failure:
                embed.add_field(name="Failure", value=fit_escaped(c.failure, 1024, md), inline=False)
            await answer(interaction, embed=embed)

        await guarded(interaction, work)

    # ------------------------------------------------------------------ /policy
    @policy.command(name="show", description="Show the effective policy (or one key)")
    async def policy_show(self, interaction: discord.Interaction, key: str | None = None) -> None:
        async def work() -> None:
            shown = show_policy(await self._actor(interaction), await self.bot.policy(interaction.guild_id or 0),
                                str(interaction.guild_id), key, inline_max=INLINE_POLICY_MAX,
                                base=self.bot.policies.base)
            if shown.inline is not None:
                await answer(interaction, shown.inline)
                return
            # the whole policy (about 5,000 characters) or a large section: a file, never cut mid-JSON
            await answer(interaction, shown.caption + shown.notes, file=discord.File(io.BytesIO(shown.data),
                                                                       filename=shown.filename))

        await guarded(interaction, work)

    @policy.command(name="set", description="Override one policy key (audited), e.g. thresholds.toxicity.review 0.9")
    @app_commands.describe(key="Dotted key, e.g. thresholds.insult.review or channels.<id>.exempt",
                           value="JSON value (0.9, true, [\"123\"]) or plain text")
    async def policy_set(self, interaction: discord.Interaction, key: str, value: str) -> None:
        await self._policy_change(interaction, key, parse_value(value))

    @policy.command(name="reset", description="Remove an override (back to the file's value; audited)")
    async def policy_reset(self, interaction: discord.Interaction, key: str) -> None:
        await self._policy_change(interaction, key, None)

    @policy_show.autocomplete("key")
    @policy_set.autocomplete("key")
    @policy_reset.autocomplete("key")
    async def policy_key_choices(self, interaction: discord.Interaction, current: str,
                                 ) -> list[app_commands.Choice[str]]:
        """The effective policy's dotted keys matching what was typed (at most 25, Discord's limit)."""
        from bot.workflow.policy_text import matching_keys, policy_keys

        doc = (await self.bot.policy(interaction.guild_id or 0)).model_dump(mode="json")
        return [app_commands.Choice(name=k, value=k) for k in matching_keys(policy_keys(doc), current)]

    async def _policy_change(self, interaction: discord.Interaction, key: str, value: object) -> None:
        async def check_channel(channel_id: str) -> str | None:
            """A channel key names a channel of this server the bot can post in (as ``/modbot setup`` checks)."""
            from cogs.setup import channel_problem

            guild = interaction.guild
            if guild is None or not (channel_id.isascii() and channel_id.isdigit() and len(channel_id) <= 20):
                return None  # not an id: the policy refuses it with its own words
            channel = guild.get_channel(int(channel_id))
            if channel is None or isinstance(channel, discord.CategoryChannel):
                return f"there is no channel {channel_id} in this server"
            return channel_problem(channel, guild.me)

        async def lookup_role(ref: str) -> list[str]:
            """This server's roles that ``ref`` names: the role with that id, else those whose name it is (any
            case, ``@`` optional; ``@everyone`` is the server's own id, which the policy refuses)."""
            guild = interaction.guild
            if guild is None:
                return []
            if ref.isascii() and ref.isdigit() and len(ref) <= 20 and (role := guild.get_role(int(ref))):
                return [str(role.id)]
            wanted = {ref.casefold(), ref.removeprefix("@").casefold()}
            return [str(r.id) for r in guild.roles if r.name.casefold() in wanted]

        async def work() -> None:
            await answer(interaction, await change_policy(self.bot.policies, self.bot.desk, PLATFORM,
                                                          await self._actor(interaction), str(interaction.guild_id),
                                                          key, value, check_channel=check_channel,
                                                          lookup_role=lookup_role))

        await guarded(interaction, work)

    # ------------------------------------------------------------------ /modstats, /raidmode, /purge
    @app_commands.command(name="modstats", description="Flags, false positives and overturns (7 and 30 days)")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    async def modstats(self, interaction: discord.Interaction) -> None:
        async def work() -> None:
            actor = await self._actor(interaction)
            now = datetime.now(UTC)
            embed = discord.Embed(title="Moderation statistics", colour=discord.Colour.blurple())
            for days in (7, 30):
                stats = await self.bot.workflow.stats(actor, str(interaction.guild_id), now - timedelta(days=days))
                lines = [_stat_line(kind, name, st) for kind, table in (("label", stats.per_label),
                                                                        ("rule", stats.per_rule))
                         for name, st in table.items() if st.flags]
                embed.add_field(name=f"Last {days} days", value="\n".join(lines)[:1024] or "nothing flagged",
                                inline=False)
            await answer(interaction, embed=embed)

        await guarded(interaction, work)

    @app_commands.command(name="raidmode", description="Switch raid mode (stricter thresholds, slowmode) on or off")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    @app_commands.choices(state=[app_commands.Choice(name="on", value="on"),
                                 app_commands.Choice(name="off", value="off")])
    async def raidmode(self, interaction: discord.Interaction, state: app_commands.Choice[str],
                       channel: discord.TextChannel | None = None) -> None:
        async def work() -> None:
            target = channel or interaction.channel
            if target is None:
                raise Refused("Name a channel.")
            text = await self.bot.workflow.manual_raid_mode(await self._actor(interaction), str(interaction.guild_id),
                                                            str(target.id), state.value == "on")
            await answer(interaction, text)

        await guarded(interaction, work)

    @app_commands.command(name="purge", description="Delete the last N messages here (optionally of one member)")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    @app_commands.describe(count=f"How many recent messages to look at (1 to {MAX_PURGE})",
                           member="Only this member's messages")
    async def purge(self, interaction: discord.Interaction, count: int, member: discord.User | None = None) -> None:
        async def work() -> None:
            if not 1 <= count <= MAX_PURGE:
                raise Refused(f"count must be between 1 and {MAX_PURGE}; nothing was deleted.")
            actor = await self._actor(interaction)
            authorize(actor, ActionKind.DELETE)
            channel = interaction.channel
            if channel is None or not hasattr(channel, "history"):
                raise Refused("Use /purge in a text channel or thread.")
            picked: list[tuple[str, datetime]] = []
            try:
                async for msg in channel.history(limit=count):
                    if member is None or msg.author.id == member.id:
                        picked.append((str(msg.id), msg.created_at))
            except discord.Forbidden:  # an overwrite hides the channel's history from the bot
                raise Refused(f"The bot cannot read the messages of <#{channel.id}>: it needs View Channel and Read "
                              "Message History there. Nothing was deleted.") from None
            result = await self.bot.workflow.purge(actor, str(interaction.guild_id), str(channel.id), picked,
                                                   member_id=str(member.id) if member else None)
            await answer(interaction, result.text)

        await guarded(interaction, work)


def _pct(rate: float | None) -> str:
    return "" if rate is None else f" ({rate:.0%})"


def _stat_line(kind: str, name: str, st: SignalStats) -> str:
    """One ``/modstats`` line: flags, decisions, dismissals (false-positive rate), cases, overturns (rate)."""
    return (f"{kind} `{name}`: flags {st.flags}, decided {st.decisions}, dismissed {st.dismissals}"
            f"{_pct(st.false_positive_rate)}, cases {st.cases}, overturned {st.overturned}{_pct(st.overturn_rate)}")


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Moderation(bot))
