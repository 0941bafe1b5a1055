"""The store port: every mod-log operation the bot uses, in one typed protocol split by area.

Layer: ``bot.core``. Standard library and ``bot.core`` only. Implemented by the backends in ``bot.store``
(SQLite for a file path, PostgreSQL for a ``postgresql://`` URL), opened with :func:`bot.store.open_store`; callers
(the moderation service, the workflow, ``scan``, ``replay``, the CLI, both bots) only ever see :class:`ModStore`.

Conventions of every method: times are timezone-aware UTC ``datetime`` (a naive one raises ``ValueError``);
``platform`` is ``"discord"`` or ``"slack"``; ``server_id`` is the guild (Discord) or workspace (Slack) id; case
numbers are per server, gap-free, starting at 1. Errors raised by every method besides the ones listed:

* :class:`bot.core.errors.StoreBusy`: transient (locked past the busy timeout, connection lost, serialization
  failure); nothing was written, retrying may succeed.
* :class:`bot.core.errors.StoreRefused`: permanent (disk full, read-only, schema newer than the code, not a mod
  log, wrong password); nothing was written, retrying cannot help.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, Unpack, runtime_checkable

from bot.core.models import ActionKind, Case, CaseStatus, RaidAlert, ReviewDecision, ReviewItem, Scores, Strike, Verdict
from bot.core.ports import RecordResult, VerdictRecord
from bot.core.records import (
    Appeal,
    CaseDraft,
    CaseRecord,
    LiftClaim,
    MessageKey,
    ModStats,
    PolicyChange,
    PolicyOverride,
    RaidChanges,
    RaidModeRow,
    ScanSummary,
    SetVerdict,
    StepCase,
    StepReview,
    StoredRaid,
    StoredVerdict,
    VerdictPoint,
)


class VerdictStore(Protocol):
    """Verdicts: one per message key ``(platform, server_id, message_id)`` across processes."""

    async def known_messages(self, keys: Sequence[MessageKey]) -> dict[MessageKey, datetime | None]:
        """``{key: edited_at or None}`` for the keys that already have a verdict; unknown keys are absent."""
        ...

    async def flagged_messages(self, keys: Sequence[MessageKey]) -> set[MessageKey]:
        """The keys among ``keys`` whose recorded verdict is flagged."""
        ...

    async def record_batch(
        self, records: Sequence[VerdictRecord], *, model_version: str | None = None
    ) -> list[RecordResult]:
        """Write messages, verdicts, cases, review items, strikes and raids of ``records`` in ONE transaction;
        one result per record, same order. A key already recorded (same edit time), also by another process at
        the same moment, is a duplicate (``inserted=False``), never an error; a raid burst already recorded by
        another writer gives ``raid_id=None``.

        Raises:
            ValueError: a strike of another server than its message, or a naive datetime (batch rolled back).
        """
        ...

    async def get_verdict(self, platform: str, server_id: str, message_id: str) -> StoredVerdict | None:
        """The stored verdict of a message, or ``None``."""
        ...

    async def first_seen(self, platform: str, server_id: str, member_id: str) -> datetime | None:
        """Time of the member's first recorded message in this server, or ``None``."""
        ...

    async def message_excerpt(self, platform: str, server_id: str, message_id: str) -> tuple[str, str] | None:
        """``(channel_id, excerpt)`` of a recorded message (excerpt ``""`` once purged), or ``None``."""
        ...

    async def message_text_erased(self, platform: str, server_id: str, message_id: str) -> bool:
        """Whether a recorded message's text was erased from the mod log (retention, ``/mydata forget``): its
        excerpt reads ``""`` then; ``False`` while it is kept, and for a message not recorded."""
        ...


class CaseStore(Protocol):
    """Cases (infractions, numbered per server) and strikes."""

    async def open_case(self, platform: str, server_id: str, member_id: str, action: ActionKind, reason: str,
                        moderator_id: str | None = None, message_id: str | None = None,
                        status: CaseStatus = CaseStatus.PENDING, expires_at: datetime | None = None,
                        now: datetime | None = None, escalated_from: int | None = None,
                        failure: str | None = None) -> Case:
        """Open a case with the server's next number (``escalated_from``: a ladder step's cause; ``failure``: the
        platform's refusal, for a case recorded after the platform answered)."""
        ...

    async def escalations_of(self, platform: str, server_id: str, case_number: int) -> list[Case]:
        """The ladder steps case ``case_number``'s strike crossed (cases naming it in ``escalated_from``)."""
        ...

    async def get_case(self, platform: str, server_id: str, number: int) -> Case | None:
        """One case of one server, or ``None``."""
        ...

    async def list_cases(self, platform: str, server_id: str, member_id: str | None = None,
                         limit: int = 25) -> list[Case]:
        """Newest cases first (of one member when given), at most ``limit``."""
        ...

    async def set_case_status(self, platform: str, server_id: str, number: int, status: CaseStatus,
                              failure: str | None = None, now: datetime | None = None) -> Case:
        """Set a case's status (``failure``: the platform's refusal, recorded on the case).

        Raises:
            CaseNotFound: no such case in this server.
        """
        ...

    async def pending_cases(self, platform: str) -> list[Case]:
        """Cases whose action was never carried out (a stop between the commit and the platform call)."""
        ...

    async def claim_pending(self, platform: str, server_id: str, number: int, *,
                            hold_s: float) -> tuple[bool, datetime | None]:
        """Claim pending case ``number`` for ``hold_s`` seconds to carry it out, in one conditional update: of
        several processes asking at once exactly one gets it. Returns ``(True, None)`` when claimed, ``(False, until)`` when another process holds
        it until then, ``(False, None)`` when it is no longer pending."""
        ...

    async def due_expiries(self, platform: str, before: datetime) -> list[Case]:
        """Applied temporary sanctions whose ``expires_at`` is before ``before`` and not yet lifted."""
        ...

    async def mark_lifted(self, platform: str, server_id: str, number: int, now: datetime | None = None) -> None:
        """Record that a temporary sanction was lifted."""
        ...

    async def owe_lift(self, platform: str, server_id: str, number: int) -> None:
        """Mark the unban of ban case ``number`` owed, overturned or a temporary ban at its end (no try counted; a
        case already lifted, or already owing, is unchanged)."""
        ...

    async def owed_lifts(self, platform: str, max_tries: int) -> list[Case]:
        """Overturned bans whose unban is still owed, tried fewer than ``max_tries`` times, oldest case first."""
        ...

    async def owed_timeout_lifts(self, platform: str) -> list[Case]:
        """Overturned timeouts whose removal is owed and was never answered (a stop between the overturn's commit
        and the platform call), oldest case first."""
        ...

    async def claim_lift(self, platform: str, server_id: str, number: int, max_tries: int, *,
                         hold_s: float) -> LiftClaim:
        """Claim the next try at the owed unban of case ``number`` for ``hold_s`` seconds, in one conditional
        update: of several processes asking at once exactly one gets it (its try number), the others are told
        until when it is held. Nothing is claimed once the case is lifted or ``max_tries`` tries were refused (a
        try is counted when refused, so one cut off by a stop is not used up)."""
        ...

    async def end_lift_try(self, platform: str, server_id: str, number: int, *, lifted: bool,
                           hold_s: float = 0) -> datetime | None:
        """The claimed try at the owed unban of case ``number`` (or an overturned timeout's owed removal) is over:
        ``lifted`` records it lifted; else it was refused: counted, and the next try held ``hold_s`` seconds from
        now (0: free for the next claim). Returns the hold written."""
        ...

    async def release_lift(self, platform: str, server_id: str, number: int, held_until: datetime) -> bool:
        """Hand back the next try of case ``number`` only while it is held until exactly ``held_until`` (this
        process's hold, never one another process took since); returns whether it was released."""
        ...

    async def add_strike(self, platform: str, server_id: str, member_id: str, points: int, expires_at: datetime,
                         reason: str = "", message_id: str | None = None, case_number: int | None = None,
                         now: datetime | None = None, *, case_status: CaseStatus | None = None,
                         failure: str | None = None, step: StepCase | StepReview | None = None) -> bool:
        """Add a strike; ``False`` when the message already has one. ``case_status``: case ``case_number``'s
        status (and ``failure``) set in the same transaction (a sanction carried out, recorded with its strike).
        ``step``: the ladder step the strike crosses, its case opened ``pending`` (``escalated_from``
        ``case_number``) in the same transaction; a step the moderator may not take (:class:`StepReview`): its
        review item, opened in the same transaction.

        Raises:
            ValueError: ``case_status`` or a :class:`StepCase` ``step`` without ``case_number``.
            CaseNotFound: ``case_status`` given, no such case in this server (nothing written).
        """
        ...

    async def raise_strike(self, platform: str, server_id: str, message_id: str, points: int,
                           case_number: int | None, *, case_status: CaseStatus | None = None,
                           failure: str | None = None, step: StepCase | StepReview | None = None) -> int:
        """Raise a message's strike to at least ``points``; returns the number of strikes changed (0 or 1).
        ``case_status``, ``step``: as :meth:`add_strike`'s, in the same transaction.

        Raises:
            ValueError: ``case_status`` or a :class:`StepCase` ``step`` without ``case_number``.
            CaseNotFound: ``case_status`` given, no such case in this server (nothing written).
        """
        ...

    async def active_strikes(self, platform: str, server_id: str, member_id: str, now: datetime) -> list[Strike]:
        """Unpardoned strikes of a member whose ``expires_at`` is after ``now``."""
        ...

    async def member_ids(self, platform: str, server_id: str, member_id: str) -> tuple[str, ...]:
        """The ids a member's records may be stored under in this server: ``member_id`` and, once any member was
        forgotten (``/mydata forget``), their keyed pseudonym, which a forgotten member's cases, strikes and appeals
        name."""
        ...

    async def pardon(self, platform: str, server_id: str, *, case_number: int | None = None,
                     member_id: str | None = None, moderator_id: str | None = None,
                     now: datetime | None = None) -> int:
        """Pardon a case's strikes or all of a member's; returns how many strikes were pardoned."""
        ...

    async def overturn_case(self, platform: str, server_id: str, number: int, moderator_id: str | None = None,
                            now: datetime | None = None) -> int:
        """Overturn a case in one transaction: strikes pardoned, status ``overturned``, an applied ban's unban or
        timeout's removal owed; returns how many strikes were pardoned.

        Raises:
            CaseNotFound: no such case in this server.
        """
        ...


class ReviewStore(Protocol):
    """The review queue, member reports and appeals."""

    async def get_review(self, review_id: int, platform: str | None = None,
                         server_id: str | None = None) -> ReviewItem | None:
        """A review item (only within that server when given), or ``None``."""
        ...

    async def review_for_case(self, platform: str, server_id: str, case_number: int) -> ReviewItem | None:
        """The latest review item of a case, or ``None``."""
        ...

    async def step_review(self, platform: str, server_id: str, step: StepReview) -> ReviewItem | None:
        """The open review item that ``step`` opened (its member, reason and time; the newest such), or ``None``
        (decided since, or none)."""
        ...

    async def case_channel(self, platform: str, server_id: str, case_number: int) -> str | None:
        """The channel of the message a case is about, or ``None`` (a case about a member, or none on record)."""
        ...

    async def review_by_card(self, platform: str, server_id: str, card_message_id: str) -> ReviewItem | None:
        """The review item whose card is that platform message, or ``None``."""
        ...

    async def open_reviews(self, platform: str, server_id: str, limit: int = 25) -> list[ReviewItem]:
        """Undecided review items, oldest first."""
        ...

    async def open_review(self, platform: str, server_id: str, member_id: str, source: str, reason: str,
                          case_number: int | None = None, message_id: str | None = None,
                          channel_id: str | None = None, scores: Mapping[str, float | None] | None = None,
                          now: datetime | None = None) -> ReviewItem:
        """Queue a review item (``source``: ``automod``, ``report`` or ``appeal``; else ``ValueError``)."""
        ...

    async def open_review_for_message(self, platform: str, server_id: str, message_id: str) -> int | None:
        """Id of the message's open review item, or ``None``."""
        ...

    async def decide_review(self, review_id: int, decision: ReviewDecision, moderator_id: str,
                            now: datetime | None = None, *, platform: str | None = None,
                            server_id: str | None = None) -> ReviewItem:
        """Record a decision, once.

        Raises:
            ReviewNotFound: no such item (in that server).
            ReviewAlreadyDecided: another moderator decided first.
        """
        ...

    async def decide_review_opening(self, review_id: int, decision: ReviewDecision, case: CaseDraft,
                                    now: datetime | None = None, *, platform: str,
                                    server_id: str) -> tuple[ReviewItem, Case]:
        """Record ``case.moderator_id``'s decision and open the case of the sanction it carries out (``pending``)
        in ONE transaction; returns the item as decided and the case.

        Raises:
            ReviewNotFound: no such item in that server.
            ReviewAlreadyDecided: another moderator decided first (nothing written).
        """
        ...

    async def dismiss_review(self, review_id: int, moderator_id: str, now: datetime | None = None, *,
                             platform: str, server_id: str, steps: Sequence[int] = ()) -> tuple[ReviewItem, Case | None]:
        """Dismiss an item and overturn its case (strikes pardoned, status ``overturned``, an applied ban's unban or
        timeout's removal owed) and the ladder steps ``steps`` (case numbers) its strike crossed, those still
        applied and not lifted, in ONE transaction; returns the item as decided and its case as it was before
        (``None``: no case).

        Raises:
            ReviewNotFound: no such item in that server.
            ReviewAlreadyDecided: another moderator decided first (nothing written).
        """
        ...

    async def reopen_review(self, review_id: int, decision: ReviewDecision, moderator_id: str) -> bool:
        """Undo a decision whose action failed (only if it is still ``decision`` by ``moderator_id``)."""
        ...

    async def set_review_card(self, review_id: int, card_message_id: str) -> None:
        """Remember the platform message that shows the item's card."""
        ...

    async def card_of_review(self, review_id: int) -> str | None:
        """The card's platform message id, or ``None``."""
        ...

    async def reports_of(self, review_id: int) -> list[tuple[str, str]]:
        """``(reporter id, reason)`` of every member report joined to a review item, oldest first (several
        reporters of one message share its item); empty for none."""
        ...

    async def cards_of_erased_text(self, platform: str, server_id: str, *,
                                   member_id: str | None = None) -> list[tuple[int, str]]:
        """``(review id, card message id)`` of posted cards (not an appeal's) whose message's text was erased and
        that are still owed the edit saying so; ``member_id``: that member's items only."""
        ...

    async def card_erasure_tried(self, review_id: int, *, edited: bool, max_tries: int,
                                 now: datetime | None = None) -> bool:
        """Record one try to edit a card whose text was erased (``edited``: done; a refusal counts a try, settled
        at ``max_tries``); returns whether it is settled (not tried again)."""
        ...

    async def add_report(self, platform: str, server_id: str, reporter_id: str, member_id: str, reason: str,
                         message_id: str | None = None, channel_id: str | None = None,
                         now: datetime | None = None) -> ReviewItem:
        """A member's report, queued (one open item per reported message, reporters added to it)."""
        ...

    async def open_appeal(self, platform: str, server_id: str, case_number: int, member_id: str, text: str,
                          now: datetime | None = None) -> int:
        """File an appeal of a case; returns its id.

        Raises:
            CaseNotFound, NotCaseMember, AppealAlreadyOpen.
        """
        ...

    async def get_appeal(self, appeal_id: int) -> Appeal | None:
        """An appeal, or ``None``."""
        ...

    async def decide_appeal(self, appeal_id: int, upheld: bool, moderator_id: str,
                            now: datetime | None = None, *, steps: Sequence[int] = ()) -> Appeal:
        """Uphold or overturn (pardoning the case's strikes, an applied ban's unban or timeout's removal owed; the
        ladder steps ``steps`` its strike crossed, those still applied and not lifted, overturned the same way in
        the same transaction).

        Raises:
            AppealNotFound, AppealAlreadyDecided.
        """
        ...

    async def open_appeals(self, platform: str, server_id: str, member_id: str | None = None) -> list[Appeal]:
        """Undecided appeals of a server (of one member when given)."""
        ...


class RaidStore(Protocol):
    """Raid alerts (one per burst across processes), raid mode and member joins."""

    async def record_raid(self, platform: str, alert: RaidAlert) -> int | None:
        """Store a raid alert in its own transaction; its id, or ``None`` when that burst (``platform, server_id,
        channel_id, started_at, reason``) was already recorded by another writer."""
        ...

    async def list_raids(self, platform: str, server_id: str) -> list[RaidAlert]:
        """Every raid recorded for one server, oldest first."""
        ...

    async def get_raid(self, platform: str, server_id: str, raid_id: int) -> StoredRaid | None:
        """One raid of one server, or ``None``."""
        ...

    async def set_raid_state(self, platform: str, server_id: str, raid_id: int, **changes: Unpack[RaidChanges]
                             ) -> None:
        """Update ``card_message_id``, ``thread_id`` (str), ``members`` (sequence of ids) or ``closed`` (bool)
        (:class:`~bot.core.records.RaidChanges`); another key raises ``ValueError``."""
        ...

    async def save_raid_mode(self, platform: str, server_id: str, channel_id: str, until: datetime | None,
                             slowmode_s: int, raid_id: int | None, now: datetime | None = None) -> None:
        """Record raid mode in force in a channel (``until`` ``None``: until switched off)."""
        ...

    async def end_raid_mode(self, platform: str, server_id: str, channel_id: str | None) -> list[RaidModeRow]:
        """End raid mode in one channel (``None``: all of the server's); returns the rows ended."""
        ...

    async def claim_raid_end(self, platform: str, server_id: str, raid_id: int | None, channel_ids: Sequence[str],
                             *, hold_s: float) -> tuple[bool, datetime | None]:
        """Claim the end of raid mode in ``channel_ids`` (of raid ``raid_id``; ``None``: switched on by hand) for
        ``hold_s`` seconds, closing the raid, in one conditional update: of several processes ending it at once
        exactly one gets it. Returns ``(True, None)`` when claimed, ``(False, until)`` when another process holds it
        until then, ``(False, None)`` when it was ended already."""
        ...

    async def raid_modes(self, platform: str) -> list[RaidModeRow]:
        """Raid modes in force (to restore or expire them after a restart)."""
        ...

    async def note_join(self, platform: str, server_id: str, member_id: str, at: datetime) -> datetime:
        """Record a member's join; returns the first join time recorded."""
        ...

    async def joined_at(self, platform: str, server_id: str, member_id: str) -> datetime | None:
        """The member's recorded join time, or ``None``."""
        ...


class PolicyStore(Protocol):
    """Runtime policy overrides (``/policy set``) with their audit trail. Values are JSON values."""

    async def get_policy_override(self, platform: str, server_id: str, scope: str, key: str) -> Any | None:
        """One override's JSON value, or ``None``."""
        ...

    async def list_policy_overrides(self, platform: str, server_id: str,
                                    scope: str | None = None) -> list[PolicyOverride]:
        """A server's overrides (of one scope when given)."""
        ...

    async def set_policy_override(self, platform: str, server_id: str, scope: str, key: str, value: Any,
                                  moderator_id: str | None, now: datetime | None = None) -> PolicyChange:
        """Set an override and audit it."""
        ...

    async def reset_policy_override(self, platform: str, server_id: str, scope: str, key: str,
                                    moderator_id: str | None, now: datetime | None = None) -> PolicyChange | None:
        """Remove an override and audit it; ``None`` when there was none."""
        ...

    async def policy_changes(self, platform: str, server_id: str, key: str | None = None,
                             limit: int = 50) -> list[PolicyChange]:
        """The audit trail, newest first."""
        ...


class RetentionStore(Protocol):
    """Privacy: text retention, a member's data export and forget."""

    async def member_record(self, platform: str, server_id: str, member_id: str) -> dict[str, Any]:
        """Everything stored about a member, as a JSON document (``/mydata``)."""
        ...

    async def forget_member(self, platform: str, server_id: str, member_id: str,
                            now: datetime | None = None) -> str:
        """Replace the member's id by a pseudonym and drop their text; returns the pseudonym."""
        ...

    async def purge_expired_text(self, older_than: datetime, now: datetime | None = None, *,
                                 platform: str | None = None, server_id: str | None = None) -> int:
        """Erase message text older than ``older_than`` (of one server with ``platform``/``server_id``); verdicts,
        cases and strikes stay. Returns the number of messages purged."""
        ...


class StatsStore(Protocol):
    """Statistics: ``/modstats`` and the scan summary."""

    async def modstats(self, platform: str, server_id: str, since: datetime) -> ModStats:
        """Per-label and per-rule outcomes since ``since``."""
        ...

    async def summary(self, platform: str, server_id: str, since: datetime | None = None,
                      top: int = 10) -> ScanSummary:
        """Counts of one server (since ``since`` when given)."""
        ...

    async def scan_summary(self, servers: Sequence[tuple[str, str]], since: datetime | None = None,
                           top: int = 10) -> ScanSummary:
        """Counts over several ``(platform, server_id)``, summed; the top members' strike points per server
        (:class:`~bot.core.records.MemberPoints`), never summed across servers."""
        ...


class ReplayStore(Protocol):
    """Verdict sets per policy version and stored scores (``scan`` re-judging recorded messages)."""

    async def recorded_verdicts(self, keys: Iterable[MessageKey]) -> dict[MessageKey, SetVerdict]:
        """The recorded (first) verdict of each known key."""
        ...

    async def stored_scores(self, keys: Iterable[MessageKey], model_name: str,
                            model_version: str | None) -> dict[MessageKey, tuple[str, Scores]]:
        """``{key: (policy_version, scores)}`` of keys scored by that model version."""
        ...

    async def record_replay(self, verdicts: Sequence[Verdict], *, model_version: str | None) -> int:
        """Store replayed verdicts (one per key and policy version); returns how many were written."""
        ...

    async def note_policy_versions(self, pieces: Mapping[str, str]) -> None:
        """Record ``{policy_version: scoring plan}``."""
        ...

    async def policy_pieces(self, versions: Iterable[str]) -> dict[str, str]:
        """The recorded scoring plan of each known policy version."""
        ...


class CatchupStore(Protocol):
    """Where each channel's recorded history ends, for catch-up after a restart."""

    async def latest_messages(self, platform: str, server_id: str) -> dict[str, tuple[str, datetime]]:
        """``{channel_id: (message_id, created_at)}`` of the latest recorded message per channel of a server (the
        largest ``created_at``, then the largest snowflake among equal times); channels with nothing recorded are
        absent, a server with nothing recorded gives ``{}``. Catch-up fetches the platform history after it."""
        ...


@runtime_checkable
class StoreAdmin(Protocol):
    """Lifecycle and operations of the store itself.

    Attributes:
        location: Where the mod log lives, for people: an absolute file path, or the URL with the password hidden.
        backend: ``"sqlite"`` or ``"postgresql"``.
    """

    location: str
    backend: str

    async def close(self) -> None:
        """Close (idempotent); committed data is durable."""
        ...

    async def schema_version(self) -> int:
        """The schema version of the database."""
        ...

    async def integrity_check(self) -> list[str]:
        """Problems found (``[]`` when healthy)."""
        ...

    async def backup(self, out: str | None = None) -> str:
        """Write a consistent online copy of the database; returns where (a file path)."""
        ...


class ModLogReadStore(Protocol):
    """Whole-history reads of one server for the live mod-log report (``python -m bot report``); read-only."""

    async def modlog_servers(self) -> list[tuple[str, str]]:
        """``(platform, server id)`` of every server with a verdict, a case or a review item, sorted."""
        ...

    async def modlog_cases(self, platform: str, server_id: str) -> list[CaseRecord]:
        """Every case of a server, oldest first, with its message's labels and rules."""
        ...

    async def modlog_reviews(self, platform: str, server_id: str) -> list[ReviewItem]:
        """Every review item of a server, oldest first."""
        ...

    async def modlog_review_times(self, platform: str, server_id: str) -> dict[int, datetime]:
        """``{review id: created_at}`` of a server."""
        ...

    async def modlog_appeals(self, platform: str, server_id: str) -> list[Appeal]:
        """Every appeal of a server, oldest first."""
        ...

    async def modlog_strikes(self, platform: str, server_id: str) -> list[Strike]:
        """Every strike of a server (pardoned and expired too), oldest first."""
        ...

    async def modlog_verdict_points(self, platform: str, server_id: str) -> list[VerdictPoint]:
        """When each message was judged and whether it was flagged (charts over time)."""
        ...

    async def modlog_raids(self, platform: str, server_id: str) -> list[tuple[int, RaidAlert, tuple[str, ...]]]:
        """``(raid id, alert, every raider)`` of a server's raids, oldest first."""
        ...

    async def set_case_reason(self, platform: str, server_id: str, number: int, reason: str, moderator_id: str,
                              now: datetime | None = None) -> tuple[Case, Case]:
        """Replace a case's reason and record the change as a ``log`` case; returns ``(updated, audit note)``.

        Raises:
            CaseNotFound: no such case in this server (nothing is changed).
        """
        ...


class ModStore(VerdictStore, CaseStore, ReviewStore, RaidStore, PolicyStore, RetentionStore, StatsStore, ReplayStore,
               CatchupStore, ModLogReadStore, StoreAdmin, Protocol):
    """The mod log: every operation, as one port. Obtain one with :func:`bot.store.open_store`."""


__all__ = [
    "CaseStore",
    "CatchupStore",
    "ModLogReadStore",
    "ModStore",
    "PolicyStore",
    "RaidStore",
    "ReplayStore",
    "RetentionStore",
    "ReviewStore",
    "StatsStore",
    "StoreAdmin",
    "VerdictStore",
]
