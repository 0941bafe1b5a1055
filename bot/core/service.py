"""The moderation service: one streaming pipeline shared by the bots and the offline ``scan``.

Layer: ``bot.core``. Talks to the model and the mod log only through ports (``Scorer``, ``ModStore``).

Flow of a message (issue "streaming pipeline"):
1. ``submit`` queues it; a collector forms micro-batches (flush at ``batch_size`` or after ``max_delay_s``).
2. Dedupe: messages already judged (gateway resume, Slack retry, re-run of a scan) resolve at once as duplicates.
   One recorded by an earlier run and not yet seen by this process (a resumed scan) is first *replayed* into the
   spam and raid windows, in order and with its recorded flag, so a burst that spans the restart is still one
   burst; nothing is recorded for it again.
3. In one worker thread (never on the event loop): normalise, stateless automod rules, and scoring of the batch's
   distinct texts (a spam flood is scored once; an LRU cache remembers recent texts).
4. Back on the loop, in arrival order: one call of :func:`bot.core.judging.judge` (the in-order rules of the
   registry: spam, new-account, identity target; the policy decision; the raid windows, which need real timing),
   then the strike and escalation it earns (:func:`bot.core.judge.sanction`).
5. The batch's verdicts, cases, review items and strikes are written in one SQLite transaction; then each
   caller's future resolves with an :class:`Outcome`.
Scoring of batch N+1 overlaps the judging and writing of batch N.

Nothing lost, nothing invented (issue 24, docs/live-path.md):

* A write (or a dedupe read) that fails with anything but :class:`~bot.core.errors.StoreRefused` or
  :class:`~bot.core.errors.UnstorableValue` (``StoreBusy``,
  SQLite's "database is locked" after its 5 s busy timeout, a dropped connection) is retried with exponential
  backoff, :data:`RETRY_FIRST_S` doubling to :data:`RETRY_MAX_S`, for as long as it takes; the batch is kept. The
  judged records are retried as they are: the spam and raid windows and the strike ledger have counted exactly this
  batch on top of what is committed, and no later batch is judged before it commits (the writer is sequential), so
  they never hold more than the mod log plus the one batch being written.
* A write holding a value the database can never hold (``UnstorableValue``: PostgreSQL refuses a NUL in a text;
  message text has none, :mod:`bot.core.storable` replaces it) is not retried: its batch fails, on one error line,
  and the service goes on.
* A write refused for good (``StoreRefused``: disk full, read-only, schema newer than the code) stops the service:
  ONE error line naming the database and the cause, every message not yet recorded fails with that error, the
  ledger forgets the batch's members (it reloads from the mod log), ``submit`` refuses new messages, and
  :attr:`ModerationService.failure` resolves with the error (the bots await it and exit 2).
* At most ``max_pending`` messages are held (queued, scored, judged or being written); :meth:`enqueue` and
  :meth:`handle` wait for a slot beyond that (backpressure) instead of letting the queue grow.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from bot.core.errors import StoreError, StoreRefused, UnstorableValue
from bot.core.escalation import StrikeLedger
from bot.core.judge import sanction
from bot.core.judging import ServerState, content_hits, judge, read_limits, replay
from bot.core.models import ActionKind, Message, RaidAlert, RuleHit, Scores, Verdict
from bot.core.normalize import Normalized, normalize
from bot.core.pieces import chunks, score_plans, scoring_pieces
from bot.core.policy import Policy
from bot.core.policy_registry import PolicyRegistry
from bot.core.ports import RecordResult, Scorer, VerdictRecord
from bot.core.rules.registry import DEFAULT_RULES, RuleRegistry, RuleSet
from bot.core.storable import storable, unstorable_id
from bot.core.store_port import ModStore

log = logging.getLogger(__name__)

Key = tuple[str, str, str]
#: Message keys remembered as judged by this process: a redelivery of a remembered key is a plain duplicate, one of
#: an older or unknown key is replayed into the spam and raid windows (see the module doc). Full, about 16 MB: 245
#: bytes a key measured with tracemalloc on ``bench.scan_memory``'s export (ordered-dict entry 126, key tuple 64,
#: id string 55); a scan's memory grows by that per message until the first 65,536 are judged, then stays flat.
OBSERVED_KEYS = 65_536
#: First wait (seconds) before retrying a failed batch write; doubles on each failure up to :data:`RETRY_MAX_S`.
RETRY_FIRST_S = 0.1
#: Longest wait (seconds) between two tries of a failed write (with SQLite's 5 s busy timeout, about one try per
#: 10 s while another process holds the write lock).
RETRY_MAX_S = 5.0
#: Default bound on messages held by the service at once (``MODBOT_QUEUE_MAX``): 8 batches of 128; about 3 MB of
#: messages and their normalised text (a message with its ``_Item`` is about 2-4 KB).
MAX_PENDING = 1024

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the service did with one message.

    Attributes:
        verdict: The verdict (for a duplicate: a verdict with no actions).
        duplicate: The message (at this edit) was already judged; nothing was recorded and nothing is to be done.
        case_number: The case opened for this verdict, if any.
        review_id: The review item opened, if any.
        strike_added: A strike was recorded for this message.
        raid_id: Id of the raid alert this message raised, if any.
        review_updated: ``review_id`` was already open for this message (a re-flagged edit): update its card.
    """

    verdict: Verdict
    duplicate: bool = False
    case_number: int | None = None
    review_id: int | None = None
    strike_added: bool = False
    raid_id: int | None = None
    review_updated: bool = False


class ScoringStopped(RuntimeError):
    """A message was not judged because the scorer failed on it and the service was told not to judge without the
    model (:attr:`ModerationService.stop_on_scorer_error`: ``scan``, whose verdicts would otherwise record the
    policy's ``on_scorer_error`` answer as what the model found, and be skipped as already recorded by every later
    run). Nothing of its batch is recorded; ``str()`` is one line for people."""


@dataclass
class _Item:
    message: Message
    future: asyncio.Future[Outcome]
    arrived: float
    policy: Policy | None = None
    norm: Normalized | None = None
    content_hits: list[RuleHit] = field(default_factory=list)
    scores: Scores | None = None
    scorer_failed: bool = False
    exempt: str | None = None
    #: Not None for a replayed duplicate (judged by an earlier run): whether its recorded verdict was flagged.
    replay_flagged: bool | None = None
    #: Its key was entered in the in-flight / observed bookkeeping by this batch.
    tracked: bool = False
    #: How far the model reads it (``Verdict.score_status``) and the unsupported language found, if any.
    score_status: str = "ok"
    language: str | None = None
    #: Normalised parts of a long message past the normaliser's first 4,000 characters (up to ``max_chars``).
    more: list[Normalized] = field(default_factory=list)
    #: The language its raw text routes it by (the scorer's ``route_hint``), if any: it picks the model that
    #: scores it and whose languages its language check reads.
    hint: str | None = None


class ModerationService:
    """Judges messages and records verdicts; see the module docstring for the pipeline.

    Args:
        scorer: The toxicity model (called from one worker thread).
        store: The mod log.
        policies: Per-server policies.
        enforce: False for offline scans: every verdict is marked ``shadow`` (nothing will be carried out), while
            cases and strikes are still recorded so a scan shows what the policy would have done.
        batch_size: Largest micro-batch (messages).
        max_delay_s: Longest a message waits for its batch to fill (seconds).
        text_cache: Number of recent distinct scored texts remembered (repeated texts are scored once).
        stateful_rules: False judges every message on its own (no spam, flood or raid windows, no strikes): used
            by ``score``, whose inputs are independent texts. With it on, a message without an author or a time
            (:attr:`bot.core.models.Message.in_rate_windows` false) is still judged on its own.
        known_scores: Scores already known per scoring plan (:func:`bot.core.pieces.scoring_pieces`), used instead
            of the scorer (a ``scan`` replay re-judges recorded messages from their stored scores this way).
        max_pending: Most messages held at once (submitted, not yet resolved); :meth:`enqueue` / :meth:`handle`
            wait for a slot beyond it. Default :data:`MAX_PENDING`.
        rules: The automod rules to run, in order; default :data:`bot.core.rules.registry.DEFAULT_RULES`.
        stop_on_scorer_error: False (the bots): a message the scorer failed on is judged under the policy's
            ``on_scorer_error``. True (``scan``): its whole batch fails with :class:`ScoringStopped` instead and
            nothing of it is recorded, so a later run judges those messages when the scorer answers.

    Attributes:
        failure: Resolves (with the :class:`~bot.core.errors.StoreError`, never raised) when a write is refused
            for good and the service has stopped; await it to stop the process (created by :meth:`start`).
    """

    def __init__(
        self,
        *,
        scorer: Scorer,
        store: ModStore,
        policies: PolicyRegistry,
        enforce: bool = True,
        batch_size: int = 128,
        max_delay_s: float = 0.004,
        text_cache: int = 8192,
        stateful_rules: bool = True,
        known_scores: Mapping[tuple[str, ...], Scores] | None = None,
        max_pending: int = MAX_PENDING,
        rules: RuleRegistry | None = None,
        stop_on_scorer_error: bool = False,
    ) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending}")
        self.scorer = scorer
        self.store = store
        self.policies = policies
        self.enforce = enforce
        self.stateful_rules = stateful_rules
        self.batch_size = batch_size
        self.max_delay_s = max_delay_s
        self.ledger = StrikeLedger(store.active_strikes)
        self._cache: OrderedDict[tuple[str, ...], Scores] = OrderedDict()
        self._cache_size = text_cache
        self.known_scores: Mapping[tuple[str, ...], Scores] = known_scores or {}
        self.stop_on_scorer_error = stop_on_scorer_error
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._judge_q: asyncio.Queue[list[_Item] | None] = asyncio.Queue(maxsize=2)
        self._inflight: dict[Key, datetime | None] = {}
        # Keys this process has judged or replayed (bounded): a redelivery of one of them is a plain duplicate.
        self._observed: OrderedDict[Key, None] = OrderedDict()
        self._servers: dict[tuple[str, str], ServerState] = {}
        self._rules: dict[str, RuleSet] = {}
        self.rules: RuleRegistry = rules if rules is not None else DEFAULT_RULES
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorer")
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.max_pending = max_pending
        self._slot_free = asyncio.Event()
        self._slot_free.set()
        self._fatal: StoreError | None = None
        self.failure: asyncio.Future[StoreError] | None = None
        self.stats = {"messages": 0, "duplicates": 0, "scored_texts": 0, "cache_hits": 0, "batches": 0,
                      "write_retries": 0, "peak_pending": 0}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the pipeline tasks (idempotent)."""
        if self.failure is None:
            self.failure = asyncio.get_running_loop().create_future()
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._collector(), name="modbot-collector"),
                asyncio.create_task(self._judge_writer(), name="modbot-judge"),
            ]

    async def drain(self) -> None:
        """Wait until every submitted message has its outcome."""
        await self._idle.wait()

    async def close(self) -> None:
        """Drain, stop the pipeline and the worker thread (the store and scorer are closed by their owner)."""
        await self.drain()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        self._executor.shutdown(wait=True)

    async def __aenter__(self) -> ModerationService:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ public API

    @property
    def pending(self) -> int:
        """Messages held now (submitted, outcome not yet resolved)."""
        return self._pending

    @property
    def fatal(self) -> StoreError | None:
        """The error that stopped the service (a write refused for good), or ``None`` while it runs."""
        return self._fatal

    def submit(self, message: Message) -> asyncio.Future[Outcome]:
        """Queue a message (new or edited) at once, without waiting for a slot; the returned future resolves with
        its :class:`Outcome` (or fails with the store error that stopped the service). Callers that can wait use
        :meth:`enqueue`; ``scan`` and ``score`` bound what they have in flight themselves.

        Raises:
            StoreRefused: the service has stopped on a write refused for good (:attr:`fatal`).
            RuntimeError: :meth:`start` was not awaited.
        """
        if self._fatal is not None:
            raise self._fatal
        if not self._tasks:
            raise RuntimeError("ModerationService.start() was not awaited")
        fut: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._pending += 1
        self.stats["peak_pending"] = max(self.stats["peak_pending"], self._pending)
        if self._pending >= self.max_pending:
            self._slot_free.clear()
        self._idle.clear()
        self._queue.put_nowait(_Item(message, fut, time.perf_counter()))
        return fut

    async def enqueue(self, message: Message) -> asyncio.Future[Outcome]:
        """Wait until fewer than ``max_pending`` messages are held (backpressure), then :meth:`submit`.

        Raises:
            StoreRefused: the service stopped (before or while waiting).
        """
        while self._pending >= self.max_pending and self._fatal is None:
            self._slot_free.clear()
            await self._slot_free.wait()
        return self.submit(message)

    async def handle(self, message: Message) -> Outcome:
        """Judge one message and record the verdict, waiting for a slot first (:meth:`enqueue`); see
        :class:`Outcome`."""
        return await (await self.enqueue(message))

    async def score_aside(self, text: str) -> Scores:
        """Score one text that is not a message (a member's name in its frame: ``bot.workflow.names``) on the
        scorer's one worker thread; nothing is recorded and no spam or raid window sees it.

        Raises:
            Exception: whatever the scorer raises.
        """
        plan = (text,)
        return (await asyncio.get_running_loop().run_in_executor(self._executor, score_plans, self.scorer,
                                                                 [plan]))[plan]

    def set_raid_mode(self, platform: str, server_id: str, channel_id: str | None, on: bool, at: datetime) -> None:
        """Switch raid mode on or off for a channel (or the whole server with ``channel_id=None``)."""
        state = self._servers.get((platform, server_id))
        if state is None:
            state = self._servers[(platform, server_id)] = ServerState.for_policy(self.policies.base)
        state.raid.set_raid_mode(server_id, channel_id, on, at)

    def raid_mode(
        self, platform: str, server_id: str, channel_id: str, at: datetime, parent_id: str | None = None
    ) -> bool:
        """Whether raid mode is on in a channel (or its parent, for a thread) at ``at``."""
        state = self._servers.get((platform, server_id))
        return bool(state and state.raid.raid_mode(server_id, channel_id, at, parent_id=parent_id))

    # ------------------------------------------------------------------ stage 1: collect, dedupe, score

    async def _collector(self) -> None:
        while True:
            first = await self._queue.get()
            batch = [first]
            if self._queue.qsize() < self.batch_size - 1 and self.max_delay_s > 0:
                await asyncio.sleep(self.max_delay_s)
            while len(batch) < self.batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            if self._fatal is not None:
                self._fail(batch, self._fatal)
                continue
            batch = self._storable(batch)
            if not batch:
                continue
            try:
                live = await self._dedupe(batch)
                if live:
                    await self._prepare(live)
                    await self._judge_q.put(live)
            except StoreRefused as exc:  # refused for good while reading: stop, one line
                self._forget(batch)
                self._stop(exc, batch)
            except Exception as exc:  # noqa: BLE001 - a failed batch must not stop the pipeline
                log.exception("pipeline batch failed")
                self._forget(batch)
                self._fail(batch, exc)

    def _storable(self, batch: list[_Item]) -> list[_Item]:
        """The batch's messages as the mod log can store them (:mod:`bot.core.storable`): a lone surrogate or a NUL
        in a text or name is replaced by U+FFFD, so the message is still judged and recorded; a message whose id
        holds one fails alone (``ValueError``, one error line) instead of holding up its batch."""
        kept: list[_Item] = []
        for it in batch:
            bad = unstorable_id(it.message)
            if bad is None:
                cleaned = storable(it.message)
                kept.append(it if cleaned is it.message else replace(it, message=cleaned))
                continue
            exc = ValueError(f"message {ascii(it.message.id)[1:81]}: its {bad}, which the mod log cannot store; "
                             "not judged")
            log.error("%s", exc)
            self._fail([it], exc)
        return kept

    async def _dedupe(self, batch: list[_Item]) -> list[_Item]:
        """Drop duplicates; keep new messages and, for the spam and raid windows, replays (see the module doc).

        Both store lookups come before any state changes, so a failed lookup leaves nothing behind."""
        keys = [it.message.key for it in batch]
        known = await self._retrying("reading", lambda: self.store.known_messages(keys))
        candidates = [
            it.message.key for it in batch
            if self.stateful_rules and it.message.key in known and it.message.key not in self._observed
        ]
        flagged = (await self._retrying("reading", lambda: self.store.flagged_messages(candidates))
                   if candidates else set())
        live: list[_Item] = []
        for it in batch:
            m = it.message
            found = m.key in self._inflight or m.key in known
            seen_edit = self._inflight[m.key] if m.key in self._inflight else known.get(m.key)
            duplicate = found and (m.edited_at is None or (seen_edit is not None and m.edited_at <= seen_edit))
            if duplicate:
                if self.stateful_rules and m.key not in self._inflight and m.key not in self._observed:
                    self._mark_observed(m.key)
                    it.replay_flagged = m.key in flagged
                    it.tracked = True
                    live.append(it)
                    continue
                self.stats["duplicates"] += 1
                self._resolve(it, _duplicate(m))
                continue
            self._inflight[m.key] = m.edited_at
            self._mark_observed(m.key)
            it.tracked = True
            live.append(it)
        return live

    def _forget(self, items: Sequence[_Item]) -> None:
        """Undo :meth:`_dedupe`'s bookkeeping for items of a batch that failed before the writer took it, so a
        retry of those messages is judged (or replayed) again, not taken for a duplicate."""
        for it in items:
            if it.tracked:
                self._inflight.pop(it.message.key, None)
                self._observed.pop(it.message.key, None)
                it.tracked = False

    def _mark_observed(self, key: Key) -> None:
        self._observed[key] = None
        self._observed.move_to_end(key)
        while len(self._observed) > OBSERVED_KEYS:
            self._observed.popitem(last=False)

    async def _prepare(self, items: list[_Item]) -> None:
        for it in items:
            m = it.message
            it.policy = await self.policies.get(m.server.platform, m.server.id)
            it.exempt = it.policy.exemption(m)
        jobs = []
        for it in items:
            if it.exempt or it.replay_flagged is not None:
                continue
            assert it.policy is not None
            rules = self._rules_of(it.policy)
            extra = [t for ov in it.policy.overrides_for(it.message.channel) for t in ov.block_terms]
            allow = [t for ov in it.policy.overrides_for(it.message.channel) for t in ov.allow_terms]
            m = it.message
            st = self._servers.get((m.server.platform, m.server.id))
            at = m.event_time
            raid_on = bool(st and at is not None and st.raid.raid_mode(m.server.id, m.channel.id, at,
                                                                       parent_id=m.channel.parent_id))
            jobs.append((it, rules, extra, allow, raid_on))
        if jobs:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._work, jobs)

    def _work(self, jobs: list[tuple[_Item, RuleSet, list[str], list[str], bool]]) -> None:
        """Worker thread: normalise, stateless rules, and score distinct uncached texts in one batch.

        Each message is scored as a whole and sentence by sentence (:func:`bot.core.pieces.scoring_pieces`), keeping
        per label the highest score, so a benign sentence in front of an attack cannot hide it; a server whose policy
        sets ``[scoring] pieces = "whole"`` has the whole text scored only. A message longer than 4,000 characters
        is read whole up to ``[scoring] max_chars``: its later chunks are scored and matched by the blocklist and
        regex rules too (:func:`bot.core.judging.read_limits` records what was not read, and an unsupported language).
        """
        plans: dict[tuple[str, ...], list[_Item]] = {}
        to_check: list[tuple[_Item, tuple[str, ...]]] = []
        hint_of = getattr(self.scorer, "route_hint", None)  # a scorer routing languages between two models
        for it, rules, extra, allow, raid_on in jobs:
            assert it.policy is not None
            text, cfg = it.message.text, it.policy.scoring
            it.norm = normalize(text)
            it.more = [normalize(c) for c in chunks(text, cfg.max_chars)]
            it.content_hits = content_hits(rules, it.message, it.norm, it.more, extra_terms=extra,
                                           allow_terms=allow, raid_mode=raid_on)
            plan = scoring_pieces(text, sentences=cfg.pieces == "sentences", max_chars=cfg.max_chars)
            if not any(p.strip() for p in plan):
                continue
            to_check.append((it, plan))
            # by the raw text, where emoji are not English words (the plan spells them out)
            it.hint = hint_of(text) if hint_of is not None else None
            known = self.known_scores.get(plan)
            if known is not None:
                it.scores = known
                continue
            cached = self._cache.get(plan)
            if cached is not None:
                self._cache.move_to_end(plan)
                it.scores = cached
                self.stats["cache_hits"] += 1
            else:
                plans.setdefault(plan, []).append(it)
        if plans:
            self._score_plans(plans)
        # How far each message was read (its length, its languages), after scoring: a scorer may learn the
        # languages it reads from its first answer (a remote scorer whose service was not answering when the bot
        # started assumes English until then, and a service's model may read others).
        for it, plan in to_check:
            assert it.policy is not None
            limits = read_limits(it.message.text, it.policy,
                                 self._languages(plan, it.hint) if it.policy.languages.detect else None)
            it.score_status, it.language = limits.score_status, limits.language
            it.content_hits += limits.hits

    def _score_plans(self, plans: dict[tuple[str, ...], list[_Item]]) -> None:
        """Worker thread: score ``plans`` (each with the items it is the plan of) in one batch, setting each item's
        ``scores`` (or ``scorer_failed``: the policy's ``on_scorer_error`` decides) and the cache."""
        n_texts = len({piece for plan in plans for piece in plan})
        hints = {plan: its[0].hint for plan, its in plans.items() if its[0].hint is not None}
        started = time.monotonic()
        try:
            # the one scoring path (eval and bench use it too)
            combined = score_plans(self.scorer, list(plans), hints)
        except Exception as exc:  # noqa: BLE001 - the policy's on_scorer_error decides
            _log_scorer_failure(exc, f"a batch of {n_texts} texts")
            # a scorer that was never reached fails smaller batches alike: no second try then
            budget = 0.0 if getattr(exc, "unreachable", False) else time.monotonic() - started
            combined = self._score_alone(list(plans), budget, started, hints)
            for plan, its in plans.items():
                if plan not in combined:
                    for it in its:
                        it.scorer_failed = True
        self.stats["scored_texts"] += len({piece for plan in combined for piece in plan})
        for plan, its in plans.items():
            s = combined.get(plan)
            if s is None:
                continue  # failed: on_scorer_error
            self._cache[plan] = s
            for it in its:
                it.scores = s
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _score_alone(self, plans: list[tuple[str, ...]], budget_s: float, started: float,
                     hints: Mapping[tuple[str, ...], str]) -> dict[tuple[str, ...], Scores]:
        """After a failed batch of several messages (its scoring started at ``started``, ``time.monotonic()``
        seconds): each message's plan scored on its own, the lightest first, while time is left. A message the
        scorer fails on fails alone (the model failed on its text: the policy's ``on_scorer_error`` decides for it)
        and the next is tried. The time: ``budget_s`` seconds from now (the time the failed batch took, so the
        worker thread is held at most twice as long as without this; 0: no try, the scorer was never reached), or
        until the batch's own deadline when the scorer has one (its ``timeout_s`` from ``started``: a remote
        scorer whose service answered "the model failed" at once) and that is later. Every try ends by then (a
        scorer's ``within(deadline)``: a remote scorer's call no longer takes a fresh whole timeout), and the
        plans not tried by then fail. So one message the scorer cannot score (a remote service timing out on two
        39,000-character messages, a text the model always fails on) no longer fails the messages batched with
        it, as the scoring service's own batcher already ensures for its callers. ``hints``: as
        :func:`bot.core.pieces.score_plans`'. Returns the plans scored."""
        done: dict[tuple[str, ...], Scores] = {}
        if len(plans) < 2 or budget_s <= 0:
            return done
        until = time.monotonic() + budget_s
        timeout = getattr(self.scorer, "timeout_s", None)
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            until = max(until, started + timeout)
        within: Callable[[float], AbstractContextManager[object]] | None = getattr(self.scorer, "within", None)
        for plan in sorted(plans, key=lambda p: sum(map(len, set(p)))):
            if time.monotonic() >= until:
                break
            try:
                with within(until) if within is not None else nullcontext():
                    done[plan] = score_plans(self.scorer, [plan], hints)[plan]
            except Exception as exc:  # noqa: BLE001 - on_scorer_error for this one
                _log_scorer_failure(exc, f"one message's {len(set(plan))} texts, scored alone")
        return done

    def _languages(self, plan: tuple[str, ...], hint: str | None = None) -> Sequence[str] | None:
        """The languages the model that scores ``plan`` reads (``Scorer.languages``; ``None``: not declared, so no
        language check). With a routing scorer (a ``route(plan) -> Scorer`` method:
        :class:`bot.scoring.routing.LanguageRoutedScorer`) they are those of the model routed to, not the union of
        both models': a French line in a message routed to the English model was not read. A scorer with
        ``languages_for(plan)`` (:class:`bot.scoring.remote.RemoteScorer` of a service that routes) names them
        itself. ``hint``: the message's ``route_hint`` (its raw text's language), which routes it too."""
        languages: Sequence[str] | None = getattr(self.scorer, "languages", None)
        if not languages:
            return languages
        route = getattr(self.scorer, "route", None)
        if route is not None:
            languages = getattr(route(plan, hint) if hint is not None else route(plan), "languages", None) or languages
        languages_for = getattr(self.scorer, "languages_for", None)  # a remote scorer of a service that routes
        if languages_for is not None:
            languages = (languages_for(plan, hint) if hint is not None else languages_for(plan)) or languages
        return languages

    # ------------------------------------------------------------------ stage 2: judge in order, write

    async def _judge_writer(self) -> None:
        while True:
            items = await self._judge_q.get()
            if items is None:
                return
            if self._fatal is not None:
                self._fail(items, self._fatal)
                self._forget(items)
                continue
            try:
                if self.stop_on_scorer_error and (failed := sum(it.scorer_failed for it in items)):
                    log.error("the scorer failed on %d of a batch of %d messages: none of the batch is recorded",
                              failed, len(items))
                    self._fail(items, ScoringStopped(
                        f"the scorer failed on {failed} message(s) (see the ERROR line above); no verdict was "
                        "recorded without its scores"))
                    continue
                judged: list[_Item] = []
                records: list[VerdictRecord] = []
                for it in items:
                    if it.replay_flagged is not None:
                        self._replay(it)
                        continue
                    rec, raid = await self._judge(it)
                    judged.append(it)
                    records.append(replace(rec, raid=raid) if raid else rec)  # committed with its batch
                results = await self._write(records)
                for it in items:
                    if it.replay_flagged is not None:
                        self.stats["duplicates"] += 1
                        self._resolve(it, _duplicate(it.message))
                for it, rec, res in zip(judged, records, results, strict=True):
                    self._resolve(it, _outcome(rec, res, res.raid_id))
            except StoreRefused as exc:
                self._stop(exc, items)
            except Exception as exc:  # noqa: BLE001
                if _store_failure(exc):  # one line, no traceback: the caller (scan, the bot) reports it
                    log.error("writing a batch to the mod log failed: %s", exc)
                else:
                    log.exception("judging or writing a batch failed")
                self._fail(items, exc)
            finally:
                for it in items:
                    self._inflight.pop(it.message.key, None)
                self.stats["batches"] += 1

    async def _write(self, records: list[VerdictRecord]) -> list[RecordResult]:
        """Write one judged batch, retrying anything but ``StoreRefused`` (see the module doc).

        Raises:
            StoreRefused: the store refuses the write for good (nothing of the batch is committed).
        """
        if not records:
            return []
        return await self._retrying(
            f"writing a batch of {len(records)}",
            lambda: self.store.record_batch(records, model_version=self.scorer.version))

    async def _retrying(self, what: str, call: Callable[[], Awaitable[_T]]) -> _T:
        """Await ``call()`` until it succeeds: waits :data:`RETRY_FIRST_S` doubling to :data:`RETRY_MAX_S`
        between tries, one warning line at the first failure and one when it succeeds again (no traceback).

        Raises:
            StoreRefused: at once, never retried (the database refuses writes).
            UnstorableValue: at once, never retried (this write holds a value the database cannot hold).
        """
        delay = RETRY_FIRST_S
        failures = 0
        started = time.monotonic()
        while True:
            try:
                result = await call()
            except (StoreRefused, UnstorableValue, UnicodeError):  # refused for good; a value never storable
                raise
            except Exception as exc:  # noqa: BLE001 - transient until the store says otherwise (StoreRefused)
                failures += 1
                self.stats["write_retries"] += 1
                if failures == 1:
                    log.warning("mod log: %s failed (%s: %s); keeping it and retrying from %.1f s up to every "
                                "%.0f s", what, type(exc).__name__, exc, RETRY_FIRST_S, RETRY_MAX_S)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
                continue
            if failures:
                log.warning("mod log: %s succeeded after %d failed tries (%.1f s)", what, failures,
                            time.monotonic() - started)
            return result

    def _stop(self, exc: StoreError, items: Sequence[_Item]) -> None:
        """A write or read refused for good: log ONE line, forget the batch's members in the strike ledger (it
        reloads from the mod log), fail every message not recorded, refuse new ones, resolve :attr:`failure`."""
        if self._fatal is None:
            self._fatal = exc
            log.error("stopping: %s", exc)
            if self.failure is not None and not self.failure.done():
                self.failure.set_result(exc)
            self._slot_free.set()
        for it in items:
            m = it.message
            self.ledger.forget(m.server.platform, m.server.id, m.author.id)
        self._fail(items, exc)
        while not self._queue.empty():
            self._fail([self._queue.get_nowait()], exc)

    def _state(self, m: Message, policy: Policy) -> ServerState:
        key = (m.server.platform, m.server.id)
        st = self._servers.get(key)
        if st is None:
            st = self._servers[key] = ServerState.for_policy(policy)
        else:
            st.follow(policy)
        return st

    def _rules_of(self, policy: Policy) -> RuleSet:
        """The server's rules (of :attr:`rules`) compiled once per policy version."""
        rules = self._rules.get(policy.version)
        if rules is None:
            rules = self._rules[policy.version] = self.rules.build(policy.rules)
        return rules

    def _replay(self, it: _Item) -> None:
        """Feed a message judged by an earlier run into the spam and raid windows (:func:`bot.core.judging.replay`,
        with its recorded flag); no verdict, alert, case or strike comes of it."""
        m, policy = it.message, it.policy
        assert policy is not None and it.replay_flagged is not None
        if m.in_rate_windows:  # as _judge: an anonymous or untimed message was never in the windows
            replay(m, policy, self._state(m, policy), flagged=it.replay_flagged, exempt=bool(it.exempt))

    async def _judge(self, it: _Item) -> tuple[VerdictRecord, RaidAlert | None]:
        m, policy = it.message, it.policy
        assert policy is not None
        st = self._state(m, policy)
        excerpt = m.text[: policy.server.excerpt_chars]
        shadow = policy.shadow_mode or not self.enforce
        latency = (time.perf_counter() - it.arrived) * 1000
        is_edit = m.edited_at is not None
        stateful = self.stateful_rules and m.in_rate_windows  # an anonymous or untimed message: judged on its own
        j = judge(m, policy, self._rules_of(policy), st, exempt=bool(it.exempt),
                  content_hits=it.content_hits, norm=it.norm, more=it.more, scores=it.scores,
                  scorer_failed=it.scorer_failed, score_status=it.score_status, stateful=stateful)
        if j is None:
            v = Verdict(message=m, scores=None, exempt=it.exempt, shadow=shadow, policy_version=policy.version,
                        latency_ms=latency, score_status="not_scored")
            return VerdictRecord(verdict=v, excerpt=excerpt, is_edit=is_edit), None
        decision = j.decision
        plan = await sanction(policy, decision, self.ledger, m, stateful=stateful)
        v = Verdict(
            message=m, scores=it.scores, rule_hits=j.hits, labels=decision.labels, flagged=decision.flagged,
            action=plan.strongest, actions=plan.actions, strike_points=plan.points, shadow=shadow, raid=j.raid,
            normalized=it.norm.matching if it.norm else "", policy_version=policy.version, latency_ms=latency,
            raid_mode=decision.raid_tiers, tiers=decision.tiers, score_status=j.score_status, language=it.language,
        )
        self.stats["messages"] += 1
        rec = VerdictRecord(verdict=v, excerpt=excerpt, is_edit=is_edit, open_case=plan.open_case,
                            open_review=plan.open_review, strike=plan.strike)
        return rec, j.raid

    # ------------------------------------------------------------------ futures

    def _resolve(self, it: _Item, outcome: Outcome) -> None:
        if not it.future.done():
            it.future.set_result(outcome)
        self._done()

    def _fail(self, items: Sequence[_Item], exc: BaseException) -> None:
        for it in items:
            if not it.future.done():
                it.future.set_exception(exc)
                self._done()

    def _done(self) -> None:
        self._pending -= 1
        if self._pending < self.max_pending:
            self._slot_free.set()
        if self._pending <= 0:
            self._pending = 0
            self._idle.set()


def _duplicate(m: Message) -> Outcome:
    return Outcome(verdict=Verdict(message=m, scores=None, exempt="duplicate", shadow=True), duplicate=True)


def _outcome(rec: VerdictRecord, res: RecordResult, raid_id: int | None) -> Outcome:
    if not res.inserted:
        v = replace(rec.verdict, actions=(), action=ActionKind.NONE)
        return Outcome(verdict=v, duplicate=True)
    return Outcome(
        verdict=rec.verdict,
        case_number=res.case_number,
        review_id=res.review_id,
        strike_added=res.strike_added,
        raid_id=raid_id,
        review_updated=res.review_updated,
    )


def _store_failure(exc: BaseException) -> bool:
    """True for an error of the mod log itself (a :class:`bot.core.errors.StoreError`, or a ``sqlite3`` error such
    as "database or disk is full"), as opposed to a defect in judging."""
    from bot.core.errors import StoreError

    return isinstance(exc, StoreError) or type(exc).__module__ == "sqlite3"


def _log_scorer_failure(exc: Exception, what: str) -> None:
    """One ERROR line for a scorer failure. The scorer's own errors (``ScorerError``: the model failed, the
    scoring service is away or answered nonsense; a ``RuntimeError``) are expected and named in one line; anything
    else is a bug and keeps its traceback."""
    if isinstance(exc, RuntimeError):
        log.error("scorer failed on %s: %s: %s", what, type(exc).__name__, exc)
    else:
        log.error("scorer failed on %s", what, exc_info=exc)
