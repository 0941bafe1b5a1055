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
from bot.serve.batcher import LONG_CHARS, PASS_CHARS, REFILL_S, UNIT_CHARS, MicroBatcher, units
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


def _long(k: int) -> str:
    """A distinct long chat message (about 1,700 characters with its one sentence piece)."""
    return f"Report {k}: " + f"the build number {k} failed again on the arm runners after the cache reset " * 21 + \
        f"and I am done with server {k}. That is the last time I touch its nightly jobs."


async def test_a_run_of_long_requests_does_not_hold_the_short_ones_behind_it():
    """Four long requests queued before three short ones: passes are bounded by ``pass_chars`` (plus the unit that
    reaches it), the short requests go first (least work left) and are answered before the second long request,
    every long one is scored over several passes, and every caller gets the scores of its plan scored alone."""
    scorer = _Recording()
    batcher = MicroBatcher(scorer, pass_chars=1_000, unit_chars=1_000)
    batcher.start()
    longs = [_long(k) for k in range(4)]
    assert all(sum(map(len, set(scoring_pieces(t)))) > 1_500 for t in longs)
    answered: dict[str, float] = {}

    async def ask(text: str) -> Scores:
        (scores,) = await batcher.score([scoring_pieces(text)])
        answered[text] = time.monotonic()
        return scores

    blocker = asyncio.create_task(ask("hello there"))
    await asyncio.sleep(0.01)
    tasks = [asyncio.create_task(ask(t)) for t in [*longs, *SHORT]]
    results = await asyncio.gather(*tasks)
    await blocker
    await batcher.close()

    largest_unit = max(len(p) for t in longs for p in scoring_pieces(t))
    assert all(sum(map(len, texts)) <= 1_000 + largest_unit for texts, _ in scorer.passes)
    assert max(answered[t] for t in SHORT) < sorted(answered[t] for t in longs)[1]
    assert batcher.stats.split == 4  # each long request was scored in slices over two passes or more
    alone = score_plans(FakeScorer(ABUSE, languages=("en",)), [scoring_pieces(t) for t in [*longs, *SHORT]])
    assert [r.values for r in results] == [alone[scoring_pieces(t)].values for t in [*longs, *SHORT]]
    assert batcher.stats.requests == 8 and batcher.depth == 0


async def test_a_long_request_progresses_under_a_stream_of_short_ones():
    """With passes so small that short requests alone would fill every one (and always have less work left), the
    oldest waiting request still gets a slice in each pass: a long request sent while eight callers keep sending
    short ones is answered within a few passes, not after the stream (shortest-first alone would starve it)."""
    scorer = _Recording()
    batcher = MicroBatcher(scorer, pass_chars=40, unit_chars=400, refill_s=0.0)
    batcher.start()
    long_plan = scoring_pieces(_long(7))
    slices = len(units([long_plan], 400))
    assert slices >= 3
    stop = False
    shorts = 0

    async def client(n: int) -> None:
        nonlocal shorts
        while not stop:
            await batcher.score([scoring_pieces(f"thanks {n}, see you tomorrow")])
            shorts += 1

    callers = [asyncio.create_task(client(n)) for n in range(8)]
    await asyncio.sleep(0.01)
    (scores,) = await asyncio.wait_for(batcher.score([long_plan]), 30)
    passes_then = len(scorer.passes)
    stop = True
    await asyncio.gather(*callers)
    await batcher.close()
    # before it is the oldest: at most one pass per request sent before it; then a pass (two calls: a short wave
    # and its slice) per slice
    assert passes_then <= 8 + 2 * slices
    assert shorts > 0
    assert scores.values == score_plans(FakeScorer(ABUSE, languages=("en",)), [long_plan])[long_plan].values


def test_units_slice_a_long_plan_whole_text_first_and_leave_short_plans_whole():
    """A plan within ``unit_chars`` is one unit, itself; a longer one is cut into consecutive slices of its distinct
    pieces, none over the bound unless a single piece is, the whole text's slice first, together every piece once;
    ``unit_chars=0`` never cuts."""
    short, long = scoring_pieces(SHORT[2]), scoring_pieces(_long(3))
    out = units([short, long, short], 300)
    assert out[0] == (0, short) and out[-1] == (2, short)
    slices = [sub for i, sub in out if i == 1]
    assert len(slices) > 2 and slices[0][0] == long[0]
    assert [p for sub in slices for p in sub] == list(dict.fromkeys(long))
    assert all(sum(map(len, sub)) <= 300 or len(sub) == 1 for sub in slices)
    assert units([long], 0) == [(0, long)]
    assert units([], 300) == []


class _Routed(FakeScorer):
    """A scorer that routes whole plans (as :class:`bot.scoring.routing.LanguageRoutedScorer`), all to one model."""

    def __init__(self) -> None:
        super().__init__(ABUSE, languages=("en",))
        self.model = _Recording()

    def route(self, plan: Sequence[str]) -> _Recording:
        return self.model


async def test_a_routing_scorer_never_has_a_message_cut_into_slices():
    """A scorer that picks a model per message (``route``) gets each message's plan whole, in one call."""
    scorer = _Routed()
    batcher = MicroBatcher(scorer, pass_chars=100, unit_chars=100)
    batcher.start()
    plan = scoring_pieces(_long(5))
    await batcher.score([plan])
    await batcher.close()
    assert batcher.unit_chars == 0
    assert [set(texts) for texts, _ in scorer.model.passes] == [set(plan)]


async def test_slices_of_a_long_message_give_the_real_models_scores_of_the_whole(embedded_scorer):
    """The real model: a long message with one abusive sentence, scored in slices of 200 characters over several
    passes between other requests, gets the scores its plan gets in one ``score_plans`` call (within float noise
    of batching), and so does each short request."""
    text = ("".join(f"Step {k} of the release pipeline failed again on the arm runners today. " for k in range(8)) +
            "Honestly you are a worthless idiot and everyone in this channel knows it. " +
            "".join(f"Artifact {k} is uploaded to the usual bucket, please check it tomorrow. " for k in range(4)))
    plans = [scoring_pieces(text), *(scoring_pieces(t) for t in SHORT)]
    assert len(units(plans[:1], 200)) >= 5
    batcher = MicroBatcher(embedded_scorer, pass_chars=300, unit_chars=200)
    batcher.start()
    got = await asyncio.gather(*(batcher.score([p]) for p in plans))
    await batcher.close()
    assert batcher.stats.split == 1 and batcher.stats.batches >= 4
    alone = score_plans(embedded_scorer, plans)
    for (scores,), plan in zip(got, plans, strict=True):
        assert scores.model == alone[plan].model and set(scores.values) == set(alone[plan].values)
        assert all(abs(scores.values[k] - alone[plan].values[k]) < 1e-5 for k in scores.values)
    assert got[0][0].values["insult"] > 0.5  # the abusive sentence's score, not the diluted whole text's


def test_pass_options_are_checked_and_reach_the_service_config():
    """``--batch-chars`` / ``--batch-slice-chars`` default to the batcher's constants and refuse negative counts."""
    from bot.serve.options import build_parser, check_options
    from bot.settings import Settings

    args = build_parser().parse_args([])
    assert (args.batch_chars, args.batch_slice_chars) == (PASS_CHARS, UNIT_CHARS)
    for flag in ("--batch-chars", "--batch-slice-chars"):
        with pytest.raises(ValueError, match=flag):
            check_options(build_parser().parse_args([flag, "-1"]), Settings.from_env())
    check_options(build_parser().parse_args(["--batch-chars", "0", "--batch-slice-chars", "0"]), Settings.from_env())
    from bot.serve.options import serve_workers

    assert build_parser().parse_args([]).batch_workers is None  # serve_workers on ONNX Runtime, else 1
    assert [serve_workers(n) for n in (1, 2, 3, 16)] == [1, 2, 2, 2]
    for bad in ("0", "65"):
        with pytest.raises(ValueError, match="--batch-workers"):
            check_options(build_parser().parse_args(["--batch-workers", bad]), Settings.from_env())
    check_options(build_parser().parse_args(["--batch-workers", "2"]), Settings.from_env())


class _Overlapping(_Recording):
    """:class:`_Recording` that also counts how many forward passes run at the same moment (thread-safe)."""

    def __init__(self) -> None:
        import threading

        super().__init__()
        self._lock = threading.Lock()
        self.now = 0
        self.most = 0

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            return super().score_batch(texts)
        finally:
            with self._lock:
                self.now -= 1


async def test_two_workers_score_two_passes_at_once_and_slices_still_combine_to_the_whole():
    """With ``workers=2`` two passes are in the model at the same time (never more), and a long request whose
    slices land in passes scored concurrently (their scores come back in either order) is answered once, with its
    whole plan's scores; every short request gets its own."""
    scorer = _Overlapping()
    batcher = MicroBatcher(scorer, pass_chars=40, unit_chars=400, refill_s=0.0, workers=2)
    batcher.start()
    long_plan = scoring_pieces(_long(7))
    assert len(units([long_plan], 400)) >= 3
    shorts = [scoring_pieces(t) for t in [*SHORT * 4, "what a freak", "hello there"]]
    results = await asyncio.wait_for(asyncio.gather(batcher.score([long_plan]), *(batcher.score([p]) for p in shorts)),
                                     30)
    await batcher.close()
    reference = score_plans(FakeScorer(ABUSE, languages=("en",)), [long_plan, *shorts])
    assert scorer.most == 2
    assert [r[0].values for r in results] == [reference[p].values for p in [long_plan, *shorts]]
    with pytest.raises(ValueError, match="workers 0"):
        MicroBatcher(scorer, workers=0)


async def test_a_long_text_is_cut_into_the_models_own_windows_and_scores_as_the_whole(embedded_scorer):
    """The real model: one long text without sentence breaks (a single piece of several token windows) is cut into
    units of its windows, scored in several passes by two workers, and gets the scores the scorer gives the whole
    text (within float noise of batching); a window the scorer would cut again keeps the piece whole."""
    from bot.serve.batcher import window_pieces

    text = " ".join(f"step {k} of the release pipeline failed again on the arm runners so honestly you are a "
                    "worthless idiot" if k == 30 else f"step {k} of the release pipeline failed on the arm runners"
                    for k in range(40))
    plan = scoring_pieces(text)
    assert len(plan) == 1 and len(embedded_scorer.windows(text)) >= 3
    cut = units([plan], 600, embedded_scorer.windows)
    assert len(cut) >= 3 and [p for _, sub in cut for p in sub] == embedded_scorer.windows(text)
    assert units([plan], 600) == [(0, plan)]  # without the scorer's windows the single piece stays whole
    batcher = MicroBatcher(embedded_scorer, pass_chars=600, unit_chars=600, workers=2)
    batcher.start()
    (got,) = await batcher.score([plan])
    await batcher.close()
    assert batcher.stats.split == 1 and batcher.stats.batches >= 3
    whole = embedded_scorer.score(text)
    assert all(abs(got.values[k] - whole.values[k]) < 1e-5 for k in whole.values)
    assert got.values["insult"] > 0.5  # the window with the insult decides, as in the whole text's windows

    def rewindows(t: str) -> list[str]:  # a scorer that would cut its own windows again
        return [t[: len(t) // 2], t[len(t) // 2 :]]

    assert window_pieces(text, 600, rewindows) == [text]
    assert window_pieces("short text", 600, embedded_scorer.windows) == ["short text"]
