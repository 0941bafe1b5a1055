"""Normalisation that hostile input cannot defeat: invisible padding and normalising twice."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.normalize import for_scoring, normalize
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
OLD = T0 - timedelta(days=400)
ZWSP = "\u200b"


def _msg(text: str, platform: str = "slack") -> Message:
    return Message(server=ServerRef(platform, "g1", "g"), channel=ChannelRef("c1", "general"),
                   author=MemberRef("u1", "u1", joined_at=OLD, created_at=OLD), id="m1", text=text, created_at=T0)


@pytest.fixture
async def service(tmp_path: Path):
    store = await SqliteStore.open(tmp_path / "mod.db")
    svc = ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                            max_delay_s=0.001)
    await svc.start()
    yield svc
    await svc.close()
    await store.close()


async def test_invisible_padding_past_max_chars_does_not_hide_the_words(service):
    """45,000 zero-width spaces before an insult: the words are still read and flagged, not 'not_scored'."""
    out = await service.handle(_msg(ZWSP * 45_000 + "you people are freaks"))
    v = out.verdict
    assert v.score_status == "ok"
    assert v.scores is not None and v.scores.get("identity_attack") == pytest.approx(0.97)
    assert v.flagged


async def test_visible_text_past_max_chars_after_padding_is_truncated_and_reviewed(service):
    """Invisible padding plus more than max_chars visible characters: status 'truncated' and a long_text hit."""
    out = await service.handle(_msg(ZWSP * 5_000 + "word " * 8_200))
    v = out.verdict
    assert v.score_status == "truncated"
    assert any(h.rule == "long_text" for h in v.rule_hits)


def test_blocklist_matching_is_not_defeated_by_4000_invisibles():
    """A word behind 4,500 invisible characters is still a token of the normalised text."""
    assert "freaks" in normalize(ZWSP * 4_500 + "you freaks").tokens
    assert for_scoring("\u2060" * 4_500 + "you freaks") == "you freaks"


@pytest.mark.parametrize("text", ["\u0130stanbul", "\u0130", "I\u0307", "ﬁ\u0130x", "a\u0301\u0301\u0301b",
                                  "\u0130\u0301", "ǅ", "ⅸ", "Ⅸ\u0307",
                                  # hypothesis's find: a symbol dropped from a word without letters bared an apostrophe
                                  "0'@", "\u00e9'@", "0'$ b", "@'i", "@'I"])
def test_normalize_is_idempotent_on_known_cases(text):
    """Normalising the matching text again gives the same text (dotted capital I, ligatures, marks)."""
    once = normalize(text).matching
    assert normalize(once).matching == once


_LOOKALIKES = "аеорсуіјѕкмнтвАВЕКМНОРСТХΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιᴀʙᴄ𝐚𝐛𝔞ａｂＡ０１İıßẞﬁﬂǅǆ"
_ENCLOSED = "🇫🇦🇬🇰🇮🇪🇺🇸🅵🅰🅾🄵🅕🄕"
_MARKS = "\u0300\u0301\u0302\u0307\u0308\u0323\u0336\u034f\u200b\u200d\u2060\ufe0f"
_TEXT = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzIKS01345@$!*. -_'" + _LOOKALIKES + _MARKS
                                            + _ENCLOSED),
                max_size=40)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_normalize_matching_is_idempotent(text):
    """normalise(normalise(x).matching) == normalise(x).matching over lookalikes, dotted I and combining marks."""
    once = normalize(text).matching
    assert normalize(once).matching == once
    assert unicodedata.is_normalized("NFC", once)


@pytest.mark.parametrize(("text", "word"), [
    ("🇫 🇦 🇬 🇬 🇴 🇹", "faggot"),  # regional indicators, spaced
    ("🇫🇦🇬🇬🇴🇹", "faggot"),  # adjacent: the pairs FA, GG, OT are not all flags
    ("🇰🇮🇰🇪", "kike"),  # two real flags (Kiribati, Kenya) that spell a slur
    ("🅵🅰🅶🅶🅾🆃", "faggot"),  # negative squared, with the blood-type emoji among them
    ("🄵🄰🄶🄶🄾🅃", "faggot"), ("🅕🅐🅖🅖🅞🅣", "faggot"), ("🄕🄐🄖🄖🄞🄣", "faggot"),  # squared, circled, parenthesised
    ("you 🅵.🅰.🅶", "fag"),
    # the breaker's: a blood-type letter inside a word, glue between letters or flags, letters beside flags
    ("🅱itch", "bitch"), ("f🅰ggot", "faggot"), ("tr🅰nny", "tranny"), ("wetb🅰ck", "wetback"),
    ("\u200b".join("🅵🅰🅶🅶🅾🆃"), "faggot"), ("\u2060".join("🅵🅰🅶🅶🅾🆃"), "faggot"),
    ("  ".join("🅵🅰🅶🅶🅾🆃"), "faggot"), ("\U0001f3fc".join("🅵🅰🅶🅶🅾🆃"), "faggot"),
    ("🇰🇮\u200b🇰🇪", "kike"), ("🇰🇮\u2060🇰🇪", "kike"), ("🇰️🇮️🇰️🇪", "kike"),
    ("🇰🇮🇰🇪s", "kikes"), ("🇳🇮🇬🇬er", "nigger"), ("🇨🇭🇮🇳k", "chink"), ("f🇦🇬", "fag"), ("🇨🇺nt", "cunt"),
])
def test_words_spelt_in_enclosed_letters_are_matched(text, word):
    """Letters in boxes, circles and regional indicators read as the word they spell (the breaker's evasion:
    before, only squared capitals folded; regional indicators and negative squares stayed emoji or blood types)."""
    from bot.core.normalize import contains_term

    n = normalize(text)
    assert contains_term(n, word), n
    assert n.confusables
    assert word in for_scoring(text).replace(" ", "").lower()  # the model reads the word too (serve has no blocklist)
    assert normalize(n.matching).matching == n.matching


def test_a_slur_spelt_in_real_flags_reaches_the_model_as_letters():
    """🇳🇮🇬🇬🇪🇷 pairs into three real flags (Nicaragua, Guernsey, Eritrea): read only as flags, the model scored it
    0.04-0.06 through the Perspective endpoint, which has no blocklist (a newcomer's finding). Two flags or more are
    read both ways for the model too; one flag is not."""
    assert for_scoring("\U0001f1f3\U0001f1ee\U0001f1ec\U0001f1ec\U0001f1ea\U0001f1f7").startswith("NIGGER ")
    assert for_scoring("I love \U0001f1eb\U0001f1f7") == "I love France"


@pytest.mark.parametrize(("text", "scoring", "not_in_matching"), [
    ("I love 🇫🇷", "I love France", " fr "),
    ("🇺🇸 🇬🇧 friends", "United States United Kingdom friends", "us"),
    ("got an 🅰️ on the test", "got an A button (blood type) on the test", "ag"),
    ("🅿️ here", "P button here", None),
    ("Paris 🇫🇷!", "Paris France !", "fr"),
    ("🇫️🇷", "France", "fr"),  # a VS-16 inside the flag: still the flag, not raw regional indicators
])
def test_flags_and_lone_emoji_letters_stay_emoji(text, scoring, not_in_matching):
    """One flag (two regional indicators) and a lone 🅰 🅱 🅾 🅿 keep their emoji names for the model and the blocklist;
    the letters of one flag are not read as a word."""
    assert " ".join(for_scoring(text).split()) == scoring
    n = normalize(text)
    assert not n.confusables
    if not_in_matching:
        assert not_in_matching.strip() not in n.tokens


def test_training_reads_enclosed_letters_as_the_shipped_model_was_trained():
    """The recorded recipes must rebuild the shipped model bit for bit (issue 26): 49 OLID training tweets end in
    flag runs, so the training normaliser leaves enclosed letters as emoji, as before this step existed; serving
    reads them both ways."""
    from bot.training.train import normaliser

    tweet = "more pricks than a pincushion! #MAGA \U0001f1ec\U0001f1e7\U0001f1fa\U0001f1f8"
    assert normaliser()(tweet) == "more pricks than a pincushion! #MAGA United Kingdom United States"
    assert for_scoring(tweet) == "more pricks than a pincushion! #MAGA GBUS United Kingdom United States"


FIRE = "\U0001f525"


@pytest.mark.parametrize("padding", [FIRE * 1_400, "\U0001f1eb\U0001f1f7" * 800,
                                     "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea\U0001f1ee\U0001f1f9" * 300,
                                     (FIRE + " \U0001f480 ") * 700])
def test_emoji_padding_cannot_push_a_slur_past_the_caps(padding):
    """A Discord message of 1,400 fire emoji (1,400 characters) spelt out is 8,400 characters: the slur after it fell
    past the matching cap (8,000) and the scoring cap (4,000), so neither the slurs list nor the model saw it. Now the
    emoji names give way: a run of one emoji is named once, and names that no longer fit become spaces."""
    text = padding + " go back in the closet, tranny"
    assert normalize(text).tokens[-1] == "tranny"
    scored = for_scoring(text)
    assert scored.endswith("go back in the closet, tranny") and len(scored) <= 4_000


def test_emoji_names_that_fit_are_spelt_out_as_before():
    """Below the caps nothing changes: every emoji keeps its name, repeats included."""
    assert for_scoring(FIRE * 3 + " lit") == "fire fire fire lit"
    assert for_scoring(FIRE * 799 + " lit") == "fire " * 799 + "lit"  # 3,999 characters single-spaced
    assert for_scoring(FIRE * 801 + " lit") == "fire lit"  # 4,008: the run is named once


def test_training_spells_emoji_out_as_the_shipped_model_was_trained():
    """The training normaliser keeps the old cap (the recorded recipes rebuild the shipped model bit for bit): the
    text is cut at 4,000 characters of names."""
    from bot.training.train import normaliser

    text = FIRE * 801 + " lit"
    assert normaliser()(text) == ("fire " * 801)[:4_000]


async def test_a_slur_behind_emoji_padding_is_reviewed_through_the_service(service):
    """End to end: 1,400 fire emoji then a slur from the default slurs list: a blocklist hit, sent to review."""
    out = await service.handle(_msg(FIRE * 1_400 + " go back in the closet, tranny"))
    v = out.verdict
    assert any(h.rule == "blocklist" and "slurs" in h.detail for h in v.rule_hits)
    assert v.flagged
