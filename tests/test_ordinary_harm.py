"""Ordinary talk with hard words (bot.training.ordinary_harm, candidate E's data): people next to words of harm in
talk about prices, work, software, games, news and the future, benign; the same words aimed at a group or the
reader, threats; never one of the held-apart evaluation texts."""

from __future__ import annotations

from bot.core.models import LABELS
from bot.training.counterfactual import TERMS
from bot.training.data import ZERO
from bot.training.handwritten import HATE_THREAT, INSULT_THREAT


def test_benign_frames_take_every_people_phrase_and_twins_aim_the_same_words():
    """Every benign frame appears with every people phrase (all labels 0); every identity term has three group
    twins (HATE_THREAT); the person twins are INSULT_THREAT; benign rows outnumber twins at least five to one; the
    rows are deterministic for a seed and the seed picks the twins."""
    from bot.training.ordinary_harm import BENIGN_T, PEOPLE, PERSON_TWIN_T, ordinary_harm_rows

    rows = ordinary_harm_rows(13)
    assert rows == ordinary_harm_rows(13) and rows != ordinary_harm_rows(14)
    benign = [r for r in rows if r.target == ZERO]
    n_frames = sum(len(v) for v in BENIGN_T.values())
    with_p = sum("{P}" in t for v in BENIGN_T.values() for t in v)
    assert len(benign) == with_p * len(PEOPLE) + (n_frames - with_p)
    assert sum(r.text.startswith("holders ") for r in benign) >= 5
    group = [r for r in rows if r.target == HATE_THREAT]
    assert len(group) == 3 * len(TERMS)
    for term in ("trans", "homosexual", "jewish"):
        assert sum(f"{term} people" in r.text or f"{term} person" in r.text for r in group) == 3, term
    person = [r for r in rows if r.target == INSULT_THREAT]
    assert sorted(r.text for r in person) == sorted(PERSON_TWIN_T)
    assert len(benign) >= 5 * (len(group) + len(person))
    threat = LABELS.index("threat")
    assert all(r.target[threat] == 1.0 for r in group + person) and all(r.source == "hand_ordinary" for r in rows)


def test_ordinary_harm_is_a_fast_loop_family_and_never_an_evaluation_text():
    """The fast loop knows the family, and none of its rows (normalised as in training) is a case of the
    held-apart identity sentences or the founding-scene probe set."""
    from bot.eval.identity_benign import IDENTITY_CASES
    from bot.eval.scene import SCENE_CASES, read_cases
    from bot.training.fast import FAMILIES, new_rows
    from bot.training.train import normaliser

    assert "ordinary-harm" in FAMILIES
    norm = normaliser()
    held = {norm(r["text"]).strip().lower() for f in (IDENTITY_CASES, SCENE_CASES) for r in read_cases(f)}
    trained = {r.text.lower() for r in new_rows(("ordinary-harm",), 1)}
    assert len(trained) > 1000 and held.isdisjoint(trained)
