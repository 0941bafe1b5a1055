"""Quality harness: HateCheck, Multilingual HateCheck, the OLID hold-out and the founding-scene probe set, printed
as rich tables; one module per dataset (:mod:`bot.eval.hatecheck`, :mod:`bot.eval.mhc`, :mod:`bot.eval.olid`,
:mod:`bot.eval.scene`), what they share in :mod:`bot.eval.common`, and here the entry point :func:`run_eval` and
the input check :func:`check_input` (the public names of all of them are importable from ``bot.eval``).

Called by the lead's CLI as ``python -m bot eval hatecheck|olid|mhc FILE`` and standalone as
``python -m bot.eval hatecheck FILE``. Every text is scored as the bot scores a message
(:func:`bot.core.pieces.score_texts`, the moderation service's own scoring path: ``for_scoring``, then the whole
text and each sentence, highest score per label). A HateCheck case counts as *predicted hateful* when ``identity_attack >= threshold``; an OLID tweet
as *offensive* when ``toxicity >= threshold``. ``threshold=None`` uses the artifact's calibrated thresholds
(``bot/model/artifact/thresholds.json``). HateCheck files are evaluation only: never used for training.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path

from bot.core.policy import Policy
from bot.core.ports import Scorer
from bot.eval.common import (
    PAD_SENTENCES,
    TARGETS,
    _default_threshold,
    _Remembered,
    artifact_threshold,
    padded,
    print_paired,
    table_console,
)
from bot.eval.common import _score as _score  # noqa: F401 (tests compare it with the moderation service's scores)
from bot.eval.errors import EvalInputError
from bot.eval.hatecheck import (
    compare_hatecheck,
    compare_target_checks,
    eval_hatecheck,
    hatecheck_metrics,
    with_target_check,
)
from bot.eval.mhc import eval_mhc
from bot.eval.olid import _olid_holdout, compare_olid, eval_olid, olid_metrics
from bot.eval.scene import eval_scene

log = logging.getLogger(__name__)

KINDS = ("hatecheck", "olid", "mhc", "scene")


#: Columns an evaluation file must have, per kind (OLID: tab-separated).
REQUIRED_COLUMNS = {"hatecheck": ("test_case", "label_gold", "functionality"),
                    "mhc": ("test_case", "label_gold", "functionality"),
                    "olid": ("id", "tweet", "subtask_a"),
                    "scene": ("case_id", "kind", "gold", "text")}


def check_input(kind: str, path: Path, threshold: float | None = None) -> None:
    """Check an evaluation input without loading any model: the file (or a folder's files) exists, has the header
    of its kind (:data:`REQUIRED_COLUMNS`) and at least one case; ``threshold`` (if given) is in [0, 1].

    Raises:
        ValueError: unknown ``kind``. FileNotFoundError: ``path`` is missing.
        EvalInputError: naming the file and what is wrong.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown eval kind {kind!r}; expected one of {KINDS}")
    if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
        raise EvalInputError(f"threshold {threshold} is outside [0, 1]")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such file or folder", str(path))
    if kind == "olid":
        files = [path / "olid-training-v1.0.tsv" if path.is_dir() else path]
    elif kind == "mhc" and path.is_dir():
        files = sorted(path.glob("mhc_*.csv"))
        if not files:
            raise EvalInputError(f"{path}: no mhc_*.csv files in this folder")
    else:
        files = [path]
    for f in files:
        if not f.is_file():
            raise EvalInputError(f"{f}: not a file")
        try:
            with f.open(encoding="utf-8", newline="") as fh:
                rows = csv.reader(fh, delimiter="\t" if kind == "olid" else ",",
                                  quoting=csv.QUOTE_NONE if kind == "olid" else csv.QUOTE_MINIMAL)
                header = next(rows, [])
                first = next(rows, None)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise EvalInputError(f"{f}: not a {kind} file ({type(exc).__name__}: {exc})") from None
        missing = [c for c in REQUIRED_COLUMNS[kind] if c not in header]
        if missing:
            raise EvalInputError(f"{f}: not a {kind} file (no column {', '.join(missing)})")
        if first is None:
            raise EvalInputError(f"{f}: no cases (nothing after the header line)")
        if kind == "olid":
            try:
                _olid_holdout(f)  # a file too small for the fixed split has nothing to evaluate
            except (KeyError, IndexError, ValueError, UnicodeDecodeError, csv.Error) as exc:
                if isinstance(exc, EvalInputError):
                    raise
                raise EvalInputError(f"{f}: not a olid file ({type(exc).__name__}: {exc})") from None
        if kind == "scene":
            from bot.eval.scene import read_cases

            read_cases(f)  # gold values, texts and case ids: EvalInputError naming the case


def run_eval(
    kind: str,
    path: Path,
    *,
    threshold: float | None,
    batch_size: int = 64,
    console=None,
    scorer: Scorer | None = None,
    pad: bool = False,
    policy: Policy | None = None,
    baseline: Scorer | None = None,
    baseline_threshold: float | None = None,
    settings=None,
    policy_files: tuple[Path, ...] = (),
    baseline_policy_files: tuple[Path, ...] | None = None,
) -> dict:
    """Run one evaluation and print rich tables.

    Args:
        kind: ``"hatecheck"`` (one CSV), ``"olid"`` (the OLID tsv or its folder; scores the 20% hold-out),
            ``"mhc"`` (one ``mhc_<lang>_*.csv`` or a folder of them; one table set per language) or ``"scene"``
            (the founding-scene probe CSV, judged under the policy: :mod:`bot.eval.scene`).
        path: Data file or folder.
        threshold: Decision threshold in [0, 1]; ``None`` = the artifact's calibrated threshold
            (``identity_attack`` for hatecheck/mhc, ``toxicity`` for olid). Not used by ``scene`` (the policy's
            tiers decide).
        batch_size: Texts per forward pass.
        console: A ``rich.console.Console``; when ``None``, :func:`bot.eval.common.table_console` on stdout (the
            terminal's width, or wide enough for one line per table row when stdout is a pipe or a file).
        scorer: Any :class:`bot.core.ports.Scorer`; default the model of ``Settings.from_env()``
            (:func:`bot.runtime.load_scorer`).
        policy: The policy whose identity-target check is applied (default: the packaged default policy).
        pad: hatecheck/mhc only: put one benign sentence before every case (see :func:`eval_hatecheck`).
        baseline: A second scorer to compare with on the same cases: prints a paired comparison
            (:mod:`bot.eval.paired`: McNemar's exact test and a paired bootstrap 95% interval) and returns it under
            ``"paired"``; ``scorer`` is the candidate (B), ``baseline`` is A.
        baseline_threshold: The baseline's threshold (default: ``threshold``).
        settings: ``bot.settings.Settings`` for ``scene`` (its default policy file); default from the environment.
        policy_files: ``scene`` only: policy files layered on the default to judge under (``score --policy``).
        baseline_policy_files: ``scene`` only: the baseline's files instead of ``policy_files`` (``None``: the same).

    Returns:
        The metrics dict (see :func:`hatecheck_metrics` / :func:`olid_metrics` / :func:`bot.eval.scene.scene_metrics`;
        for mhc ``{language: metrics}``).

    Raises:
        ValueError: unknown ``kind``. FileNotFoundError: ``path`` missing. EvalInputError: bad threshold, or a
            file that is empty or not of this kind.
        bot.scoring.ScorerLoadError: the default model cannot be loaded.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown eval kind {kind!r}; expected one of {KINDS}")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(path)
    if console is None:
        console = table_console()  # rows stay one line each when stdout is a pipe or a file
    if scorer is None:
        from bot.runtime import load_scorer
        from bot.settings import Settings

        scorer = load_scorer(Settings.from_env())
    label = "toxicity" if kind == "olid" else "identity_attack"
    thr = _default_threshold(label) if threshold is None else float(threshold)
    base_thr = thr if baseline_threshold is None else float(baseline_threshold)
    if baseline is not None and getattr(scorer, "route", None) is None:
        scorer = _Remembered(scorer)  # the paired comparison reuses the candidate's scores instead of rescoring
    for t in (thr, base_thr):
        if not 0.0 <= t <= 1.0:
            raise EvalInputError(f"threshold {t} is outside [0, 1]")
    try:
        if kind == "scene":
            return eval_scene(path, scorer, console, settings=settings, baseline=baseline, policy_files=policy_files,
                              baseline_policy_files=baseline_policy_files)
        if kind == "hatecheck":
            m = eval_hatecheck(path, scorer, thr, batch_size, console, pad=pad, policy=policy)
            if baseline is not None:
                m["paired"] = compare_hatecheck(path, baseline, scorer, base_thr, thr, batch_size, console, pad=pad)
            return m
        if kind == "olid":
            m = eval_olid(path, scorer, thr, batch_size, console)
            if baseline is not None:
                m["paired"] = compare_olid(path, baseline, scorer, base_thr, thr, batch_size, console)
            return m
        return eval_mhc(path, scorer, thr, batch_size, console, pad=pad, policy=policy, baseline=baseline,
                        baseline_threshold=base_thr)
    except (KeyError, StopIteration, IndexError, UnicodeDecodeError, csv.Error, IsADirectoryError) as exc:
        raise EvalInputError(f"{path}: not a {kind} file ({type(exc).__name__}: {exc})") from None


__all__ = ["KINDS", "REQUIRED_COLUMNS", "check_input", "compare_hatecheck", "compare_target_checks", "artifact_threshold", "compare_olid", "eval_hatecheck", "eval_mhc", "eval_olid", "eval_scene", "print_paired", "PAD_SENTENCES", "TARGETS", "EvalInputError", "hatecheck_metrics", "olid_metrics", "padded", "run_eval", "with_target_check"]
