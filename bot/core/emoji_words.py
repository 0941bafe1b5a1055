"""Emoji -> plain words, for matching and for the toxicity model.

Layer: ``bot.core`` (platform-neutral; stdlib + ``emoji`` only).

Emoji are spelled out with their CLDR English names from the ``emoji`` package (``🖕`` -> ``middle finger``,
``💩`` -> ``pile of poo``, ``🏳️‍🌈`` -> ``rainbow flag``, ``🏳️‍⚧️`` -> ``transgender flag``, ``🎂`` -> ``birthday
cake``). Skin-tone modifiers (U+1F3FB..U+1F3FF) are dropped first, so ``🖕🏿`` is just ``middle finger``: words such
as "dark skin tone" would otherwise reach the model as identity terms it is known to over-score.

For scoring only, a *very* small set of emoji whose sole common meaning is hostile gets a gloss that tells the model
so (:data:`HOSTILE_GLOSS`). Everything else (pride flags, hearts, skulls, knives, animals) keeps its plain name: the
plain name is what moderators read, and dog-whistle uses of ordinary emoji are context the model cannot judge from
the emoji alone. Matching (the blocklist) always sees the plain name, so a rule can list ``"middle finger"``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator

import emoji

log = logging.getLogger(__name__)

#: Plain CLDR name (underscores as spaces) -> extra words appended for the scoring text only.
HOSTILE_GLOSS: dict[str, str] = {
    "middle finger": "fuck you",
    "face with symbols on mouth": "cursing",
    "pile of poo": "crap",
    "face vomiting": "disgusting",
}

#: Where an emoji can start: keycaps (``1️⃣``), ``©``/``®``, U+203C..U+3299 and U+1F000..U+1FAFF (checked against the
#: ``emoji`` package data: no emoji starts elsewhere).
_START = re.compile("[0-9#*]\ufe0f?\u20e3|[\u00a9\u00ae\u203c-\u3299\U0001f000-\U0001faff]")
_SKIN_TONES = {cp: None for cp in range(0x1F3FB, 0x1F400)}
_MAXLEN = max(len(k) for k in emoji.EMOJI_DATA)


def emoji_name(name: str) -> str:
    """Turn an ``emoji`` package name (``"middle_finger"``, ``":rainbow_flag:"``) into plain words."""
    return name.strip(":").replace("_", " ").replace("\u201c", "").replace("\u201d", "").strip()


def emoji_to_words(text: str, *, scoring: bool = False, max_len: int | None = None,
                   max_words_len: int | None = None,
                   measure: Callable[[str], int] | None = None) -> tuple[str, bool]:
    """Replace every emoji in ``text`` with its plain name, surrounded by spaces (longest match, like ``demojize``).

    Args:
        text: Any text.
        scoring: When True, append the hostility gloss of :data:`HOSTILE_GLOSS` (for the model's input only).
        max_len: The length the caller keeps of the result (``None``: no cap).
        max_words_len: The same for the result as ``measure`` counts it (the model's input is what the later
            normalisation steps leave, single-spaced, capped at ``bot.core.normalize.MAX_CHARS``).
        measure: The length a piece of the result will have after the caller's later steps (default: whitespace
            runs counted as one character); ``bot.core.normalize`` also drops invisibles and markup and applies
            NFKC, so zero-width padding does not crowd names out and ``\ufdfa`` counts its 18 letters.

            When the names would pass either cap, the words are kept and names are given up instead, so emoji
            padding cannot push a word out of sight (``"🔥" * 1400 + " you <slur>"`` spelt out is 8,400
            characters): first an emoji repeated right after itself (whitespace between) is named once per run; if
            that is still too long, every later emoji whose name no longer fits is a space. Text whose names fit is
            spelt out exactly as without the caps.

    Returns:
        ``(new_text, found)`` where ``found`` says whether any emoji was replaced. Never raises.
    """
    if not _START.search(text):
        return text, False
    text = text.translate(_SKIN_TONES)
    found = list(_emoji_spans(text))
    if not found:
        return text, False

    size = measure or _squeezed

    def fits(out: str) -> bool:
        return (max_len is None or len(out) <= max_len) and (max_words_len is None or size(out) <= max_words_len)

    out = _spell(text, found, scoring, once_per_run=False)
    if not fits(out):
        out = _spell(text, found, scoring, once_per_run=True)
        if not fits(out):
            out = _spell(text, found, scoring, once_per_run=True, max_len=max_len, max_words_len=max_words_len,
                         measure=size)
    return out, True


_WHITESPACE = re.compile(r"\s+")


def _squeezed(text: str) -> int:
    return len(_WHITESPACE.sub(" ", text))


def _emoji_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, plain name)`` of each emoji in ``text`` (skin tones already dropped), longest match first."""
    data = emoji.EMOJI_DATA
    last = 0
    for m in _START.finditer(text):
        i = m.start()
        if i < last:
            continue
        for size in range(min(_MAXLEN, len(text) - i), 0, -1):
            entry = data.get(text[i : i + size])
            if entry is not None:
                break
        else:
            continue
        last = i + size
        yield i, last, emoji_name(entry["en"])


def _spell(text: str, spans: list[tuple[int, int, str]], scoring: bool, *, once_per_run: bool,
           max_len: int | None = None, max_words_len: int | None = None,
           measure: Callable[[str], int] = _squeezed) -> str:
    """``text`` with each emoji of ``spans`` as `` name `` (plus its gloss when ``scoring``); a repeat of the emoji
    just before it (only whitespace between) as a space with ``once_per_run``; and a name that would leave too
    little room under ``max_len`` (raw) or ``max_words_len`` (as ``measure`` counts) for the rest of the text,
    every later emoji counted as one character, as a space."""
    betweens = [text[(spans[i - 1][1] if i else 0):start] for i, (start, _, _) in enumerate(spans)]
    sizes = [measure(b) for b in betweens] + [measure(text[spans[-1][1]:])]
    after = [0] * len(sizes)  # measured size of the text after emoji i (the later emoji as one space each)
    for i in range(len(sizes) - 2, -1, -1):
        after[i] = after[i + 1] + sizes[i + 1] + 1
    out: list[str] = []
    raw = squeezed = 0
    prev: str | None = None
    for i, (_, end, words) in enumerate(spans):
        between = betweens[i]
        repeat = once_per_run and words == prev and not between.strip()
        prev = words
        gloss = HOSTILE_GLOSS.get(words) if scoring else None
        name = " " if repeat else (f" {words}, {gloss} " if gloss else f" {words} ")
        if ((max_len is not None and raw + len(between) + len(name) + len(text) - end > max_len)
                or (max_words_len is not None
                    and squeezed + sizes[i] + len(name.strip()) + 2 + after[i] > max_words_len)):
            name = " "
        out += (between, name)
        raw += len(between) + len(name)
        squeezed += sizes[i] + (len(name.strip()) + 1 if name.strip() else 1)
    out.append(text[spans[-1][1]:])
    return "".join(out)


#: Plain CLDR names of the emoji that, sent alone at someone, are an insult (the ones :data:`HOSTILE_GLOSS` glosses
#: as abuse; "face vomiting" alone is as often about food or a post as about a person, so it is left to the model).
HOSTILE_ALONE = frozenset({"middle finger", "face with symbols on mouth", "pile of poo"})
_MENTION = re.compile(r"<(?:@[!&]?|#)[^<>\s]{1,80}>|@\w{1,40}")
#: What may sit around hostile emoji sent alone: whitespace, joiners and selectors, zero-width and format characters,
#: punctuation, and markdown's spoiler, bold, italic, strike and code marks (``||🖕||`` is still a middle finger).
_FILLER = re.compile("[\\s\u200b-\u200f\u2060-\u2064\ufeff\ufe0e\ufe0f.,!?|*_~`]+")


def hostile_emoji_only(text: str) -> tuple[str, ...] | None:
    """The plain names of the emoji when ``text`` is nothing but hostile emoji (:data:`HOSTILE_ALONE`), with
    mentions, spaces, punctuation and skin tones around them; else ``None`` (words, other emoji, or no emoji).

    ``"🖕"``, ``"<@123> 🖕🏿"`` and ``"🤬🖕"`` give names; ``"❤️"``, ``"🖕 lol"`` and ``""`` give ``None``."""
    if not _START.search(text):
        return None
    rest = _MENTION.sub(" ", text).translate(_SKIN_TONES)
    found = emoji.emoji_list(rest)
    if not found:
        return None
    names: list[str] = []
    last = 0
    for item in found:
        if _FILLER.sub("", rest[last : item["match_start"]]):
            return None
        name = emoji_name(emoji.EMOJI_DATA.get(item["emoji"], {}).get("en", ""))
        if name not in HOSTILE_ALONE:
            return None
        names.append(name)
        last = item["match_end"]
    if _FILLER.sub("", rest[last:]):
        return None
    return tuple(names)
