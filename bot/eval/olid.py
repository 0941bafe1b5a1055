"""The OLID hold-out (the fixed 20% split training never sees, :func:`bot.training.splits.olid_split`): macro-F1
and accuracy of ``toxicity >= threshold`` against subtask A, and the paired comparison of two models."""

from __future__ import annotations

from pathlib import Path

from bot.core.ports import Scorer
from bot.eval.common import TARGETS, _paired_row, _score, print_model, print_paired
from bot.eval.errors import EvalInputError
from bot.training.splits import olid_split, read_olid


def olid_metrics(gold_off: list[bool], scores: list[float], threshold: float) -> dict:
    """Macro-F1 (mean of OFF and NOT F1) and accuracy of ``toxicity >= threshold`` against OLID subtask A."""
    pred = [s >= threshold for s in scores]

    def f1(cls: bool) -> float:
        tp = sum(p == cls and g == cls for p, g in zip(pred, gold_off, strict=True))
        fp = sum(p == cls and g != cls for p, g in zip(pred, gold_off, strict=True))
        fn = sum(p != cls and g == cls for p, g in zip(pred, gold_off, strict=True))
        return 2 * tp / max(1, 2 * tp + fp + fn)

    return {
        "n": len(pred),
        "threshold": threshold,
        "f1_off": f1(True),
        "f1_not": f1(False),
        "macro_f1": (f1(True) + f1(False)) / 2,
        "accuracy": sum(p == g for p, g in zip(pred, gold_off, strict=True)) / max(1, len(pred)),
    }


def _olid_holdout(path: Path) -> list:
    """The OLID hold-out rows of ``path`` (the tsv itself).

    Raises:
        EvalInputError: the hold-out is empty (a file too small to split), naming the file.
    """
    rows = read_olid(path)
    _, held = olid_split(rows)
    if not held:
        raise EvalInputError(f"{path}: the 20% hold-out of its {len(rows)} tweet(s) is empty; nothing to evaluate")
    return held


def eval_olid(path: Path, scorer: Scorer, threshold: float, batch_size: int, console) -> dict:
    """Score the fixed 20% OLID hold-out (same split as training) and print macro-F1, after a line naming the model
    and its version (``"OLID hold-out: model embedded-minilm-v1, version 6be930fdb033"``; returned under
    ``"model"``: :func:`bot.eval.common.model_source`)."""
    from rich.table import Table

    if path.is_dir():
        path = path / "olid-training-v1.0.tsv"
    held = _olid_holdout(path)
    scores = _score(scorer, [r.text for r in held], "toxicity", batch_size)
    m = olid_metrics([r.a == "OFF" for r in held], scores, threshold)
    m["model"] = print_model("OLID hold-out", scorer, console)
    t = Table(title=f"OLID hold-out 20% (n={m['n']}, toxicity >= {threshold:.2f})")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for key in ("macro_f1", "f1_off", "f1_not", "accuracy"):
        t.add_row(key, f"{m[key]:.3f}")
    t.add_row("target macro_f1", f"{TARGETS['olid_macro_f1']:.2f}")
    console.print(t)
    return m


def compare_olid(path: Path, baseline: Scorer, candidate: Scorer, base_thr: float, cand_thr: float,
                 batch_size: int, console) -> list[dict]:
    """OLID hold-out with both models: macro-F1 difference with a paired bootstrap 95% interval, and accuracy with
    McNemar's test; printed with :func:`print_paired`, after a line naming each model and its version."""
    from bot.eval.paired import macro_f1_stat, paired_bootstrap

    if path.is_dir():
        path = path / "olid-training-v1.0.tsv"
    held = _olid_holdout(path)
    texts = [r.text for r in held]
    gold = [r.a == "OFF" for r in held]
    pa = [s >= base_thr for s in _score(baseline, texts, "toxicity", batch_size)]
    pb = [s >= cand_thr for s in _score(candidate, texts, "toxicity", batch_size)]
    stat = macro_f1_stat(gold)
    ci = paired_bootstrap(pa, pb, stat)
    every = range(len(gold))
    f1 = {"name": "macro_f1", "n": len(gold), "a": stat(every, pa), "b": stat(every, pb), "diff": ci.diff,
          "low": ci.low, "high": ci.high}
    acc = _paired_row("accuracy", [p == g for p, g in zip(pa, gold, strict=True)],
                      [p == g for p, g in zip(pb, gold, strict=True)])
    out = [f1, acc]
    print_paired(f"OLID hold-out (A at {base_thr:.2f}, B at {cand_thr:.2f})", out, console,
                 models=(baseline, candidate))
    return out
