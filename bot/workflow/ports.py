"""Ports of the moderation workflow: what it needs from a platform and from the mod log.

Layer: ``bot.workflow`` (platform-neutral). Standard library and ``bot.core`` only; never discord, slack_*,
aiosqlite or torch (``tests/test_core_boundary.py`` enforces this).

* :class:`Enforcer` carries out actions on one platform and **declares what it can do** (:class:`Capability`).
  The workflow never asks for something outside ``capabilities``: it falls back (to the review queue, to a note on
  the case) instead of failing. An enforcer never raises for a platform refusal, nor for a network failure that
  outlasts its client's retries; it returns ``ActionResult(ok=False, reason=...)`` with a moderator-readable reason.
* :class:`ModDesk` is where moderators read: the mod log and the review channel. The adapter renders the view
  models of :mod:`bot.workflow.views` into embeds (Discord) or Block Kit (Slack).
* The mod log is the core's store port, :class:`bot.core.store_port.ModStore`; adapters never call the store
  for moderation steps.
* :class:`RaidControl` is the judging pipeline as the workflow uses it (:class:`bot.core.service.ModerationService`):
  it judges messages and switches raid mode.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.core.models import ActionKind, Message, Scores
from bot.core.ports import ActionResult
from bot.workflow.views import LogEntry, RaidCard, ReviewCard

if TYPE_CHECKING:  # the service imports the judging code; the workflow only needs its result type here
    from bot.core.service import Outcome


#: ``ActionResult.extra`` key of an unban refused because the user is not banned (Discord: 404 Unknown Ban, 10026),
#: e.g. unbanned by hand while the bot was stopped: for an owed unban that is the end reached, not a refusal.
NOT_BANNED = "not_banned"


class Capability(enum.StrEnum):
    """Something a platform may or may not let the bot do.

    Discord (bot token with the documented permissions) can do all of these. Slack cannot time out or ban, deletes
    other people's messages only with an admin user token, and cannot pause invites (see docs).
    """

    DELETE = "delete"  # delete another member's message
    BULK_DELETE = "bulk_delete"  # delete many recent messages in one request
    DM = "dm"  # send a member a private message (with an Appeal button)
    TIMEOUT = "timeout"
    KICK = "kick"  # remove from the server
    BAN = "ban"
    UNBAN = "unban"
    SLOWMODE = "slowmode"  # per-member rate limit on a channel
    THREAD_SLOWMODE = "thread_slowmode"  # the same on a thread itself
    REMOVE_FROM_CHANNEL = "remove_from_channel"  # Slack's strongest per-channel sanction
    PAUSE_INVITES = "pause_invites"  # lockdown: no new members join for a while
    EPHEMERAL = "ephemeral"  # a notice in the channel only the member sees (Slack's chat.postEphemeral)


@dataclass(frozen=True, slots=True)
class MemberInfo:
    """What the platform says about a member right now (for authorization and evidence).

    Attributes:
        id: Member id.
        name: Display name ("" when unknown).
        rank: Position of the member's highest role (Discord role position; Slack: owner 3, admin 2, member 0). A
            moderator may act only on members ranked strictly below them, and so may the bot.
        is_owner: Owns the server (never sanctioned).
        joined_at: When the member joined (UTC), if known.
        created_at: When the account was created (UTC), if known.
        is_bot: A bot or integration.
        home_server: The id of the server the member belongs to when it is not this one (a Slack Connect member
            of another workspace in a shared channel; ``None``: a member of this server). Such a member's account
            is managed there: the card says what cannot be done for them here.
        timed_out_until: Until when the platform says the member is timed out (UTC; ``None``: not timed out, or
            a platform without timeouts). A member holds one timeout, and a new one replaces it.
    """

    id: str
    name: str = ""
    rank: int = 0
    is_owner: bool = False
    joined_at: datetime | None = None
    created_at: datetime | None = None
    is_bot: bool = False
    home_server: str | None = None
    timed_out_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class MemberNotice:
    """A private message to a member about a case (a warning, a timeout, a kick or a ban), or about how their
    appeal of it was decided.

    Attributes:
        server_id: The server.
        server_name: Shown to the member ("" when unknown).
        case_number: The case the notice is about; the adapter adds an Appeal button for it.
        action: What was done.
        reason: Why.
        duration_s: Length of a timeout or temporary ban, seconds.
        appealable: Offer the Appeal button.
        appeal: For the notice of an appeal's outcome: ``"overturned"`` (accepted) or ``"upheld"`` (declined: the
            case stands); ``reason`` then says it to the member. ``None``: a notice of the case itself.
        correction: A correction of the case's notice sent before (a kick's or ban's, sent first while the bot
            still shares a server with the member): what it said was done (``action``) was not, as ``reason`` says
            to the member; not appealable.
    """

    server_id: str
    server_name: str
    case_number: int
    action: ActionKind
    reason: str
    duration_s: int | None = None
    appealable: bool = True
    appeal: str | None = None
    correction: bool = False


@dataclass(frozen=True, slots=True)
class BulkResult:
    """Outcome of a bulk delete: the ids deleted and, per id not deleted, why."""

    deleted: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)


class ChannelGone(Exception):  # noqa: N818 - the channel's state, not a failure of the lookup
    """The platform says the channel no longer exists (Discord: Unknown Channel): no permission overwrite applies
    in it any more. Raised by an enforcer's ``member_permissions``; ``str(self)`` is the channel id."""


class MemberLookupError(Exception):
    """The platform did not say whether a member is in the server (a 5xx, an exhausted rate limit): the workflow
    refuses to act rather than act without its role-hierarchy check."""


class Enforcer(Protocol):
    """Carries out actions on one platform. Never raises for platform refusals.

    Attributes:
        capabilities: What this platform lets the bot do (:class:`Capability`).
    """

    capabilities: frozenset[Capability]

    async def member(self, server_id: str, member_id: str) -> MemberInfo | None:
        """The member as the platform sees them now, or ``None`` when they are not (or no longer) in the server.

        Raises:
            MemberLookupError: the platform could not answer (not the same as "not a member").
        """
        ...

    async def bot_member(self, server_id: str) -> MemberInfo | None:
        """The bot itself in that server (its rank bounds whom it can sanction)."""
        ...

    async def delete_message(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        """Delete one message."""
        ...

    async def bulk_delete(self, server_id: str, channel_id: str, message_ids: Sequence[str]) -> BulkResult:
        """Delete up to 100 messages of one channel at once (Discord: none older than 14 days)."""
        ...

    async def notify(self, member_id: str, notice: MemberNotice) -> ActionResult:
        """Send the member a private notice with the case number (and an Appeal button)."""
        ...

    async def timeout(self, server_id: str, member_id: str, seconds: int, reason: str) -> ActionResult:
        """Time a member out for ``seconds`` (Discord caps at 28 days)."""
        ...

    async def remove_timeout(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Lift a member's timeout."""
        ...

    async def kick(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Remove a member from the server."""
        ...

    async def ban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Ban a user (also one who already left)."""
        ...

    async def unban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        """Lift a ban. Refused because the user is not banned: ``extra`` holds :data:`NOT_BANNED` (``"1"``)."""
        ...

    async def set_slowmode(self, server_id: str, channel_id: str, seconds: int) -> ActionResult:
        """Set a channel's or thread's slowmode (seconds between a member's messages; 0 lifts it)."""
        ...

    async def remove_from_channel(self, server_id: str, channel_id: str, member_id: str) -> ActionResult:
        """Remove a member from one channel."""
        ...

    async def pause_invites(self, server_id: str, until: datetime | None) -> ActionResult:
        """Stop new members joining until ``until`` (``None`` resumes invites)."""
        ...

    async def notify_in_channel(self, server_id: str, channel_id: str, member_id: str, text: str) -> ActionResult:
        """A notice in the channel that only the member sees (``Capability.EPHEMERAL``)."""
        ...

    async def channel_refusals(self, server_id: str, channel_id: str) -> frozenset[Capability]:
        """Capabilities of :attr:`capabilities` the platform refuses in this one channel (``channel_id``: a channel
        or a thread, whose parent counts): Slack removes nobody from a workspace's general channel
        (``conversations.kick`` answers ``cant_kick_from_general``), so there ``REMOVE_FROM_CHANNEL`` is refused.
        Empty when every capability holds there, or when the platform could not say (the action is then tried and
        its refusal recorded). Never raises."""
        ...


class ModDesk(Protocol):
    """The moderators' side of a platform: the mod log and the review channel. Renders the workflow's views.

    Every method returns ``None``/``False`` when the channel is unset or cannot be reached; the adapter reports
    an unreachable channel once (not on every message) and the workflow carries on.
    """

    async def post_mod_log(self, server_id: str, entry: LogEntry) -> bool:
        """Post a :class:`bot.workflow.views.LogEntry` in the mod log."""
        ...

    async def post_review(self, card: ReviewCard) -> str | None:
        """Post a :class:`bot.workflow.views.ReviewCard`; returns the card's message id."""
        ...

    async def update_review(self, card: ReviewCard, card_message_id: str) -> bool:
        """Replace a posted card (a re-flagged edit, a decision)."""
        ...

    async def post_raid(self, card: RaidCard) -> str | None:
        """Post a :class:`bot.workflow.views.RaidCard` (with its bulk-action buttons); returns its message id."""
        ...

    async def update_raid(self, card: RaidCard, card_message_id: str) -> bool:
        """Replace a posted raid card (counts, actions taken)."""
        ...


class RaidControl(Protocol):
    """The judging pipeline, as the workflow uses it (:class:`bot.core.service.ModerationService`)."""

    async def handle(self, message: Message) -> Outcome:
        """Judge one message and record its verdict (the case, strike and review item it opens)."""
        ...

    async def drain(self) -> None:
        """Wait until every message submitted so far is judged and recorded."""
        ...

    async def score_aside(self, text: str) -> Scores:
        """Score a text that is not a message (a member's name); nothing is recorded. Raises what the scorer
        raises."""
        ...

    def set_raid_mode(self, platform: str, server_id: str, channel_id: str | None, on: bool, at: datetime) -> None:
        """Switch raid mode on or off in a channel (``None``: the whole server) at ``at`` (UTC)."""
        ...


__all__ = [
    "BulkResult",
    "Capability",
    "Enforcer",
    "MemberInfo",
    "ChannelGone",
    "MemberLookupError",
    "MemberNotice",
    "ModDesk",
    "NOT_BANNED",
    "RaidControl",
]
