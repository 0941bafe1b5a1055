"""Records of the mod log: what the store port (:mod:`bot.core.store_port`) returns beyond the core's models
(stored verdicts, appeals, raids, raid mode, policy overrides and their audit, statistics, replayed verdicts).

Layer: ``bot.core``. Standard library only; every backend (SQLite, PostgreSQL) builds these. All datetimes are
timezone-aware UTC; rates are floats in [0, 1] (``None`` when the denominator is 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, TypedDict

from bot.core.models import ActionKind, Case

#: A message's key in the mod log: ``(platform, server_id, message_id)``.
MessageKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class StoredVerdict:
    """The verdict row of one message as stored (for moderators' evidence and tests).

    Attributes:
        platform, server_id, message_id: The message key.
        member_id: Author (or pseudonym after ``forget_member``).
        channel_id: Channel or thread.
        edited_at: Edit time judged (``None`` for the original post).
        scores: ``{label: score in [0, 1] or None}``; empty when the message was not scored.
        rule_hits: ``[{"rule", "detail", "label", "action"}]``.
        labels: Labels that reached the review tier.
        flagged: Whether anything asked for review or action.
        action: The strongest action.
        model_name, model_version, policy_version: Provenance.
        latency_ms: Milliseconds from arrival to verdict.
        shadow: Shadow-mode verdict.
        revision: 1 for the first verdict, +1 per re-judged edit.
        judged_at: When the row was last written.
        score_status: How far the model read the message (``Verdict.score_status``: ``"ok"``, ``"not_scored"``,
            ``"scorer_error"``, ``"unsupported_language"``, ``"truncated"``); ``"ok"`` for rows older than
            migration 0004.
        language: The unsupported language found (ISO 639-1), or ``None``.
    """

    platform: str
    server_id: str
    message_id: str
    member_id: str
    channel_id: str
    edited_at: datetime | None
    scores: Mapping[str, float | None]
    rule_hits: tuple[Mapping[str, Any], ...]
    labels: tuple[str, ...]
    flagged: bool
    action: ActionKind
    model_name: str
    model_version: str | None
    policy_version: str
    latency_ms: float
    shadow: bool
    revision: int
    judged_at: datetime
    score_status: str = "ok"
    language: str | None = None


class CaseDraft(NamedTuple):
    """A moderator's case recorded ``pending`` in the transaction that claims their decision on a review card
    (``ModStore.decide_review``, ``case=``): a stop between the claim and the case left the card decided with
    nothing done and nothing for the next start to carry out.

    Attributes:
        member_id: The member.
        action: The sanction decided (warn, timeout, kick, ban).
        reason: The case's reason.
        moderator_id: The moderator who decided.
        message_id: The flagged message, if any.
        created_at: The case's time.
        expires_at: The end of a timeout or temporary ban; ``None`` otherwise.
    """

    member_id: str
    action: ActionKind
    reason: str
    moderator_id: str
    message_id: str | None
    created_at: datetime
    expires_at: datetime | None


class StepCase(NamedTuple):
    """A ladder step's case, recorded ``pending`` in the transaction that adds (or raises) the strike crossing it
    (``ModStore.add_strike`` / ``raise_strike``, ``step=``), ``escalated_from`` that strike's case: a stop or a
    failed write between the two left the strike without the step it earned.

    Attributes:
        member_id: The member.
        action: The step's action (timeout, kick, ban).
        reason: The case's reason (``"escalation after case #N: <ladder reason>"``).
        created_at: The case's time (the strike's).
        expires_at: The end of a timed step (a timeout, a temporary ban); ``None`` otherwise.
    """

    member_id: str
    action: ActionKind
    reason: str
    created_at: datetime
    expires_at: datetime | None


class StepReview(NamedTuple):
    """A ladder step the moderator who earned it may not take: its review item (source ``"automod"``, asking a
    moderator who may to decide it) opened in the transaction that adds (or raises) the strike crossing it
    (``ModStore.add_strike`` / ``raise_strike``, ``step=``): a stop or a failed write between the two left the
    strike with nobody ever asked to decide its step.

    Attributes:
        member_id: The member.
        reason: The review item's reason (``"ladder step withheld: <step> (...); <@moderator> may not ..."``,
            at most 1000 characters).
        created_at: The item's time (the strike's).
    """

    member_id: str
    reason: str
    created_at: datetime


class LiftClaim(NamedTuple):
    """The outcome of claiming a try at the owed unban of an overturned ban (``ModStore.claim_lift``).

    Attributes:
        tries: The number of the try claimed (the tries refused so far, plus 1), or ``None`` when nothing was
            claimed.
        held_until: When nothing was claimed because a try is held (under way in a process, or the next one
            deferred by a refusal): until when (UTC); ``None`` when nothing is owed any more (lifted, settled by a
            moderator's unban or a later ban, or the tries all refused).
    """

    tries: int | None
    held_until: datetime | None


@dataclass(frozen=True, slots=True)
class Appeal:
    """A member's appeal of one of their cases.

    Attributes:
        id: Appeal id.
        platform, server_id: Server.
        case_number: The appealed case.
        member_id: The appellant (the case's member).
        text: What they wrote.
        status: ``"open"``, ``"upheld"`` (sanction stands) or ``"overturned"``.
        created_at: When it was filed.
        moderator_id, decided_at: Who decided and when.
        review_id: The review item that puts it in the queue.
    """

    id: int
    platform: str
    server_id: str
    case_number: int
    member_id: str
    text: str
    status: str
    created_at: datetime
    moderator_id: str | None = None
    decided_at: datetime | None = None
    review_id: int | None = None


@dataclass(frozen=True, slots=True)
class PolicyOverride:
    """One per-server policy override. ``value`` is any JSON value; ``scope`` is ``"server"`` or ``"channel:<id>"``."""

    platform: str
    server_id: str
    scope: str
    key: str
    value: Any
    updated_by: str | None
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """One audit row: ``action`` ``"set"`` (old -> new) or ``"reset"`` (old -> ``None``)."""

    id: int
    platform: str
    server_id: str
    scope: str
    key: str
    old: Any
    new: Any
    action: str
    moderator_id: str | None
    changed_at: datetime


@dataclass(frozen=True, slots=True)
class SignalStats:
    """Moderation outcomes of one label or automod rule over a period.

    Attributes:
        flags: Flagged messages carrying this label / rule hit.
        decisions: Of those, automod review items a moderator decided (``investigating`` and ``open`` excluded).
        dismissals: Decided as ``dismissed`` -- the false positives.
        cases: Cases opened for those messages.
        overturned: Of those cases, overturned on appeal.
    """

    flags: int = 0
    decisions: int = 0
    dismissals: int = 0
    cases: int = 0
    overturned: int = 0

    @property
    def false_positive_rate(self) -> float | None:
        """``dismissals / decisions`` in [0, 1], or ``None`` without decisions."""
        return self.dismissals / self.decisions if self.decisions else None

    @property
    def overturn_rate(self) -> float | None:
        """``overturned / cases`` in [0, 1], or ``None`` without cases."""
        return self.overturned / self.cases if self.cases else None


@dataclass(frozen=True, slots=True)
class ModStats:
    """``/modstats``: per-label and per-rule outcomes since ``since``."""

    since: datetime
    per_label: Mapping[str, SignalStats] = field(default_factory=dict)
    per_rule: Mapping[str, SignalStats] = field(default_factory=dict)


class MemberPoints(NamedTuple):
    """A member's unpardoned strike points in ONE server (strikes and the escalation ladder count per server: a
    member id seen in two servers, as a Discord user id can be, is two rows).

    Attributes:
        platform: ``"discord"`` or ``"slack"``.
        server_id: The guild or workspace.
        member_id: The member.
        points: Unpardoned strike points (expired ones included: the summary covers the whole period).
        strikes: How many strikes those are.
    """

    platform: str
    server_id: str
    member_id: str
    points: int
    strikes: int


@dataclass(frozen=True, slots=True)
class ScanSummary:
    """Counts for the end-of-scan summary and dashboards.

    Attributes:
        messages: Verdicts recorded.
        flagged: Flagged verdicts.
        flagged_per_label: ``{label: flagged messages carrying it}``.
        actions: ``{action label: verdicts whose strongest action it is}`` (``none`` excluded).
        cases_by_status: ``{status: cases}``.
        raids: Raid alerts recorded.
        top_members: :class:`MemberPoints` per ``(platform, server_id, member_id)``, most points first (then most
            strikes, then by platform, server and member id).
    """

    messages: int
    flagged: int
    flagged_per_label: Mapping[str, int]
    actions: Mapping[str, int]
    cases_by_status: Mapping[str, int]
    raids: int
    top_members: tuple[MemberPoints, ...]


class RaidChanges(TypedDict, total=False):
    """What :meth:`bot.core.store_port.RaidStore.set_raid_state` may change on a raid (each key optional).

    Attributes:
        card_message_id: The raid card's message id (``None``: no card).
        thread_id: The thread the raid is in.
        members: Every raider's member id, in order.
        closed: The raid ended (``True`` records the time, ``False`` reopens it).
    """

    card_message_id: str | None
    thread_id: str | None
    members: Sequence[str]
    closed: bool


@dataclass(frozen=True, slots=True)
class StoredRaid:
    """A recorded raid: where, who, and its card (``channel_id`` is the parent channel; ``thread_id`` where the
    burst was, when that differs; ``channel_id`` is ``""`` for a join burst)."""

    id: int
    platform: str
    server_id: str
    channel_id: str
    started_at: datetime
    members: tuple[str, ...]
    count: int
    reason: str
    card_message_id: str | None
    thread_id: str | None
    closed_at: datetime | None


@dataclass(frozen=True, slots=True)
class RaidModeRow:
    """Raid mode in force in one channel or thread (``until`` ``None``: until switched off)."""

    platform: str
    server_id: str
    channel_id: str
    until: datetime | None
    slowmode_s: int
    raid_id: int | None
    started_at: datetime


@dataclass(frozen=True, slots=True)
class SetVerdict:
    """One message's verdict in one verdict set (recorded or replayed), as a diff needs it.

    Attributes:
        key: ``(platform, server_id, message_id)``.
        policy_version: The policy version that judged it.
        flagged: Whether anything asked for review or action.
        labels: Labels that reached the review tier.
        action: The strongest action's label (``"none"``, ``"review"``, ``"delete"``...).
        rules: Names of the rules that hit, in order, without repeats.
        scores: ``{label: score in [0, 1] or None}``, or ``None`` when the message was not scored.
        model_name, model_version: The model whose scores these are (``""`` / ``None`` when not scored).
    """

    key: MessageKey
    policy_version: str
    flagged: bool
    labels: tuple[str, ...]
    action: str
    rules: tuple[str, ...]
    scores: Mapping[str, float | None] | None
    model_name: str
    model_version: str | None


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """A case with what the report filters it by.

    Attributes:
        case: The case.
        labels: Labels of the verdict of the case's message (empty for a manual case or an erased message).
        rules: Rules that fired on it (``rule`` names).
        channel_id: Channel of the message, when the case has one.
    """

    case: Case
    labels: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    channel_id: str | None = None


@dataclass(frozen=True, slots=True)
class VerdictPoint:
    """One judged message, for the report's charts over time: when it was judged, whether it was flagged."""

    judged_at: datetime
    flagged: bool


__all__ = [
    "CaseRecord",
    "VerdictPoint",
    "Appeal",
    "MessageKey",
    "MemberPoints",
    "ModStats",
    "PolicyChange",
    "PolicyOverride",
    "RaidChanges",
    "RaidModeRow",
    "ScanSummary",
    "SetVerdict",
    "SignalStats",
    "StoredRaid",
    "StoredVerdict",
]
