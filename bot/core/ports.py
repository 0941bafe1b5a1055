"""Ports: the interfaces the core needs from the outside world.

Layer: ``bot.core``. Standard library only. Implementations live outside the core: ``bot.scoring`` (scorers),
``bot.store`` (the mod log, whose port is :mod:`bot.core.store_port`); the platform port is the workflow's
(:class:`bot.workflow.ports.Enforcer`). Tests use fakes that implement these protocols.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from bot.core.models import Action, Case, RaidAlert, ReviewItem, Scores, Strike, Verdict


@runtime_checkable
class Scorer(Protocol):
    """A toxicity model. ``score_batch`` is synchronous and CPU-bound: callers run it off the event loop.

    Attributes:
        name: Model name recorded with every verdict (e.g. ``"embedded-minilm-v1"``).
        version: Model version or checksum prefix.
        labels: The labels this model produces (a subset of ``LABELS``).

    Optional attributes, read with ``getattr`` (a scorer without them still works):
        languages: ISO 639-1 codes of the languages the model reads (``("en",)`` for the embedded model). When
            present, the service marks text confidently in another language ``score_status =
            "unsupported_language"``; when absent, no language check is made.
        route: ``route(plan, hint=None) -> Scorer``: the model that scores one message's plan (whole text, then
            pieces), ``hint`` its ``route_hint``; :func:`bot.core.pieces.score_plans` scores each plan whole with
            the model it picks (:class:`bot.scoring.routing.LanguageRoutedScorer`).
        route_hint: ``route_hint(raw_text) -> str | None``: the language a message's raw text routes it by (a
            language of the second model its whole text is confidently in), given to ``score_plans`` as ``hints``
            (:func:`bot.core.pieces.route_hints`).
        windows: ``windows(text) -> list[str]``: the substrings (token windows) the model reads a long text in, each
            scored as a text alone and combined by the highest score per label; the scoring service cuts a long
            text into them to spread it over its workers (:func:`bot.serve.batcher.window_pieces`).
        timeout_s: Seconds one ``score_batch`` call may take at most (a remote scorer's deadline); after a failed
            batch the moderation service tries each message alone until that long from the batch's start.
        within: ``within(deadline) -> context manager``: calls made by this thread inside it end by ``deadline``
            (``time.monotonic()`` seconds); those lone tries run inside it.
    """

    name: str
    version: str
    labels: tuple[str, ...]

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """Score ``texts`` (already normalised for scoring); one :class:`Scores` per text, same order.

        Raises:
            ScorerError: the model failed; the caller decides (policy ``on_scorer_error``).
        """
        ...


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """Everything the store writes for one judged message, in one transaction with its batch.

    Attributes:
        verdict: The verdict.
        excerpt: Text kept for the retention period (the original text, possibly cut to the policy's length).
        is_edit: True if this verdict re-judges an edited message (it replaces the earlier verdict row).
        open_case: Whether a case should be opened for the verdict's action.
        open_review: Whether a review item should be opened.
        strike: A strike to add (the store ignores a second strike for the same message).
        raid: A raid alert this message raised, written in the same transaction as the batch (so a crash never
            leaves a burst counted as alerted with no raid recorded); the store records one raid per burst
            (``platform, server_id, channel_id, started_at, reason``) across processes.
    """

    verdict: Verdict
    excerpt: str
    is_edit: bool = False
    open_case: bool = False
    open_review: bool = False
    strike: Strike | None = None
    raid: RaidAlert | None = None


@dataclass(frozen=True, slots=True)
class RecordResult:
    """What the store did for one :class:`VerdictRecord`.

    Attributes:
        inserted: False when a verdict for this message (same edit time) already existed: nothing was written.
        case_number: The case opened, if any.
        review_id: The review item opened, if any.
        strike_added: False when the message already had a strike.
        review_updated: ``review_id`` is the message's review item that was already open (a re-flagged edit):
            its card is to be updated, not posted again.
        raid_id: The raid recorded for the record's ``raid`` (``None`` without one, or when another writer had
            already recorded that burst: then only that writer carries the raid out).
    """

    inserted: bool
    case_number: int | None = None
    review_id: int | None = None
    strike_added: bool = False
    review_updated: bool = False
    raid_id: int | None = None


@dataclass(frozen=True, slots=True)
class ActionResult:
    """Outcome of one platform action: ``ok`` or failed with a reason (e.g. ``"Missing Permissions (50013)"``).

    ``extra``: adapter notes; ``extra[GONE] == "1"`` on a failed delete means the message no longer exists
    (Discord 10008 Unknown Message, Slack ``message_not_found``): deleted before, by its author, a moderator or
    this bot before a stop, so what the delete was for is done.
    """

    action: Action
    ok: bool
    reason: str = ""
    extra: dict[str, str] = field(default_factory=dict)


#: ``ActionResult.extra`` key: the message to delete was already gone.
GONE = "gone"

__all__ = [
    "GONE",
    "ActionResult",
    "Case",
    "RecordResult",
    "ReviewItem",
    "Scorer",
    "VerdictRecord",
]
