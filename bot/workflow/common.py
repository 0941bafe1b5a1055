"""Values shared by the workflow's parts: results, decisions, durations, the policy port.

Layer: ``bot.workflow`` (platform-neutral).
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from bot.core.errors import StoreBusy
from bot.core.escalation import StrikeLedger
from bot.core.models import ActionKind, Case, CaseStatus, ReviewDecision, Verdict
from bot.core.policy import Policy
from bot.core.ports import ActionResult
from bot.core.service import Outcome
from bot.core.store_port import ModStore
from bot.workflow.authz import Actor
from bot.workflow.ports import Capability, Enforcer, MemberInfo, ModDesk, RaidControl
from bot.workflow.sanction_kinds import REGISTRY, SanctionKind
from bot.workflow.views import ReviewCard

_T = TypeVar("_T")

#: Called with each message's outcome once it is carried out (a scan's progress, a catch-up's count).
Observer = Callable[[Outcome], object]

#: Note on a case whose message was already deleted when the bot came to delete it (its author, a moderator, or
#: this bot before a stop): what the delete was for is done, so the case is not failed.
ALREADY_GONE = "delete: the message was already gone"

#: A case left ``pending`` by a stop is carried out at startup only if it is younger than this (seconds); an older
#: one is not done late (acting an hour late surprises members and moderators more than it helps): it is recorded
#: applied where the platform shows it done (a write recording the platform's answer may have failed), failed
#: where the platform shows it not done, else failed with its outcome unknown (:data:`OUTCOME_UNKNOWN`).
RECOVER_WITHIN_S = 3600
#: Start of the failure recorded on a case left ``pending`` past :data:`RECOVER_WITHIN_S` whose platform action
#: may have been carried out (its answer never recorded) and cannot be checked through the enforcer (a warning's
#: notice, a ban, a kick of a member no longer in the server): "failed" alone would say it was not done.
OUTCOME_UNKNOWN = "outcome unknown"
#: Seconds by which a member's timeout end may differ from a pending timeout case's end for the platform's
#: timeout to be that case's (it was sent moments after the case was recorded).
TIMEOUT_MATCH_S = 300
#: Seconds a start holds a pending case it claimed in the mod log while it carries it out (``cases.pending_held_until``:
#: a platform call or three, well under this); past it, a process that stopped holding it no longer keeps another's
#: start from carrying it out.
PENDING_HOLD_S = 120
#: The answer when the mod log refused to record a moderator's case (busy past its wait, its server unreachable):
#: nothing was recorded, so nothing was done, and a decision claimed on a review card is handed back (open again).
NOT_RECORDED = "The mod log could not record this just now; nothing was done. Try again in a moment."
#: Start of the reason of a review item opened for a ladder step its moderator could not take: deciding it carries
#: the step out, which earns no strike of its own (a ladder step never does).
WITHHELD_STEP = "ladder step withheld"

#: Seconds before a refused unban (at a temporary ban's end, or of an overturned ban) is tried again.
UNBAN_RETRY_S = 600

#: Refused tries at lifting a ban (an overturned ban: the first when it is overturned; a temporary ban: the first at
#: its end; then every :data:`UNBAN_RETRY_S` and at each start) before the bot gives up and asks the moderators to
#: unban by hand. Counted in the mod log (the case's ``lift_tries``), so a restart keeps the count; a temporary ban
#: overturned after refusals goes on counting from there.
LIFT_TRIES = 5

#: How far ahead the mod log is read for temporary bans still to end (100 years): every ban with an end, whatever its
#: length (a moderator may ban for 20 years), at start-up recovery and when an unban lifts the member's bans.
EXPIRY_HORIZON = timedelta(days=36500)

#: Seconds a process holds a try at an owed unban it claimed in the mod log (the platform call and its writes take
#: well under this); past it, a process that stopped mid-try no longer blocks the next try.
LIFT_HOLD_S = 120

#: Characters a case's notes field (``failure``) keeps; :data:`NOTES_HEAD` of them are its first notes.
MAX_NOTES = 1000
NOTES_HEAD = 300

#: Characters of a platform's refusal quoted in a note (an HTTP error's text can be a whole error page).
MAX_REFUSAL = 160


def fit_notes(old: str, note: str) -> str:
    """A case's notes ``old`` with ``note`` added after a ``"; "``, within :data:`MAX_NOTES` characters: when they
    outgrow it, the first :data:`NOTES_HEAD` characters (the case's own outcome, e.g. the ban's DM not delivered)
    and the newest notes are kept, the notes between cut at ``" … "``."""
    joined = "; ".join(x for x in (old, note) if x)
    if len(joined) <= MAX_NOTES:
        return joined
    head = old[:NOTES_HEAD]
    return f"{head} … {joined[-(MAX_NOTES - len(head) - 3):]}"


#: Tries of a write recording what the platform already did (a case's outcome with its strike, a ladder step's
#: outcome) while the mod log answers "busy for now" (:class:`~bot.core.errors.StoreBusy`), :data:`OUTCOME_RETRY_S`
#: seconds apart, doubling (0.5 + 1 + 2 + 4 + 8 s between six tries, plus each try's own wait).
OUTCOME_TRIES = 6
OUTCOME_RETRY_S = 0.5

_log = logging.getLogger(__name__)


async def record_outcome(what: str, call: Callable[[], Awaitable[_T]]) -> _T:
    """Await ``call()``, a write recording what the platform already did, tried again while the mod log refuses
    it for now (:class:`~bot.core.errors.StoreBusy`: SQLite locked past its busy timeout, a PostgreSQL
    serialization failure or dropped connection), at most :data:`OUTCOME_TRIES` times: given up at once, the case
    stayed ``pending`` though the platform had acted, so the next start did it again (a second timeout and notice)
    or, past an hour, marked it failed without its strike. ``what``: for the log line.

    Raises:
        StoreBusy: still busy after the last try (the case stays ``pending``, for the next start).
        StoreError: any other refusal, at once.
    """
    delay = OUTCOME_RETRY_S
    for attempt in range(1, OUTCOME_TRIES + 1):
        try:
            return await call()
        except StoreBusy as exc:
            if attempt == OUTCOME_TRIES:
                raise
            _log.warning("mod log: recording %s failed (%s); trying again in %.1f s", what, exc, delay)
            await asyncio.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


def short_refusal(why: str) -> str:
    """``why`` in at most :data:`MAX_REFUSAL` characters (cut with ``"…"``)."""
    return why if len(why) <= MAX_REFUSAL else why[:MAX_REFUSAL - 1] + "…"

class _Decisions(Mapping[str, tuple[ReviewDecision, ActionKind, str]]):
    """Card decision -> (review decision, action carried out, past-tense outcome): a live view of
    :data:`bot.workflow.sanction_kinds.REGISTRY` (a kind registered later is a decision at once)."""

    def __getitem__(self, key: str) -> tuple[ReviewDecision, ActionKind, str]:
        kind = REGISTRY.get(key)
        if kind is None:
            raise KeyError(key)
        return kind.decision, kind.action, kind.outcome

    def __iter__(self) -> Iterator[str]:
        return (k.key for k in REGISTRY)

    def __len__(self) -> int:
        return sum(1 for _ in REGISTRY)


#: Card decision -> (review decision, action carried out, past-tense outcome).
DECISIONS: Mapping[str, tuple[ReviewDecision, ActionKind, str]] = _Decisions()


class PolicySource(Protocol):
    """Per-server effective policies (:class:`bot.core.policy_registry.PolicyRegistry`)."""

    async def get(self, platform: str, server_id: str) -> Policy: ...


@dataclass(frozen=True, slots=True)
class Result:
    """What the workflow did for a moderator or member; ``text`` is the (ephemeral) answer to show.

    Attributes:
        text: One or more sentences for the person who asked.
        ok: False when refused or when the platform refused the action.
        case_number: The case opened, if any.
        card: The review card to re-render (decisions), if any.
        failure: The platform's reason when it refused the action.
        notes: Further lines (a DM not delivered, an escalation).
    """

    text: str
    ok: bool = True
    case_number: int | None = None
    card: ReviewCard | None = None
    failure: str | None = None
    notes: tuple[str, ...] = ()


def dur(seconds: int | None) -> str:
    if not seconds:
        return ""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds} s"


#: A case's outcome on the platform, ``(status, failure)``: recorded with the strike it earns, in one write
#: (:meth:`WorkflowParts.strike`'s ``outcome``).
CaseOutcome = tuple[CaseStatus, str | None]


class WorkflowParts(ABC):
    """What the workflow's parts (:mod:`~bot.workflow.sanctions`, :mod:`~bot.workflow.reviews`,
    :mod:`~bot.workflow.raids`) share, set by :class:`~bot.workflow.workflow.ModerationWorkflow`: its ports, and
    the steps one part provides and another calls, declared once here (abstract) so that each part reads as what it
    is and the type checker holds every implementation to the one signature."""

    platform: str
    store: ModStore
    enforcer: Enforcer
    desk: ModDesk
    policies: PolicySource
    ledger: StrikeLedger
    raid_control: RaidControl | None
    clock: Callable[[], datetime]
    #: Whether this process answers for a server (start-up recovery skips the others; see ModerationWorkflow)
    owns: Callable[[str], bool]
    _timers: dict[tuple[str, int], asyncio.Task[None]]
    #: Holds this process wrote on the next try of an owed unban (its timer pending): handed back at a clean stop
    _lift_holds: dict[tuple[str, int], datetime]
    #: Cases whose timer is trying the unban now (claimed, the platform called or about to be): cancel_unban leaves
    #: such a timer to finish and record its outcome
    _lift_trying: set[tuple[str, int]]
    _stopping: bool
    _card_locks: dict[int, asyncio.Lock]

    # ---- provided by ModerationWorkflow (bot/workflow/workflow.py)
    @abstractmethod
    def track(self, coro: Awaitable[_T]) -> asyncio.Task[_T]:
        """Run ``coro`` as a task that the workflow's drain waits for."""

    @abstractmethod
    def can(self, capability: Capability) -> bool:
        """Whether the platform lets the bot do ``capability``."""

    @abstractmethod
    async def _delete(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        """Delete one message on the platform."""

    @abstractmethod
    async def actor_in_channel(self, actor: Actor, server_id: str, channel_id: str | None) -> Actor:
        """``actor`` with their permissions in ``channel_id``. Raises ``Refused`` when the platform cannot say."""

    # ---- provided by SanctionsMixin (bot/workflow/sanctions.py)
    @abstractmethod
    async def target(self, server_id: str, member_id: str) -> MemberInfo | None:
        """The member acted on (``None``: not in the server). Raises ``Refused`` when the platform cannot say."""

    @abstractmethod
    async def capable(self, kind: SanctionKind, server_id: str, channel_id: str | None = None) -> bool:
        """Whether this platform carries out registry entry ``kind`` in ``server_id`` (``channel_id``: where a
        stand-in acts; a channel where the platform refuses the stand-in does not count)."""

    @abstractmethod
    async def _sanction_on_platform(self, policy: Policy, case: Case, duration_s: int | None,
                                    channel_id: str | None = None) -> ActionResult:
        """Carry out a recorded case's member sanction with its notice."""

    @abstractmethod
    async def sanction(self, actor: Actor, server_id: str, member_id: str, kind: ActionKind, reason: str, *,
                       duration_s: int | None = None, message_id: str | None = None,
                       channel_id: str | None = None, source: str = "moderator", quiet: bool = False,
                       earns_strike: bool = True, case: Case | None = None) -> Result:
        """A moderator's sanction, recorded as a case (``earns_strike``: adds its strike; ``case``: already opened
        pending). Raises ``Refused``."""

    @abstractmethod
    async def strike(self, policy: Policy, server_id: str, member_id: str, kind: ActionKind, reason: str, *,
                     case_number: int | None, duration_s: int | None = None, message_id: str | None = None,
                     at: datetime | None = None, actor: Actor | None = None,
                     outcome: CaseOutcome | None = None) -> str:
        """Add the strike a sanction earns; returns a note on any escalation (``""``: none). ``actor``: whose
        decision earned it (a step they may not take is not carried out). ``outcome``: case ``case_number``'s
        status, recorded in the same write as the strike."""

    @abstractmethod
    def cancel_unban(self, server_id: str, number: int) -> None:
        """Cancel the end-of-ban timer of case ``number``."""

    @abstractmethod
    async def lift_overturned_ban(self, case: Case, reason: str) -> str:
        """Unban the member of overturned ban ``case`` (retried later if refused); returns a note for the card."""

    @abstractmethod
    async def lift_overturned_timeout(self, case: Case, reason: str) -> str:
        """Remove the timeout of overturned case ``case`` (owed until answered); returns a note for the card."""

    # ---- provided by ReviewsMixin (bot/workflow/reviews.py)
    @abstractmethod
    async def _note_on_case(self, server_id: str, case_number: int, note: str) -> None:
        """Append a platform refusal (or a later outcome) to a case's notes, its status kept."""

    @abstractmethod
    async def review_card(self, review_id: int, *, verdict: Verdict | None = None, notes: tuple[str, ...] = (),
                          server_id: str | None = None) -> ReviewCard | None:
        """The card of a review item (``None``: no such item)."""

    @abstractmethod
    async def _show_card(self, card: ReviewCard, *, updated: bool = False) -> bool:
        """Post or update a review card in the review channel."""
