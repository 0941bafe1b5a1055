"""Multilingual HateCheck: one ``mhc_<lang>_*.csv`` (HateCheck's format) or a folder of them, one table set per
language, scored as HateCheck is (:mod:`bot.eval.hatecheck`). Evaluation only: never used for training."""

from __future__ import annotations

from pathlib import Path

from bot.core.policy import Policy
from bot.core.ports import Scorer
from bot.eval.errors import EvalInputError
from bot.eval.hatecheck import compare_hatecheck, eval_hatecheck


def eval_mhc(path: Path, scorer: Scorer, threshold: float, batch_size: int, console, *, pad: bool = False,
             policy: Policy | None = None, baseline: Scorer | None = None,
             baseline_threshold: float | None = None) -> dict[str, dict]:
    """Evaluate one MHC file, or every ``mhc_*.csv`` of a folder, with :func:`eval_hatecheck` (and, with
    ``baseline``, :func:`compare_hatecheck` under ``"paired"``; the baseline at ``baseline_threshold``, default
    ``threshold``).

    Returns:
        ``{language: metrics}``, the language taken from the file name (``mhc_de_...csv`` -> ``"de"``).

    Raises:
        EvalInputError: a folder without ``mhc_*.csv`` files.
    """
    base_thr = threshold if baseline_threshold is None else baseline_threshold
    files = sorted(path.glob("mhc_*.csv")) if path.is_dir() else [path]
    if not files:
        raise EvalInputError(f"{path}: no mhc_*.csv files in this folder")
    results = {}
    for f in files:
        lang = f.stem.removeprefix("mhc_").split("_")[0]
        results[lang] = eval_hatecheck(f, scorer, threshold, batch_size, console,
                                       title=f"Multilingual HateCheck: {lang}", pad=pad, policy=policy)
        if baseline is not None:
            results[lang]["paired"] = compare_hatecheck(f, baseline, scorer, base_thr, threshold, batch_size, console,
                                                        pad=pad, title=f"Multilingual HateCheck: {lang}")
    return results
