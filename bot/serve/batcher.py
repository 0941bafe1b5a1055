"""Micro-batching: the plans of all requests waiting while the model is busy are scored in one forward pass.

Every request puts its plans (:func:`bot.core.pieces.scoring_pieces` tuples) on one queue. A single collector task
takes everything queued (up to ``max_texts`` distinct texts), scores it with one
:func:`bot.core.pieces.score_plans` call in one worker thread, and resolves each request's future; a batch that
holds long requests (:data:`LONG_CHARS`) as well as short ones is scored in two passes, the short requests first
(:func:`waves`), so their answers do not wait for a long text's token windows. While a pass runs, new requests
queue up and form the next batch: under load the batch grows by itself, and a lone request waits for no timer
(``max_wait_s`` defaults to 0). The scorer is only ever called from that one thread. When the scorer
fails on a batch of several requests, each request is scored again on its own, so a text the model fails on fails
only the request that sent it.

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
from bot.core.pieces import score_plans
from bot.core.ports import Scorer

log = logging.getLogger(__name__)

#: Distinct texts per forward pass at most (the detoxify scorer chunks by 64 inside; 256 bounds one batch's latency).
MAX_TEXTS = 256
#: A request whose distinct texts hold more characters than this is a long one: scored after the short requests
#: of its batch, in a pass of its own, so they are answered without waiting for its token windows. Counted over the
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


@dataclass
class _Job:
    plans: list[tuple[str, ...]]
    future: asyncio.Future[list[Scores]]
    texts: int = 0
    chars: int = 0


@dataclass
class BatchStats:
    """Counters of what the batcher did (also exported to ``/metrics``).

    Attributes:
        batches: Forward passes (``score_plans`` calls) made.
        requests: Requests served.
        largest: Most requests served by one batch.
        sizes: ``(requests, texts)`` of the last 1,000 batches.
    """

    batches: int = 0
    requests: int = 0
    largest: int = 0
    sizes: list[tuple[int, int]] = field(default_factory=list)


class MicroBatcher:
    """Scores plans for many concurrent callers, one ``score_plans`` call per batch (two when it holds long and
    short requests: :func:`waves`).

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
        max_texts: Most distinct texts per batch (:data:`MAX_TEXTS`); a single request with more is scored alone.
        max_wait_s: Seconds to wait for more requests after the first one arrives (0: none).
        refill_s: Seconds to wait, at most, for as many requests as the previous batch answered
            (:data:`REFILL_S`; 0: never).
        refill_share: ... and at most this share of the previous batch's model time (:data:`REFILL_SHARE`).
        observe: Called after each batch with ``(requests, texts, seconds)`` (metrics).
    """

    def __init__(self, scorer: Scorer, *, max_texts: int = MAX_TEXTS, max_wait_s: float = 0.0,
                 refill_s: float = REFILL_S, refill_share: float = REFILL_SHARE,
                 observe: Callable[[int, int, float], None] | None = None) -> None:
        self.scorer = scorer
        self.max_texts = max_texts
        self.max_wait_s = max_wait_s
        self.refill_s = refill_s
        self.refill_share = refill_share
        self._answered = 0  # requests the last batch answered: the refill target
        self._last_s = 0.0  # model seconds of the last batch (all its passes)
        self.observe = observe
        self.stats = BatchStats()
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="modbot-serve-score")
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._carry: _Job | None = None
        self._busy = False

    @property
    def depth(self) -> int:
        """Requests waiting for a batch (not counting the batch being scored)."""
        return self._queue.qsize() + (1 if self._carry is not None else 0)

    def start(self) -> None:
        """Start the collector task (call from the event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._collect(), name="modbot-serve-batcher")

    async def score(self, plans: Sequence[tuple[str, ...]]) -> list[Scores]:
        """Scores of ``plans`` (one per plan, in order; each the highest per label over the plan's pieces).

        Raises:
            BatcherClosed: the service is draining.
            Whatever the scorer raised for the batch this request was in (``ScorerError``).
        """
        if self._closing:
            raise BatcherClosed("the service is shutting down")
        if not plans:
            return []
        fut: asyncio.Future[list[Scores]] = asyncio.get_running_loop().create_future()
        distinct = {p for plan in plans for p in plan}
        job = _Job(list(plans), fut, len(distinct), sum(map(len, distinct)))
        self._queue.put_nowait(job)
        return await fut

    async def _take(self) -> list[_Job]:
        first = self._carry or await self._queue.get()
        self._carry = None
        jobs, texts = [first], first.texts
        now = time.monotonic()
        deadline, refill = now + self.max_wait_s, now + min(self.refill_s, self.refill_share * self._last_s)
        while True:
            try:
                job = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                until = max(deadline, refill) if len(jobs) < self._answered else deadline
                left = until - time.monotonic()
                if left <= 0:
                    break
                try:
                    job = await asyncio.wait_for(self._queue.get(), left)
                except TimeoutError:
                    break
            if texts + job.texts > self.max_texts:
                self._carry = job
                break
            jobs.append(job)
            texts += job.texts
        return jobs

    async def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            jobs = await self._take()
            self._busy = True
            try:
                await self._run(loop, jobs)
            finally:
                self._busy = False

    async def _run(self, loop: asyncio.AbstractEventLoop, jobs: list[_Job]) -> None:
        jobs = [j for j in jobs if not j.future.done()]  # a caller that gave up (timeout) costs nothing
        self._answered = len(jobs)
        started = time.perf_counter()
        for wave in waves(jobs):
            await self._pass(loop, wave)
        self._last_s = time.perf_counter() - started

    async def _pass(self, loop: asyncio.AbstractEventLoop, jobs: list[_Job]) -> None:
        """One ``score_plans`` call for ``jobs``; each job's future gets its scores or the scorer's exception."""
        jobs = [j for j in jobs if not j.future.done()]
        if not jobs:
            return
        plans = [plan for j in jobs for plan in j.plans]
        texts = len({p for plan in plans for p in plan})
        started = time.perf_counter()
        try:
            scored = await loop.run_in_executor(self._executor, score_plans, self.scorer, plans)
        except Exception as exc:  # noqa: BLE001 - each caller answers it (503 / on_scorer_error)
            log.error("scorer failed on a batch of %d texts: %s: %s", texts, type(exc).__name__, exc)
            if len(jobs) == 1:
                if not jobs[0].future.done():
                    jobs[0].future.set_exception(exc)
                return
            # one caller's text must not fail the callers batched with it: score each request on its own
            for j in jobs:
                await self._pass(loop, [j])
            return
        seconds = time.perf_counter() - started
        self.stats.batches += 1
        self.stats.requests += len(jobs)
        self.stats.largest = max(self.stats.largest, len(jobs))
        self.stats.sizes = [*self.stats.sizes[-999:], (len(jobs), texts)]
        if self.observe is not None:
            self.observe(len(jobs), texts, seconds)
        for j in jobs:
            if not j.future.done():
                j.future.set_result([scored[plan] for plan in j.plans])

    async def close(self) -> None:
        """Refuse new work, let queued work finish, stop the collector and the worker thread."""
        self._closing = True
        while (self.depth or self._busy) and self._task is not None and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        self._executor.shutdown(wait=True)


def waves(jobs: Sequence[_Job], long_chars: int = LONG_CHARS) -> list[list[_Job]]:
    """The forward passes of one batch, in order: its short requests together, then its long ones (more than
    ``long_chars`` characters of distinct texts) together; one pass when the batch has only one kind. A long text's
    token windows cost a short request its answer time only in a pass of their own, never while it waits beside
    them; the model's work is the same (its calls are cut by length anyway: ``bot.scoring.onnx_scorer.plan_calls``).
    """
    short = [j for j in jobs if j.chars <= long_chars]
    long = [j for j in jobs if j.chars > long_chars]
    return [w for w in (short, long) if w]
