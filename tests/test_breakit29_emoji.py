"""Break-it (twenty-ninth session): emoji names give way to words at the caps, measured as the later steps leave the text (bot.core.emoji_words, bot.core.normalize)."""

from bot.core.normalize import contains_term, for_scoring, normalize
from bot.core.pieces import scoring_pieces

SLUR = "faggot"


def test_nfkc_expansion_after_the_budget_pushes_a_slur_past_the_scoring_cap() -> None:
    # 600 fire emoji (names fit the 4,000 budget as counted) then 100 U+FDFA, which NFKC (applied AFTER the emoji
    # step) expands to 18 characters each: the budget counted 100, the text grew by 1,700, the slur is cut.
    # Without the emoji the slur is read (the U+FDFA alone are 1,800 characters), so the emoji padding did it.
    text = "\U0001F525" * 600 + "\ufdfa" * 100 + " you " + SLUR
    assert SLUR in for_scoring("\ufdfa" * 100 + " you " + SLUR)
    assert SLUR in for_scoring(text)


def test_invisible_padding_under_the_cap_erases_emoji_names_from_the_scoring_text() -> None:
    # 3,990 zero-width spaces (under the 4,000 cap, so not stripped first) are counted by the budget though the
    # model never sees them: every name gives way, the text the model reads is empty and nothing is scored.
    # Before words_first (and with the padding gone) the model read "middle finger, fuck you".
    text = "\U0001F595" + "\u200b" * 3990
    assert for_scoring(text, words_first=False) == "middle finger, fuck you"
    assert for_scoring(text) == for_scoring(text, words_first=False)
    assert scoring_pieces(text) != ("",)


def test_markdown_padding_under_the_cap_erases_emoji_names() -> None:
    # the same with Markdown spoiler bars, which step 10 removes after the budget counted them
    text = "\U0001F92E \U0001F595 " + "||" * 1990
    assert for_scoring(text) == for_scoring(text, words_first=False)


def test_one_dotted_capital_i_lets_emoji_padding_push_a_slur_past_the_matching_cap() -> None:
    # 700 fire emoji spell out to 3,500 characters, under MAX_EXPANDED (8,000), so words_first keeps the names. But
    # one "İ" anywhere lower-cases to "i" + U+0307, and normalize() then runs _prepare() again on the expanded
    # text, and _prepare() cuts it at MAX_CHARS (4,000), not MAX_EXPANDED: the slur after the names is cut off.
    assert contains_term(normalize("\U0001F525" * 700 + " you " + SLUR), SLUR)  # without the İ: matched
    assert contains_term(normalize("\U0001F525" * 700 + " you " + SLUR + " İ"), SLUR)
    assert contains_term(normalize("\U0001F525" * 700 + " İstanbul: you " + SLUR), SLUR)


def test_turkish_capitals_alone_push_a_slur_past_the_matching_cap() -> None:
    # no emoji at all: 3,991 characters, under the 4,000 cap; "İ" lower-cases to two characters, so the text
    # prepared again is 5,970 characters and the second _prepare() cuts it at 4,000
    assert contains_term(normalize("İ " * 1990 + " you " + SLUR), SLUR)


# the second pass of normalize() (a lower-cased İ, NFKC growth) must not cut what the first pass kept


def test_emoji_padding_near_max_expanded_plus_dotted_capitals_cut_a_slur() -> None:
    # 1,300 fire emoji spell out to 7,800 characters, under MAX_EXPANDED (8,000), so the names are kept; 100 "İ"
    # lower-case to 200 characters, so the text prepared again is over 8,000 and the second pass (cap=MAX_EXPANDED)
    # cuts the slur. Without the emoji, or with "I" instead of "İ", the slur is matched.
    assert contains_term(normalize("İ" * 100 + " you " + SLUR), SLUR)
    assert contains_term(normalize("\U0001F525" * 1300 + " " + "I" * 100 + " you " + SLUR), SLUR)
    assert contains_term(normalize("\U0001F525" * 1300 + " " + "İ" * 100 + " you " + SLUR), SLUR)


def test_nfkc_expansion_plus_one_dotted_capital_cuts_a_slur_from_matching() -> None:
    # 450 U+FDFA expand (NFKC, after the emoji step) to 8,100 characters; matching has no cap after that, so the
    # slur is matched, until one "İ" sends the text through the second pass, which cuts it at 8,000.
    assert contains_term(normalize("\ufdfa" * 450 + " you " + SLUR), SLUR)
    assert contains_term(normalize("\ufdfa" * 450 + " İ you " + SLUR), SLUR)


def test_emoji_and_nfkc_padding_plus_dotted_capital_cut_a_slur() -> None:
    text = "\U0001F525" * 700 + "\ufdfa" * 300 + " İ you " + SLUR
    assert contains_term(normalize(text.replace("İ", "I")), SLUR)
    assert contains_term(normalize(text), SLUR)
