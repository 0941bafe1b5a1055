"""Scoring a message whole and sentence by sentence (bot.core.pieces), and the service using it end to end."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.models import LABELS, ChannelRef, MemberRef, Message, Scores, ServerRef
from bot.core.pieces import MAX_PIECES, combine, score_messages, scoring_pieces
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore

PAD = "I spent the weekend setting up the new build server and the cache finally works."


class DilutingScorer:
    """A Scorer that behaves like a pooled text classifier: an attack word scores high only in a short text.

    identity_attack/toxicity are 0.97 when the text contains "freaks" and has at most 8 words, 0.05 when it contains
    "freaks" among more words (the benign rest dilutes it), else 0.01.
    """

    name = "diluting"
    version = "1"
    labels = LABELS

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        self.calls.append(list(texts))
        out = []
        for t in texts:
            v = 0.01
            if "freaks" in t.lower():
                v = 0.97 if len(t.split()) <= 8 else 0.05
            out.append(Scores({label: (v if label in ("identity_attack", "toxicity") else 0.01) for label in LABELS},
                              model=self.name))
        return out


def test_one_sentence_is_scored_whole_only():
    """A one-sentence message is one piece: the whole for_scoring text."""
    assert scoring_pieces("trans women are women") == ("trans women are women",)
    assert scoring_pieces(f"{PAD} trans people are freaks!", sentences=False) == (f"{PAD} trans people are freaks!",)
    assert scoring_pieces("   ") == ("",)


def test_sentences_and_lines_become_pieces():
    """Sentences (after . ! ? and a space) and lines are scored besides the whole text, in order."""
    assert scoring_pieces(f"{PAD} trans people are freaks!") == (
        f"{PAD} trans people are freaks!", PAD, "trans people are freaks!")
    assert scoring_pieces("nice photo of you two\nyou will never be a real woman") == (
        "nice photo of you two you will never be a real woman", "nice photo of you two",
        "you will never be a real woman")


def test_quoted_text_is_not_cut_out_of_its_context():
    """A sentence end inside double quotes does not split: the quote stays with the words condemning it."""
    text = 'He wrote "trans people are freaks. period." That is vile and I reported it.'
    assert scoring_pieces(text) == (text, 'He wrote "trans people are freaks. period."', "That is vile and I reported it.")
    curly = "Someone posted “they are vermin. all of them.” in general, please remove it"
    assert scoring_pieces(curly) == (curly, "Someone posted “they are vermin. all of them.”",
                                     "in general, please remove it")


def test_block_quote_lines_are_never_scored_alone():
    """A Markdown block quote (how Discord and Slack quote a message) is judged only with the reply around it."""
    text = "> trans people are freaks\nthis is disgusting, reported to the mods"
    assert scoring_pieces(text) == ("> trans people are freaks this is disgusting, reported to the mods",
                                    "this is disgusting, reported to the mods")


PAD4 = ("Thanks for the help with the deploy today. The coffee machine on floor two is fixed now. I pushed the "
        "release notes to the wiki page. Lunch is at noon in the big meeting room.")


def test_a_message_wrapped_in_quotes_is_still_split():
    """A quote holding more than two sentence breaks does not keep them together: wrapping a whole padded attack in
    double quotes must not switch the pieces off (found by a break-it review)."""
    pieces = scoring_pieces(f'"{PAD4} you will never be a real woman."')
    assert 'you will never be a real woman."' in pieces
    assert len(pieces) == 6


def test_curly_apostrophes_do_not_make_quotes():
    """’ in "don’t" and ‘ in "‘90s" are apostrophes, not a quoted span that would hide the sentences between them."""
    pieces = scoring_pieces("Back in the ‘90s we had no phones. I don’t miss it at all, honestly. you will never be a "
                            "real woman.")
    assert "you will never be a real woman." in pieces


def test_quoting_only_oneself_is_ones_own_words():
    """When every line is a block quote, the lines are scored alone after all (no reply gives them context)."""
    text = "\n".join(f"> {s}" for s in (PAD4 + " I will find you and kill you tonight.").split(". "))
    assert "I will find you and kill you tonight." in scoring_pieces(text)


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("```\nyou will never be a real woman\n```\nSomeone posted this in general, I reported it.",
         ("Someone posted this in general, I reported it.",)),
        ("Mods, this user keeps posting this:\n`trans people are groomers and should be shot`\nplease ban them now.",
         ("Mods, this user keeps posting this:", "please ban them now.")),
        ('He wrote:\n"Black people are animals.\nThey should all be sent back."\nThat is racist and he is banned.',
         ("That is racist and he is banned.",)),
        ("Reporting this, it was sent to me in DMs:\n>>> gay people are disgusting and should be locked up\n"
         "all of them belong in prison", ("Reporting this, it was sent to me in DMs:",)),
    ],
)
def test_pasted_code_quotes_and_colon_lines_keep_their_context(text, pieces):
    """Fenced code, a multi-line double quote, a >>> quote and the line after "he posted this:" are judged only
    within the whole message (the reporter's context), never alone."""
    assert scoring_pieces(text)[1:] == pieces


def test_short_pieces_and_duplicates_are_skipped():
    """Pieces of fewer than four words and repeated sentences are not scored alone (unstable / already scored)."""
    assert scoring_pieces("Maya, ignore them. we love you so much") == (
        "Maya, ignore them. we love you so much", "we love you so much")
    assert scoring_pieces("Worthless. That coin is going nowhere fast.") == (
        "Worthless. That coin is going nowhere fast.", "That coin is going nowhere fast.")
    assert scoring_pieces("go team go now. go team go now.") == ("go team go now. go team go now.", "go team go now.")


def test_pieces_are_capped():
    """At most MAX_PIECES sentences are scored alone besides the whole text."""
    text = " ".join(f"this is sentence number {i}." for i in range(MAX_PIECES + 10))
    assert len(scoring_pieces(text)) == 1 + MAX_PIECES


def test_combine_keeps_the_highest_score_per_label():
    """combine() takes per label the maximum over the parts and keeps the first part's labels and model."""
    a = Scores({"toxicity": 0.2, "identity_attack": 0.9}, missing=("threat",), model="m")
    b = Scores({"toxicity": 0.7, "identity_attack": 0.1}, missing=("threat",), model="m")
    c = combine([a, b])
    assert dict(c.values) == {"toxicity": 0.7, "identity_attack": 0.9}
    assert c.missing == ("threat",) and c.model == "m"
    assert combine([a]) is a
    with pytest.raises(ValueError, match="at least one"):
        combine([])


def test_score_messages_sees_an_attack_behind_benign_padding():
    """The padded attack scores like the attack alone; each distinct piece is scored once, in one batch."""
    scorer = DilutingScorer()
    padded, alone, benign = score_messages(
        scorer, [f"{PAD} trans people are freaks.", "trans people are freaks.", PAD])
    assert scorer.score_batch([f"{PAD} trans people are freaks."])[0].values["identity_attack"] == 0.05
    assert padded.values["identity_attack"] == 0.97 == alone.values["identity_attack"]
    assert benign.values["identity_attack"] == 0.01
    first = scorer.calls[0]
    assert len(scorer.calls[0]) == len(set(first)) == 3  # whole padded text, PAD, the attack (shared)


async def test_service_flags_a_padded_attack(tmp_path: Path):
    """End to end with a real SQLite mod log: the service flags an identity attack hidden behind a benign sentence
    and records the combined score; the benign sentence alone passes."""
    store = await SqliteStore.open(tmp_path / "mod.db")
    scorer = DilutingScorer()
    service = ModerationService(scorer=scorer, store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                                max_delay_s=0.001)
    await service.start()
    try:
        server = ServerRef("discord", "g1", "guild")
        old = datetime(2025, 1, 1, tzinfo=UTC)
        author = MemberRef(id="u1", name="u1", joined_at=old, created_at=old)
        t0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

        def message(mid: str, text: str, k: int) -> Message:
            return Message(server=server, channel=ChannelRef(id="c1", name="general"), author=author, id=mid,
                           text=text, created_at=t0 + timedelta(minutes=k))

        attack = await service.handle(message("m1", f"{PAD} trans people are freaks.", 0))
        benign = await service.handle(message("m2", PAD, 5))
        assert attack.verdict.flagged and "identity_attack" in attack.verdict.labels
        assert not benign.verdict.flagged
        stored = await store.get_verdict("discord", "g1", "m1")
        assert stored is not None and stored.flagged
        assert stored.scores["identity_attack"] == pytest.approx(0.97)
    finally:
        await service.close()
        await store.close()


_OLD_SENTENCE_END = r"[.!?…]+[\"”’»)\]]*(\s+)"  # the pattern before the twenty-sixth session (quadratic on runs)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?…\"”’»)]\n\t")), max_size=60))
def test_the_sentence_end_pattern_finds_what_the_quadratic_one_found(text):
    """The linear sentence-end pattern (a run of end marks taken whole, from its first mark) cuts every text where
    the old backtracking one did: same spans of the spaces after each sentence."""
    import re

    from bot.core.pieces import _SENTENCE_END

    old = [m.span(1) for m in re.finditer(_OLD_SENTENCE_END, text)]
    assert [m.span(1) for m in _SENTENCE_END.finditer(text)] == old


def test_a_long_run_of_end_marks_is_split_like_a_short_one():
    """A 50,000-character run of dots with no space after it is one sentence, and with a space it ends one; the old
    pattern retried from each dot of such a run (minutes for this length; 0.34 s for 4,000 dots)."""
    from bot.core.pieces import _sentences

    assert _sentences("." * 50_000 + "x") == ["." * 50_000 + "x"]
    text = "first sentence is here " + "." * 50_000 + " and the second sentence follows here"
    assert _sentences(text) == ["first sentence is here " + "." * 50_000, "and the second sentence follows here"]


# ---------------------------------------------------------------- emoji joined by ZWJ stay one emoji in every piece
TRANS_FLAG = "\U0001f3f3\ufe0f\u200d\u26a7\ufe0f"  # 🏳️‍⚧️ (white flag, ZWJ, transgender symbol)


def test_a_zwj_emoji_alone_is_one_text_not_its_parts():
    """The transgender flag alone is read as "transgender flag", once: before, the pieces were cut from the text
    with its zero-width joiners removed, so a second piece "white flag transgender symbol" was scored and (0.92
    on identity_attack with the shipped model) sent a supporter's flag to review."""
    assert scoring_pieces(TRANS_FLAG) == ("transgender flag",)
    assert scoring_pieces(TRANS_FLAG * 2) == ("transgender flag transgender flag",)


def test_sentence_pieces_keep_zwj_emoji_whole():
    """A supportive message with the flag in a sentence: its piece names the flag as the whole text does."""
    plan = scoring_pieces(f"Congratulations Rachel! {TRANS_FLAG} So proud of you. See you at the party tonight.")
    assert any("transgender flag" in p for p in plan[1:])
    assert not any("white flag" in p or "transgender symbol" in p for p in plan)


def test_long_text_and_its_chunks_keep_zwj_emoji_whole():
    """A text over the 4,000 characters read whole (normalize.MAX_CHARS) with invisible padding: the whole text and
    its later chunks still read the flag as one emoji, while the padding (zero-width spaces between letters) is
    removed before the characters are counted, as before."""
    from bot.core.normalize import visible

    padded = "\u200b".join("hello") + " "
    text = (padded + f"we love you {TRANS_FLAG} ") * 300
    plan = scoring_pieces(text)
    assert "transgender flag" in plan[0] and "white flag" not in " ".join(plan)
    assert len(plan) > 1 and all("transgender symbol" not in p for p in plan)
    assert "\u200b" not in visible(text) and "\U0001f3f3\u200d\u26a7" in visible(text)
    assert visible("a\u200db") == "ab" and visible(f"x{TRANS_FLAG}y") == "x\U0001f3f3\u200d\u26a7y"


def test_joiners_kept_for_emoji_cannot_pad_a_slur_past_the_caps():
    """A run of 4,100 joiners between two emoji pushed the rest of the message past a 4,000-character max_chars
    (the whole run was kept as part of an "emoji sequence"): a slur after it was never read. Only one joiner
    between two emoji survives, kana and CJK are not emoji, and a selector without a joiner is dropped as before."""
    from bot.core.normalize import visible
    from bot.core.pieces import is_truncated

    text = "hey \U0001f600" + "\u200d" * 4100 + "\U0001f600 go die you f4ggot"
    assert visible(text) == "hey \U0001f600\U0001f600 go die you f4ggot"
    assert not is_truncated(text, 4000) and "go die you f4ggot" in scoring_pieces(text, max_chars=4000)[0]
    assert visible("\u3042\u200d\u3044") == "\u3042\u3044"  # hiragana: no emoji, no joiner kept
    assert visible("\u2764\ufe0f") == "\u2764"  # a lone selector counts nothing
    assert visible(TRANS_FLAG) == "\U0001f3f3\u200d\u26a7"
