"""Core value types of the moderation core.

Layer: ``bot.core`` (platform-neutral). May import only the standard library and pydantic; never discord,
slack_*, aiosqlite, torch or detoxify (``tests/test_core_boundary.py`` enforces this).

Every id is a ``str``; the platform travels in :class:`ServerRef`. Every datetime is timezone-aware UTC.
Scores are floats in [0, 1]. Durations are whole seconds.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

#: The seven detoxify labels, in detoxify's ``unbiased`` order. Every scorer reports against this list.
LABELS: tuple[str, ...] = (
    "toxicity",
    "severe_toxicity",
    "obscene",
    "threat",
    "insult",
    "identity_attack",
    "sexual_explicit",
)

#: Discord's hard cap on a member timeout: 28 days, in seconds.
MAX_TIMEOUT_S = 28 * 24 * 3600
#: Margin kept below :data:`MAX_TIMEOUT_S` on what is sent: Discord checks "at most 28 days from now" on ITS clock
#: when the request arrives, so our clock running behind Discord's (skew) or a slow / retried request turns an
#: exact 28 days into a 400. One hour covers any sane skew and a rate-limited retry.
TIMEOUT_MARGIN_S = 3600
#: The longest timeout the bot sends: 28 days less :data:`TIMEOUT_MARGIN_S` (27 d 23 h).
MAX_SENT_TIMEOUT_S = MAX_TIMEOUT_S - TIMEOUT_MARGIN_S


@dataclass(frozen=True, slots=True)
class ServerRef:
    """A community the bot moderates: a Discord guild or a Slack workspace.

    Attributes:
        platform: ``"discord"``, ``"slack"`` or ``"export"`` (offline scans of chat exports).
        id: Guild snowflake, Slack ``team_id`` or the export's guild id.
        name: Human-readable name, for reports only.
    """

    platform: str
    id: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class ChannelRef:
    """Where a message lives.

    Attributes:
        id: Channel or thread id.
        name: Channel name without ``#``.
        parent_id: For a thread, the id of its parent channel; ``None`` otherwise.
        category_id: Discord category (or ``None``); policy overrides can target a category.
        is_thread: True for Discord threads and Slack thread replies' virtual channel.
    """

    id: str
    name: str = ""
    parent_id: str | None = None
    category_id: str | None = None
    is_thread: bool = False


@dataclass(frozen=True, slots=True)
class MemberRef:
    """A member of a server, as far as the platform told us.

    Attributes:
        id: User id.
        name: Display name (pseudonymised in exports).
        joined_at: When the member joined the server (UTC), if known.
        created_at: When the account was created (UTC), if known (Discord derives it from the snowflake).
        roles: Role ids (Discord) or role-like names (Slack: ``"admin"``, ``"owner"``).
        is_bot: True for bots and integrations.
    """

    id: str
    name: str = ""
    joined_at: datetime | None = None
    created_at: datetime | None = None
    roles: tuple[str, ...] = ()
    is_bot: bool = False


@dataclass(frozen=True, slots=True)
class Mention:
    """One user mentioned in a message.

    Attributes:
        id: The mentioned user's id.
        is_bot: Mentions of bots do not count toward mention spam.
        is_reply_ping: True when the mention is the implicit ping of a reply; does not count either.
    """

    id: str
    is_bot: bool = False
    is_reply_ping: bool = False


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file attached to a message (URL and file name only; contents are never fetched)."""

    url: str
    filename: str = ""


#: The member id of a message whose source named no author (a JSON line without ``author``): every such message
#: shares it, so it is not one member and the rate-based rules leave it out (:attr:`Message.in_rate_windows`).
NO_AUTHOR_ID = "unknown"


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message as the core sees it, translated from a platform event or an export row.

    Attributes:
        server: The server it was posted in.
        channel: The channel or thread.
        author: Who posted it.
        id: Platform message id (Discord snowflake, Slack ``ts``); with platform and server it is the dedupe key.
        text: The original text, never modified (normalisation works on copies).
        created_at: Posting time, UTC; ``None`` when the source gave none (a JSON line without ``created_at``).
            Never a stand-in such as the Unix epoch: a message genuinely posted at 1970-01-01T00:00:00Z has that
            time. Rules that need time (flood, duplicates, raids, account and membership age) skip an untimed
            message, and retention counts its text from when it was stored.
        edited_at: Time of the edit this event carries, or ``None`` for an original post.
        reply_to: Id of the message this replies to, if any.
        attachments: Attached files.
        mentions: Users mentioned.
        mentions_everyone: True for ``@everyone`` / ``@here`` / ``<!channel>``.
        is_first_message: True when this is the author's first message seen in this server (set by the adapter or
            importer when it knows; the core's own tracking is used otherwise).
    """

    server: ServerRef
    channel: ChannelRef
    author: MemberRef
    id: str
    text: str
    created_at: datetime | None
    edited_at: datetime | None = None
    reply_to: str | None = None
    attachments: tuple[Attachment, ...] = ()
    mentions: tuple[Mention, ...] = ()
    mentions_everyone: bool = False
    is_first_message: bool | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """The dedupe key ``(platform, server id, message id)``."""
        return (self.server.platform, self.server.id, self.id)

    @property
    def event_time(self) -> datetime | None:
        """The time of this event: the edit time for an edit, else the posting time (``None``: not known)."""
        return self.edited_at or self.created_at

    @property
    def in_rate_windows(self) -> bool:
        """True when the rate-based rules (flood, duplicates, raids, strikes and the escalation ladder) can judge
        this message: it has a time and an author (not :data:`NO_AUTHOR_ID`, which every anonymous line shares, so
        they would read as one member posting everything). False: it is judged on its own, as ``score`` judges."""
        return self.created_at is not None and self.author.id != NO_AUTHOR_ID


@dataclass(frozen=True, slots=True)
class Scores:
    """Model scores for one message.

    Attributes:
        values: Label -> score in [0, 1], only for labels the model has.
        missing: Labels of :data:`LABELS` the model does not produce. They are reported as missing, never as 0.
        model: Model name (e.g. ``"embedded-minilm-v1"``, ``"original"``).
    """

    values: Mapping[str, float]
    missing: tuple[str, ...] = ()
    model: str = ""

    def get(self, label: str) -> float | None:
        """Score of ``label`` in [0, 1], or ``None`` when the model lacks that label."""
        return self.values.get(label)

    def as_dict(self) -> dict[str, float | None]:
        """All seven labels, ``None`` for missing ones (the JSON contract of ``score`` and ``scan --out``)."""
        return {label: (round(float(self.values[label]), 4) if label in self.values else None) for label in LABELS}


class ActionKind(enum.IntEnum):
    """What can be done about a message or member, ordered from weakest to strongest.

    ``union`` of several actions keeps the strongest sanctioning one, as python-discord's filter action merge does.
    """

    NONE = 0
    LOG = 1
    REVIEW = 2
    DELETE = 3
    WARN = 4
    TIMEOUT = 5
    KICK = 6
    BAN = 7

    @property
    def label(self) -> str:
        """Lower-case name used in config files, the database and JSON output."""
        return self.name.lower()

    @classmethod
    def parse(cls, name: str) -> ActionKind:
        """Parse ``"timeout"`` etc. Raises ``ValueError`` naming the allowed values."""
        try:
            return cls[name.strip().upper()]
        except KeyError:
            allowed = ", ".join(k.label for k in cls if k is not cls.NONE)
            raise ValueError(f"unknown action {name!r} (allowed: {allowed})") from None


@dataclass(frozen=True, slots=True)
class Action:
    """One thing to do, returned by the core as data and carried out by a platform enforcer.

    Attributes:
        kind: The action.
        reason: Human-readable reason shown to moderators and the member.
        duration_s: Timeout length in seconds (only for ``TIMEOUT``; capped at :data:`MAX_TIMEOUT_S`).
        source: What asked for it: a label (``"identity_attack"``), a rule name (``"blocklist"``), ``"escalation"``.
        delete_message: Whether the message should also be removed (sanctions usually remove the message too).
    """

    kind: ActionKind
    reason: str = ""
    duration_s: int | None = None
    source: str = ""
    delete_message: bool = False


@dataclass(frozen=True, slots=True)
class RuleHit:
    """One automod rule that fired on a message.

    Attributes:
        rule: Rule name (``"blocklist"``, ``"invite"``, ``"mention_spam"``, ``"duplicate_spam"``, ``"flood"``,
            ``"new_account"``, ``"zalgo"``, ``"regex"``, ``"link"``, ``"raid"``...).
        detail: What matched, for moderators (e.g. the blocked term or the count in the window).
        label: Detoxify label the hit supports, if any (a slur blocklist entry supports ``identity_attack``).
        action: The action the policy asks for this rule (``None`` = signal only).
    """

    rule: str
    detail: str = ""
    label: str | None = None
    action: str | None = None


def hit_reason(rule: str, detail: str) -> str:
    """The reason of the action a rule hit asks for (:func:`bot.core.judge.decide`), as stored in the reasons of its
    case, review item and strike: ``"<rule>: <detail>"`` with leading and trailing spaces and colons removed, so an
    empty detail gives ``"<rule>"`` (and a detail ending in ``" "`` or ``":"`` loses those characters).

    The store's erasure of a regex rule's quote (:mod:`bot.store.privacy`) rebuilds the stored text with this same
    function, so the two cannot disagree.
    """
    return f"{rule}: {detail}".strip(": ")


def review_reason(review_id: int, reason: str) -> str:
    """The reason of the case (and strike) a moderator's decision on review item ``review_id`` opens when they give
    none of their own, and the reason a kick or ban decided on it is prefilled with: ``"review #<id>: <reason>"``,
    ``reason`` the item's (a report's item: the reporter's words).

    The store's ``forget_member`` finds these copies of a forgotten reporter's words with this same function.
    """
    return f"review #{review_id}: {reason}"


@dataclass(frozen=True, slots=True)
class RaidAlert:
    """A raid or brigade detected in one channel or thread.

    Attributes:
        server_id: Server id.
        channel_id: Channel or thread where the burst happened.
        started_at: Time of the first message in the burst (UTC).
        members: Ids of the members involved so far.
        count: Messages in the burst window when the alert was raised.
        reason: ``"flagged_burst"`` or ``"new_member_burst"``.
    """

    server_id: str
    channel_id: str
    started_at: datetime
    members: tuple[str, ...]
    count: int
    reason: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """The core's decision on one message.

    Attributes:
        message: The message judged.
        scores: Model scores (``None`` if the message was exempt or empty and not scored).
        rule_hits: Automod rules that fired.
        labels: Labels whose score reached the review tier (the reasons the message is flagged).
        flagged: True when anything asks for review or action.
        action: The single strongest action (``NONE`` when clean).
        actions: Every action to carry out, strongest first (e.g. delete + timeout from escalation).
        strike_points: Points of the strike this message earns (0 for none).
        shadow: True when the policy is in shadow mode: actions are recorded, not carried out.
        exempt: Why the message was not judged (``"role"``, ``"channel"``, ``"member"``, ``"bot"``), or ``None``.
        raid: A raid alert this message raised (at most one per burst), or ``None``.
        normalized: The normalised text used for matching (for moderators' evidence).
        policy_version: Hash of the effective policy.
        latency_ms: Time from arrival to verdict, milliseconds.
        raid_mode: Raid mode's stricter tiers applied to this message.
        tiers: The tiers the message was actually judged against, per label: ``(review, act)`` scores in [0, 1]
            or ``None`` for a tier that is off (after channel overrides, the untargeted tier and raid mode).
        score_status: How far the model read the message: ``"ok"``; ``"not_scored"`` (exempt, empty, or
            nothing a model can read); ``"scorer_error"`` (the model failed; ``on_scorer_error`` decided).
            Further statuses (languages, long texts) are documented where they are set.
        language: Language detected for the text (ISO 639-1 code), when detection ran.
    """

    message: Message
    scores: Scores | None
    rule_hits: tuple[RuleHit, ...] = ()
    labels: tuple[str, ...] = ()
    flagged: bool = False
    action: ActionKind = ActionKind.NONE
    actions: tuple[Action, ...] = ()
    strike_points: int = 0
    shadow: bool = False
    exempt: str | None = None
    raid: RaidAlert | None = None
    normalized: str = ""
    policy_version: str = ""
    latency_ms: float = 0.0
    raid_mode: bool = False
    tiers: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    score_status: str = "ok"
    language: str | None = None

    def to_json(self) -> dict[str, object]:
        """The stable per-message JSON contract of ``score`` and ``scan --out``.

        Shape: ``{"id", "channel", "author", "scores": {label: float|None}, "rule_hits": [{"rule", "detail",
        "label"}], "flagged": bool, "labels": [str], "action": str}``.
        """
        return {
            "id": self.message.id,
            "channel": self.message.channel.name or self.message.channel.id,
            "author": self.message.author.name or self.message.author.id,
            "scores": self.scores.as_dict() if self.scores else {label: None for label in LABELS},
            "rule_hits": [{"rule": h.rule, "detail": h.detail, "label": h.label} for h in self.rule_hits],
            "flagged": self.flagged,
            "labels": list(self.labels),
            "action": self.action.label,
        }


class CaseStatus(enum.StrEnum):
    """State of a case's action on the platform."""

    PENDING = "pending"
    APPLIED = "applied"
    FAILED = "failed"
    SHADOW = "shadow"
    OVERTURNED = "overturned"
    PARDONED = "pardoned"


class ReviewDecision(enum.StrEnum):
    """A moderator's decision on a review item."""

    OPEN = "open"
    DISMISSED = "dismissed"
    DELETED = "deleted"
    WARNED = "warned"
    TIMED_OUT = "timed_out"
    KICKED = "kicked"
    BANNED = "banned"
    INVESTIGATING = "investigating"


#: The highest case number there can be: a number a member or moderator types past it (or below 1) is no case, on
#: every backend (PostgreSQL's INTEGER columns could not even take one past 2^31 - 1 as a parameter).
MAX_CASE_NUMBER = 10**9


@dataclass(frozen=True, slots=True)
class Case:
    """A numbered (per server), append-only record of a moderation action.

    Attributes:
        server_id: Server id (cases are numbered per ``(platform, server_id)``).
        number: Case number, 1-based, per server.
        member_id: The member the case is about.
        action: What was (or would be, in shadow mode) done.
        reason: Why.
        status: Platform outcome.
        created_at: When the case was opened (UTC).
        moderator_id: Moderator who acted, or ``None`` for automod.
        message_id: The message that caused it, if any.
        expires_at: End of a timeout, if any.
        failure: Why the platform action failed, if it did.
        lifted_at: When a ban (or timeout) was lifted: its end, an unban, a later ban superseding it, an overturn
            (UTC); ``None`` while it stands.
        escalated_from: For a ladder step, the number of the case whose strike crossed it; else ``None``.
    """

    server_id: str
    number: int
    member_id: str
    action: ActionKind
    reason: str
    status: CaseStatus
    created_at: datetime
    moderator_id: str | None = None
    message_id: str | None = None
    expires_at: datetime | None = None
    failure: str | None = None
    platform: str = "discord"
    lifted_at: datetime | None = None
    escalated_from: int | None = None


@dataclass(frozen=True, slots=True)
class Strike:
    """Points toward escalation earned by one message (at most one strike per message).

    Attributes:
        server_id: Server id.
        member_id: Member who earned it.
        points: Points (positive int).
        created_at: When (UTC).
        expires_at: When the points stop counting (UTC).
        reason: Why.
        message_id: The message that earned it.
        case_number: The case it belongs to, if any.
        pardoned: True if a moderator pardoned it.
    """

    server_id: str
    member_id: str
    points: int
    created_at: datetime
    expires_at: datetime
    reason: str = ""
    message_id: str | None = None
    case_number: int | None = None
    pardoned: bool = False


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """A flagged message (or member report) waiting in the review queue.

    Attributes:
        id: Review item id (global autoincrement).
        server_id: Server id.
        case_number: The case it belongs to.
        message_id: The message under review, if any.
        channel_id: Where that message is.
        member_id: The member under review.
        source: ``"automod"``, ``"report"`` or ``"appeal"``.
        reason: Why it is in the queue.
        decision: Current decision (``OPEN`` until a moderator decides).
        moderator_id: Who decided.
        decided_at: When (UTC).
    """

    id: int
    server_id: str
    case_number: int | None
    message_id: str | None
    channel_id: str | None
    member_id: str
    source: str
    reason: str
    decision: ReviewDecision = ReviewDecision.OPEN
    moderator_id: str | None = None
    decided_at: datetime | None = None
    scores: Mapping[str, float | None] = field(default_factory=dict)
