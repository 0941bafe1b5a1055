"""Which language a message is written in, offline, so the bot can say when its model cannot read it.

Layer: ``bot.core``. Uses ``py3langid`` (a maintained fork of langid.py: a naive Bayes model over byte n-grams of 140
languages, shipped inside the 4.6 MB wheel, pure Python + numpy), imported lazily on first use; the bot lets it
choose among :data:`CANDIDATES`. About 0.6 ms per chat message (whole text, lines and sentences). Why this library
and how accurate it is on short chat messages: docs/model-card.md, "Languages" (``python bench/language_id.py``).

Short or ambiguous texts are never called foreign: detection runs on the message's *prose* only (URLs, mentions,
custom emoji, inline and fenced code removed) and only when that prose has at least ``min_letters`` letters and
:data:`MIN_DISTINCT_WORDS` distinct words; a language is called only at ``min_confidence`` or above. So emoji-only messages, code, links and "lol ok" get
``None`` (unknown), and the scorer reads them as before.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

_URL = re.compile(r"(?:https?://|www\.)\S+", re.I)
_MENTION = re.compile(r"<[@#!&:a-z]*[^>\s]*>|@\w+", re.I)  # <@id>, <#channel>, <:emoji:id>, <!here>, @name
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_SHORTCODE = re.compile(r":[a-z0-9_+-]+:", re.I)

#: Languages the detector chooses among: the widely written languages of py3langid's 140 (ISO 639-1). Regional
#: languages, Latin, and "zxx" (no language) are left out: on English tech and crypto chat they were the usual wrong
#: answers for commands, hashes and product names ("Also, Alt-J Alt-O opens a REPL" -> Luxembourgish).
CANDIDATES = (
    "af", "am", "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "eu", "fa",
    "fi", "fr", "ga", "gl", "gu", "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "kk", "km", "kn", "ko",
    "lt", "lv", "mk", "ml", "mn", "mr", "ms", "my", "ne", "nl", "no", "pa", "pl", "ps", "pt", "ro", "ru", "si", "sk",
    "sl", "sq", "sr", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "uz", "vi", "zh",
)
#: A text whose letters are mostly outside the Latin script needs only ``min_letters`` divided by this: the script
#: alone says a lot ("我恨女人。" is four letters), and such texts are short in letters.
NON_LATIN_DIVISOR = 5

#: Lowest confidence for a *part* of a message (a line or sentence, shorter than the whole and so more often wrong)
#: to be called foreign, when the policy's ``min_confidence`` is lower. Measured: on English chat, parts at 0.9 more
#: than doubled the false-foreign rate (docs/model-card.md, "Languages").
PART_CONFIDENCE = 0.98
#: Characters of prose examined per text (the detector's cost grows with length; a language shows in far less).
PROSE_CHARS = 1000

_lock = threading.Lock()


class _Identifier(Protocol):
    """What this module uses of ``py3langid.langid.LanguageIdentifier`` (py3langid ships no type information)."""

    def classify(self, text: str) -> tuple[str, float]: ...

    def rank(self, text: str) -> list[tuple[str, float]]: ...


_identifier: _Identifier | None = None


@dataclass(frozen=True, slots=True)
class Detection:
    """The language of one text.

    Attributes:
        language: ISO 639-1 code (``"en"``, ``"fr"``...), or ``None`` when the text is too short or the detector
            is not confident enough (unknown: treated as readable).
        confidence: The detector's probability of ``language`` (or of its best guess when ``language`` is
            ``None``), in [0, 1]; 0.0 when detection did not run.
        letters: Letters in the prose that was examined.
    """

    language: str | None
    confidence: float = 0.0
    letters: int = 0


def prose(text: str) -> str:
    """``text`` without URLs, mentions, custom emoji, ``:shortcodes:`` and inline or fenced code; never raises."""
    for rx in (_FENCE, _INLINE_CODE, _URL, _MENTION, _SHORTCODE):
        text = rx.sub(" ", text)
    return " ".join(text.split())


#: Fewest distinct words a mostly Latin-script text needs to be examined ("aaaa aaaa aaaa" is no language).
MIN_DISTINCT_WORDS = 3
_WORD = re.compile(r"[^\W\d_]{2,}")


def _letters(body: str, min_letters: int) -> tuple[int, int]:
    """``(letters, letters needed)`` of ``body``: mostly non-Latin letters need ``min_letters // NON_LATIN_DIVISOR``;
    a mostly Latin text of fewer than :data:`MIN_DISTINCT_WORDS` distinct words needs more letters than it has."""
    letters = [ch for ch in body if ch.isalpha()]
    latin = sum(ch < "\u0250" for ch in letters)  # Basic Latin to Latin Extended-B
    if latin * 2 < len(letters):
        return len(letters), max(1, min_letters // NON_LATIN_DIVISOR)
    if len({w.casefold() for w in _WORD.findall(body)}) < MIN_DISTINCT_WORDS:
        return len(letters), len(letters) + 1
    return len(letters), min_letters


def _get() -> _Identifier:
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
                ident.set_languages(CANDIDATES)
                _identifier = ident
    return _identifier


def warm() -> None:
    """Load the detector's model now (about 0.5-1 s of CPU: py3langid decompresses it on first use), so the first
    message that needs it is not the one that waits; thread-safe, and a no-op once loaded.

    Raises:
        ImportError: py3langid is not installed.
    """
    _get()


def detect(text: str, *, min_letters: int = 20, min_confidence: float = 0.9) -> Detection:
    """Detect the language of a raw message.

    Args:
        text: The raw message text (any length; the first :data:`PROSE_CHARS` characters of its prose are examined).
        min_letters: Fewest letters (``str.isalpha``) the prose must have for detection to run (a text of mostly
            non-Latin letters needs ``min_letters // NON_LATIN_DIVISOR``).
        min_confidence: Lowest probability at which a language is called.

    Returns:
        A :class:`Detection`; ``language`` is ``None`` for short, code-only, emoji-only or ambiguous text.

    Raises:
        ImportError: py3langid is not installed (it is a dependency of the bot: ``pip install py3langid``).
    """
    body = prose(text)[:PROSE_CHARS]
    letters, need = _letters(body, min_letters)
    if letters < need:
        return Detection(None, 0.0, letters)
    lang, conf = _get().classify(body)
    conf = float(conf)
    if conf < min_confidence:
        return Detection(None, conf, letters)
    return Detection(str(lang), conf, letters)


def unsupported(
    texts: Sequence[str], languages: Sequence[str], *, min_letters: int = 20, min_confidence: float = 0.9
) -> Detection | None:
    """The first of ``texts`` confidently written in a language outside ``languages``, or ``None``.

    "Confidently" means the detector's probability that the text is in *none* of ``languages`` is at least
    ``min_confidence`` (related languages share the rest: Spanish abuse may be 0.3 Spanish, 0.3 Galician, 0.2
    Portuguese, and is still surely not English). The returned :class:`Detection` names the likeliest language
    outside ``languages`` and carries that probability as ``confidence``.

    ``texts`` is the whole message first, then its parts (sentences or lines), so that a mixed-language message
    whose whole text reads as English but which holds a sentence in another language is still reported; a part
    needs at least :data:`PART_CONFIDENCE`. Each text is examined as in :func:`detect` (its prose, at least
    ``min_letters`` letters).

    Raises:
        ImportError: py3langid is not installed.
    """
    return check(texts, languages, min_letters=min_letters, min_confidence=min_confidence).unsupported


@dataclass(frozen=True, slots=True)
class LanguageCheck:
    """What :func:`check` found for one message.

    Attributes:
        detected: :func:`detect`'s answer for the whole message (``texts[0]``).
        unsupported: :func:`unsupported`'s answer for all of ``texts``.
    """

    detected: Detection
    unsupported: Detection | None


def check(
    texts: Sequence[str], languages: Sequence[str], *, min_letters: int = 20, min_confidence: float = 0.9
) -> LanguageCheck:
    """:func:`detect` of ``texts[0]`` and :func:`unsupported` of ``texts`` with one detector pass per text examined
    (py3langid scores a text once; both answers are read from that one ranking), for callers that need both
    (the scoring service's ``detectedLanguages`` and its language check). ``texts`` as for :func:`unsupported`;
    empty ``texts``: nothing detected, nothing unsupported.

    Raises:
        ImportError: py3langid is not installed.
    """
    allowed = set(languages)
    detected = Detection(None)
    for n, text in enumerate(texts):
        need_conf = min_confidence if n == 0 else max(min_confidence, PART_CONFIDENCE)
        body = prose(text)[:PROSE_CHARS]
        letters, need = _letters(body, min_letters)
        if letters < need:
            if n == 0:
                detected = Detection(None, 0.0, letters)
            continue
        ranked = _get().rank(body)
        top, p_top = str(ranked[0][0]), float(ranked[0][1])
        if n == 0:
            detected = Detection(top if p_top >= min_confidence else None, p_top, letters)
        if top in allowed and p_top > 1.0 - need_conf:
            continue  # exact shortcut: the other languages share less than min_confidence
        other = 1.0 - sum(float(p) for lang, p in ranked if lang in allowed)
        if other >= need_conf:
            first = next(lang for lang, _ in ranked if lang not in allowed)
            return LanguageCheck(detected, Detection(str(first), round(other, 4), letters))
    return LanguageCheck(detected, None)


#: Most parts of one message examined by :func:`message_parts` (a cost bound, as for sentence pieces).
MAX_PARTS = 16
_SENTENCE = re.compile(r"(?<=[.!?…])\s+")


def message_parts(text: str) -> list[str]:
    """The texts whose language is checked for one raw message: the whole text, then each line outside code, then
    each sentence of a line (when there is more than one), without duplicates, at most :data:`MAX_PARTS`; from the first 8,000
    characters (a mixed-language message shows its other language early enough). Never raises."""
    head = text[:8000]
    out = [head]
    # Code is no language: drop fenced blocks (their lines too) and inline code before cutting lines.
    bare = _INLINE_CODE.sub(" ", _FENCE.sub("\n", head))
    lines = [ln.strip() for ln in bare.splitlines() if ln.strip()]
    for ln in lines:
        sentences = [p for p in _SENTENCE.split(ln) if p.strip()]
        for part in ([ln] if len(lines) > 1 else []) + (sentences if len(sentences) > 1 else []):
            if part not in out:
                out.append(part)
            if len(out) >= MAX_PARTS:
                return out
    return out
