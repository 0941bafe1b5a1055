"""How the service reads one raw text: the moderation service's plan and checks, called from one place.

The plan is :func:`bot.core.pieces.scoring_pieces` under the policy's ``[scoring]`` settings (whole text, sentence
pieces, later chunks of a long text), and the checks are those of :func:`bot.core.judging.read_limits`: ``"truncated"``
past ``[scoring] max_chars`` visible characters (:func:`bot.core.pieces.is_truncated`: zero-width padding does not
count) and ``"unsupported_language"`` from :func:`bot.core.language.unsupported` over
:func:`bot.core.language.message_parts` with the policy's ``[languages]`` thresholds and the scorer's
``languages``. The same functions, so the service scores a text exactly as a bot does.

Layer: composition root helper (imports ``bot.core`` only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.core.language import check, detect, message_parts
from bot.core.pieces import is_truncated, scoring_pieces
from bot.core.policy import Policy

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Reading:
    """What is scored for one text and how far it is read.

    Attributes:
        plan: ``(whole, *pieces, *chunks)`` for :func:`bot.core.pieces.score_plans`; ``()`` when nothing is left
            to score after normalisation (``score_status == "not_scored"``).
        score_status: ``"ok"``, ``"truncated"``, ``"unsupported_language"`` or ``"not_scored"`` (as
            :attr:`bot.core.models.Verdict.score_status`).
        language: The unsupported language found (ISO 639-1), else ``None``.
        detected: The language :func:`bot.core.language.detect` calls the text (first 8,000 characters) under
            the policy's thresholds, when :func:`read_text` was asked for it, else ``None`` (short, code-only or
            ambiguous text, or not asked).
    """

    plan: tuple[str, ...]
    score_status: str
    language: str | None = None
    detected: str | None = None


def read_text(text: str, policy: Policy,
              languages: Sequence[str] | Callable[[tuple[str, ...]], Sequence[str] | None] | None, *,
              check_language: bool = True, want_detected: bool = False) -> Reading:
    """Plan and check ``text`` as the moderation service does, running the language detector once per part.

    Args:
        text: The raw text (not normalised).
        policy: The policy whose ``[scoring]`` and ``[languages]`` settings apply.
        languages: The languages the scorer reads (``Scorer.languages``), or a function of the text's plan giving
            the languages of the model that plan is scored by (a scorer routing languages between two models: the
            routed model's, as :meth:`bot.core.service.ModerationService._languages` checks in process), or
            ``None``: no language check.
        check_language: ``False`` when the caller stated the language (Perspective's ``languages``).
        want_detected: Also fill :attr:`Reading.detected` (Perspective's ``detectedLanguages``); read from the
            same detector pass as the language check when that runs (:func:`bot.core.language.check`).
    """
    plan = scoring_pieces(text, sentences=policy.scoring.pieces == "sentences", max_chars=policy.scoring.max_chars)
    if not any(p.strip() for p in plan):
        return Reading((), "not_scored")
    status, language, detected = "ok", None, None
    if is_truncated(text, policy.scoring.max_chars):  # visible characters, as the bots count them
        status = "truncated"
    cfg = policy.languages
    if callable(languages):
        languages = languages(plan) if check_language and cfg.detect else None
    if check_language and cfg.detect and languages:
        found = check(message_parts(text), languages, min_letters=cfg.min_letters, min_confidence=cfg.min_confidence)
        detected = found.detected.language
        if found.unsupported is not None:
            status, language = "unsupported_language", found.unsupported.language
    elif want_detected:
        detected = detected_language(text[:8000], policy)
    return Reading(plan, status, language, detected if want_detected else None)


def detected_language(text: str, policy: Policy) -> str | None:
    """The language :func:`bot.core.language.detect` calls ``text`` under the policy's thresholds, or ``None``
    (short, code-only or ambiguous text)."""
    cfg = policy.languages
    return detect(text, min_letters=cfg.min_letters, min_confidence=cfg.min_confidence).language


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(begin, end)`` code-point offsets of each sentence of ``text`` (split at ``.!?…`` followed by space, and at
    line breaks; surrounding spaces left out), in order; ``[(0, len)]``-like for a one-sentence text, ``[]`` for a
    blank one. ``text[begin:end]`` is the sentence."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in [*_SENTENCE_END.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        if m is not None:
            start = m.end()
    return spans
