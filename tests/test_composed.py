"""Composed messages (bot.training.composed): several sentences in one message, benign twins and hateful twins that
differ in one sentence; never a held-apart evaluation text or one of its sentences."""

from __future__ import annotations

from bot.core.models import LABELS
from bot.training.data import ZERO
from bot.training.handwritten import HATE


def test_each_hateful_row_is_its_benign_twin_with_one_sentence_swapped():
    """Rows come in pairs (benign, hateful) that share the opener and the closer; the benign row is all zeros and
    the hateful one HATE (identity_attack 1); deterministic for a seed, other rows for another seed."""
    from bot.training.composed import CLOSERS, OPENERS, composed_rows

    rows = composed_rows(13, n=200)
    assert rows == composed_rows(13, n=200) and rows != composed_rows(14, n=200)
    assert len(rows) == 400 and all(r.source == "hand_composed" for r in rows)
    ia = LABELS.index("identity_attack")
    heads = tuple(o.lower() for o in OPENERS)
    tails = tuple(c.lower().replace("{n}", "") for c in CLOSERS)
    opened = closed = 0
    for benign, hateful in zip(rows[::2], rows[1::2], strict=True):
        assert benign.target == ZERO and hateful.target == HATE and hateful.target[ia] == 1.0
        assert benign.text != hateful.text
        b, h = benign.text.lower(), hateful.text.lower()
        head = next((o for o in heads if b.startswith(o)), None)
        if head is not None:
            opened += 1
            assert h.startswith(head)
        tail = next((c for c in tails if c and c.split()[0] in b.split(". ")[-1]), None)
        closed += tail is not None
    assert 80 < opened < 160 and closed > 60  # about 3 in 5 rows have each


def test_composed_is_a_fast_loop_family_and_never_an_evaluation_text():
    """The fast loop knows the family; no row (normalised as in training) is a held-apart identity sentence or a
    founding-scene probe, nor contains one of the probes' sentences of five words or more (four-word slogans such as
    "trans women are women." are in the scene families' own supportive lines)."""
    from bot.core.pieces import scoring_pieces
    from bot.eval.identity_benign import IDENTITY_CASES
    from bot.eval.scene import SCENE_CASES, read_cases
    from bot.training.fast import FAMILIES, new_rows
    from bot.training.train import normaliser

    assert "composed" in FAMILIES
    norm = normaliser()
    held = {norm(r["text"]).strip().lower() for f in (IDENTITY_CASES, SCENE_CASES) for r in read_cases(f)}
    sentences = {p.strip().lower() for t in held for p in scoring_pieces(t)[1:] if len(p.split()) >= 5}
    trained = {r.text.lower() for r in new_rows(("composed",), 1)}
    assert len(trained) > 1800 and held.isdisjoint(trained)
    assert not [s for s in sentences if any(s in t for t in trained)]
