"""Stance twins (bot.training.stance_twins, candidate C's data): hateful questions, threats and implicit derogation
with benign twins in the same register, for every identity term; never one of the held-apart evaluation texts."""

from __future__ import annotations

import re

from bot.core.models import LABELS
from bot.training.counterfactual import TERMS
from bot.training.data import ZERO
from bot.training.handwritten import HATE, HATE_THREAT


def test_every_term_has_both_sides_in_every_register():
    """Each term appears in hateful and benign rows of the question, threat and implicit registers; rows are
    deterministic for a seed and every frame is used once per term."""
    from bot.training.stance_twins import BENIGN_T, HATEFUL_T, stance_twin_rows

    rows = stance_twin_rows(13)
    assert rows == stance_twin_rows(13) and rows != stance_twin_rows(14)
    assert set(HATEFUL_T) == set(BENIGN_T) == {"question", "threat", "implicit"}
    n_hate = sum(len(v) for v in HATEFUL_T.values())
    assert sum(r.target != ZERO for r in rows) == len(TERMS) * n_hate
    termless = sum("{X}" not in t for v in BENIGN_T.values() for t in v)
    n_benign = sum(len(v) for v in BENIGN_T.values())
    assert sum(r.target == ZERO for r in rows) == len(TERMS) * (n_benign - termless) + termless
    for term in ("homosexual", "straight", "trans", "muslim", "native american"):
        named = [r for r in rows if re.search(rf"\b{term}\b", r.text)]
        hateful = [r for r in named if r.target != ZERO]
        benign = [r for r in named if r.target == ZERO]
        assert len(hateful) == n_hate and len(benign) == n_benign - termless, term
    assert all(r.source == "hand_twin" for r in rows)


def test_threats_are_identity_attacks_and_threats_and_the_rest_hate():
    """Hateful threat rows carry threat 1 and identity_attack 1 (HATE_THREAT), other hateful rows HATE, benign rows
    all zeros; no row has an article before a vowel-initial term wrong ("a asian")."""
    from bot.training.stance_twins import stance_twin_rows

    rows = stance_twin_rows(13)
    threat, ia = LABELS.index("threat"), LABELS.index("identity_attack")
    hateful = [r for r in rows if r.target != ZERO]
    assert {r.target for r in hateful} == {HATE, HATE_THREAT}
    assert all(r.target[ia] == 1.0 for r in hateful)
    assert any("wiped out" in r.text and r.target[threat] == 1.0 for r in hateful)
    assert not any(f"a {t} " in r.text for r in rows for t in TERMS if t[0] in "aeiou")


def test_stance_twins_are_a_fast_loop_family_and_never_an_evaluation_text():
    """The fast loop knows the family, and none of its rows (normalised as in training) is a case of the
    held-apart identity sentences or the founding-scene probe set."""
    from bot.eval.identity_benign import IDENTITY_CASES
    from bot.eval.scene import SCENE_CASES, read_cases
    from bot.training.fast import FAMILIES, new_rows
    from bot.training.train import normaliser

    assert "stance-twins" in FAMILIES
    norm = normaliser()
    held = {norm(r["text"]).strip().lower() for f in (IDENTITY_CASES, SCENE_CASES) for r in read_cases(f)}
    trained = {r.text.lower() for r in new_rows(("stance-twins",), 1)}
    assert len(trained) > 1500 and held.isdisjoint(trained)
