"""Tests for bot.core.normalize: every evasion form next to its innocent look-alikes, robustness and a fuzz test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.emoji_words import emoji_to_words
from bot.core.normalize import MAX_CHARS, contains_term, for_scoring, normalize

VIETNAMESE = "Tiếng Việt rất đẹp"
RUSSIAN = "Привет! Это очень хорошо, спасибо. Сор и сок."
GREEK = "Καλημέρα σε όλους, τι κάνετε;"

# (text, term, flag that must be set)
EVASIONS = [
    # invisibles
    ("f\u200buck off", "fuck", "invisible"),
    ("f\u2060u\u2060c\u2060k", "fuck", "invisible"),
    ("\ufefffuck", "fuck", "invisible"),
    ("fu\U000e0066ck", "fuck", "invisible"),
    ("fu\u00adck", "fuck", "invisible"),
    ("f\u202euck", "fuck", "invisible"),
    # zalgo
    ("f\u0334\u0322\u0321u\u0335\u031b\u0358c\u0338\u0327\u0300k\u0337\u0301\u0302", "fuck", "zalgo"),
    ("f\u0334u\u0335c\u0338k\u0337 you", "fuck", "zalgo"),
    # confusables
    ("fu\u0441k", "fuck", "confusables"),  # Cyrillic es inside a Latin word
    ("you are a \u0441\u043e\u0441\u043a", "cock", "confusables"),  # whole word Cyrillic, no genuine Cyrillic nearby
    ("\u0455h\u0456t", "shit", "confusables"),
    ("\uff46\uff55\uff43\uff4b", "fuck", "confusables"),  # fullwidth
    ("\U0001d41f\U0001d42e\U0001d41c\U0001d424", "fuck", "confusables"),  # mathematical bold
    ("\ua730\u1d1c\u1d04\u1d0b", "fuck", "confusables"),  # small capitals
    ("\u03c1\u03bfrn", "porn", "confusables"),  # Greek rho/omicron mixed with Latin
    # leet and masks
    ("$h!t happens", "shit", "leet"),
    ("sh1t", "shit", "leet"),
    ("f*ck you", "fuck", "leet"),
    ("what the f**k", "fuck", "leet"),
    ("**f**uck", "fuck", "leet"),
    ("@ss", "ass", "leet"),
    ("a$$hole", "asshole", "leet"),
    ("n1gg3r", "nigger", "leet"),
    ("b1tch!!!", "bitch", "leet"),
    ("k1ll yourself", "kill yourself", "leet"),
    # separators
    ("f.u.c.k", "fuck", "spaced"),
    ("f-u-c-k off", "fuck", "spaced"),
    ("k y s", "kys", "spaced"),
    ("just k. y. s.", "kys", "spaced"),
    ("f_u_c_k", "fuck", "spaced"),
    ("s*h*i*t", "shit", "spaced"),
    ("$ h ! t", "shit", "spaced"),
    ("i think u should k y s", "kys", "spaced"),
    ("you should a s s", "ass", "spaced"),
]


@pytest.mark.parametrize(("text", "term", "flag"), EVASIONS)
def test_evasion_is_matched_and_flagged(text: str, term: str, flag: str) -> None:
    """Each evasion form still matches the plain term and raises its signal flag."""
    norm = normalize(text)
    assert contains_term(norm, term), norm
    assert getattr(norm, flag) is True


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("**fuck**", "fuck"),
        ("__fuck__", "fuck"),
        ("~~fuck~~", "fuck"),
        ("`fuck`", "fuck"),
        ("||fuck||", "fuck"),
        ("f||u||ck", "fuck"),
        ("***fuck***", "fuck"),
        ("%66%75%63%6b", "fuck"),
        ("%66%75ck you", "fuck you"),
        ("\U0001f595", "middle finger"),
        ("\U0001f595\U0001f3ff", "middle finger"),
        ("\U0001f4a9", "pile of poo"),
        ("<:pepe_fuck:123456789012345678>", "fuck"),
        ("killyourself", "kill yourself"),
        ("FUCKING idiot", "fuck*"),
        ("idiot's", "idiot"),
        ("f\u00fcck", "fuck"),
        ("nothing but a slu7", "slut"),
        ("a crippl3", "cripple"),
    ],
)
def test_markup_url_emoji_and_term_forms_match(text: str, term: str) -> None:
    """Markdown, spoilers, URL-encoding, emoji, custom emoji, joined phrases, prefixes and diacritics are seen through."""
    assert contains_term(normalize(text), term)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("Scunthorpe United", "cunt"),
        ("thanks for the assistance", "ass"),
        ("a cocktail bar", "cock"),
        ("assassin's creed", "ass"),
        ("Shital is here", "shit"),
        ("Shital is here", "tit"),
        ("Sky sources", "kys"),
        ("we rented kayaks", "kys"),
        ("class assignment", "ass"),
        ("I scored 100%", "ass"),
        ("my new Galaxy A55", "ass"),
        ("covid19 and 2019 and $5 and 2nd", "cocks"),
        ("```py\nassert cls.cocktail\n```", "ass"),
        ("`assert`", "ass"),
        ("https://example.com/my%20file%20assets", "ass"),
        ("version 1.2.3", "kys"),
        ("the U.S. is big", "kys"),
        ("\U0001f3f3\ufe0f\u200d\U0001f308 \U0001f382", "fuck"),
        ("documents", "cum"),
        ("", "ass"),
        ("ass", ""),
        ("mp3 and h264", "mpe"),
    ],
)
def test_innocent_lookalikes_do_not_match(text: str, term: str) -> None:
    """Word-aware matching never hits inside longer words, across real words, or on numbers, URLs and code."""
    assert not contains_term(normalize(text), term)


def test_trailing_leet_digit_is_an_extra_form_only() -> None:
    """``slu7`` also reads as ``slut``, but ``web3`` keeps ``web3`` as its primary token (and the text is unchanged)."""
    n = normalize("web3 slu7")
    assert n.tokens == ("web3", "slu7") and n.matching == "web3 slu7"
    assert n.alt_tokens[1] == ("slut",)


@pytest.mark.parametrize("text", ["2019", "100", "$5", "I scored 100%", "a55", "2nd place", "hello there friend"])
def test_numbers_and_plain_text_are_not_leet(text: str) -> None:
    """Tokens without letters, trailing-digit names and ordinals are not de-leeted."""
    norm = normalize(text)
    assert not norm.leet
    assert not (norm.zalgo or norm.invisible or norm.confusables or norm.spaced)


@pytest.mark.parametrize(
    ("text", "matching"),
    [
        (VIETNAMESE, VIETNAMESE.lower()),
        ("Ng\u01b0\u1eddi Vi\u1ec7t", "ng\u01b0\u1eddi vi\u1ec7t"),
        ("Nguoi Vie\u0302\u0323t", "nguoi vi\u1ec7t"),  # decomposed Vietnamese composes, is not zalgo
        (RUSSIAN.replace("!", ""), RUSSIAN.replace("!", "").lower()),
        (GREEK, GREEK.lower()),
        ("https://example.com/my%20file", "https://example.com/my file"),
        ("I scored 100%", "i scored 100%"),
        ("50%ab off", "50%ab off"),
        ("ab  cd\n\tef", "ab cd ef"),
    ],
)
def test_genuine_text_is_untouched_in_matching(text: str, matching: str) -> None:
    """Diacritics, genuine Cyrillic/Greek sentences and plain percent signs survive normalisation unchanged."""
    norm = normalize(text)
    assert norm.matching == matching
    assert not (norm.zalgo or norm.confusables or norm.leet)


@pytest.mark.parametrize("text", [VIETNAMESE, RUSSIAN, GREEK, "Hello, World! It's 3pm."])
def test_for_scoring_keeps_genuine_text(text: str) -> None:
    """for_scoring leaves case, punctuation, diacritics and non-Latin scripts as written."""
    assert for_scoring(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("F U C K you!", "FUCK you!"),
        ("f.u.c.k off", "fuck off"),
        ("sh1t and 3rd place", "sh1t and 3rd place"),  # no de-leet for the model
        ("\uff26\uff35\uff23\uff2b", "FUCK"),
        ("Fu\u0441k", "Fuck"),
        ("f\u200buck", "fuck"),
        ("z\u0334\u0322\u0321algo", "zalgo"),
        ("**bold** ||spoiler|| ~~gone~~ `code`", "bold spoiler gone code"),
        ("%66%75%63%6b", "fuck"),
        ("  lots \n\n of   space  ", "lots of space"),
        ("\U0001f382 party", "birthday cake party"),
        ("<@123456789> hi", "hi"),
    ],
)
def test_for_scoring_table(text: str, expected: str) -> None:
    """for_scoring folds and strips evasions but keeps case and does not de-leet."""
    assert for_scoring(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@123456789> you are welcome here", "you are welcome here"),
        ("<@!123456789> hi", "hi"),
        ("<@&987654321> ping the mods", "ping the mods"),
        ("thanks <@U024BE7LH>!", "thanks !"),
        ("@Maya hi", "@Maya hi"),  # a typed handle (as exports render mentions) stays
        ("mail bob@example.com", "mail bob@example.com"),
        ("see <#123456789>", "see #channel"),
    ],
)
def test_for_scoring_drops_platform_mentions(text: str, expected: str) -> None:
    """Platform mentions are dropped for the model, in training as in serving (a ping must not hide an attack)."""
    assert for_scoring(text) == expected


@pytest.mark.parametrize(
    ("text", "must", "must_not"),
    [
        ("\U0001f595", "fuck you", "skin"),
        ("\U0001f595\U0001f3ff", "middle finger", "skin tone"),
        ("\U0001f3f3\ufe0f\u200d\U0001f308", "rainbow flag", "fuck"),
        ("\U0001f3f3\ufe0f\u200d\u26a7\ufe0f", "transgender flag", "fuck"),
        ("\U0001f382", "birthday cake", "crap"),
        ("\U0001f4a9", "pile of poo", "skin"),
    ],
)
def test_emoji_words_for_scoring(text: str, must: str, must_not: str) -> None:
    """Hostile emoji carry a hostility gloss for the model; pride and birthday emoji are plain names only."""
    scored = for_scoring(text)
    assert must in scored
    assert must_not not in scored


def test_emoji_words_reports_found() -> None:
    """emoji_to_words says whether it replaced anything and spells keycaps out."""
    assert emoji_to_words("no emoji here") == ("no emoji here", False)
    text, found = emoji_to_words("1\ufe0f\u20e3 ok")
    assert found and "keycap 1" in text


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", ()),
        ("   \n\t  ", ()),
        ("\x00\x00\x00", ()),
        ("\ud800", ()),
        ("a\ud800b\udfffc", ("a", "b", "c")),
        ("\ud83d\ude00", ("grinning", "face")),  # a valid surrogate pair is joined into the emoji
        ("\U0001f600" * 3, ("grinning", "face") * 3),
        ("fu\x00ck", ("fu", "ck")),
    ],
)
def test_robustness_inputs(text: str, tokens: tuple[str, ...]) -> None:
    """Empty, whitespace-only, NUL, lone surrogates and emoji-only input never raise and tokenise sensibly."""
    norm = normalize(text)
    assert norm.original is text
    assert norm.tokens == tokens
    for_scoring(text).encode("utf-8")  # no surrogate survives into the scoring text


@pytest.mark.parametrize(
    "text",
    ["a" * 100_000, "fuck you " * 12_000, "\U0001f595" * 100_000, "*a " * 40_000, "\u0301" * 100_000, " " * 100_000],
)
def test_huge_messages_are_capped(text: str) -> None:
    """100,000-character messages keep the original but only the first MAX_CHARS characters are worked on."""
    norm = normalize(text)
    assert norm.original is text
    assert len(norm.tokens) <= MAX_CHARS
    assert len(for_scoring(text)) <= MAX_CHARS


def test_terms_beyond_the_cap_are_not_seen() -> None:
    """A word after the first MAX_CHARS characters is ignored (documented cap)."""
    text = "ok " * (MAX_CHARS // 3 + 1) + "fuck"
    assert not contains_term(normalize(text), "fuck")
    assert contains_term(normalize(text[-10:]), "fuck")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello, World!", ("hello", "world")),
        ("i am a k y s", ("i", "am", "akys")),
        ("$h!t", ("shit",)),
        ("don\u2019t", ("don't",)),
        ("\U0001f382 time", ("birthday", "cake", "time")),
    ],
)
def test_tokens(text: str, tokens: tuple[str, ...]) -> None:
    """Primary tokens are lower-case words with leet decoded and spaced runs joined."""
    assert normalize(text).tokens == tokens


def test_alt_tokens_align_with_tokens() -> None:
    """alt_tokens has one entry per token and holds the second leet reading."""
    norm = normalize("k1ll it")
    assert len(norm.alt_tokens) == len(norm.tokens)
    assert norm.tokens[0] == "kill" and "klll" in norm.alt_tokens[0]


_ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=300)


@settings(max_examples=300, deadline=None)
@given(text=_ANY_TEXT, term=st.text(max_size=20))
def test_fuzz_never_raises_and_keeps_original(text: str, term: str) -> None:
    """normalize, for_scoring and contains_term never raise on arbitrary text (surrogates included)."""
    norm = normalize(text)
    assert norm.original is text
    assert len(norm.alt_tokens) == len(norm.tokens)
    assert all(tok and not any(c.isspace() for c in tok) for tok in norm.tokens)
    scored = for_scoring(text)
    assert len(scored) <= MAX_CHARS
    scored.encode("utf-8")
    assert isinstance(contains_term(norm, term), bool)
