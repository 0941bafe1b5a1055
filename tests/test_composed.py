"""Composed messages (bot.training.composed): several sentences in one message, benign twins and hateful twins that
differ in one sentence; never a held-apart evaluation text or one of its sentences."""

from __future__ import annotations

import re

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

    assert "composed" in FAMILIES and "composed-stance" in FAMILIES and "composed-half" in FAMILIES
    norm = normaliser()
    held = {norm(r["text"]).strip().lower() for f in (IDENTITY_CASES, SCENE_CASES) for r in read_cases(f)}
    sentences = {p.strip().lower() for t in held for p in scoring_pieces(t)[1:] if len(p.split()) >= 5}
    for family, least in (("composed", 1800), ("composed-stance", 1300), ("composed-half", 900)):
        trained = {r.text.lower() for r in new_rows((family,), 1)}
        assert len(trained) > least and held.isdisjoint(trained), family
        assert not [s for s in sentences if any(s in t for t in trained)], family


def test_stance_twins_differ_only_in_the_words_that_carry_the_stance():
    """composed-stance rows come in pairs about one identity term: the benign row all zeros, its twin HATE; both
    share the opener, the term and the closer, and the twin is the pair's hateful frame (so the model must read the
    predicate, not the identity word or the anger around it); every frame pair and many terms are drawn."""
    from bot.training.composed import STANCE_PAIRS, composed_stance_rows
    from bot.training.counterfactual import TERMS

    rows = composed_stance_rows(13, n=300)
    assert rows == composed_stance_rows(13, n=300) and rows != composed_stance_rows(14, n=300)
    assert len(rows) == 600 and all(r.source == "hand_composed_stance" for r in rows)
    ia = LABELS.index("identity_attack")
    frames_seen, terms_seen = set(), set()
    for benign, hateful in zip(rows[::2], rows[1::2], strict=True):
        assert benign.target == ZERO and hateful.target == HATE and hateful.target[ia] == 1.0
        b, h = benign.text.lower(), hateful.text.lower()
        assert b != h
        term = max((t for t in TERMS if f"{t} " in b), key=len)
        assert f"{term} " in h
        terms_seen.add(term)
        for i, (good, bad) in enumerate(STANCE_PAIRS):
            g_head, b_head = good.split("{X}")[0].lower(), bad.split("{X}")[0].lower()
            if g_head in b and b_head in h and good.split("{X}")[1].split()[0].lower() in b:
                frames_seen.add(i)
        bs, hs = re.split(r"(?<=[.!?]) ", b), re.split(r"(?<=[.!?]) ", h)
        gone, new = [x for x in bs if x not in hs], [x for x in hs if x not in bs]
        assert len(gone) == 1 and term in gone[0] and 1 <= len(new) <= 2 and term in new[0]  # one sentence swapped
    assert len(frames_seen) == len(STANCE_PAIRS) and len(terms_seen) > 40


def test_composed_half_is_the_first_half_of_composed():
    """``composed-half`` is the first 500 messages and twins of ``composed`` (the same generator, fewer draws), so the
    two recipes differ only in how many composed rows they add."""
    from bot.training.composed import composed_rows

    assert composed_rows(13, n=500) == composed_rows(13)[:1000]
