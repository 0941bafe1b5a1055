"""Carry out core actions on Discord; platform refusals become ``ActionResult(ok=False, reason=...)``.

Layer: ``bot.adapters.discord``. Imports discord.py and ``bot.core``. Never raises for Discord refusals
(403 Forbidden, 404 NotFound, 400 HTTPException): the reason is returned so the case records it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import discord

from bot.core.models import MAX_TIMEOUT_S, Action, ActionKind, Message
from bot.core.ports import ActionResult

log = logging.getLogger(__name__)

#: Discord refuses bulk deletion of messages older than 14 days (API error 50034).
BULK_DELETE_MAX_AGE = timedelta(days=14)

_KNOWN_CODES = {
    50013: "Missing Permissions",
    10008: "Unknown Message (already deleted)",
    10007: "Unknown Member (member left)",
    10003: "Unknown Channel",
    10013: "Unknown User",
    50034: "message older than 14 days cannot be bulk deleted",
    50007: "cannot send messages to this user (DMs closed)",
}


def describe_error(exc: discord.HTTPException) -> str:
    """A moderator-readable reason for a Discord error, e.g. ``"Missing Permissions (50013)"``."""
    text = _KNOWN_CODES.get(exc.code) or exc.text or getattr(exc.response, "reason", "") or "HTTP error"
    return f"{text} ({exc.code or exc.status})"


class DiscordEnforcer:
    """Implements the :class:`bot.core.ports.Enforcer` port with a discord.py client.

    Args:
        client: The connected bot (used to resolve guilds, channels and members).
        warn_view: Callable ``(server_id, case_number) -> discord.ui.View | None`` giving the Appeal button for warn
            DMs (injected to keep this module free of view code).
    """

    capabilities = frozenset({"delete", "delete_others", "warn", "timeout", "kick", "ban", "slowmode"})

    def __init__(self, client: discord.Client, *, warn_view: Any = None) -> None:
        self.client = client
        self.warn_view = warn_view

    async def _guild(self, server_id: str) -> discord.Guild:
        guild = self.client.get_guild(int(server_id))
        if guild is None:
            guild = await self.client.fetch_guild(int(server_id))
        return guild

    async def apply(self, message: Message, action: Action, *, case_number: int | None = None) -> ActionResult:
        """Do ``action`` about ``message``; a sanction with ``delete_message`` also removes the message first.

        Returns:
            ``ActionResult(ok=True)`` or ``ok=False`` with the reason (``"Missing Permissions (50013)"``, ...).
            When the message deletion fails but the sanction succeeds, ``extra["delete"]`` holds the reason.
        """
        extra: dict[str, str] = {}
        try:
            kind = action.kind
            if kind in (ActionKind.NONE, ActionKind.LOG, ActionKind.REVIEW):
                return ActionResult(action, True)
            if kind is ActionKind.DELETE or action.delete_message:
                res = await self.delete_message(message.channel.id, message.id)
                if kind is ActionKind.DELETE:
                    return ActionResult(action, res.ok, res.reason)
                if not res.ok:
                    extra["delete"] = res.reason
            guild = await self._guild(message.server.id)
            return await self.sanction(guild, message.author.id, action, case_number=case_number, extra=extra)
        except discord.HTTPException as exc:
            log.warning("action %s failed: %s", action.kind.label, describe_error(exc),
                        extra={"server": message.server.id, "message_id": message.id})
            return ActionResult(action, False, describe_error(exc), extra)

    async def delete_message(self, channel_id: str, message_id: str) -> ActionResult:
        """Delete one message. ``Unknown Message (10008)`` is returned as a failure with that reason."""
        act = Action(ActionKind.DELETE)
        try:
            channel = self.client.get_channel(int(channel_id)) or await self.client.fetch_channel(int(channel_id))
            await channel.get_partial_message(int(message_id)).delete()  # type: ignore[union-attr]
            return ActionResult(act, True)
        except discord.HTTPException as exc:
            return ActionResult(act, False, describe_error(exc))

    async def delete_many(self, channel: discord.TextChannel, message_ids: list[int],
                          now: datetime | None = None) -> ActionResult:
        """Bulk-delete messages; ids older than 14 days are refused up front (Discord would answer 50034)."""
        act = Action(ActionKind.DELETE)
        cutoff = (now or datetime.now(UTC)) - BULK_DELETE_MAX_AGE
        young = [i for i in message_ids if discord.utils.snowflake_time(i) > cutoff]
        old = len(message_ids) - len(young)
        try:
            if young:
                await channel.delete_messages([discord.Object(i) for i in young])
        except discord.HTTPException as exc:
            return ActionResult(act, False, describe_error(exc))
        if old:
            return ActionResult(act, False, f"{old} message(s) older than 14 days cannot be bulk deleted (50034)")
        return ActionResult(act, True)

    async def sanction(self, guild: discord.Guild, member_id: str, action: Action, *,
                       case_number: int | None = None, extra: dict[str, str] | None = None) -> ActionResult:
        """Warn (DM), timeout (capped at 28 days), kick or ban a member of ``guild``.

        Role hierarchy is checked before calling Discord: a member whose top role is not below the bot's cannot
        be timed out, kicked or banned (Discord would answer 50013).
        """
        extra = dict(extra or {})
        reason = (action.reason or "moderation")[:500]
        uid = int(member_id)
        try:
            member = guild.get_member(uid)
            if action.kind in (ActionKind.TIMEOUT, ActionKind.KICK, ActionKind.BAN) and member is not None:
                me = guild.me
                if member.id == guild.owner_id:
                    return ActionResult(action, False, "role hierarchy: the member owns the server", extra)
                if me is not None and member.top_role >= me.top_role:
                    return ActionResult(action, False,
                                        f"role hierarchy: {member.top_role.name!r} is not below the bot's "
                                        f"{me.top_role.name!r}", extra)
            if action.kind is ActionKind.WARN:
                return await self._warn(guild, uid, action, case_number, extra)
            if action.kind is ActionKind.TIMEOUT:
                seconds = min(int(action.duration_s or 3600), MAX_TIMEOUT_S)
                target = member or await guild.fetch_member(uid)
                await target.timeout(timedelta(seconds=seconds), reason=reason)
                extra["until"] = (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()
            elif action.kind is ActionKind.KICK:
                await guild.kick(discord.Object(uid), reason=reason)
            elif action.kind is ActionKind.BAN:
                await guild.ban(discord.Object(uid), reason=reason, delete_message_seconds=0)
            return ActionResult(action, True, "", extra)
        except discord.HTTPException as exc:
            return ActionResult(action, False, describe_error(exc), extra)

    async def _warn(self, guild: discord.Guild, uid: int, action: Action, case_number: int | None,
                    extra: dict[str, str]) -> ActionResult:
        user = self.client.get_user(uid) or await self.client.fetch_user(uid)
        embed = discord.Embed(title=f"Warning in {guild.name}", description=action.reason or "No reason given.",
                              colour=discord.Colour.orange())
        if case_number is not None:
            embed.add_field(name="Case", value=f"#{case_number}")
            embed.set_footer(text="If you think this is wrong, press Appeal.")
        kwargs: dict[str, Any] = {"embed": embed}
        if self.warn_view is not None and case_number is not None:
            kwargs["view"] = self.warn_view(str(guild.id), case_number)
        await user.send(**kwargs)
        return ActionResult(action, True, "", extra)

    async def set_slowmode(self, channel_id: str, seconds: int) -> ActionResult:
        """Set a channel's slowmode (``rate_limit_per_user``, 0-21600 s); used by raid mode."""
        act = Action(ActionKind.LOG, reason=f"slowmode {seconds}s", source="raid")
        try:
            channel = self.client.get_channel(int(channel_id)) or await self.client.fetch_channel(int(channel_id))
            await channel.edit(slowmode_delay=max(0, min(seconds, 21600)), reason="raid mode")  # type: ignore[union-attr]
            return ActionResult(act, True)
        except discord.HTTPException as exc:
            return ActionResult(act, False, describe_error(exc))
