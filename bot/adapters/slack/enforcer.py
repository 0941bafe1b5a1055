"""Carry out the workflow's actions on Slack (:class:`bot.workflow.ports.Enforcer`), within what Slack allows.

Layer: ``bot.adapters.slack``. Imports slack_sdk, ``bot.core`` and ``bot.workflow``.

What Slack lets an app do (docs: ``chat.delete``, ``conversations.kick``, ``chat.postEphemeral``):

* a **bot token** can delete only the bot's own messages (``cant_delete_message``); deleting a member's message needs
  a **workspace admin's user token** (``SLACK_ADMIN_USER_TOKEN``, user scope ``chat:write``). Without one,
  :attr:`SlackEnforcer.capabilities` leaves out ``DELETE`` and the workflow falls back: review, a private notice to
  the author, and a note on the card;
* there are no timeouts, server kicks or bans for an app on a standard workspace; **removing a member from a
  channel** (``conversations.kick``) is the strongest per-channel sanction;
* DMs go through ``conversations.open`` + ``chat.postMessage``; private in-channel notices through
  ``chat.postEphemeral`` (the member must be in the channel).

Every Slack error (``cant_delete_message``, ``not_in_channel``, ``missing_scope``, ``channel_not_found``,
``user_not_found``, ``ratelimited`` after retries...) and every network failure that outlasts slack_sdk's retries
(connection refused or reset, no answer in time: :mod:`bot.adapters.network`) becomes
``ActionResult(ok=False, reason=...)`` recorded on the case. Rate limits (HTTP 429 + ``Retry-After``) are waited out by slack_sdk's own ``AsyncRateLimitErrorRetryHandler``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.network import NETWORK_ERRORS, network_failure, network_reason
from bot.adapters.slack import blocks
from bot.adapters.slack.translate import split
from bot.core.models import Action, ActionKind
from bot.core.ports import GONE, ActionResult
from bot.workflow.ports import BulkResult, Capability, MemberInfo, MemberLookupError, MemberNotice

log = logging.getLogger(__name__)

#: The platform's name in a network failure's reason (:func:`bot.adapters.network.network_reason`).
PLATFORM_NAME = "Slack"

#: Seconds a ``users.info`` answer is reused (roles and names change rarely; moderation checks re-read after this).
USER_CACHE_S = 300.0
#: Seconds a channel's ``conversations.info`` answer (is it the workspace's #general?) is reused.
CHANNEL_CACHE_S = 3600.0
#: Rank of Slack roles for the workflow's hierarchy check (owner > admin > moderator > member).
RANK_OWNER, RANK_ADMIN, RANK_MODERATOR, RANK_MEMBER = 3, 2, 1, 0


#: ``users.info`` errors that answer "this user is not (or no longer) here": anything else is no answer about them.
USER_GONE = frozenset({"user_not_found", "user_not_visible", "account_inactive"})


def _error_code(exc: SlackApiError) -> str:
    """Slack's ``error`` code of a Web API error (``""`` when the response has none)."""
    resp = exc.response
    return str(resp.get("error") or "") if hasattr(resp, "get") else ""


def describe(exc: SlackApiError) -> str:
    """A moderator-readable reason for a Slack error, e.g. ``"cant_delete_message (Slack)"``."""
    resp = exc.response
    error = resp.get("error") if hasattr(resp, "get") else None
    needed = resp.get("needed") if hasattr(resp, "get") else None
    text = str(error or exc)
    if needed:
        text += f" (needs scope {needed})"
    return f"{text} (Slack)"


def _ok(kind: ActionKind = ActionKind.LOG) -> ActionResult:
    return ActionResult(Action(kind), True)


def _fail(reason: str, kind: ActionKind = ActionKind.LOG) -> ActionResult:
    return ActionResult(Action(kind), False, reason)


class SlackEnforcer:
    """Implements the Enforcer port with slack_sdk's ``AsyncWebClient``.

    Args:
        client: The bot token's client (``xoxb-``).
        admin_client: A workspace admin's user-token client (``xoxp-``), or ``None``: then the bot cannot delete
            members' messages and says so in :attr:`capabilities`.
        bot_user_id: The bot's own user id (from ``auth.test``).
        is_moderator: ``async (team_id, user_id) -> bool``: membership of the policy's moderator user group or list.
    """

    def __init__(self, client: AsyncWebClient, *, admin_client: AsyncWebClient | None = None, bot_user_id: str = "",
                 is_moderator: Callable[[str, str], Awaitable[bool]] | None = None) -> None:
        self.client = client
        self.admin_client = admin_client
        self.bot_user_id = bot_user_id
        self.is_moderator = is_moderator
        caps = set(blocks.SLACK_CAN)
        if admin_client is not None:
            caps.add(Capability.DELETE)
        self.capabilities = frozenset(caps)
        self._users: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self._refusals: dict[str, tuple[float, frozenset[Capability]]] = {}

    # ------------------------------------------------------------------ users
    async def user_info(self, user_id: str, *, fresh: bool = False, strict: bool = False) -> dict[str, Any] | None:
        """``users.info`` of a user (cached :data:`USER_CACHE_S` seconds), ``None`` when unknown or deleted.

        Any other Slack error (rate limited past the client's retries, ``internal_error``, ``fatal_error``, a missing
        scope) is not an answer about the user: it is not cached, and gives ``None`` (a message is judged without
        the author's roles) unless ``strict``.

        Raises:
            SlackApiError: ``strict`` and Slack gave no answer about the user (:meth:`member` makes it a
                :class:`~bot.workflow.ports.MemberLookupError`, so an action is refused, not taken as "gone").
        """
        hit = self._users.get(user_id)
        if hit is not None and not fresh and time.monotonic() - hit[0] < USER_CACHE_S:
            return hit[1]
        try:
            resp = await self.client.users_info(user=user_id)
            user = resp.get("user")
        except SlackApiError as exc:
            log.info("users.info %s: %s", user_id, describe(exc))
            if _error_code(exc) not in USER_GONE:
                if strict:
                    raise
                return None
            user = None
        if user is not None and user.get("deleted"):
            user = None
        self._users[user_id] = (time.monotonic(), user)
        return user

    async def rank(self, team_id: str, user: dict[str, Any]) -> int:
        """Owner 3, admin 2, moderator (group or list) 1, member 0."""
        if user.get("is_owner") or user.get("is_primary_owner"):
            return RANK_OWNER
        if user.get("is_admin"):
            return RANK_ADMIN
        if self.is_moderator is not None and await self.is_moderator(team_id, user["id"]):
            return RANK_MODERATOR
        return RANK_MEMBER

    async def member(self, server_id: str, member_id: str) -> MemberInfo | None:
        """The member now, or ``None`` when unknown or deactivated.

        A Slack Connect member (``users.info`` gives another workspace's ``team_id``: someone of another
        organisation in a shared channel) is here, not gone: they are a plain member of this workspace's channels
        (rank 0, never an owner or admin *here*, whatever they are at home), so the card's Warn (a DM) and Remove
        from channel are tried, and whatever Slack answers is recorded on the case. ``home_server`` names their
        workspace, so the card says what cannot be done for them here (:func:`bot.adapters.slack.blocks.review`).

        Raises:
            MemberLookupError: Slack could not be reached (:data:`bot.adapters.network.NETWORK_ERRORS`), or gave
                no answer about the user (rate limited, an internal error).
        """
        try:
            user = await self.user_info(member_id, strict=True)
        except NETWORK_ERRORS as exc:
            raise MemberLookupError(network_reason(exc, PLATFORM_NAME)) from None
        except SlackApiError as exc:  # no answer about the user: not "gone" (that would skip the rank check)
            raise MemberLookupError(describe(exc)) from None
        if user is None:
            return None
        name = (user.get("profile") or {}).get("display_name") or user.get("real_name") or user.get("name") or ""
        if user.get("team_id") and user["team_id"] != server_id:
            return MemberInfo(id=member_id, name=name, rank=RANK_MEMBER, is_bot=bool(user.get("is_bot")),
                              home_server=str(user["team_id"]))
        return MemberInfo(id=member_id, name=name, rank=await self.rank(server_id, user),
                          is_owner=bool(user.get("is_primary_owner")), is_bot=bool(user.get("is_bot")))

    async def bot_member(self, server_id: str) -> MemberInfo | None:
        """The bot (rank above members: an app acts with the installing admin's consent)."""
        return MemberInfo(id=self.bot_user_id, name="modbot", rank=RANK_ADMIN, is_bot=True)

    # ------------------------------------------------------------------ messages
    @network_failure(PLATFORM_NAME, ActionKind.DELETE)
    async def delete_message(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        """Delete with the admin user token (a bot token can delete only its own messages)."""
        if self.admin_client is None:
            return _fail("cant_delete_message: deleting members' messages needs an admin user token", ActionKind.DELETE)
        channel, ts = split(message_id)
        if ts is None:  # a plain channel id names no message (Slack would answer message_not_found)
            return _fail(f"message_not_found: {message_id!r} is not a message reference", ActionKind.DELETE)
        try:
            await self.admin_client.chat_delete(channel=channel, ts=ts)
            return _ok(ActionKind.DELETE)
        except SlackApiError as exc:
            res = _fail(describe(exc), ActionKind.DELETE)
            if exc.response.get("error") == "message_not_found":  # already deleted
                res.extra[GONE] = "1"
            return res

    async def bulk_delete(self, server_id: str, channel_id: str, message_ids: Sequence[str]) -> BulkResult:
        """Slack has no bulk delete: one ``chat.delete`` per message (not in :attr:`capabilities`)."""
        deleted, failed = [], {}
        for mid in message_ids:
            res = await self.delete_message(server_id, channel_id, mid)
            if res.ok:
                deleted.append(mid)
            else:
                failed[mid] = res.reason
        return BulkResult(tuple(deleted), failed)

    # ------------------------------------------------------------------ notices
    @network_failure(PLATFORM_NAME)
    async def notify(self, member_id: str, notice: MemberNotice) -> ActionResult:
        """DM the member (``conversations.open`` + ``chat.postMessage``) with the case and an Appeal button."""
        try:
            opened = await self.client.conversations_open(users=member_id)
            channel = opened["channel"]["id"]
            text, content = blocks.notice(notice)
            await self.client.chat_postMessage(channel=channel, text=text, blocks=content)
            return _ok()
        except SlackApiError as exc:
            return _fail(describe(exc))

    @network_failure(PLATFORM_NAME)
    async def notify_in_channel(self, server_id: str, channel_id: str, member_id: str, text: str) -> ActionResult:
        """A notice only the member sees (``chat.postEphemeral``; in the thread for a thread channel)."""
        channel, thread_ts = split(channel_id)
        try:
            kwargs: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
            await self.client.chat_postEphemeral(channel=channel, user=member_id, text=text, **kwargs)
            return _ok()
        except SlackApiError as exc:
            return _fail(describe(exc))

    # ------------------------------------------------------------------ sanctions
    @network_failure(PLATFORM_NAME, ActionKind.KICK)
    async def remove_from_channel(self, server_id: str, channel_id: str, member_id: str) -> ActionResult:
        """``conversations.kick``: Slack's strongest per-channel sanction (the bot must be in the channel)."""
        channel, _ = split(channel_id)
        try:
            await self.client.conversations_kick(channel=channel, user=member_id)
            return _ok(ActionKind.KICK)
        except SlackApiError as exc:
            return _fail(describe(exc), ActionKind.KICK)

    async def channel_refusals(self, server_id: str, channel_id: str) -> frozenset[Capability]:
        """``{REMOVE_FROM_CHANNEL}`` in the workspace's general channel (``conversations.info``'s ``is_general``:
        Slack answers ``conversations.kick`` there ``cant_kick_from_general``) and in a DM or group DM
        (``method_not_supported_for_channel_type``); else empty. A thread counts as its conversation. Each answer
        is reused :data:`CHANNEL_CACHE_S` seconds; when Slack does not answer, empty (nothing cached: the
        removal is then tried and Slack's refusal recorded)."""
        channel, _ = split(channel_id)
        hit = self._refusals.get(channel)
        if hit is not None and time.monotonic() - hit[0] < CHANNEL_CACHE_S:
            return hit[1]
        try:
            info = (await self.client.conversations_info(channel=channel)).get("channel") or {}
        except SlackApiError as exc:
            log.info("conversations.info %s: %s", channel, describe(exc))
            return frozenset()
        except NETWORK_ERRORS as exc:
            log.info("conversations.info %s: %s", channel, network_reason(exc, PLATFORM_NAME))
            return frozenset()
        stuck = info.get("is_general") or info.get("is_im") or info.get("is_mpim")
        refused = frozenset({Capability.REMOVE_FROM_CHANNEL}) if stuck else frozenset()
        self._refusals[channel] = (time.monotonic(), refused)
        return refused

    async def _unsupported(self, what: str) -> ActionResult:
        return _fail(f"Slack has no {what} for apps")

    async def timeout(self, server_id: str, member_id: str, seconds: int, reason: str) -> ActionResult:
        """Not on Slack (not in :attr:`capabilities`)."""
        return await self._unsupported("timeouts")

    async def remove_timeout(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Not on Slack."""
        return await self._unsupported("timeouts")

    async def kick(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Not on Slack: removing from the workspace needs Enterprise Grid admin APIs (see docs/slack-setup.md)."""
        return await self._unsupported("workspace kicks")

    async def ban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Not on Slack."""
        return await self._unsupported("bans")

    async def unban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Not on Slack."""
        return await self._unsupported("bans")

    async def set_slowmode(self, server_id: str, channel_id: str, seconds: int) -> ActionResult:
        """Not on Slack."""
        return await self._unsupported("slowmode")

    async def pause_invites(self, server_id: str, until: datetime | None) -> ActionResult:
        """Not on Slack."""
        return await self._unsupported("invite pausing")

