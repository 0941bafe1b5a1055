"""Score a message as a whole *and* sentence by sentence, so benign padding cannot dilute an attack.

Why: the embedded model (and any classifier that pools a whole text into one vector) scores the message as a
whole. One benign sentence in front of an attack is enough to hide it: with model ``143ea79a4068``,
"you will never be a real woman." scores identity_attack 0.98 alone and 0.01 after "I spent the weekend setting up
the new build server ...". On the HateCheck dev file, one benign chat sentence before every case drops hateful
recall at the review tier from 89% to 44% with that model (``python -m bot eval hatecheck FILE --pad``, see
docs/model-card.md).

So the bot scores the whole text (for context: counter-speech, quotes) plus each sentence of a multi-sentence
message, and keeps per label the highest score (:func:`combine`). The whole text still decides for one-sentence
messages, which are most of chat. What is *not* split, so quoting hate in order to condemn it keeps its context:

- text inside double quotes (``"..."``, ``“...”``, ``«...»``, also over several lines) is not cut into separate
  pieces, unless the quote holds more than :data:`MAX_QUOTE_BREAKS` sentence breaks (quoted abuse is short; a whole
  message wrapped in quotes must not switch the pieces off);
- Markdown block quotes (``> ...``; ``>>> ...`` quotes every line after it, as on Discord), fenced code blocks and
  the line right after a line ending in a colon ("he posted this:") are scored only as part of the whole message,
  never alone, unless the message has no other lines (quoting only oneself is one's own words);
- pieces of fewer than :data:`MIN_PIECE_WORDS` words (``"Worthless."``, ``"Maya, ignore them."``) are not scored
  alone: the model is unstable on very short out-of-context strings (the supportive "Maya, ignore them. we love you"
  was flagged for toxicity through its first three words). On the padded HateCheck file this costs 0.6 points of
  hateful recall against a 2-word minimum with model ``c28d0016643b`` (87.1% vs 87.7%; 79.9% without pieces).

Layer: ``bot.core`` (no platform or model imports). Used by the moderation service, ``python -m bot eval`` and the
benchmarks, so every path scores messages the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from bot.core.models import Scores
from bot.core.normalize import MAX_CHARS, for_scoring, visible
from bot.core.ports import Scorer

#: Sentence pieces scored per message besides the whole text (a cost bound; the whole text still covers the rest).
MAX_PIECES = 32
#: Pieces shorter than this (in words) are not scored alone (see the module docstring for the measured trade-off).
MIN_PIECE_WORDS = 4
#: A quoted span keeps its sentences together only if it has at most this many sentence breaks inside: quoted abuse
#: is short, and a whole message wrapped in quotes must not switch the sentence pieces off.
MAX_QUOTE_BREAKS = 2

_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|«[^»]*»')
# A run of end marks is taken whole (possessive) and only from its first mark (lookbehind): the plain
# ``[.!?…]+...(\s+)`` tried again from every mark of a run with no space after it, quadratic in the run's length
# (4,000 dots: 0.34 s; a 20 KB comment of them held the service's event loop). Same matches.
_SENTENCE_END = re.compile(r"(?<![.!?…])[.!?…]++[\"”’»)\]]*+(\s+)")
_RAW_QUOTED = re.compile(r'"[^"\n]*\n[^"]*"|“[^”\n]*\n[^”]*”')
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)


def _sentences(text: str) -> list[str]:
    """Split single-spaced ``text`` after ``. ! ? …`` (and any closing quote or bracket) followed by a space, never
    inside a quoted span of at most :data:`MAX_QUOTE_BREAKS` sentence breaks."""
    cuts = [(m.start(1), m.end(1)) for m in _SENTENCE_END.finditer(text)]
    quoted = []
    for m in _QUOTED.finditer(text):
        a, b = m.span()
        if sum(a < c < b for c, _ in cuts) <= MAX_QUOTE_BREAKS:
            quoted.append((a, b))
    out: list[str] = []
    start = 0
    for cut, end in cuts:
        if any(a < cut < b for a, b in quoted):
            continue
        out.append(text[start:cut])
        start = end
    out.append(text[start:])
    return [s for s in (p.strip() for p in out) if s]


def _own_lines(text: str) -> list[str]:
    """The lines of ``text`` that are the author's own words, to be scored alone.

    Left out (they are judged only within the whole message): Markdown block quotes (``> ...``; ``>>> ...`` quotes
    every line after it), fenced code blocks (a pasted log or message), and the line right after a line ending in a
    colon ("he posted this:"). A double-quoted span over several lines stays one line. When *every* line would be
    left out, none is: a message that quotes nothing but itself is the author's own words.
    """
    text = _FENCE.sub(lambda m: "\n" + "\n".join("\x00" + ln for ln in m.group().splitlines()) + "\n", text)
    text = _RAW_QUOTED.sub(lambda m: m.group().replace("\n", " "), text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    own: list[str] = []
    quoting = False  # inside a >>> quote
    after_colon = False
    for ln in lines:
        bare = ln.lstrip()
        if bare.startswith(">>>"):
            quoting = True
        keep = not (quoting or bare.startswith(">") or bare.startswith("\x00") or after_colon)
        after_colon = bare.rstrip().endswith(":")
        if keep:
            own.append(ln)
    if not own:
        own = [ln.replace("\x00", "").lstrip("> ") for ln in lines]
    return [ln for ln in own if "\x00" not in ln]


#: The values of the policy's ``[scoring] pieces`` key: score sentences too, or the whole text only.
PIECE_MODES = ("sentences", "whole")
#: Characters of a raw message the model reads by default (the policy's ``[scoring] max_chars``): 40,000 is
#: Slack's longest message, so a live Discord (4,000) or Slack message is always read whole.
DEFAULT_MAX_CHARS = 40_000
#: Characters shared by two neighbouring chunks of a long text, so a sentence cut at one chunk's end is whole in
#: the next chunk.
CHUNK_OVERLAP = 200


def chunks(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """The raw chunks of a text longer than :data:`MAX_CHARS`, after the first: ``text[s : s + MAX_CHARS]`` for
    starts every ``MAX_CHARS - CHUNK_OVERLAP`` characters, up to ``max_chars`` characters of ``text`` in all (the
    first chunk is the whole text's own, since :func:`for_scoring` reads its first ``MAX_CHARS``). Empty for a text
    of at most ``MAX_CHARS`` characters. Characters are counted without invisibles
    (:func:`bot.core.normalize.visible`), so zero-width padding cannot push the words past ``max_chars``."""
    text = visible(text)
    end = min(len(text), max_chars)
    step = MAX_CHARS - CHUNK_OVERLAP
    return [text[s : min(s + MAX_CHARS, end)] for s in range(step, end - CHUNK_OVERLAP, step)]


def read_chars(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> int:
    """Visible characters of ``text`` (:func:`bot.core.normalize.visible`) the model reads under ``max_chars``
    (all of them when it is read whole)."""
    return min(len(visible(text)), max_chars)


def visible_chars(text: str) -> int:
    """Characters of ``text`` that count toward ``max_chars``: all but the invisibles."""
    return len(visible(text))


def is_truncated(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> bool:
    """True when ``text`` has more than ``max_chars`` visible characters, so the model does not read it whole
    (the service's ``score_status = "truncated"``). Invisible padding never makes a text truncated."""
    return len(text) > max_chars and visible_chars(text) > max_chars


def scoring_pieces(text: str, sentences: bool = True, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, ...]:
    """The texts the model scores for one raw message: ``(whole, *pieces, *chunks)``.

    A message longer than :data:`MAX_CHARS` characters is read whole up to ``max_chars`` (the policy's ``[scoring]
    max_chars``): after its sentence pieces come the :func:`chunks` of the rest, each through ``for_scoring``, and
    each scored in the scorer's own token windows. Whatever lies beyond ``max_chars`` is not read; the service
    records that as ``score_status = "truncated"``.

    With ``sentences=False`` (the policy's ``[scoring] pieces = "whole"``) the plan is ``(whole,)`` only: fewer
    forward passes, at the cost of the dilution this module closes.

    ``whole`` is :func:`bot.core.normalize.for_scoring` of the message (``""`` for an empty message). ``pieces``
    are the sentences of its own lines (:func:`_own_lines`, each through ``for_scoring``), in order, without
    duplicates, without the whole text itself and without pieces under :data:`MIN_PIECE_WORDS` words, at most
    :data:`MAX_PIECES`; empty for a one-sentence message. See the module docstring for what is kept together.
    Never raises.
    """
    whole = for_scoring(text)
    rest = [c for c in (for_scoring(c) for c in chunks(text, max_chars)) if c]
    if not whole:
        return ("", *rest) if rest else ("",)
    if not sentences:
        return (whole, *rest)
    seen = {whole}
    pieces: list[str] = []
    for line in _own_lines(visible(text)[:MAX_CHARS]):
        for sentence in _sentences(for_scoring(line)):
            if sentence in seen or len(sentence.split()) < MIN_PIECE_WORDS:
                continue
            seen.add(sentence)
            pieces.append(sentence)
            if len(pieces) == MAX_PIECES:
                return (whole, *pieces, *rest)
    return (whole, *pieces, *rest)


def combine(parts: Sequence[Scores]) -> Scores:
    """Per label, the highest score of ``parts`` (a message is as toxic as its most toxic piece).

    Args:
        parts: Scores of the whole text first, then of its pieces; all from one model. Non-empty.

    Returns:
        A :class:`Scores` with the first part's labels, ``missing`` and ``model``; values in [0, 1].

    Raises:
        ValueError: ``parts`` is empty.
    """
    if not parts:
        raise ValueError("combine() needs at least one Scores")
    first = parts[0]
    if len(parts) == 1:
        return first
    values = {label: max(float(p.values[label]) for p in parts if label in p.values) for label in first.values}
    return Scores(values=values, missing=first.missing, model=first.model)


def route_hints(scorer: Scorer, messages: Iterable[tuple[tuple[str, ...], str]]) -> dict[tuple[str, ...], str]:
    """``{plan: language}`` for the ``(plan, raw text)`` of each message whose raw text routes it (a scorer's
    ``route_hint(text)``: :meth:`bot.scoring.routing.LanguageRoutedScorer.route_hint`, or
    :meth:`bot.scoring.remote.RemoteScorer.route_hint` of a service that routes); ``{}`` for a scorer without it.
    The hints go to :func:`score_plans` and to the language check of the routed model."""
    hint_of = getattr(scorer, "route_hint", None)
    if hint_of is None:
        return {}
    out: dict[tuple[str, ...], str] = {}
    for plan, text in messages:
        hint = hint_of(text)
        if hint is not None:
            out.setdefault(plan, hint)
    return out


def score_plans(scorer: Scorer, plans: Sequence[tuple[str, ...]],
                hints: Mapping[tuple[str, ...], str] | None = None) -> dict[tuple[str, ...], Scores]:
    """Score scoring plans (:func:`scoring_pieces`) in one ``score_batch`` call and :func:`combine` each plan.

    The one scoring path of the project: the moderation service's worker thread, :func:`score_texts` (``eval``,
    the benchmarks) all call it, so what is measured is what the bot runs.

    Args:
        scorer: Any :class:`bot.core.ports.Scorer`.
        plans: ``(whole, *pieces)`` tuples; a piece shared by several plans is scored once.
        hints: The language that routes a plan, by plan (:func:`route_hints`: its raw text is confidently in a
            language of a routing scorer's second model); read by a routing scorer only.

    Returns:
        ``{plan: Scores}`` for each distinct plan (scores in [0, 1] per label; empty for no plans).

    A scorer with a ``route(plan) -> Scorer`` method (:class:`bot.scoring.routing.LanguageRoutedScorer`) has each
    plan scored whole by the model it picks, so one message's pieces are never scored by two models; so does one
    whose ``score_whole_plans`` is not ``None`` (:class:`bot.scoring.remote.RemoteScorer` of a scoring service that
    routes), which is handed the plans.

    Raises:
        Whatever ``scorer.score_batch`` raises (``ScorerError`` for the detoxify scorer).
    """
    whole_plans = getattr(scorer, "score_whole_plans", None)
    if whole_plans is not None:
        whole: dict[tuple[str, ...], Scores] = whole_plans(plans, hints) if hints else whole_plans(plans)
        return whole
    route = getattr(scorer, "route", None)
    if route is not None:
        groups: dict[int, tuple[Scorer, list[tuple[str, ...]]]] = {}
        for plan in dict.fromkeys(plans):
            hint = hints.get(plan) if hints else None
            model = route(plan, hint) if hint is not None else route(plan)
            groups.setdefault(id(model), (model, []))[1].append(plan)
        out: dict[tuple[str, ...], Scores] = {}
        for model, group in groups.values():
            out.update(score_plans(model, group))
        return out
    order = list(dict.fromkeys(piece for plan in plans for piece in plan))
    if not order:
        return {}
    scored = dict(zip(order, scorer.score_batch(order), strict=True))
    return {plan: combine([scored[p] for p in plan]) for plan in dict.fromkeys(plans)}


def score_texts(
    scorer: Scorer, texts: Sequence[str], pieces_mode: str = "sentences", max_chars: int = DEFAULT_MAX_CHARS
) -> list[Scores | None]:
    """Score raw message texts exactly as the moderation service does (:func:`scoring_pieces`, then
    :func:`score_plans`).

    Args:
        scorer: Any :class:`bot.core.ports.Scorer`.
        texts: Raw message texts (not yet normalised).
        pieces_mode: The policy's ``[scoring] pieces``: ``"sentences"`` (whole text and each sentence, highest
            score per label) or ``"whole"`` (whole text only).
        max_chars: The policy's ``[scoring] max_chars``: characters of each text read (in chunks past 4,000).

    Returns:
        One :class:`Scores` per text, in order; ``None`` for a text with nothing to score (empty after
        normalisation), which the service leaves unscored too.

    Raises:
        ValueError: ``pieces_mode`` is not one of :data:`PIECE_MODES`.
        Whatever ``scorer.score_batch`` raises.
    """
    if pieces_mode not in PIECE_MODES:
        raise ValueError(f"pieces_mode must be one of {PIECE_MODES}, not {pieces_mode!r}")
    plans = [scoring_pieces(t, sentences=pieces_mode == "sentences", max_chars=max_chars) for t in texts]
    readable = [any(x.strip() for x in p) for p in plans]
    hints = route_hints(scorer, [(p, t) for p, t, ok in zip(plans, texts, readable, strict=True) if ok])
    scored = score_plans(scorer, [p for p, ok in zip(plans, readable, strict=True) if ok], hints)
    return [scored.get(p) if ok else None for p, ok in zip(plans, readable, strict=True)]


def score_messages(
    scorer: Scorer, texts: Sequence[str], sentences: bool = True, max_chars: int = DEFAULT_MAX_CHARS
) -> list[Scores]:
    """Like :func:`score_texts`, but an empty text is scored as ``""`` too (one :class:`Scores` per text, in order).

    Kept for callers that need a value for every text (``bench/chat_rates.py``); see :func:`score_texts` for args.
    """
    plans = [scoring_pieces(t, sentences, max_chars) for t in texts]
    scored = score_plans(scorer, plans, route_hints(scorer, zip(plans, texts, strict=True)))
    return [scored[p] for p in plans]
