"""Micro-batching: the plans of all requests waiting while the model is busy are scored in shared forward passes,
each pass bounded in work so that a run of long requests never holds the short ones behind it.

Every request puts its plans (:func:`bot.core.pieces.scoring_pieces` tuples) on one queue. A single collector task
turns each request into *units* (a plan, or for a plan of more than :data:`UNIT_CHARS` characters consecutive
slices of its pieces, each scored as a sub-plan and combined by the highest score per label, which is what
:func:`bot.core.pieces.combine` does over the whole plan) and forms each forward pass from the requests waiting:

1. the requests with the least work left first (shortest remaining work), unit by unit, until the pass holds
   :data:`PASS_CHARS` characters of texts (the unit that reaches it is the last) or :data:`MAX_TEXTS` distinct
   texts;
2. then, if the oldest waiting request got nothing, its next unit (so a long request progresses in every pass,
   whatever arrives after it).

What does not fit waits for the next pass, together with whatever arrived meanwhile; so a request queued behind a
long one waits for one bounded pass, never for the long one's whole work, and a stretch of long messages is
scored a slice at a time between the short ones. A pass that holds long requests (:data:`LONG_CHARS`) as well as
short ones is scored in two calls, the short requests first (:func:`waves`). Each pass is one
:func:`bot.core.pieces.score_plans` call per wave in one worker thread: the scorer is only ever called from that
one thread. Under load the passes fill by themselves, and a lone request waits for no timer (``max_wait_s``
defaults to 0). When the scorer fails on a pass of several requests, each request's units of that pass are scored
again on their own, so a text the model fails on fails only the request that sent it.

Layer: composition root helper (``bot.core`` only; the scorer is any :class:`bot.core.ports.Scorer`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bot.core.models import Scores
from bot.core.pieces import combine, score_plans
from bot.core.ports import Scorer

log = logging.getLogger(__name__)

#: Distinct texts per forward pass at most (the detoxify scorer chunks by 64 inside; 256 bounds one batch's latency).
MAX_TEXTS = 256
#: Characters of texts per forward pass: units are added while the pass holds fewer, so a pass holds at most this
#: plus one unit (and one unit of the oldest request beyond it). About 1,000 model tokens of chat; a pass of 16
#: typical chat requests fits (real chat averages 210 characters per message with its sentence pieces).
#: ``--batch-chars``.
PASS_CHARS = 4_000
#: A plan whose distinct texts hold more characters than this is scored in slices (sub-plans of consecutive
#: pieces of at most this many characters; a longer piece is a slice alone), over as many passes as the budget
#: needs. Not for a scorer that routes whole plans between models (``route``): a message is never split there.
UNIT_CHARS = 1_000
#: A request whose distinct texts hold more characters than this is a long one: scored after the short requests
#: of its pass, in a call of its own, so they are answered without waiting for its token windows. Counted over the
#: whole text and its sentence pieces, so a chat message of roughly 500 characters or more (28 of the benchmark's
#: 1,000 real chat messages are over 500, 7 over 1,000).
LONG_CHARS = 1_000
#: The refill wait (:class:`MicroBatcher`): at most this share of the previous batch's model time, and at most
#: :data:`REFILL_S` seconds (``--batch-refill-ms``). Measured with ``bench/serve.py``'s 16 clients on real chat, 2-core
#: AMD EPYC shared with other jobs (docs/perspective-migration.md, 2 December): a fixed 4 ms window changed nothing
#: (answering 15 requests and reading their callers' next ones takes the event loop longer); these defaults cut the
#: passes that served one request from 28-31 of 69 to 6-7 of 41-45, and model CPU per message 12.1-12.7 ->
#: 11.1-11.3 ms.
REFILL_SHARE = 0.1
REFILL_S = 0.05


class BatcherClosed(RuntimeError):
    """The batcher is draining or closed: no new work is accepted."""


@dataclass(eq=False)
class _Job:
    """One request: its plans, what is left to score of them, and the parts already scored.

    Attributes:
        plans: The request's plans, in order.
        future: Resolved with one :class:`Scores` per plan once every unit is scored.
        texts / chars: Distinct texts of all plans, and their characters (the request's whole work).
        seq: Arrival order (the oldest waiting request progresses in every pass).
        units: ``(plan index, sub-plan)`` still to score, in order (a plan's whole text first).
        parts: Scores of each plan's sub-plans scored so far, in order.
        left: Characters of :attr:`units` (the work left; the shortest goes first).
        taken: Units taken into passes whose scores have not come back yet (the request is answered when no unit
            is left and none is out).
        model: The scorer this request's plans are scored with, when not the batcher's own (one of the models of
            a scorer that routes languages, chosen by the request: :meth:`MicroBatcher.score`).
    """

    plans: list[tuple[str, ...]]
    future: asyncio.Future[list[Scores]]
    texts: int = 0
    chars: int = 0
    seq: int = 0
    units: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    parts: dict[int, list[Scores]] = field(default_factory=dict)
    left: int = 0
    taken: int = 0
    model: Scorer | None = None


def _chars(sub: Sequence[str]) -> int:
    return sum(len(p) for p in dict.fromkeys(sub))


def window_pieces(piece: str, unit_chars: int, windows: Callable[[str], list[str]] | None) -> list[str]:
    """``[piece]``, or for a piece of more than ``unit_chars`` characters that the scorer reads in several token
    windows (``windows``: the scorer's own :meth:`bot.scoring.detoxify_scorer.DetoxifyScorer.windows`), those
    windows, each a text of its own.

    Why: the scorer gives a long text the highest score per label of its windows, each window scored as a text
    alone; scoring the windows as separate texts, perhaps in separate passes, and taking the highest score per
    label (:func:`bot.core.pieces.combine`) is the same computation. A long text is then no longer one unit that a
    single worker thread must score whole (a 1,700-character message: four windows, about 250 ms on one thread of
    a 2-core AVX2 CPU, the p99 of ``bench/serve.py``'s half load), and its windows can be scored by both workers
    at once. A window that the scorer would itself cut again (``windows(w) != [w]``: its text re-tokenises to more
    than one window) keeps the piece whole, so the scores stay exactly the scorer's.
    """
    if windows is None or len(piece) <= unit_chars:
        return [piece]
    parts = windows(piece)
    if len(parts) < 2 or any(windows(w) != [w] for w in parts):
        return [piece]
    return parts


def units(plans: Sequence[tuple[str, ...]], unit_chars: int = UNIT_CHARS,
          windows: Callable[[str], list[str]] | None = None) -> list[tuple[int, tuple[str, ...]]]:
    """The units a request's plans are scored in: ``(plan index, sub-plan)``, in order.

    A plan of at most ``unit_chars`` characters (distinct pieces) is one unit, itself. A longer plan is cut into
    consecutive slices of its distinct pieces, each of at most ``unit_chars`` characters (a piece longer than that
    is a slice of its own, or, with the scorer's ``windows``, is replaced by its token windows first:
    :func:`window_pieces`), the whole text's slice first; each slice is scored as a plan and the slices are
    :func:`bot.core.pieces.combine`-d (highest score per label), which equals the whole plan's scores. ``unit_chars
    <= 0`` never cuts.
    """
    out: list[tuple[int, tuple[str, ...]]] = []
    for i, plan in enumerate(plans):
        pieces = tuple(dict.fromkeys(plan))
        if unit_chars <= 0 or sum(map(len, pieces)) <= unit_chars:
            out.append((i, plan))
            continue
        if windows is not None:
            pieces = tuple(dict.fromkeys(w for p in pieces for w in window_pieces(p, unit_chars, windows)))
        current: list[str] = []
        size = 0
        for piece in pieces:
            if current and size + len(piece) > unit_chars:
                out.append((i, tuple(current)))
                current, size = [], 0
            current.append(piece)
            size += len(piece)
        out.append((i, tuple(current)))
    return out


@dataclass
class BatchStats:
    """Counters of what the batcher did (also exported to ``/metrics``).

    Attributes:
        batches: Forward passes (``score_plans`` calls) made.
        requests: Requests served (counted in the pass that completed them).
        largest: Most requests one pass held.
        sizes: ``(requests held, distinct texts)`` of the last 1,000 passes.
        split: Requests scored over more than one pass.
    """

    batches: int = 0
    requests: int = 0
    largest: int = 0
    sizes: list[tuple[int, int]] = field(default_factory=list)
    split: int = 0


class MicroBatcher:
    """Scores plans for many concurrent callers in shared, bounded forward passes (see the module docstring for
    how a pass is formed).

    The refill wait: callers that keep a fixed number of requests in flight (16 clients, each sending again once
    answered) are answered in alternating groups that nothing evens out, down to one request and fifteen, and a
    batch of one costs the model several times more per message than a batch of sixteen. So once the first
    request of a batch is there, the batcher waits for as many requests as the previous batch answered (those
    callers' next requests), at most ``refill_share`` of the previous batch's model time and at most ``refill_s``,
    then scores what it has: the model idles at most a tenth of its time when the callers do not come back. A lone
    caller after a batch of one waits for nothing; under an open stream of requests the wait only follows a larger
    batch.

    Args:
        scorer: The loaded scorer.
        max_texts: Most distinct texts per pass (:data:`MAX_TEXTS`); a single unit with more is scored alone.
        max_wait_s: Seconds to wait for more requests after the first one arrives (0: none).
        refill_s: Seconds to wait, at most, for as many requests as the previous batch answered
            (:data:`REFILL_S`; 0: never).
        refill_share: ... and at most this share of the previous batch's model time (:data:`REFILL_SHARE`).
        pass_chars: Characters of texts per pass at most (:data:`PASS_CHARS`; 0: no bound but ``max_texts``).
        unit_chars: A plan of more characters is scored in slices (:func:`units`, :data:`UNIT_CHARS`; 0: never
            sliced), a long text of it in its token windows when the scorer has ``windows``. Ignored (never
            sliced) for a scorer with ``route``.
        observe: Called after each pass with ``(requests, texts, seconds)`` (metrics).
        workers: Passes scored at once, each in its own worker thread (1: one at a time, the scorer is only ever
            called from one thread). More than 1 needs a scorer that may be called from several threads at once
            (ONNX Runtime's ``session.run`` may) and, to gain, fewer intra-op threads per call
            (``MODBOT_ONNX_THREADS``); the next pass is formed while the others are scored.

    Raises:
        ValueError: ``workers`` is below 1.
    """

    def __init__(self, scorer: Scorer, *, max_texts: int = MAX_TEXTS, max_wait_s: float = 0.0,
                 refill_s: float = REFILL_S, refill_share: float = REFILL_SHARE, pass_chars: int = PASS_CHARS,
                 unit_chars: int = UNIT_CHARS, observe: Callable[[int, int, float], None] | None = None,
                 workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers {workers}: expected 1 or more")
        self.scorer = scorer
        self.workers = workers
        self.max_texts = max_texts
        self.max_wait_s = max_wait_s
        self.refill_s = refill_s
        self.refill_share = refill_share
        self.pass_chars = pass_chars
        self.unit_chars = 0 if getattr(scorer, "route", None) is not None else unit_chars
        #: The scorer's token windows (optional on a scorer: :func:`window_pieces`); a long text is cut into them.
        self.windows: Callable[[str], list[str]] | None = getattr(scorer, "windows", None) if self.unit_chars else None
        self._answered = 0  # requests the last batch answered: the refill target
        self._last_s = 0.0  # model seconds of the last batch (all its passes)
        self.observe = observe
        self.stats = BatchStats()
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="modbot-serve-score")
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._waiting: list[_Job] = []  # taken from the queue, work left, in arrival order
        self._seq = 0
        self._busy = 0  # passes being scored
        self._running: set[asyncio.Task[None]] = set()
        self._queued_chars = 0  # work of the requests still on the queue (not yet in _waiting)
        self._rate = 0.0  # characters of distinct texts scored per second of one pass's model time (EWMA)

    @property
    def depth(self) -> int:
        """Requests waiting for a pass (not counting the pass being scored; a request scored in slices counts
        while slices of it are left)."""
        return self._queue.qsize() + len(self._waiting)

    def backlog_chars(self) -> int:
        """Characters of work waiting for a pass (queued requests and what is left of those scored in slices)."""
        return sum(j.left for j in self._waiting if not j.future.done()) + self._queued_chars

    def wait_estimate_s(self, plans: Sequence[tuple[str, ...]]) -> float:
        """Seconds until ``plans`` would be scored if sent now: the waiting work plus theirs, at the rate the model
        has scored characters so far (the characters of a pass at least half full, ``pass_chars``, over its model
        seconds, averaged), over the workers; 0.0 until such a pass has been timed (a pass of a few short texts is
        mostly fixed cost, and would make a 20 KB comment look like minutes of work)."""
        if self._rate <= 0:
            return 0.0
        mine = sum(map(len, {p for plan in plans for p in plan}))
        return (self.backlog_chars() + mine) / (self._rate * self.workers)

    def start(self) -> None:
        """Start the collector task (call from the event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._collect(), name="modbot-serve-batcher")

    async def score(self, plans: Sequence[tuple[str, ...]], model: Scorer | None = None) -> list[Scores]:
        """Scores of ``plans`` (one per plan, in order; each the highest per label over the plan's pieces).

        Args:
            plans: ``(whole, *pieces)`` tuples.
            model: Score them with this scorer instead of the batcher's own (one of the two models of a scorer that
                routes languages, when the request says which language its text is in); ``None``: the batcher's.

        Raises:
            BatcherClosed: the service is draining.
            Whatever the scorer raised for the pass this request was in (``ScorerError``).
        """
        if self._closing:
            raise BatcherClosed("the service is shutting down")
        if not plans:
            return []
        fut: asyncio.Future[list[Scores]] = asyncio.get_running_loop().create_future()
        distinct = {p for plan in plans for p in plan}
        self._seq += 1
        job = _Job(list(plans), fut, len(distinct), sum(map(len, distinct)), self._seq, model=model)
        job.units = units(job.plans, self.unit_chars, self.windows)
        job.left = sum(_chars(sub) for _, sub in job.units)
        self._queue.put_nowait(job)
        self._queued_chars += job.left
        return await fut

    def _drain_queue(self) -> None:
        while True:
            try:
                job = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            self._waiting.append(self._from_queue(job))

    def _from_queue(self, job: _Job) -> _Job:
        """``job``, just taken off the queue: its work no longer counts as queued (it is in ``_waiting`` now)."""
        self._queued_chars -= job.left
        return job

    async def _gather(self) -> None:
        """Wait for work: at least one request, then the refill wait (see the class docstring)."""
        self._waiting = [j for j in self._waiting if not j.future.done()]  # a caller that gave up costs nothing
        if not self._waiting:
            self._waiting.append(self._from_queue(await self._queue.get()))
        now = time.monotonic()
        deadline, refill = now + self.max_wait_s, now + min(self.refill_s, self.refill_share * self._last_s)
        while True:
            self._drain_queue()
            until = max(deadline, refill) if len(self._waiting) < self._answered else deadline
            left = until - time.monotonic()
            if left <= 0:
                return
            try:
                async with asyncio.timeout(left):  # no task per wait, unlike wait_for
                    job = await self._queue.get()
            except TimeoutError:
                return
            self._waiting.append(self._from_queue(job))

    def _plan_pass(self) -> list[tuple[_Job, list[tuple[int, tuple[str, ...]]]]]:
        """The units of the next pass, per request (see the module docstring), taken off their requests: the
        requests with the least work left first, unit by unit, while the pass holds fewer than ``pass_chars``
        characters and at most ``max_texts`` distinct texts; then the oldest request's next unit if it got none."""
        waiting = [j for j in self._waiting if not j.future.done() and j.units]
        if not waiting:
            return []
        chosen: dict[int, tuple[_Job, list[tuple[int, tuple[str, ...]]]]] = {}
        seen: set[str] = set()
        used = 0

        def take(job: _Job, forced: bool) -> bool:
            nonlocal used
            sub = job.units[0][1]
            new = [p for p in dict.fromkeys(sub) if p not in seen]
            if not forced and seen and ((0 < self.pass_chars <= used) or len(seen) + len(new) > self.max_texts):
                return False
            seen.update(new)
            used += sum(map(len, new))
            chosen.setdefault(job.seq, (job, []))[1].append(job.units.pop(0))
            job.taken += 1
            job.left -= _chars(sub)
            return True

        for job in sorted(waiting, key=lambda j: (j.left, j.seq)):
            while job.units and take(job, forced=False):
                pass
        oldest = min(waiting, key=lambda j: j.seq)
        if oldest.seq not in chosen:  # the oldest request progresses in every pass, whatever arrived after it
            take(oldest, forced=True)
        self._waiting = [j for j in self._waiting if j.units and not j.future.done()]
        return sorted(chosen.values(), key=lambda c: c[0].seq)

    async def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        free = asyncio.Semaphore(self.workers)

        def done(task: asyncio.Task[None]) -> None:
            self._running.discard(task)
            self._busy -= 1
            free.release()
            if not task.cancelled() and task.exception() is not None:
                log.error("a scoring pass failed: %r", task.exception())

        while True:
            await free.acquire()  # a worker is free: form the next pass now, from what is waiting
            try:
                await self._gather()
                work = self._plan_pass()
            except BaseException:
                free.release()
                raise
            if not work:
                free.release()
                continue
            self._busy += 1
            task = loop.create_task(self._run(loop, work))
            self._running.add(task)
            task.add_done_callback(done)

    async def _run(self, loop: asyncio.AbstractEventLoop,
                   work: list[tuple[_Job, list[tuple[int, tuple[str, ...]]]]]) -> None:
        finishing = [j for j, _ in work if not j.units]
        self._answered = len(finishing)
        started = time.perf_counter()
        by_job = {j.seq: (j, u) for j, u in work}
        for wave in waves([j for j, _ in work]):
            await self._pass(loop, [by_job[j.seq] for j in wave])
        self._last_s = time.perf_counter() - started

    async def _pass(self, loop: asyncio.AbstractEventLoop,
                    work: list[tuple[_Job, list[tuple[int, tuple[str, ...]]]]]) -> None:
        """One ``score_plans`` call for ``work`` (units per request); each request whose last units these were gets
        its scores, and each request the scorer failed on gets the exception (its other units are dropped)."""
        work = [(j, u) for j, u in work if not j.future.done()]
        if not work:
            return
        subs = [sub for _, us in work for _, sub in us]
        texts = len({p for sub in subs for p in sub})
        groups: dict[int, tuple[Scorer, list[tuple[str, ...]]]] = {}  # by the scorer each request is scored with
        for job, us in work:
            model = job.model or self.scorer
            groups.setdefault(id(model), (model, []))[1].extend(sub for _, sub in us)
        started = time.perf_counter()
        try:
            by_model = await loop.run_in_executor(self._executor, _score_groups, list(groups.values()))
        except Exception as exc:  # noqa: BLE001 - each caller answers it (503 / on_scorer_error)
            log.error("scorer failed on a pass of %d texts: %s: %s", texts, type(exc).__name__, exc)
            if len(work) == 1:
                job = work[0][0]
                job.units.clear()
                if not job.future.done():
                    job.future.set_exception(exc)
                return
            # one caller's text must not fail the callers batched with it: score each request on its own
            for item in work:
                await self._pass(loop, [item])
            return
        seconds = time.perf_counter() - started
        chars = sum(len(p) for p in {p for sub in subs for p in sub})
        if seconds > 0 and chars >= self.pass_chars // 2:  # a pass of a few short texts is mostly fixed cost
            rate = chars / seconds
            self._rate = rate if self._rate <= 0 else 0.8 * self._rate + 0.2 * rate
        done = 0
        for job, us in work:
            scored = by_model[id(job.model or self.scorer)]
            for index, sub in us:
                job.parts.setdefault(index, []).append(scored[sub])
            job.taken -= len(us)
            if not job.units and job.taken == 0 and not job.future.done():
                if len(us) != sum(len(v) for v in job.parts.values()):
                    self.stats.split += 1
                job.future.set_result([combine(job.parts[i]) for i in range(len(job.plans))])
                done += 1
        self.stats.batches += 1
        self.stats.requests += done
        self.stats.largest = max(self.stats.largest, len(work))
        self.stats.sizes = [*self.stats.sizes[-999:], (len(work), texts)]
        if self.observe is not None:
            self.observe(len(work), texts, seconds)

    async def close(self, *, abandon: bool = False) -> None:
        """Refuse new work, let queued work finish (or, with ``abandon``, fail every request still waiting with
        :class:`BatcherClosed` at once and finish only the passes being scored), stop the collector and the worker
        thread."""
        self._closing = True
        if abandon:
            self._drain_queue()
            for job in self._waiting:
                if not job.future.done():
                    job.future.set_exception(BatcherClosed("the service is shutting down"))
            self._waiting = []
        while (self.depth or self._busy) and self._task is not None and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        for task in list(self._running):
            task.cancel()
        self._executor.shutdown(wait=True)


def _score_groups(groups: Sequence[tuple[Scorer, list[tuple[str, ...]]]]) -> dict[int, dict[tuple[str, ...], Scores]]:
    """``{id(scorer): score_plans(scorer, plans)}`` for each ``(scorer, plans)`` of one pass (worker thread).

    Raises:
        Whatever a scorer raises (``ScorerError``).
    """
    return {id(model): score_plans(model, plans) for model, plans in groups}


def waves(jobs: Sequence[_Job], long_chars: int = LONG_CHARS) -> list[list[_Job]]:
    """The calls of one pass, in order: its short requests together, then its long ones (more than ``long_chars``
    characters of distinct texts) together; one call when the pass has only one kind. A long text's token windows
    cost a short request its answer time only in a call of their own, never while it waits beside them; the
    model's work is the same (its calls are cut by length anyway: ``bot.scoring.onnx_scorer.plan_calls``).
    """
    short = [j for j in jobs if j.chars <= long_chars]
    long = [j for j in jobs if j.chars > long_chars]
    return [w for w in (short, long) if w]
