"""Carry out the workflow's actions on Discord (:class:`bot.workflow.ports.Enforcer`).

Layer: ``bot.adapters.discord``. Imports discord.py, ``bot.core`` and ``bot.workflow``. Never raises for Discord
refusals (403 Forbidden, 404 NotFound, 400 HTTPException) nor for a network failure that outlasts discord.py's
retries (:mod:`bot.adapters.network`): the reason is returned so the case records it. Rate
limits (429) are waited out by discord.py itself, which is why verdicts are carried out off the interaction path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import discord

from bot.adapters.discord.cards import md
from bot.adapters.discord.interact import PERMISSION_FLAGS
from bot.adapters.network import NETWORK_ERRORS, network_failure, network_reason
from bot.core.models import MAX_SENT_TIMEOUT_S, Action, ActionKind
from bot.core.ports import GONE, ActionResult
from bot.workflow import words
from bot.workflow.authz import ChannelPermissions, Permission
from bot.workflow.fit import fit_escaped
from bot.workflow.ports import (
    NOT_BANNED,
    BulkResult,
    Capability,
    ChannelGone,
    MemberInfo,
    MemberLookupError,
    MemberNotice,
)

log = logging.getLogger(__name__)

#: The platform's name in a network failure's reason (:func:`bot.adapters.network.network_reason`).
PLATFORM_NAME = "Discord"

#: Discord refuses bulk deletion of messages older than 14 days (API error 50034).
BULK_DELETE_MAX_AGE = timedelta(days=14)

_KNOWN_CODES = {
    50013: "Missing Permissions",
    50001: "Missing Access (the bot cannot see that channel)",
    10008: "Unknown Message (already deleted)",
    10007: "Unknown Member (member left)",
    10003: "Unknown Channel",
    10013: "Unknown User",
    10026: "Unknown Ban (not banned)",
    50034: "message older than 14 days cannot be bulk deleted",
    50007: "cannot send messages to this user (DMs closed or no shared server)",
}


def describe_error(exc: discord.HTTPException) -> str:
    """A moderator-readable reason for a Discord error, e.g. ``"Missing Permissions (50013)"``."""
    text = _KNOWN_CODES.get(exc.code) or exc.text or getattr(exc.response, "reason", "") or "HTTP error"
    return f"{text} ({exc.code or exc.status})"


def _ok(kind: ActionKind = ActionKind.LOG, **extra: str) -> ActionResult:
    return ActionResult(Action(kind), True, "", dict(extra))


def _fail(reason: str, kind: ActionKind = ActionKind.LOG) -> ActionResult:
    return ActionResult(Action(kind), False, reason)


def member_info(member: discord.Member) -> MemberInfo:
    """A guild member as the workflow sees them (rank = position of their highest role)."""
    return MemberInfo(id=str(member.id), name=member.display_name, rank=member.top_role.position,
                      is_owner=member.guild.owner_id == member.id, joined_at=member.joined_at,
                      created_at=member.created_at, is_bot=member.bot,
                      timed_out_until=member.timed_out_until if member.is_timed_out() else None)


class DiscordEnforcer:
    """Implements :class:`bot.workflow.ports.Enforcer` with a connected discord.py client.

    Args:
        client: The connected bot (resolves guilds, channels and members; cache first, then REST).
        notice_view: ``(server_id, case_number) -> discord.ui.View`` giving the Appeal button of a member notice
            (injected to keep this module free of view code).
    """

    capabilities = frozenset(Capability) - {Capability.REMOVE_FROM_CHANNEL, Capability.EPHEMERAL}

    def __init__(self, client: discord.Client, *, notice_view: Callable[[str, int], discord.ui.View] | None = None
                 ) -> None:
        self.client = client
        self.notice_view = notice_view

    async def _guild(self, server_id: str) -> discord.Guild:
        guild = self.client.get_guild(int(server_id))
        return guild if guild is not None else await self.client.fetch_guild(int(server_id))

    async def _channel(self, channel_id: str) -> Any:
        ch = self.client.get_channel(int(channel_id))
        return ch if ch is not None else await self.client.fetch_channel(int(channel_id))

    # ------------------------------------------------------------------ members
    async def member(self, server_id: str, member_id: str) -> MemberInfo | None:
        """The member now (cache, then ``GET /guilds/{g}/members/{u}``), or ``None`` when not in the server.

        Raises:
            MemberLookupError: Discord answered with something else than "unknown member/user" (a 5xx...).
        """
        try:
            guild = await self._guild(server_id)
            m = guild.get_member(int(member_id)) or await guild.fetch_member(int(member_id))
        except ValueError:
            return None
        except discord.NotFound:
            return None
        except discord.HTTPException as exc:
            raise MemberLookupError(describe_error(exc)) from None
        except NETWORK_ERRORS as exc:
            raise MemberLookupError(network_reason(exc, PLATFORM_NAME)) from None
        return member_info(m)

    async def member_permissions(self, server_id: str, channel_id: str, member_id: str) -> ChannelPermissions | None:
        """The member's permissions IN ``channel_id`` as Discord computes them (roles, Administrator, the channel's
        permission overwrites; a thread uses its parent's), from discord.py's ``permissions_for``, and those the
        channel withholds from them whatever their roles grant (:func:`withheld_in`); ``None`` when the
        server, channel or member cannot be read (Discord failed, an unknown member, an id that is not one).

        Raises:
            ChannelGone: Discord says the channel does not exist (deleted since): no overwrite applies there.
        """
        try:
            guild = await self._guild(server_id)
        except (ValueError, discord.HTTPException, aiohttp.ClientError, TimeoutError):  # unreadable
            return None
        try:
            channel = guild.get_channel_or_thread(int(channel_id)) or await guild.fetch_channel(int(channel_id))
        except discord.NotFound:
            raise ChannelGone(channel_id) from None
        except (ValueError, discord.HTTPException, aiohttp.ClientError, TimeoutError):  # unreadable
            return None
        try:
            member = guild.get_member(int(member_id)) or await guild.fetch_member(int(member_id))
        except (ValueError, discord.HTTPException, aiohttp.ClientError, TimeoutError):  # unreadable
            return None
        if not hasattr(channel, "permissions_for"):
            return None
        perms = channel.permissions_for(member)
        held = frozenset(p for flag, p in PERMISSION_FLAGS.items() if perms.administrator or getattr(perms, flag))
        return ChannelPermissions(held=held, withheld=frozenset() if perms.administrator else withheld_in(channel, member, perms))

    async def bot_member(self, server_id: str) -> MemberInfo | None:
        """The bot's own member in that server."""
        guild = self.client.get_guild(int(server_id))
        return member_info(guild.me) if guild is not None and guild.me is not None else None

    # ------------------------------------------------------------------ messages
    @network_failure(PLATFORM_NAME, ActionKind.DELETE)
    async def delete_message(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        """Delete one message. ``Unknown Message (10008)`` is returned as a failure with that reason, marked
        ``extra[GONE]`` (:data:`bot.core.ports.GONE`)."""
        try:
            channel = await self._channel(channel_id)
            await channel.get_partial_message(int(message_id)).delete()
            return _ok(ActionKind.DELETE)
        except discord.HTTPException as exc:
            res = _fail(describe_error(exc), ActionKind.DELETE)
            if exc.code == 10008:  # Unknown Message: already deleted
                res.extra[GONE] = "1"
            return res

    async def bulk_delete(self, server_id: str, channel_id: str, message_ids: Sequence[str],
                          now: datetime | None = None) -> BulkResult:
        """Delete up to 100 messages of one channel in one request; ids older than 14 days are refused up front
        (Discord would answer 50034 for the whole request), one id goes as a single delete."""
        cutoff = (now or datetime.now(UTC)) - BULK_DELETE_MAX_AGE
        young = [m for m in message_ids if discord.utils.snowflake_time(int(m)) > cutoff][:100]
        failed = {m: "older than 14 days: Discord refuses to bulk delete it (50034)" for m in message_ids
                  if m not in young}
        if not young:
            return BulkResult(failed=failed)
        try:
            channel = await self._channel(channel_id)
            if len(young) == 1:
                await channel.get_partial_message(int(young[0])).delete()
            else:
                await channel.delete_messages([discord.Object(int(m)) for m in young])
        except discord.HTTPException as exc:
            failed.update({m: describe_error(exc) for m in young})
            return BulkResult(failed=failed)
        except NETWORK_ERRORS as exc:
            failed.update({m: network_reason(exc, PLATFORM_NAME) for m in young})
            return BulkResult(failed=failed)
        return BulkResult(deleted=tuple(young), failed=failed)

    # ------------------------------------------------------------------ notices
    @network_failure(PLATFORM_NAME)
    async def notify(self, member_id: str, notice: MemberNotice) -> ActionResult:
        """DM the member about their case, with an Appeal button, how their appeal of it was decided, or a
        correction of its notice (``Correction: case #N in <server>``; fails with 50007 when DMs are closed; a
        member id that is none, a forgotten member's pseudonym, is not sent)."""
        titles = {ActionKind.WARN: "Warning", ActionKind.TIMEOUT: "Timeout", ActionKind.KICK: "Kicked",
                  ActionKind.BAN: "Banned"}
        if not (member_id.isascii() and member_id.isdigit()):
            return _fail("not a member id (the member's records were forgotten)")
        try:
            guild = self.client.get_guild(int(notice.server_id))
            name = notice.server_name or (guild.name if guild is not None else "the server")
            user = self.client.get_user(int(member_id)) or await self.client.fetch_user(int(member_id))
            title = (f"Appeal of case #{notice.case_number} in {name}: "
                     f"{'accepted' if notice.appeal == 'overturned' else 'declined'}" if notice.appeal else
                     f"Correction: case #{notice.case_number} in {name}" if notice.correction else
                     f"{titles.get(notice.action, notice.action.label.title())} in {name}")
            embed = discord.Embed(title=title[:256],
                                  description=fit_escaped(notice.reason or "", 4000, md, empty="") or "No reason given.",
                                  colour=discord.Colour.orange())
            if not notice.appeal:
                embed.add_field(name="Case", value=f"#{notice.case_number}")
            if notice.duration_s:
                embed.add_field(name="Duration", value=words.duration(notice.duration_s))  # "7 days", "45 seconds"
            kwargs: dict[str, Any] = {"embed": embed}
            if notice.appealable and self.notice_view is not None:
                embed.set_footer(text="If you think this is wrong, press Appeal.")
                kwargs["view"] = self.notice_view(notice.server_id, notice.case_number)
            await user.send(**kwargs)
            return _ok()
        except discord.HTTPException as exc:
            return _fail(describe_error(exc))

    # ------------------------------------------------------------------ sanctions
    @network_failure(PLATFORM_NAME, ActionKind.TIMEOUT)
    async def timeout(self, server_id: str, member_id: str, seconds: int, reason: str) -> ActionResult:
        """Time out (``PATCH /guilds/{g}/members/{u}`` ``communication_disabled_until``), at most
        :data:`~bot.core.models.MAX_SENT_TIMEOUT_S` (28 days less a 1 h margin for clock skew). The server owner
        and members with Administrator are not sent (Discord refuses them with a 403 that reads "Missing
        Permissions", as if the bot lacked one): the failure says why."""
        seconds = min(int(seconds), MAX_SENT_TIMEOUT_S)
        try:
            guild = await self._guild(server_id)
            member = guild.get_member(int(member_id)) or await guild.fetch_member(int(member_id))
            if guild.owner_id == member.id:
                return _fail("Discord does not time out the server owner", ActionKind.TIMEOUT)
            if member.guild_permissions.administrator:
                return _fail("Discord does not time out members with Administrator (their roles grant it)",
                             ActionKind.TIMEOUT)
            await member.timeout(timedelta(seconds=seconds), reason=reason[:500])
            until = (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()
            return _ok(ActionKind.TIMEOUT, until=until)
        except discord.HTTPException as exc:
            return _fail(describe_error(exc), ActionKind.TIMEOUT)

    @network_failure(PLATFORM_NAME, ActionKind.TIMEOUT)
    async def remove_timeout(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Lift a timeout (``communication_disabled_until: null``)."""
        try:
            guild = await self._guild(server_id)
            member = guild.get_member(int(member_id)) or await guild.fetch_member(int(member_id))
            await member.timeout(None, reason=reason[:500])
            return _ok(ActionKind.TIMEOUT)
        except discord.HTTPException as exc:
            return _fail(describe_error(exc), ActionKind.TIMEOUT)

    @network_failure(PLATFORM_NAME, ActionKind.KICK)
    async def kick(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Kick (``DELETE /guilds/{g}/members/{u}``)."""
        try:
            await (await self._guild(server_id)).kick(discord.Object(int(member_id)), reason=reason[:500])
            return _ok(ActionKind.KICK)
        except discord.HTTPException as exc:
            return _fail(describe_error(exc), ActionKind.KICK)

    @network_failure(PLATFORM_NAME, ActionKind.BAN)
    async def ban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Ban (``PUT /guilds/{g}/bans/{u}``), keeping the member's message history."""
        try:
            await (await self._guild(server_id)).ban(discord.Object(int(member_id)), reason=reason[:500],
                                                     delete_message_seconds=0)
            return _ok(ActionKind.BAN)
        except discord.HTTPException as exc:
            return _fail(describe_error(exc), ActionKind.BAN)

    @network_failure(PLATFORM_NAME, ActionKind.BAN)
    async def unban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Lift a ban (``DELETE /guilds/{g}/bans/{u}``); 404 Unknown Ban (the user is not banned) is refused with
        :data:`bot.workflow.ports.NOT_BANNED` in ``extra``."""
        try:
            await (await self._guild(server_id)).unban(discord.Object(int(member_id)), reason=reason[:500])
            return _ok(ActionKind.BAN)
        except discord.HTTPException as exc:
            res = _fail(describe_error(exc), ActionKind.BAN)
            if exc.code == 10026:
                res.extra[NOT_BANNED] = "1"
            return res

    # ------------------------------------------------------------------ channels and server
    @network_failure(PLATFORM_NAME)
    async def set_slowmode(self, server_id: str, channel_id: str, seconds: int) -> ActionResult:
        """Set ``rate_limit_per_user`` (0-21600 s) on a text channel or a thread itself."""
        try:
            channel = await self._channel(channel_id)
            await channel.edit(slowmode_delay=max(0, min(int(seconds), 21600)), reason="raid mode")
            return _ok()
        except discord.HTTPException as exc:
            return _fail(describe_error(exc))

    async def remove_from_channel(self, server_id: str, channel_id: str, member_id: str) -> ActionResult:
        """Not a Discord sanction (not in :attr:`capabilities`): permission overwrites would be needed."""
        return _fail("Discord has no 'remove from channel'; use a timeout or channel permissions")

    async def channel_refusals(self, server_id: str, channel_id: str) -> frozenset[Capability]:
        """None: every capability Discord grants holds in any channel (permissions are checked per call)."""
        return frozenset()

    @network_failure(PLATFORM_NAME)
    async def pause_invites(self, server_id: str, until: datetime | None) -> ActionResult:
        """Pause invites (Discord's incident actions, ``PUT /guilds/{g}/incident-actions``; at most 24 h)."""
        try:
            body = {"invites_disabled_until": until.isoformat() if until else None}
            route = discord.http.Route("PUT", "/guilds/{guild_id}/incident-actions", guild_id=int(server_id))
            await self.client.http.request(route, json=body)
            return _ok()
        except discord.HTTPException as exc:
            return _fail(describe_error(exc))

    async def notify_in_channel(self, server_id: str, channel_id: str, member_id: str, text: str) -> ActionResult:
        """Not available on Discord outside an interaction (not in :attr:`capabilities`); DMs are used instead."""
        return _fail("Discord has no private in-channel notices outside interactions")


def withheld_in(channel: Any, member: discord.Member, perms: discord.Permissions) -> frozenset[Permission]:
    """The permissions ``channel`` takes away from ``member`` whatever their roles grant (``perms``: theirs there, as
    discord.py computes them): every one when they cannot View Channel there; else those an overwrite denies, applied
    in Discord's order (@everyone's overwrite, then the denies and then the allows of the member's roles, then the
    member's own: the last layer that names a permission decides). A thread reads its parent's overwrites, as
    Discord does. Administrator is checked by the caller (no overwrite applies to it)."""
    if not perms.view_channel:
        return frozenset(PERMISSION_FLAGS.values())
    channel = getattr(channel, "parent", None) or channel
    if not hasattr(channel, "overwrites_for"):
        return frozenset()
    everyone = channel.overwrites_for(member.guild.default_role)
    roles = [channel.overwrites_for(r) for r in member.roles if r.id != member.guild.id]
    own = channel.overwrites_for(member)
    withheld = set()
    for flag, perm in PERMISSION_FLAGS.items():
        state = getattr(everyone, flag)
        if any(getattr(o, flag) is False for o in roles):
            state = False
        if any(getattr(o, flag) is True for o in roles):
            state = True
        if getattr(own, flag) is not None:
            state = getattr(own, flag)
        if state is False:
            withheld.add(perm)
    return frozenset(withheld)
