"""Paired comparison of two models (McNemar's exact test, paired bootstrap) and the founding-scene probe set."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

import pytest
from rich.console import Console

from bot.core.models import LABELS, Scores
from bot.eval import run_eval
from bot.eval.paired import accuracy_stat, macro_f1_stat, mcnemar, paired_bootstrap
from bot.eval.scene import SCENE_CASES, read_cases, scene_metrics


def test_mcnemar_counts_discordant_pairs_and_gives_the_exact_binomial_p():
    """Only discordant cases count; 8 cases right only for B, 1 only for A: p = 2 * P(X <= 1), X ~ Bin(9, 0.5)."""
    a = [True] * 10 + [False] * 8 + [True] + [False] * 3
    b = [True] * 10 + [True] * 8 + [False] + [False] * 3
    r = mcnemar(a, b)
    assert (r.n, r.only_a, r.only_b) == (22, 1, 8)
    assert r.p_value == pytest.approx(2 * (math.comb(9, 0) + math.comb(9, 1)) / 2**9)


def test_mcnemar_without_disagreement_is_p_one_and_is_symmetric():
    """Identical decisions give p = 1; swapping A and B swaps the counts and keeps p."""
    assert mcnemar([True, False], [True, False]).p_value == 1.0
    x, y = [True, True, False, True], [False, False, True, True]
    assert mcnemar(x, y).p_value == mcnemar(y, x).p_value
    assert (mcnemar(y, x).only_a, mcnemar(y, x).only_b) == (mcnemar(x, y).only_b, mcnemar(x, y).only_a)


def test_mcnemar_refuses_unpaired_sequences():
    """Two sequences of different length are not paired: ValueError."""
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar([True], [True, False])


def test_paired_bootstrap_interval_brackets_the_difference_and_sees_a_real_gain():
    """B right on 60 more of 200 cases than A: the 95% interval of B - A is around +0.30 and excludes 0; the
    same models compared with themselves give an interval of exactly 0."""
    a = [True] * 100 + [False] * 100
    b = [True] * 160 + [False] * 40
    ci = paired_bootstrap(a, b, accuracy_stat, resamples=500, seed=3)
    assert ci.diff == pytest.approx(0.30)
    assert ci.low <= 0.30 <= ci.high and ci.excludes_zero
    assert 0.2 < ci.low and ci.high < 0.4
    same = paired_bootstrap(a, a, accuracy_stat, resamples=200)
    assert (same.low, same.high, same.excludes_zero) == (0.0, 0.0, False)


def test_paired_bootstrap_of_a_coin_flip_difference_includes_zero():
    """Two models each right on half the cases, disagreeing at random: the interval contains 0."""
    import random

    rng = random.Random(5)
    a = [rng.random() < 0.5 for _ in range(400)]
    b = [rng.random() < 0.5 for _ in range(400)]
    assert not paired_bootstrap(a, b, accuracy_stat, resamples=500).excludes_zero


def test_macro_f1_stat_matches_the_olid_metric():
    """The bootstrap's macro-F1 statistic equals bot.eval.olid_metrics on the full set."""
    from bot.eval import olid_metrics

    gold = [True, True, False, False, True, False]
    pred = [True, False, False, True, True, False]
    stat = macro_f1_stat(gold)
    expected = olid_metrics(gold, [0.9 if p else 0.1 for p in pred], 0.5)["macro_f1"]
    assert stat(range(6), pred) == pytest.approx(expected)


class WordScorer:
    """Fake Scorer: identity_attack (and toxicity) 0.9 when the text contains one of ``words``, else 0.05."""

    version = "0"
    labels = LABELS

    def __init__(self, name: str, words: tuple[str, ...]) -> None:
        self.name, self.words = name, words

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        out = []
        for t in texts:
            hit = any(w in t.lower() for w in self.words)
            out.append(Scores({label: (0.9 if hit and label in ("identity_attack", "toxicity") else 0.05)
                               for label in LABELS}, model=self.name))
        return out


def _hatecheck(path, rows):
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["functionality", "test_case", "label_gold", "target_ident"])
        w.writeheader()
        for func, text, gold in rows:
            w.writerow({"functionality": func, "test_case": text, "label_gold": gold, "target_ident": "trans people"})


def test_run_eval_with_a_baseline_prints_and_returns_the_paired_comparison(tmp_path):
    """hatecheck --baseline: both models score the same cases; the paired rows count the cases only one gets right
    and the functionality where they disagree is listed."""
    path = tmp_path / "hc.csv"
    _hatecheck(path, [("derog_h", "I hate trans people", "hateful"), ("derog_h", "trans people are vermin", "hateful"),
                      ("ident_pos_nh", "I love trans people", "non-hateful")])
    base, cand = WordScorer("base", ("hate",)), WordScorer("cand", ("hate", "vermin"))
    out = io.StringIO()
    m = run_eval("hatecheck", path, threshold=0.5, console=Console(file=out, width=160), scorer=cand, baseline=base)
    rows = {r["name"]: r for r in m["paired"]}
    assert rows["overall"]["a"] == pytest.approx(2 / 3) and rows["overall"]["b"] == 1.0
    assert (rows["overall"]["only_a"], rows["overall"]["only_b"]) == (0, 1)
    assert rows["derog_h"]["diff"] == pytest.approx(0.5)
    assert "ident_pos_nh" not in rows  # both right on it: no disagreement to test
    assert "paired comparison" in out.getvalue() and "McNemar" in out.getvalue()


def test_bundled_scene_cases_are_well_formed():
    """The bundled probe set reads, has both sides of the line and names a label for every abuse case."""
    rows = read_cases(SCENE_CASES)
    assert len({r["case_id"] for r in rows}) == len(rows) >= 60
    assert {r["gold"] for r in rows} == {"flag", "allow"}
    assert all(r["expect_label"] in LABELS for r in rows if r["gold"] == "flag")
    kinds = {r["kind"] for r in rows}
    assert {"pathologise", "imagery", "nickname", "veiled_threat", "angry_support", "exist", "game_tech"} <= kinds


def test_scene_cases_are_not_training_examples():
    """No probe case is also a hand-written training example (the probe set stays a fair test)."""
    from bot.core.normalize import for_scoring
    from bot.training.handwritten import generate

    train = {for_scoring(e.text).lower() for e in generate(13, scene=True)}
    assert not [r["case_id"] for r in read_cases(SCENE_CASES) if for_scoring(r["text"]).lower() in train]


def test_scene_metrics_rates_and_wrong_cases():
    """Right = flagged matches gold; named right = the expected label is in the verdict's labels."""
    rows = [{"case_id": "a", "kind": "veiled_threat", "gold": "flag", "expect_label": "threat", "text": "x"},
            {"case_id": "b", "kind": "veiled_threat", "gold": "flag", "expect_label": "threat", "text": "y"},
            {"case_id": "c", "kind": "game_tech", "gold": "allow", "expect_label": "", "text": "z"}]
    verdicts = [{"flagged": True, "labels": ["toxicity"], "action": "review"},
                {"flagged": False, "labels": [], "action": "none"},
                {"flagged": True, "labels": ["threat"], "action": "review"}]
    m = scene_metrics(rows, verdicts)
    assert m["overall"] == pytest.approx(1 / 3) and m["abuse"] == 0.5 and m["others"] == 0.0
    assert m["named_right"] == 0.0
    assert [w["case_id"] for w in m["wrong"]] == ["b", "c"]
    assert m["kind"]["veiled_threat"] == {"n": 2, "acc": 0.5, "gold": "flag"}


def test_read_cases_refuses_an_unknown_gold_value(tmp_path):
    """A gold value other than flag/allow is refused naming the case."""
    path = tmp_path / "s.csv"
    path.write_text("case_id,kind,gold,expect_label,text\nq1,x,maybe,,hello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="q1"):
        read_cases(path)


def test_run_eval_scene_judges_under_the_policy_with_a_baseline(tmp_path):
    """eval scene runs every case through the score job (policy tiers, rules) and compares two scorers pairwise:
    the candidate that also catches 'vermin' fixes one abuse case the baseline missed."""
    path = tmp_path / "s.csv"
    path.write_text("case_id,kind,gold,expect_label,text\n"
                    "a,denial,flag,identity_attack,trans people are vermin and I hate them\n"
                    "b,denial,flag,identity_attack,those people are vermin\n"
                    "c,support,allow,,congratulations Rachel\n", encoding="utf-8")
    base, cand = WordScorer("base", ("hate",)), WordScorer("cand", ("hate", "vermin"))
    m = run_eval("scene", path, threshold=None, console=Console(file=io.StringIO(), width=160), scorer=cand,
                 baseline=base)
    assert m["abuse"] == 1.0 and m["others"] == 1.0
    rows = {r["name"]: r for r in m["paired"]}
    assert (rows["overall"]["only_a"], rows["overall"]["only_b"]) == (0, 1)


def test_run_eval_scene_judges_each_model_under_its_own_policy_files(tmp_path):
    """A re-calibrated model is compared with the old one at the old tiers: policy_files layer a stricter
    identity_attack tier (review 0.92) for the candidate only, so its 0.9 scores no longer flag the two abuse cases
    while the same scorer as baseline under the default tiers (review 0.75) still flags them."""
    path = tmp_path / "s.csv"
    path.write_text("case_id,kind,gold,expect_label,text\n"
                    "a,denial,flag,identity_attack,trans people are vermin and I hate them\n"
                    "b,denial,flag,identity_attack,I hate those people\n"
                    "c,support,allow,,congratulations Rachel\n", encoding="utf-8")
    strict = tmp_path / "strict.toml"
    strict.write_text("[thresholds]\nidentity_attack = { review = 0.92, act = 0.97 }\n", encoding="utf-8")
    scorer = WordScorer("same", ("hate",))
    m = run_eval("scene", path, threshold=None, console=Console(file=io.StringIO(), width=160), scorer=scorer,
                 baseline=scorer, policy_files=(strict,), baseline_policy_files=())
    assert m["abuse"] == 0.0 and m["others"] == 1.0
    rows = {r["name"]: r for r in m["paired"]}
    assert (rows["abuse"]["only_a"], rows["abuse"]["only_b"]) == (2, 0)
    same = run_eval("scene", path, threshold=None, console=Console(file=io.StringIO(), width=160), scorer=scorer,
                    baseline=scorer, policy_files=(strict,))
    assert {r["name"]: (r["only_a"], r["only_b"]) for r in same["paired"]}["abuse"] == (0, 0)


def test_eval_command_checks_its_policy_files_before_any_model_loads(tmp_path, capsys):
    """eval --policy with a malformed file exits 2 naming the file; --baseline-policy without --baseline, or for
    hatecheck, is a usage error saying what it applies to."""
    from bot.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text("[thresholds]\nidentity_attack = { review = 2.0 }\n", encoding="utf-8")
    assert main(["eval", "scene", "--policy", str(bad)]) == 2
    assert "bad.toml" in capsys.readouterr().err
    good = tmp_path / "good.toml"
    good.write_text("[thresholds]\nidentity_attack = { review = 0.8, act = 0.95 }\n", encoding="utf-8")
    assert main(["eval", "scene", "--baseline-policy", str(good)]) == 2
    assert "--baseline-policy needs --baseline" in capsys.readouterr().err
    assert main(["eval", "hatecheck", str(tmp_path / "x.csv"), "--baseline", str(tmp_path),
                 "--baseline-policy", str(good)]) == 2
    assert "scene only" in capsys.readouterr().err


def test_eval_command_refuses_a_baseline_that_is_not_an_artifact(tmp_path, capsys):
    """eval --baseline DIR without a manifest is refused with exit 2 before any model loads."""
    from bot.cli import main

    rc = main(["eval", "scene", "--baseline", str(tmp_path)])
    assert rc == 2 and "not a model artifact directory" in capsys.readouterr().err


def test_eval_command_needs_a_file_except_for_scene(capsys):
    """eval hatecheck without a file is a usage error naming what is missing."""
    from bot.cli import main

    assert main(["eval", "hatecheck"]) == 2
    assert "needs its data file or folder" in capsys.readouterr().err


class CountingScorer(WordScorer):
    """WordScorer that counts how many texts it was asked to score."""

    def __init__(self, name: str, words: tuple[str, ...]) -> None:
        super().__init__(name, words)
        self.scored = 0

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        self.scored += len(texts)
        return super().score_batch(texts)


def test_a_paired_hatecheck_run_scores_the_candidate_once(tmp_path):
    """With a baseline, the candidate's scores for its own tables are reused for the comparison: each of the 3
    cases (one piece each) is scored once by each model, not twice by the candidate."""
    path = tmp_path / "hc.csv"
    _hatecheck(path, [("derog_h", "I hate trans people", "hateful"), ("derog_h", "trans people are vermin", "hateful"),
                      ("ident_pos_nh", "I love trans people", "non-hateful")])
    base, cand = CountingScorer("base", ("hate",)), CountingScorer("cand", ("hate", "vermin"))
    run_eval("hatecheck", path, threshold=0.5, console=Console(file=io.StringIO()), scorer=cand, baseline=base)
    assert (base.scored, cand.scored) == (3, 3)
