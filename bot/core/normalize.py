"""Text normalisation for matching (blocklist) and scoring (model). The original text is never changed.

Layer: ``bot.core`` (stdlib, ``emoji``, ``confusable_homoglyphs`` only; character tables live in
:mod:`bot.core.unicode_fold`). Runs on every message: regexes and
translate tables are built once; plain ASCII text skips the Unicode steps.

Pipeline (shared by :func:`normalize` and :func:`for_scoring`):

1. **Cap**: only the first :data:`MAX_CHARS` (4,000) *visible* characters are examined (a longer text loses its
   invisibles, step 6, before the cap, so zero-width padding cannot push words past it); after emoji expansion at
   most :data:`MAX_EXPANDED` (8,000) are kept. ``Normalized.original`` always holds the full input.
2. **Safety**: lone surrogates become U+FFFD (valid surrogate pairs are joined); C0/C1 controls and NUL become spaces.
3. **Platform markup**: Discord custom emoji ``<:name:id>`` -> ``name``; mentions/channels/timestamps are dropped
   (``#channel`` for scoring; mentions are dropped for scoring too, see :func:`for_scoring`); Slack ``<url|label>``
   -> ``url label``.
4. **URL-encoding**: each run of ``%XX`` escapes is decoded when it is valid UTF-8 (``%66%75`` -> ``fu``);
   ``100%`` or ``100%ab`` stay as written.
5. **Enclosed letters** (:func:`_enclosed_letters`): regional indicators (``🇫``), negative squared and circled,
   squared and parenthesised Latin capitals (``🅵 🅕 🄵 🄕``) become the letters they show, so a word spelt in them
   reads as that word, whatever invisible characters or skin tones sit between them. One flag stays a flag (``🇫🇷``
   -> France); two flags or more side by side, or flags with letters beside them, are read both ways, for matching
   and scoring (``🇰🇮🇰🇪`` -> ``KIKE`` and "Kiribati Kenya"). A lone ``🅰 🅱 🅾 🅿`` is
   the emoji (blood types, parking). Then **emoji -> words** (see :mod:`bot.core.emoji_words`).
6. **Invisibles**: Unicode format characters (Cf: zero-width, word joiner, BOM, bidi controls, soft hyphen, tag
   characters U+E0000..E007F), variation selectors, CGJ and Hangul fillers are removed. ZWJ/ZWNJ alone between
   non-ASCII letters (Persian, Indic) do not raise the ``invisible`` flag.
7. **NFKC** (as NFKD, step 8, then NFC) folds fullwidth, mathematical alphanumerics, ligatures, circled letters.
8. **Zalgo**: a run of >= 3 combining marks on one base (decomposed; Vietnamese has at most 2) that does not
   compose into one precomposed letter (polytonic Greek does) is removed and flags ``zalgo``; combining marks left on ASCII letters are removed too (flag when >= 3 letters carry
   them). Ordinary precomposed diacritics are kept.
9. **Confusables** (table: ``confusable_homoglyphs`` data, letters mapping to one ASCII letter, plus a small
   supplement of small capitals and Cyrillic/Greek lower-case look-alikes). Rule, per whitespace-delimited word:
   fold when the word also contains a real Latin letter (mixed script: ``fuсk`` with Cyrillic ``с``); fold a word
   made only of foldable letters (``соск``) only when the message has *no* letter of that script outside the table,
   i.e. no evidence it is genuine Russian/Greek text. So ``Это очень хорошо`` is untouched.
10. **Markdown**: ``||``, ``~~`` and backticks are removed everywhere; ``*``/``_`` runs only as flanking pairs
    (``**bold**``, ``_it_``), so masks like ``f**k`` survive for step 12.
11. **Spaced runs**: >= 3 single characters in a row, separated by whitespace and/or ``. - _ / \\ ~ + * | ·``, with
    >= 2 ASCII letters among them, are joined into one token (``f.u.c.k``, ``k y s``). Words of >= 2 characters are
    never joined, so ``Sky sources`` and ``kayaks`` stay apart. A leading/trailing standalone ``a``/``i`` is also
    tried without it (``i am a k y s`` yields ``akys`` and ``kys``).
12. **Leet/masks** (matching only), per token that has an ASCII letter and either a leet symbol (``@ $ ! | + € ¢``),
    a mask (``* #``) or a leet digit directly followed by a letter (``sh1t``, ``n1gg3r``; ``a55``/``covid19``/``2nd``/
    ``$5``/``2019`` are left alone); a word of >= 3 letters ending in one leet digit (``slu7``, ``crippl3``) also
    gets its decoded form as an extra (never primary) form, so ``web3`` and ``mp3``-style names stay as written. Primary map ``0o 1i 3e 4a 5s 7t 8b 9g @a $s !i |l +t €e ¢c``; a second form uses
    ``1->l, !->l, |->i``. Masks: the form without masks (``**f**uck`` -> ``fuck``) and a wildcard pattern where each mask
    is exactly one letter (``f*ck`` ~ ``fuck``), used only when the token has >= 2 letters.

**Idempotent for matching**: ``normalize(normalize(x).matching).matching == normalize(x).matching``. Lower-casing
can undo NFC (``İ`` -> ``i`` + U+0307), so a lower-cased text that still holds combining marks or is not NFC goes
through steps 2-10 again; a look-alike folded next to a mark is composed again (``а̀`` -> ``à``).

``for_scoring`` does steps 1-11 keeping case and punctuation, but does **not** de-leet: decoding ``3rd``/``b4``-style
tokens would feed the model invented words, and leet is caught by the blocklist (``contains_term``) instead.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from bot.core.emoji_words import emoji_to_words
from bot.core.unicode_fold import (
    ASCII_MARKED,
    INVISIBLE,
    INVISIBLE_CHARS,
    INVISIBLE_FLAG,
    MARK_CHARS,
    WORD_MARKS,
    ZALGO_RUN,
    compat_letter,
    fold_confusables,
)

log = logging.getLogger(__name__)

MAX_CHARS = 4000  #: input characters examined (Discord's longest message); the rest is ignored for matching/scoring
MAX_EXPANDED = 8000  #: cap after emoji names are spelled out


@dataclass(frozen=True, slots=True)
class Normalized:
    """A message normalised for matching.

    Attributes:
        original: The input, unchanged.
        matching: Lower-cased, folded, de-leeted text with separators collapsed and markup/emoji turned into words.
        tokens: Primary word tokens of ``matching`` (letters/digits/apostrophes; a spaced-out run is one token).
        zalgo: Stacked combining marks were present.
        invisible: Format/zero-width characters were present.
        confusables: Look-alike characters (Cyrillic/Greek, fullwidth, math letters, small caps) were folded.
        leet: Leetspeak or masking was decoded.
        spaced: A spaced/dotted run of single characters was joined.
        alt_tokens: Aligned with ``tokens``: other forms of the same token (second leet reading, raw leet form,
            form without masks/apostrophes/diacritics, spaced run without a leading/trailing ``a``/``i``).
        masks: ``(position, pattern)`` for masked tokens; ``*`` in the pattern stands for exactly one letter.
        index: Every form (primary and alternative) -> positions in ``tokens``; used by :func:`contains_term`.
    """

    original: str
    matching: str
    tokens: tuple[str, ...]
    zalgo: bool = False
    invisible: bool = False
    confusables: bool = False
    leet: bool = False
    spaced: bool = False
    alt_tokens: tuple[tuple[str, ...], ...] = ()
    masks: tuple[tuple[int, str], ...] = ()
    index: Mapping[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)


_CONTROLS = {cp: " " for cp in [*range(0x00, 0x20), *range(0x7F, 0xA0)]}
_SURROGATE = re.compile("[\ud800-\udfff]")
_QUOTES = {ord(c): "'" for c in "\u2018\u2019\u02bc\u2032\uff07"}

_PLATFORM = re.compile(
    r"<a?:(\w{1,64}):\d{5,25}>|<(?:@[!&]?|#|!|t:)[^<>\s]{0,80}>|<(https?://[^|<>\s]+)(?:\|([^<>]{0,200}))?>"
)
_URLENC = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_MD_GLOBAL = re.compile(r"\|\||~~|`+")
_MD_PAIR = re.compile(r"(?<![\w*])(\*{1,3}|_{1,3})(?=[^\s*_])(.{1,200}?)(?<=[^\s*_])\1(?![\w*])", re.S)


# ---------------------------------------------------------------- character-level preparation


def _url_decode(m: re.Match[str]) -> str:
    try:
        return bytes.fromhex(m.group().replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return m.group()


#: Code points that sit next to a zero-width joiner in an emoji ZWJ sequence (checked against the ``emoji`` package's
#: data: every such neighbour is in this class); CJK and kana are not, so no joiner survives between them.
_EMOJI_CHAR = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u231a-\u23ff\u24c2\u25aa-\u25fe"
               "\u2600-\u27bf\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001faff")
#: One joiner between two emoji (a variation selector before it is dropped): the joiner of a ZWJ sequence
#: (``🏳️‍⚧️`` is white flag, VS-16, ZWJ, transgender symbol, VS-16). A run of joiners is not one.
_EMOJI_JOIN = re.compile(f"(?<=[{_EMOJI_CHAR}])[\ufe0e\ufe0f]?\u200d(?=[{_EMOJI_CHAR}])")


#: Enclosed Latin capitals A-Z by block: parenthesised, squared, negative circled, negative squared, regional
#: indicators (Unicode's Enclosed Alphanumeric Supplement, U+1F110..U+1F1FF).
_ENCLOSED_STARTS = (0x1F110, 0x1F130, 0x1F150, 0x1F170, 0x1F1E6)
_ENCLOSED = "".join(f"{chr(a)}-{chr(a + 25)}" for a in _ENCLOSED_STARTS)
#: What may sit inside a word of enclosed letters without splitting it: the invisible characters of step 6 (zero-width
#: characters, word joiner, variation selectors, tag characters, ...) and skin-tone modifiers. A class of ranges.
_GLUE_CHARS = frozenset(INVISIBLE_CHARS | {chr(c) for c in range(0x1F3FB, 0x1F400)})
_GLUE = "".join(re.escape(c) for c in sorted(_GLUE_CHARS))
#: A run of enclosed letters: glue anywhere, at most three visible separators (spaces, dots, dashes) between two.
_ENCLOSED_RUN = re.compile(f"[{_ENCLOSED}](?:[{_GLUE}]*[ .\\-_*|\u00a0]{{0,3}}[{_GLUE}]*[{_ENCLOSED}])*")
#: Letters of one word inside a run: enclosed letters with only glue between them.
_ENCLOSED_GROUP = re.compile(f"[{_ENCLOSED}](?:[{_GLUE}]*[{_ENCLOSED}])*")
_ENCLOSED_ONLY = re.compile(f"[^{_ENCLOSED}]+")
#: Negative squared A, B, O, P: emoji in their own right (blood types, parking) when they stand alone.
_EMOJI_LETTERS = frozenset("\U0001f170\U0001f171\U0001f17e\U0001f17f")
_REGIONAL = (0x1F1E6, 0x1F1FF)


def _enclosed_letter(c: str) -> str:
    cp = ord(c)
    start = max(a for a in _ENCLOSED_STARTS if a <= cp)
    return chr(ord("A") + cp - start)


def _is_flags(group: str) -> bool:
    """``group`` (enclosed letters only) is all regional indicators that pair into flags the emoji data knows."""
    from emoji import EMOJI_DATA

    return (len(group) % 2 == 0 and all(_REGIONAL[0] <= ord(c) <= _REGIONAL[1] for c in group)
            and all(group[i:i + 2] in EMOJI_DATA for i in range(0, len(group), 2)))


def _letter_beside(s: str, i: int, step: int) -> bool:
    """A letter sits at ``s[i]`` or beyond it in direction ``step`` (+1 / -1) past glue only."""
    while 0 <= i < len(s) and s[i] in _GLUE_CHARS:
        i += step
    return 0 <= i < len(s) and s[i].isalpha()


def _enclosed_letters(s: str) -> tuple[str, bool]:
    """Step 5's first half: enclosed letters in ``s`` as the capitals they show. Returns ``(text, changed)``.

    Each run (:data:`_ENCLOSED_RUN`) is cut at its visible separators into words (:data:`_ENCLOSED_GROUP`; glue
    such as zero-width characters or skin tones does not cut a word, and is dropped from it). A word becomes its
    letters, except:

    * a run that is one lone ``🅰 🅱 🅾 🅿`` with no letter beside it (past glue) stays the emoji (``🅰️ plus``), while
      ``🅱itch`` or ``f🅰ggot`` read as letters;
    * a word of regional indicators that pairs into known flags: one flag with no letter beside it stays the flag
      (``I love 🇫🇷``); two or more, or flags with letters beside them, are read both ways, the letters on the side
      of the letters beside them (``🇰🇮🇰🇪s`` -> ``🇰🇮🇰🇪 KIKEs``, ``f🇦🇬`` -> ``fAG 🇦🇬``; letters on both sides:
      the letters only). The service has no blocklist, so a slur spelt in real flags must reach the model as
      letters too. Flags are written without the glue that was inside them, so step 5 names them."""
    changed = False

    def run(m: re.Match[str]) -> str:
        nonlocal changed
        text = m.group()
        left, right = _letter_beside(s, m.start() - 1, -1), _letter_beside(s, m.end(), 1)
        words = list(_ENCLOSED_GROUP.finditer(text))
        if (len(words) == 1 and len(_ENCLOSED_ONLY.sub("", text)) == 1 and text[0] in _EMOJI_LETTERS
                and not left and not right):
            return text
        out: list[str] = []
        last = 0
        for n, w in enumerate(words):
            out.append(text[last:w.start()])
            last = w.end()
            letters = _ENCLOSED_ONLY.sub("", w.group())
            read = "".join(map(_enclosed_letter, letters))
            lft, rgt = left and n == 0, right and n == len(words) - 1
            if not _is_flags(letters):
                out.append(read)
            elif lft and rgt:
                out.append(read)
            elif lft:
                out.append(f"{read} {letters}")
            elif rgt:
                out.append(f"{letters} {read}")
            elif len(letters) >= 4:
                out.append(f"{read} {letters}")
            else:
                out.append(letters)
                continue
            changed = True
        out.append(text[last:])
        return "".join(out)

    return _ENCLOSED_RUN.sub(run, s), changed


def visible(text: str) -> str:
    """``text`` without the invisible characters of step 6 (a braille blank becomes a space): what the caps on
    characters read (:data:`MAX_CHARS`, the policy's ``[scoring] max_chars``) count, so padding made of zero-width
    characters cannot push the words past them. ``text`` itself when it has none.

    The one joiner between two emoji of a ZWJ sequence is kept (:data:`_EMOJI_JOIN`), so text cut from this one
    (sentence pieces, chunks of a long text) still spells the sequence as one emoji in step 5: without it ``🏳️‍⚧️``
    falls apart into "white flag" and "transgender symbol". Each kept joiner sits next to a visible emoji, so
    padding still cannot push words past the caps (a run of joiners, or one between letters or kana, is removed)."""
    if text.isascii() or INVISIBLE_CHARS.isdisjoint(text):
        return text
    out: list[str] = []
    last = 0
    for m in _EMOJI_JOIN.finditer(text):
        out += (text[last:m.start()].translate(INVISIBLE), "\u200d")
        last = m.end()
    out.append(text[last:].translate(INVISIBLE))
    return "".join(out)


_SPACES = re.compile(r"\s+")


def _scored_size(text: str) -> int:
    """How long ``text`` will be once the steps after the emoji step have run on it (invisibles dropped, NFKC,
    markup removed, whitespace runs as one space): what ``emoji_to_words`` counts against :data:`MAX_CHARS`."""
    text = text.translate(INVISIBLE)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if "|" in text or "~" in text or "`" in text:
        text = _MD_GLOBAL.sub("", text)
    return len(_SPACES.sub(" ", text))


def _prepare(text: str, scoring: bool, read_enclosed: bool = True,
             words_first: bool = True, cap: int = MAX_CHARS) -> tuple[str, bool, bool, bool]:
    """Steps 1-10 of the module docstring (step 5's enclosed letters only with ``read_enclosed``). Returns ``(text,
    invisible, zalgo, confusables)``; keeps case.

    The cap (``cap``: :data:`MAX_CHARS`, or :data:`MAX_EXPANDED` for text this step already expanded) counts
    visible characters: a longer text loses its invisibles first. With
    ``words_first``, emoji names give way to words where spelling them out would pass a cap kept after this step
    (:data:`MAX_EXPANDED` here; for scoring also :data:`MAX_CHARS` of the single-spaced text; ``emoji_to_words``'s
    ``max_len`` and ``max_words_len``), so emoji padding cannot push a word out of the blocklist's or the model's
    sight."""
    pre_invisible = False
    if len(text) > cap and not text.isascii() and not INVISIBLE_CHARS.isdisjoint(text):
        pre_invisible = INVISIBLE_FLAG.search(text) is not None
        text = visible(text)  # emoji sequences keep their joiners for step 5
    s = text[:cap]
    if _SURROGATE.search(s):
        s = s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    s = s.translate(_CONTROLS)
    if "<" in s:
        s = _PLATFORM.sub(lambda m: _platform_sub(m, scoring), s)
    if "%" in s:
        s = _URLENC.sub(_url_decode, s).translate(_CONTROLS)
    invisible = zalgo = confusables = False
    if not s.isascii():
        enclosed = False
        if read_enclosed and "\U0001f110" <= max(s):
            s, enclosed = _enclosed_letters(s)
        if words_first:
            s, _ = emoji_to_words(s, scoring=scoring, max_len=MAX_EXPANDED,
                                  max_words_len=MAX_CHARS if scoring else None, measure=_scored_size)
        else:
            s, _ = emoji_to_words(s, scoring=scoring)
        s = s[:max(MAX_EXPANDED, cap)]
        if not INVISIBLE_CHARS.isdisjoint(s):
            invisible = INVISIBLE_FLAG.search(s) is not None
            s = s.translate(INVISIBLE)
        confusables = enclosed or any(compat_letter(c) for c in set(s) if c > "\x7f")
        s = unicodedata.normalize("NFKD", s)
        if not MARK_CHARS.isdisjoint(s):
            stacked = 0

            def unstack(m: re.Match[str]) -> str:
                nonlocal stacked
                composed = unicodedata.normalize("NFC", m.group())
                if MARK_CHARS.isdisjoint(composed):  # e.g. polytonic Greek: 3 marks, one precomposed letter
                    return composed
                stacked += 1
                return m.group(1)

            s = unicodedata.normalize("NFC", ZALGO_RUN.sub(unstack, s))
            s, marked = ASCII_MARKED.subn("", s)
            zalgo = stacked > 0 or marked >= 3
        else:
            s = unicodedata.normalize("NFC", s)
        s, folded = fold_confusables(s)
        if folded and not s.isascii():  # a folded letter may now carry a mark that composes with it (а̀ -> à)
            s = ASCII_MARKED.sub("", unicodedata.normalize("NFC", s))
        confusables = confusables or folded
    invisible = invisible or pre_invisible
    if "|" in s or "~" in s or "`" in s:
        s = _MD_GLOBAL.sub("", s)
    if "*" in s or "_" in s:
        for _ in range(3):  # nested pairs (***x***, **_x_**)
            s, n = _MD_PAIR.subn(r"\2", s)
            if not n:
                break
    return s, invisible, zalgo, confusables


def _platform_sub(m: re.Match[str], scoring: bool) -> str:
    if m.group(1):  # custom emoji name
        return " " + m.group(1).replace("_", " ") + " "
    if m.group(2):  # slack link
        return f" {m.group(2)} {m.group(3) or ''} "
    if not scoring:
        return " "
    return " #channel " if m.group().startswith("<#") else " "  # mentions, roles, timestamps: dropped


# ---------------------------------------------------------------- spaced runs

_SEPARATORS = ".-_/\\~+·•*|"
_INTRA_SPLIT = re.compile(r"[.\-_/\\~+·•*|]+")
_EDGE = ".,;:?\"'()[]{}<>"


_R = TypeVar("_R")


def _short_cache(fn: Callable[[str], _R]) -> Callable[[str], _R]:
    """Cache ``fn`` for short arguments only (chat words repeat; long ones would bloat the cache)."""
    cached = functools.lru_cache(maxsize=1 << 14)(fn)

    def call(arg: str) -> _R:
        return cached(arg) if len(arg) <= 40 else fn(arg)

    return functools.wraps(fn)(call)


@_short_cache
def _singles(chunk: str) -> tuple[str, ...] | None:
    """Single characters a whitespace chunk adds to a spaced run; ``()`` for a pure separator; None for a word."""
    if len(chunk) > 1 and chunk.isalnum():
        return None
    core = chunk.strip(_EDGE)
    if not core:
        return ()
    if len(core) == 1:
        if core in _SEPARATORS:
            return ()
        return (core,) if core.isalnum() or core in "$@!" else None
    if all(c in _SEPARATORS for c in core):
        return ()
    parts = [p for p in _INTRA_SPLIT.split(core) if p]
    if len(parts) >= 3 and len(parts) < len(core) and all(len(p) == 1 and (p.isalnum() or p in "$@!") for p in parts):
        return tuple(parts)
    return None


def _join_spaced(chunks: list[str]) -> tuple[list[str], dict[int, list[str]], bool]:
    """Join spaced runs (step 11). Returns new chunks, extra forms for joined chunks (by new index), and a flag."""
    singles = [_singles(c) for c in chunks]
    out: list[str] = []
    extra: dict[int, list[str]] = {}
    spaced = False
    i, n = 0, len(chunks)
    while i < n:
        if singles[i] is None:
            out.append(chunks[i])
            i += 1
            continue
        j = i
        chars: list[str] = []
        while j < n and singles[j] is not None:
            chars.extend(singles[j] or ())
            j += 1
        if len(chars) >= 3 and sum(c.isascii() and c.isalpha() for c in chars) >= 2:
            joined = "".join(chars)
            lead = singles[i] == tuple(chars[:1]) and chars[0].lower() in "ai"
            trail = singles[j - 1] == tuple(chars[-1:]) and chars[-1].lower() in "ai"
            alts = [joined[lead : len(joined) - trail]] if (lead or trail) else []
            if lead and trail:
                alts += [joined[1:], joined[:-1]]
            extra[len(out)] = [a for a in alts if len(a) >= 2]
            out.append(joined)
            spaced = True
        else:
            out.extend(chunks[i:j])
        i = j
    return out, extra, spaced


# ---------------------------------------------------------------- tokens and leet

_PIECE = re.compile(f"(?:[^\\W_]|[{WORD_MARKS}@$!|+*#€¢'])+")
_LEET1 = str.maketrans("0134578@$!|+€¢9#", "oieastbasiltecg*")
_LEET2 = str.maketrans("0134578@$!|+€¢9#", "oleastbaslitecg*")
_LEET_SYMBOLS = set("@$!|+€¢*#")
_DIGIT_LETTER = re.compile(r"[01345789][a-z]")
_TRAILING_LEET = re.compile(r"[a-z]{3,}[013457]")
_SYMBOLS = str.maketrans("", "", "@$!|+*#€¢")
_STRIP = "!|+'#"


@_short_cache
def _token_forms(raw: str) -> tuple[str, str, tuple[str, ...], str | None, bool]:
    """Forms of one lower-case word piece (cached: chat words repeat).

    Returns:
        ``(primary, display, extra_forms, mask_pattern, leet)``; ``primary`` is ``""`` when nothing word-like is left.
    """
    raw = raw.strip(_STRIP)
    if not raw:
        return "", "", (), None, False
    has_ascii_letter = any("a" <= c <= "z" for c in raw)
    eligible = has_ascii_letter and (any(c in _LEET_SYMBOLS for c in raw) or _DIGIT_LETTER.search(raw) is not None)
    extra: list[str] = []
    mask: str | None = None
    if not eligible:
        # dropping a symbol can bare an edge apostrophe ("0'@" -> "0'"; "@'i" below), which the strip above removes
        # from a word read again: strip it here too, so normalising the matching text again changes nothing
        primary = display = raw.translate(_SYMBOLS).strip(_STRIP)
        if _TRAILING_LEET.fullmatch(primary):
            extra.append(primary[:-1] + primary[-1].translate(_LEET1))  # slu7 ~ slut (extra form only: web3 stays)
    elif raw[0] == "@" and not any(c in _LEET_SYMBOLS or c.isdigit() for c in raw[1:]):
        primary = display = raw[1:].strip(_STRIP)  # a mention-like @word: keep the word, also try @ = a
        extra.append("a" + raw[1:])
    else:
        display = raw.translate(_LEET1)
        primary = display.replace("*", "")
        extra += [raw.translate(_LEET2).replace("*", ""), raw.translate(_SYMBOLS)]
        if "*" in display and sum(c.isalpha() for c in display) >= 2:
            mask = display
    if "'" in primary:
        extra += [primary.replace("'", ""), primary.removesuffix("'s")]
    if not primary.isascii():
        bare = "".join(c for c in unicodedata.normalize("NFD", primary) if not unicodedata.combining(c))
        extra.append(unicodedata.normalize("NFC", bare))
    leet = eligible and (display != raw or mask is not None)
    extras = tuple(dict.fromkeys(e for e in extra if e and e != primary))
    return primary, display, extras, mask, leet


_Forms = tuple[str, tuple[str, ...], str | None, bool]


@_short_cache
def _chunk_forms(chunk: str) -> tuple[str, tuple[_Forms, ...]]:
    """Display text and per-token forms ``(primary, extras, mask, leet)`` of one whitespace chunk (cached)."""
    forms: list[_Forms] = []

    def piece(m: re.Match[str]) -> str:
        primary, display, extra, mask, leet = _token_forms(m.group())
        if not primary:
            return m.group()
        forms.append((primary, extra, mask, leet))
        return display

    return _PIECE.sub(piece, chunk), tuple(forms)




def normalize(text: str) -> Normalized:
    """Normalise a message for word-aware matching (see the module docstring for every rule).

    Args:
        text: Any string, including lone surrogates, NUL bytes and 100,000-character messages (only the first
            :data:`MAX_CHARS` are examined).

    Returns:
        A :class:`Normalized` whose ``original`` is ``text`` itself. Never raises.
    """
    s, invisible, zalgo, confusables = _prepare(text, scoring=False)
    s = s.lower()
    if not s.isascii() and (not MARK_CHARS.isdisjoint(s) or not unicodedata.is_normalized("NFC", s)):
        # lower-casing can decompose (İ -> i + U+0307, Greek capitals with tonos): prepare the lower-cased text
        # again, so that normalising the result once more changes nothing
        for _ in range(2):
            # the text is already expanded and capped once: a second cut (lower-casing İ or NFKC grew it) would lose words
            again, inv2, zal2, conf2 = _prepare(s, scoring=False, cap=max(MAX_EXPANDED, len(s)))
            again = again.lower()
            invisible, zalgo, confusables = invisible or inv2, zalgo or zal2, confusables or conf2
            if again == s:
                break
            s = again
    chunks = s.translate(_QUOTES).split()
    chunks, run_extra, spaced = _join_spaced(chunks)
    tokens: list[str] = []
    alts: list[tuple[str, ...]] = []
    masks: list[tuple[int, str]] = []
    index: dict[str, list[int]] = {}
    leet = False
    out_chunks: list[str] = []
    for ci, chunk in enumerate(chunks):
        display, forms = _chunk_forms(chunk)
        out_chunks.append(display)
        for primary, extra, mask, was_leet in forms:
            pos = len(tokens)
            if ci in run_extra and len(forms) == 1:
                more = (p for r in run_extra[ci] if (p := _token_forms(r)[0]) and p != primary)
                extra = tuple(dict.fromkeys([*extra, *more]))
            leet = leet or was_leet
            if mask is not None:
                masks.append((pos, mask))
            tokens.append(primary)
            alts.append(extra)
            index.setdefault(primary, []).append(pos)
            for form in extra:
                index.setdefault(form, []).append(pos)
    matching = " ".join(out_chunks)
    if not matching.isascii():  # a leet letter followed by a mark (@ + U+0300 -> a + U+0300): compose, as step 8
        matching = ASCII_MARKED.sub("", unicodedata.normalize("NFC", matching))
    return Normalized(
        original=text,
        matching=matching,
        tokens=tuple(tokens),
        zalgo=zalgo,
        invisible=invisible,
        confusables=confusables,
        leet=leet,
        spaced=spaced,
        alt_tokens=tuple(alts),
        masks=tuple(masks),
        index={k: tuple(v) for k, v in index.items()},
    )


def for_scoring(text: str, *, enclosed_letters: bool = True, words_first: bool = True) -> str:
    """The text the toxicity model sees: steps 1-11 of the module docstring, case and punctuation kept, no de-leet.

    A platform mention (``<@123>``, ``<@!123>``, ``<@&role>``, Slack ``<@U024BE7LH>``) is dropped from the scoring
    text, in training as in serving. It used to be rendered ``@user``, but OLID, a large training source, writes every
    tweet's mentions as ``@USER`` and never annotates identity attacks, so the model trained that way learned "@user"
    as a strong sign of *no* identity attack: ``<@id> you will never be a real woman`` scored identity_attack 0.05
    against 0.98 without the ping, an evasion any member could use by pinging their target. Typed handles (``@Maya``,
    as chat exports render mentions) are kept as written; since OLID's placeholders are removed for training
    (:func:`bot.training.splits.strip_user_placeholders`), they no longer lower the score much (one known exception
    is listed in docs/model-card.md, "Mentions").

    Args:
        text: Any string (see :func:`normalize`).
        enclosed_letters: Read enclosed letters (step 5's first half, :func:`_enclosed_letters`). Serving always
            does; training (:func:`bot.training.train.normaliser`) does not, so the recorded recipes rebuild the
            shipped model bit for bit: 49 OLID training tweets end in two flags or more (``🇬🇧🇺🇸``) and would read
            ``GBUS United Kingdom United States`` with it (twenty-eighth session; docs/model-card.md).
        words_first: Let emoji names give way to words when spelling the emoji out would pass :data:`MAX_CHARS`
            (``"🔥" * 700 + " you <slur>"`` lost the slur to the cap). Serving always does; training does not,
            for the same reason as ``enclosed_letters`` (twenty-ninth session).

    Returns:
        Single-spaced text of at most :data:`MAX_CHARS` characters (``""`` for whitespace-only input). Never raises.
    """
    s = _prepare(text, scoring=True, read_enclosed=enclosed_letters, words_first=words_first)[0]
    chunks, _, _ = _join_spaced(s.split())
    return " ".join(chunks)[:MAX_CHARS]


@functools.lru_cache(maxsize=8192)
def _term_tokens(term: str) -> tuple[tuple[str, ...], bool]:
    prefix = term.rstrip().endswith("*") and len(term.strip().rstrip("*")) > 0
    return normalize(term.rstrip().rstrip("*") if prefix else term).tokens, prefix


def _mask_fits(pattern: str, word: str) -> bool:
    return len(pattern) == len(word) and all(p == "*" or p == w for p, w in zip(pattern, word, strict=True))


def _at(norm: Normalized, pos: int, word: str, prefix: bool) -> bool:
    """Whether ``word`` is one of the forms of token ``pos`` (prefix match when ``prefix``)."""
    if pos >= len(norm.tokens):
        return False
    forms = (norm.tokens[pos], *norm.alt_tokens[pos])
    if prefix:
        return any(f.startswith(word) for f in forms)
    return word in forms or any(p == pos and _mask_fits(m, word) for p, m in norm.masks)


def contains_term(norm: Normalized, term: str) -> bool:
    """Word-aware match of a blocklist term against a normalised message.

    The term is normalised with :func:`normalize` (cached) and its tokens must equal whole tokens of ``norm`` in
    sequence, using every form of a token (leet readings, mask wildcards, spaced runs, diacritic-free form). A
    multi-word term also matches its words written together as one token (``kill yourself`` ~ ``killyourself``).
    A trailing ``*`` on the term makes its last word a prefix (``fuck*`` matches ``fucking``). A term never matches
    inside a longer token: ``ass`` does not hit ``assistance``, ``cunt`` does not hit ``Scunthorpe``.

    Args:
        norm: Result of :func:`normalize`.
        term: One or more words as written in the blocklist.

    Returns:
        True when the term occurs. Empty terms never match.
    """
    words, prefix = _term_tokens(term)
    if not words or not norm.tokens:
        return False
    last = len(words) - 1
    if not prefix and last == 0:
        if words[0] in norm.index:
            return True
        return any(_mask_fits(m, words[0]) for _, m in norm.masks)
    if last and not prefix and "".join(words) in norm.index:
        return True
    starts = range(len(norm.tokens)) if (prefix and last == 0) or norm.masks else norm.index.get(words[0], ())
    for start in starts:
        if all(_at(norm, start + k, w, prefix and k == last) for k, w in enumerate(words)):
            return True
    return False
