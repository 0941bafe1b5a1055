"""What moderators see, as plain data: review cards, mod-log entries and raid cards.

Layer: ``bot.workflow`` (platform-neutral). The workflow fills these; each adapter renders them (Discord embeds
and components, Slack Block Kit) and keeps within its platform's size limits. Nothing here is platform markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from bot.core.models import ActionKind


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why a message is in front of a moderator.

    Attributes:
        text: The message text (the original; adapters hide it behind a spoiler and cut it to their limits).
        scores: Label -> score in [0, 1] (``None``: the model lacks the label).
        tiers: Label -> ``(review, act)`` thresholds actually applied (raid mode included); empty when not known
            (a card rebuilt from the mod log: the tiers are not recorded), and then adapters name no tier.
        rules: ``"rule: detail"`` of every automod rule that fired.
        raid_mode: Raid mode's stricter tiers applied.
        score_status: How far the model read the text (``"ok"``, ``"not_scored"``, ...).
        erased: The message's text was erased from the mod log since (retention, ``/mydata forget``): ``text`` is
            ``""`` and the card says the text was erased, not that the message had none.
        erased_after_days: With ``erased``: the retention period (days) that erased it, when the card is edited by
            the purge (:func:`bot.workflow.words.text_erased` words it); ``None``: not known.
    """

    text: str = ""
    scores: Mapping[str, float | None] = field(default_factory=dict)
    tiers: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    rules: tuple[str, ...] = ()
    raid_mode: bool = False
    score_status: str = "ok"
    erased: bool = False
    erased_after_days: int | None = None


@dataclass(frozen=True, slots=True)
class ReviewCard:
    """A review item as a card in the review channel.

    Attributes:
        review_id: The item.
        server_id: Its server.
        source: ``"automod"``, ``"report"`` or ``"appeal"``.
        member_id: Who is under review; ``member_name`` and the two dates describe them (UTC, ``None``: unknown).
        member_home_server: The member's own server when it is another one (:attr:`MemberInfo.home_server`: a
            Slack Connect member); the adapter's card says what cannot be done for them.
        channel_id, message_id: Where the message is (``None`` for a report about a member).
        evidence: The text, scores and rules.
        reason: Why it is queued.
        case_number: Its case.
        strikes, points: The member's active strikes and their points.
        notes: Lines about what the bot did or could not do ("delete: Missing Permissions (50013)").
        capabilities_missing: Decisions the platform cannot carry out here (their buttons are not offered).
        decision: ``None`` while open; else the past-tense outcome ("banned", "dismissed (false positive)").
        decided_by, decided_at: Who decided and when.
        final: The decision closes the item (everything but "investigating").
        reports: ``(reporter id, reason)`` of the members' reports that share this item, oldest first (several
            reporters of one message share its item); empty for none.
        appeal_id: For an appeal card: the appeal (buttons Uphold / Overturn).
        case_action: For an appeal card: what the appealed case did.
    """

    review_id: int
    server_id: str
    source: str
    member_id: str
    member_name: str = ""
    member_joined_at: datetime | None = None
    member_created_at: datetime | None = None
    member_home_server: str | None = None
    channel_id: str | None = None
    message_id: str | None = None
    evidence: Evidence = field(default_factory=Evidence)
    reason: str = ""
    case_number: int | None = None
    strikes: int = 0
    points: int = 0
    notes: tuple[str, ...] = ()
    capabilities_missing: frozenset[str] = frozenset()
    decision: str | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    final: bool = False
    reports: tuple[tuple[str, str], ...] = ()
    appeal_id: int | None = None
    case_action: ActionKind | None = None


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One mod-log post.

    Attributes:
        title: Short headline ("Case #12: ban", "Raid alert").
        lines: Body lines, in order.
        member_id: Who it is about, if anyone.
        moderator_id: Who acted (``None``: automod).
        case_number: The case, if any.
        failed: Something the bot tried was refused (rendered red).
        kind: ``"case"``, ``"review"``, ``"appeal"``, ``"raid"``, ``"policy"``, ``"problem"`` (colour, filtering).
    """

    title: str
    lines: tuple[str, ...] = ()
    member_id: str | None = None
    moderator_id: str | None = None
    case_number: int | None = None
    failed: bool = False
    kind: str = "case"


@dataclass(frozen=True, slots=True)
class RaidCard:
    """The single card of a raid in the review channel, with bulk actions on its members.

    Attributes:
        raid_id: The raid (``raids`` row).
        server_id, channel_id: Where (the channel, or the thread the burst happened in).
        reason: ``"flagged_burst"``, ``"new_member_burst"`` or ``"join_burst"``.
        started_at: First message or join of the burst (UTC).
        members: Member ids involved so far.
        messages: Flagged messages counted so far.
        deleted: Messages the bot deleted (bulk deletes included).
        raid_mode_until: End of automatic raid mode (UTC), ``None`` when off or manual.
        slowmode_s: Slowmode set on the channel/thread (0: none).
        invites_paused: Invites are paused (lockdown).
        notes: Lines about actions taken or refused.
        actions_offered: Bulk actions the platform supports (``"timeout"``, ``"kick"``, ``"ban"``,
            ``"pause_invites"``, ``"end"``).
        closed: A moderator ended it.
    """

    raid_id: int
    server_id: str
    channel_id: str
    reason: str
    started_at: datetime
    members: tuple[str, ...] = ()
    messages: int = 0
    deleted: int = 0
    raid_mode_until: datetime | None = None
    slowmode_s: int = 0
    invites_paused: bool = False
    notes: tuple[str, ...] = ()
    actions_offered: tuple[str, ...] = ()
    closed: bool = False


__all__ = ["Evidence", "LogEntry", "RaidCard", "ReviewCard"]
