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

- text inside double quotes (``"..."``, ``“...”``, ``‘...’``) is never cut into separate pieces;
- Markdown block-quote lines (``> ...``, how Discord and Slack quote another message) are scored only as part of
  the whole message, never alone;
- pieces of fewer than :data:`MIN_PIECE_WORDS` words (``"Worthless."``, ``"Maya, ignore them."``) are not scored
  alone: the model is unstable on very short out-of-context strings (the supportive "Maya, ignore them. we love you"
  was flagged for toxicity through its first three words). On the padded HateCheck file this costs 0.6 points of
  hateful recall against a 2-word minimum with model ``c28d0016643b`` (87.1% vs 87.7%; 79.9% without pieces).

Layer: ``bot.core`` (no platform or model imports). Used by the moderation service, ``python -m bot eval`` and the
benchmarks, so every path scores messages the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.core.models import Scores
from bot.core.normalize import MAX_CHARS, for_scoring
from bot.core.ports import Scorer

#: Sentence pieces scored per message besides the whole text (a cost bound; the whole text still covers the rest).
MAX_PIECES = 16
#: Pieces shorter than this (in words) are not scored alone (see the module docstring for the measured trade-off).
MIN_PIECE_WORDS = 4

_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|‘[^’]*’|«[^»]*»')
_SENTENCE_END = re.compile(r"[.!?…]+[\"”’»)\]]*(\s+)")


def _sentences(text: str) -> list[str]:
    """Split single-spaced ``text`` after ``. ! ? …`` (and any closing quote or bracket) followed by a space, never
    inside a quoted span."""
    quoted = [m.span() for m in _QUOTED.finditer(text)]
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        cut = m.start(1)
        if any(a < cut < b for a, b in quoted):
            continue
        out.append(text[start:cut])
        start = m.end(1)
    out.append(text[start:])
    return [s for s in (p.strip() for p in out) if s]


def scoring_pieces(text: str) -> tuple[str, ...]:
    """The texts the model scores for one raw message: ``(whole, *pieces)``.

    ``whole`` is :func:`bot.core.normalize.for_scoring` of the message (``""`` for an empty message). ``pieces``
    are its lines and sentences (each through ``for_scoring``), in order, without duplicates and without the whole
    text itself, at most :data:`MAX_PIECES`; empty for a one-sentence message. See the module docstring for what is
    kept together. Never raises.
    """
    whole = for_scoring(text)
    if not whole:
        return ("",)
    seen = {whole}
    pieces: list[str] = []
    for line in text[:MAX_CHARS].splitlines():
        if line.lstrip().startswith(">"):  # a quoted message: only judged together with the reply around it
            continue
        for sentence in _sentences(for_scoring(line)):
            if sentence in seen or len(sentence.split()) < MIN_PIECE_WORDS:
                continue
            seen.add(sentence)
            pieces.append(sentence)
            if len(pieces) == MAX_PIECES:
                return (whole, *pieces)
    return (whole, *pieces)


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


def score_messages(scorer: Scorer, texts: Sequence[str]) -> list[Scores]:
    """Score raw messages the way the bot does: :func:`scoring_pieces`, one ``score_batch`` call, :func:`combine`.

    Args:
        scorer: Any :class:`bot.core.ports.Scorer`.
        texts: Raw message texts (not yet normalised).

    Returns:
        One :class:`Scores` per text, in order.

    Raises:
        Whatever ``scorer.score_batch`` raises (``ScorerError`` for the detoxify scorer).
    """
    plans = [scoring_pieces(t) for t in texts]
    distinct = list(dict.fromkeys(p for plan in plans for p in plan))
    if not distinct:
        return []
    scored = dict(zip(distinct, scorer.score_batch(distinct), strict=True))
    return [combine([scored[p] for p in plan]) for plan in plans]
