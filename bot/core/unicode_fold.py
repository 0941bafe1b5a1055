"""Unicode character tables for :mod:`bot.core.normalize`: invisibles, combining marks and confusable folding.

Layer: ``bot.core`` (stdlib + ``confusable_homoglyphs``). Tables are built once at import (about 50 ms: one scan of
the Unicode character database up to U+2FFFF and the tag/variation-selector planes); the confusables table is
loaded lazily on the first non-ASCII message. See the module docstring of :mod:`bot.core.normalize` for the rules.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata

log = logging.getLogger(__name__)


def char_class(cps: list[int]) -> str:
    """A regex character class body for sorted code points, as ranges."""
    parts: list[str] = []
    start = prev = cps[0]
    for cp in [*cps[1:], -2]:
        if cp != prev + 1:
            parts.append(re.escape(chr(start)) + ("-" + re.escape(chr(prev)) if prev > start else ""))
            start = cp
        prev = cp
    return "".join(parts)


_SCAN = [*range(0x80, 0x30000), *range(0xE0000, 0xE1000)]
_CATEGORY = {
    cp: unicodedata.category(chr(cp)) for cp in _SCAN if unicodedata.category(chr(cp)) in ("Cf", "Mn", "Me", "Mc")
}
INVISIBLE_CPS = sorted(
    {cp for cp, cat in _CATEGORY.items() if cat == "Cf"}
    | {*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), *range(0x180B, 0x1810)}
    | {0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5}
)
INVISIBLE = {cp: None for cp in INVISIBLE_CPS} | {0x2800: " "}  # braille blank reads as a space
#: Invisibles that count for the flag: not ZWNJ/ZWJ/VS-16 on their own (legitimate in Persian, Indic, emoji).
INVISIBLE_FLAG = re.compile(
    f"[{char_class([cp for cp in INVISIBLE_CPS if cp not in (0x200C, 0x200D, 0xFE0E, 0xFE0F)])}]"
    r"|[\x00-\x7f][\u200c\u200d]|[\u200c\u200d][\x00-\x7f]"
)
MARKS = char_class(sorted(cp for cp, cat in _CATEGORY.items() if cat in ("Mn", "Me") and cp not in INVISIBLE))
WORD_MARKS = char_class(sorted(cp for cp, cat in _CATEGORY.items() if cat != "Cf" and cp not in INVISIBLE))
MARK_CHARS = frozenset(chr(cp) for cp, cat in _CATEGORY.items() if cat in ("Mn", "Me") and cp not in INVISIBLE)
INVISIBLE_CHARS = frozenset(map(chr, INVISIBLE))
ZALGO_RUN = re.compile(f"(.)([{MARKS}]{{3,}})", re.S)
ASCII_MARKED = re.compile(f"(?<=[A-Za-z])[{MARKS}]+")
del _SCAN, _CATEGORY

_SPACE_SPLIT = re.compile(r"(\s+)")

#: Supplement to the confusables table: small capitals and lower-case Cyrillic/Greek letters read as Latin.
_FOLD_EXTRA = dict(
    zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢкмнтвпьѕіјκτεηχІΙ", "abcdefghijklmnoprstuvwyzkmhtbnbsijktenxII", strict=True)
)
#: Letters of living orthographies that the table maps to ASCII but must stay (Turkish dotless i, schwa...).
_FOLD_KEEP = set("ıəɛɔ")


@functools.cache
def _fold_table() -> dict[int, str]:
    """Non-ASCII character -> ASCII letter, from ``confusable_homoglyphs`` plus :data:`_FOLD_EXTRA` (lazy, ~0.1 s)."""
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for ch, glyphs in confusables_data.items():
        if len(ch) != 1 or ch.isascii() or ch in _FOLD_KEEP or unicodedata.decomposition(ch):
            continue
        cands = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        if cands:
            same = [c for c in cands if c.isupper() == ch.isupper()]
            table[ord(ch)] = (same or cands)[0]
    table.update({ord(k): v for k, v in _FOLD_EXTRA.items()})
    return table


@functools.cache
def _fold_chars() -> frozenset[str]:
    """The characters :func:`_fold_table` folds, for fast disjointness checks."""
    return frozenset(map(chr, _fold_table()))


@functools.lru_cache(maxsize=8192)
def _script(ch: str) -> str:
    """First word of the Unicode name (``LATIN``, ``CYRILLIC``, ``GREEK``...), ``""`` when unnamed."""
    return unicodedata.name(ch, "").split(" ", 1)[0]


@functools.lru_cache(maxsize=8192)
def compat_letter(ch: str) -> bool:
    """True when NFKC turns this non-ASCII letter into ASCII (fullwidth, mathematical, circled)."""
    return unicodedata.category(ch)[0] == "L" and unicodedata.normalize("NFKC", ch).isascii()


@functools.lru_cache(maxsize=1 << 14)
def _word_fold(w: str) -> tuple[str, frozenset[str]] | None:
    """How a word folds: ``None`` when it stays, else ``(folded, scripts)`` where ``scripts`` is empty for a
    mixed-script word (always folded) and holds the non-Latin scripts of a word made only of foldable letters."""
    table = _fold_table()
    letters = [c for c in w if c.isalpha()]
    if not letters or not any(ord(c) in table for c in w):
        return None
    if any(ord(c) not in table and (c.isascii() or _script(c) == "LATIN") for c in letters):
        return w.translate(table), frozenset()
    if any(ord(c) not in table for c in letters):
        return None
    return w.translate(table), frozenset(_script(c) for c in letters) - {"LATIN"}


def fold_confusables(s: str) -> tuple[str, bool]:
    """Fold look-alikes per word following the mixed-script / no-genuine-script rule (module docstring, step 9)."""
    table = _fold_table()
    chars = set(s)
    if _fold_chars().isdisjoint(chars):
        return s, False
    genuine = {_script(c) for c in chars if c > "\x7f" and ord(c) not in table and c.isalpha()}
    out: list[str] = []
    changed = False
    for part in _SPACE_SPLIT.split(s):
        how = _word_fold(part) if len(part) <= 40 else _word_fold.__wrapped__(part)
        if how is not None and genuine.isdisjoint(how[1]):
            part = how[0]
            changed = True
        out.append(part)
    return "".join(out), changed
