"""The quality harness: metric arithmetic, the OLID hold-out split, run_eval with a fake scorer."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

import pytest
from rich.console import Console

from bot.core.models import LABELS, Scores
from bot.eval import hatecheck_metrics, olid_metrics, run_eval
from bot.training.splits import OlidRow, holdout_ids, olid_split


class KeywordScorer:
    """Fake Scorer: identity_attack and toxicity are 0.9 when the text contains 'hate', else 0.1."""

    name = "fake"
    version = "0"
    labels = LABELS

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        return [Scores({label: (0.9 if "hate" in t else 0.1) for label in LABELS}, model="fake") for t in texts]


def _row(func: str, gold: str, target: str = "women") -> dict[str, str]:
    return {"functionality": func, "label_gold": gold, "target_ident": target}


def test_hatecheck_metrics_counts():
    """Accuracy overall, per gold class, functionality and target follows score >= threshold."""
    rows = [_row("derog_h", "hateful"), _row("derog_h", "hateful"), _row("ident_pos_nh", "non-hateful", "trans people")]
    m = hatecheck_metrics(rows, [0.9, 0.2, 0.6], threshold=0.5)
    assert m["overall"] == pytest.approx(1 / 3)
    assert m["hateful"] == pytest.approx(0.5)
    assert m["non_hateful"] == 0.0
    assert m["functionality"]["derog_h"] == {"n": 2, "acc": 0.5}
    assert m["trans_non_hateful"] == 0.0
    assert m["target"]["women"]["non_hateful"] is None


@pytest.mark.parametrize(("scores", "macro"), [([0.9, 0.1, 0.9, 0.1], 1.0), ([0.1, 0.9, 0.1, 0.9], 0.0)])
def test_olid_macro_f1(scores, macro):
    """Macro-F1 is the mean of OFF and NOT F1 with toxicity >= threshold meaning OFF."""
    assert olid_metrics([True, False, True, False], scores, 0.5)["macro_f1"] == pytest.approx(macro)


def test_olid_holdout_is_fixed_and_twenty_percent():
    """The OLID hold-out is 20% of ids and the same on every call, independent of row order."""
    rows = [OlidRow(str(i), f"t{i}", "NOT", "NULL", "NULL") for i in range(1000)]
    train, held = olid_split(rows)
    assert len(held) == 200 and len(train) == 800
    assert {r.id for r in held} == holdout_ids(str(i) for i in reversed(range(1000)))


def test_run_eval_hatecheck_with_fake_scorer(tmp_path):
    """run_eval('hatecheck') reads the CSV, prints tables and returns accuracies."""
    path = tmp_path / "hc.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["functionality", "test_case", "label_gold", "target_ident"])
        w.writeheader()
        w.writerow({"functionality": "derog_h", "test_case": "I hate them", "label_gold": "hateful", "target_ident": "women"})
        w.writerow({"functionality": "ident_pos_nh", "test_case": "I love them", "label_gold": "non-hateful",
                    "target_ident": "women"})
    out = io.StringIO()
    m = run_eval("hatecheck", path, threshold=0.5, console=Console(file=out, width=120), scorer=KeywordScorer())
    assert m["overall"] == 1.0
    assert "per functionality" in out.getvalue()
    # "I hate them" names no identity and 0.9 < the untargeted tier 0.98: the bot would not flag it
    assert m["with_target_check"]["hateful"] == 0.0 and m["with_target_check"]["non_hateful"] == 1.0
    assert "identity-target check" in out.getvalue()


class ShortOnlyScorer:
    """Fake Scorer that, like a pooled classifier, loses an attack in a long text: 'hate' scores 0.9 only in texts
    of at most 4 words. Records every text it is given."""

    name = "short-only"
    version = "0"
    labels = LABELS

    def __init__(self) -> None:
        self.seen: list[str] = []

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        self.seen.extend(texts)
        return [Scores({label: (0.9 if "hate" in t and len(t.split()) <= 4 else 0.1) for label in LABELS},
                       model="fake") for t in texts]


def test_run_eval_pad_puts_a_benign_sentence_before_each_case(tmp_path):
    """--pad: every case is scored after one of PAD_SENTENCES; the bot's path (sentence pieces) still finds the
    hateful case, scoring the whole text alone would not, and both results are returned."""
    from bot.eval import PAD_SENTENCES

    path = tmp_path / "hc.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["functionality", "test_case", "label_gold", "target_ident"])
        w.writeheader()
        w.writerow({"functionality": "derog_h", "test_case": "I really hate women", "label_gold": "hateful",
                    "target_ident": "women"})
        w.writerow({"functionality": "ident_pos_nh", "test_case": "I really love women", "label_gold": "non-hateful",
                    "target_ident": "women"})
    out = io.StringIO()
    scorer = ShortOnlyScorer()
    m = run_eval("hatecheck", path, threshold=0.5, console=Console(file=out, width=120), scorer=scorer, pad=True)
    assert f"{PAD_SENTENCES[0]} I really hate women" in scorer.seen
    assert f"{PAD_SENTENCES[1]} I really love women" in scorer.seen
    assert m["hateful"] == 1.0 and m["non_hateful"] == 1.0
    assert m["whole_text_only"]["hateful"] == 0.0
    assert "each case after one benign" in out.getvalue() and "whole text only" in out.getvalue()


def test_target_check_keeps_named_or_extreme_scores():
    """with_target_check zeroes scores of texts naming no identity unless they reach the untargeted tier."""
    from bot.eval import with_target_check

    texts = ["women are scum", "you are scum", "you are scum", "you are scum"]
    assert with_target_check(texts, [0.9, 0.9, 0.99, 0.5], 0.98) == [0.9, 0.0, 0.99, 0.0]
    assert with_target_check(texts[:2], [0.9, 0.99], None) == [0.9, 0.0]


def test_run_eval_rejects_unknown_kind(tmp_path):
    """An unknown evaluation kind raises ValueError."""
    with pytest.raises(ValueError, match="unknown eval kind"):
        run_eval("nope", tmp_path, threshold=0.5, scorer=KeywordScorer())


def test_run_eval_mhc_folder_reports_each_language(tmp_path):
    """run_eval('mhc') on a folder scores every mhc_<lang>_*.csv and keys results by language."""
    for lang in ("german", "french"):
        with (tmp_path / f"mhc_{lang}_dev_70pct.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=["functionality", "test_case", "label_gold", "target_ident"])
            w.writeheader()
            w.writerow({"functionality": "derog_h", "test_case": "hate x", "label_gold": "hateful", "target_ident": "women"})
    out = io.StringIO()
    res = run_eval("mhc", tmp_path, threshold=0.5, console=Console(file=out), scorer=KeywordScorer())
    assert sorted(res) == ["french", "german"]
    assert res["german"]["hateful"] == 1.0


@pytest.mark.parametrize(
    ("content", "threshold", "needle"),
    [
        ("", 0.5, "no cases"),
        ("test_case,label_gold\n", 0.5, "no cases"),
        ("just some text\nand another line\n", 0.5, "not a hatecheck file"),
        ("functionality,test_case,label_gold,target_ident\nslur_h,x,hateful,women\n", 2.0, "outside [0, 1]"),
    ],
)
def test_run_eval_refuses_unusable_input_with_a_reason(tmp_path, content, threshold, needle):
    """An empty file, a file without HateCheck's columns, or a threshold outside [0, 1] raises EvalInputError
    naming the problem (the CLI prints it and exits 2) instead of a KeyError or StopIteration traceback."""
    from bot.eval import EvalInputError

    path = tmp_path / "cases.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EvalInputError, match=re.escape(needle)):
        run_eval("hatecheck", path, threshold=threshold, console=Console(file=io.StringIO()), scorer=KeywordScorer())


@pytest.mark.parametrize("pieces_mode", ["sentences", "whole"])
async def test_eval_scores_equal_the_moderation_services(tmp_path, pieces_mode):
    """eval's scores (bot.eval._score) equal the scores the moderation service records for the same texts, with
    sentence pieces and with whole texts only: production and eval share one scoring path."""
    from datetime import UTC, datetime

    from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
    from bot.eval import _score
    from bot.runtime import open_runtime
    from bot.settings import Settings
    from tests.fakes import ABUSE, FakeScorer

    texts = ["you freak.", "Morning all, the build finally passed today. You are a vermin and an idiot, go away.",
             "> quoted freak line\nmy own words here are fine, thanks all", "He said: \"freak\". That is not okay at all.",
             "nice screenshot"]
    policy = tmp_path / "p.toml"
    policy.write_text(f'[scoring]\npieces = "{pieces_mode}"\n', encoding="utf-8")
    async with open_runtime(Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer(ABUSE), enforce=False,
                            stateful_rules=False, extra_policy_files=(policy,), server_files=False) as rt:
        now = datetime.now(UTC)
        outs = [await rt.service.handle(Message(ServerRef("cli", "s"), ChannelRef("c"), MemberRef(f"u{i}"), f"m{i}",
                                                t, created_at=now)) for i, t in enumerate(texts)]
    scores = [o.verdict.scores for o in outs]
    assert all(s is not None for s in scores)
    for label in ("identity_attack", "toxicity", "insult"):
        service = [s.get(label) for s in scores if s is not None]
        assert _score(FakeScorer(ABUSE), texts, label, 2, pieces=pieces_mode == "sentences") == service
    assert scores[0] is not None and scores[0].get("identity_attack") == pytest.approx(0.97)  # the fake's "freak" rule


@pytest.mark.parametrize(
    ("kind", "content", "needle"),
    [
        ("hatecheck", "", "no column test_case"),
        ("hatecheck", "functionality,test_case,label_gold,target_ident\n", "no cases"),
        ("hatecheck", "just some text\nand another line\n", "not a hatecheck file (no column test_case"),
        ("olid", "id,tweet,subtask_a\n1,x,OFF\n", "no column id, tweet, subtask_a"),
    ],
)
def test_eval_command_checks_its_input_before_the_model(tmp_path, capsys, kind, content, needle):
    """python -m bot eval refuses an unusable file with exit 2 and the reason, before loading any model (the model
    setting here cannot load, so reaching it would print a model error instead)."""
    from bot.cli import main

    path = tmp_path / "cases.csv"
    path.write_text(content, encoding="utf-8")
    rc = main(["--model", "local", "--checkpoint", "/nonexistent.ckpt", "--config-dir", "/nonexistent",
               "eval", kind, str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and "could not be loaded" not in err


def test_eval_check_input_accepts_a_hatecheck_file(tmp_path):
    """A file with HateCheck's columns and one case passes the check (and the same file is then scored)."""
    from bot.eval import check_input

    path = tmp_path / "cases.csv"
    path.write_text("functionality,test_case,label_gold,target_ident\nslur_h,I hate them,hateful,women\n")
    check_input("hatecheck", path, 0.5)
    assert run_eval("hatecheck", path, threshold=0.5, console=Console(file=io.StringIO()),
                    scorer=KeywordScorer())["hateful"] == 1.0
