"""The service's micro-batcher in process: a batch with a long request is scored in two passes, short requests
first, and every request gets its own plan's scores whichever pass it was in. The scorer is the keyword fake
(:class:`tests.fakes.FakeScorer`) with a fixed time per forward pass, as the service tests use; the batcher, its
queue, worker thread and :func:`bot.core.pieces.score_plans` are the real ones."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from bot.core.models import Scores
from bot.core.pieces import score_plans, scoring_pieces
from bot.serve.batcher import LONG_CHARS, REFILL_S, MicroBatcher
from tests.fakes import ABUSE, FakeScorer


class _Recording(FakeScorer):
    """The keyword fake, 50 ms per forward pass, recording each pass's texts and when it ended."""

    def __init__(self) -> None:
        super().__init__(ABUSE, languages=("en",))
        self.passes: list[tuple[tuple[str, ...], float]] = []

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        time.sleep(0.05)
        out = super().score_batch(texts)
        self.passes.append((tuple(texts), time.monotonic()))
        return out


LONG = "I spent the whole weekend setting up the new build server and it still fails. " * 20  # > LONG_CHARS
SHORT = ["you are an idiot", "thanks, see you tomorrow!", "shut up you moron. I mean it."]


async def test_short_requests_are_answered_before_a_long_one_in_the_same_batch():
    """Requests queued while the model is busy form one batch; its long request is scored in a pass after the short
    ones, whose callers have their answers by the time that pass starts, and every caller gets the scores its own
    plan gets when scored alone."""
    assert len(LONG) > LONG_CHARS
    scorer = _Recording()
    batcher = MicroBatcher(scorer)
    batcher.start()
    answered: dict[str, float] = {}

    async def ask(text: str) -> Scores:
        (scores,) = await batcher.score([scoring_pieces(text)])
        answered[text] = time.monotonic()
        return scores

    blocker = asyncio.create_task(ask("hello there"))  # occupies the model so the rest queue up as one batch
    await asyncio.sleep(0.01)
    tasks = [asyncio.create_task(ask(t)) for t in [LONG, *SHORT]]
    results = await asyncio.gather(blocker, *tasks)
    await batcher.close()

    assert len(scorer.passes) == 3  # the blocker, then the batch in two passes
    short_pass, long_pass = scorer.passes[1][0], scorer.passes[2][0]
    assert set(short_pass) == {p for t in SHORT for p in scoring_pieces(t)}
    assert set(long_pass) == set(scoring_pieces(LONG))
    long_started = scorer.passes[2][1] - 0.05
    assert all(answered[t] <= long_started + 0.03 for t in SHORT)
    assert answered[LONG] >= scorer.passes[2][1]
    alone = score_plans(FakeScorer(ABUSE, languages=("en",)), [scoring_pieces(t) for t in [LONG, *SHORT]])
    assert [r.values for r in results[1:]] == [alone[scoring_pieces(t)].values for t in [LONG, *SHORT]]
    assert results[2].values["insult"] > 0.5  # "you are an idiot": the fake's rule applies
    assert batcher.stats.batches == 3 and batcher.stats.requests == 5


async def test_a_batch_of_one_kind_is_one_pass():
    """Short requests only (or long ones only) are scored in one forward pass, as before."""
    scorer = _Recording()
    batcher = MicroBatcher(scorer)
    batcher.start()
    blocker = asyncio.create_task(batcher.score([scoring_pieces("hello there")]))
    await asyncio.sleep(0.01)
    await asyncio.gather(blocker, *(batcher.score([scoring_pieces(t)]) for t in SHORT))
    await batcher.close()
    assert len(scorer.passes) == 2


async def _closed_loop(refill_s: float, clients: int = 8, rounds: int = 6) -> list[int]:
    """Requests per batch when ``clients`` callers each send again 2 ms after their answer, the first caller
    starting 10 ms before the others (so the first batches are one request and seven)."""
    scorer = _Recording()
    batcher = MicroBatcher(scorer, refill_s=refill_s, refill_share=1.0)
    batcher.start()

    async def client(n: int) -> None:
        await asyncio.sleep(0 if n == 0 else 0.01)
        for _ in range(rounds):
            await batcher.score([scoring_pieces(f"message {n}: thanks, see you tomorrow")])
            await asyncio.sleep(0.002)

    await asyncio.gather(*(client(n) for n in range(clients)))
    await batcher.close()
    return [requests for requests, _ in batcher.stats.sizes]


async def test_a_batch_waits_for_as_many_requests_as_the_last_one_answered():
    """Callers keeping a fixed number of requests in flight: with the refill wait, batches of one request and seven
    turn into batches of all eight after the first two; without it they keep alternating."""
    refilled = await _closed_loop(refill_s=0.5)
    assert refilled[:2] == [1, 7]
    assert all(n == 8 for n in refilled[2:-1]), refilled  # the last batch may be the stragglers
    without = await _closed_loop(refill_s=0.0)
    assert max(without) < 8 and len(without) > len(refilled)


async def test_a_lone_caller_waits_for_no_refill():
    """One request at a time (the previous batch answered one): no wait, even with a 500 ms refill window."""
    scorer = _Recording()
    batcher = MicroBatcher(scorer, refill_s=0.5, refill_share=10.0)
    batcher.start()
    for _ in range(3):
        started = time.monotonic()
        await batcher.score([scoring_pieces("you are an idiot")])
        assert time.monotonic() - started < 0.3  # a 50 ms pass, not the 500 ms window
    await batcher.close()
    assert [n for n, _ in batcher.stats.sizes] == [1, 1, 1]


def test_refill_option_is_checked_and_reaches_the_batcher():
    """``--batch-refill-ms`` outside 0-1000 is refused with the flag named; the default (unset) is
    :data:`bot.serve.batcher.REFILL_S`."""
    from bot.serve.options import build_parser, check_options
    from bot.settings import Settings

    settings = Settings.from_env()
    for bad in ("-1", "nan", "1001"):
        with pytest.raises(ValueError, match="--batch-refill-ms"):
            check_options(build_parser().parse_args(["--batch-refill-ms", bad]), settings)
    assert build_parser().parse_args([]).batch_refill_ms is None
    assert MicroBatcher(FakeScorer(ABUSE)).refill_s == REFILL_S
