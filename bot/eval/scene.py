"""The founding-scene probe set: messages written like the comments under a post celebrating a trans woman,
judged exactly as production judges them (``python -m bot score``'s path: the default policy, rules, tiers).

``bot/eval/data/scene_cases.csv`` was written for this project, in words different from the training templates
(:mod:`bot.training.handwritten`), and is never read by training. Columns: ``case_id``, ``kind`` (the family, e.g.
``pathologise``, ``veiled_threat``, ``angry_support``), ``gold`` (``flag``: the bot should send it to review or
act; ``allow``: it should pass), ``expect_label`` (for ``flag`` cases, the label the verdict should name, e.g.
``identity_attack``: an identity attack called what it is), ``text``.

A case is *right* when ``flagged`` matches ``gold``; a flagged abusive case is *named right* when its verdict's
labels include ``expect_label``. 62 cases: one case is 1.6 points, so compare two models with
:func:`bot.eval.paired.mcnemar`, not by eye.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from bot.core.ports import Scorer
from bot.eval.common import _paired_row, model_source, print_paired
from bot.eval.errors import EvalInputError
from bot.settings import Settings

SCENE_CASES = Path(__file__).resolve().parent / "data" / "scene_cases.csv"


def read_cases(path: Path = SCENE_CASES) -> list[dict[str, str]]:
    """The probe cases of ``path`` (CSV with ``case_id``, ``kind``, ``gold``, ``expect_label``, ``text``).

    Raises:
        bot.eval.EvalInputError (a ``ValueError``): naming the file and the case: a ``gold`` value other than
            ``flag`` / ``allow``, a case without text (it would never be scored, so never flagged), or a
            ``case_id`` used twice (the tables name wrong cases by id).
    """

    with Path(path).open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    seen: set[str] = set()
    for n, r in enumerate(rows, start=2):
        case = r.get("case_id") or f"on line {n}"
        if r.get("gold") not in ("flag", "allow"):
            raise EvalInputError(f"{path}: case {case}: gold must be 'flag' or 'allow', not {r.get('gold')!r}")
        if not (r.get("text") or "").strip():
            raise EvalInputError(f"{path}: case {case}: no text to judge")
        if case in seen:
            raise EvalInputError(f"{path}: case {case} appears more than once (case ids must be unique)")
        seen.add(case)
    return rows


def judge(rows: list[dict[str, str]], scorer: Scorer, settings: Settings | None = None,
          policy_files: tuple[Path, ...] = ()) -> list[dict[str, Any]]:
    """Each case's verdict line from the ``score`` job (``{"id", "flagged", "labels", "action", "scores", ...}``),
    in case order, under the default policy plus ``policy_files``."""
    from bot.jobs.score import run_score

    settings = settings or Settings.from_env()
    stdin = io.StringIO("".join(json.dumps({"id": r["case_id"], "text": r["text"]}) + "\n" for r in rows))
    stdout = io.StringIO()
    args = argparse.Namespace(policy=list(policy_files), batch_size=64)
    rc = asyncio.run(run_score(args, settings, stdin, stdout, io.StringIO(), scorer=scorer))
    out = [json.loads(line) for line in stdout.getvalue().splitlines() if line.strip()]
    if rc != 0 or len(out) != len(rows):
        raise RuntimeError(f"scene cases could not all be judged (exit {rc}, {len(out)} of {len(rows)} verdicts)")
    return out


def correct(rows: list[dict[str, str]], verdicts: list[dict[str, Any]]) -> list[bool]:
    """Per case: ``flagged`` matches ``gold``."""
    return [v["flagged"] == (r["gold"] == "flag") for r, v in zip(rows, verdicts, strict=True)]


def scene_metrics(rows: list[dict[str, str]], verdicts: list[dict[str, Any]]) -> dict:
    """Accuracy overall, on abuse (``gold=flag``), on everything else, and per ``kind``; abuse named right.

    Returns:
        ``{"n", "overall", "abuse", "others", "named_right", "kind": {kind: {"n", "acc", "gold"}},
        "wrong": [{"case_id", "kind", "gold", "action", "labels", "text"}]}`` (rates in [0, 1]).
    """
    ok = correct(rows, verdicts)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r, c in zip(rows, ok, strict=True):
        by_kind[r["kind"]].append(c)
    abuse = [c for r, c in zip(rows, ok, strict=True) if r["gold"] == "flag"]
    others = [c for r, c in zip(rows, ok, strict=True) if r["gold"] == "allow"]
    named = [bool(r.get("expect_label")) and r["expect_label"] in v["labels"]
             for r, v in zip(rows, verdicts, strict=True) if r["gold"] == "flag" and r.get("expect_label")]
    gold_of = {r["kind"]: r["gold"] for r in rows}
    return {
        "n": len(rows),
        "overall": sum(ok) / len(ok),
        "abuse": sum(abuse) / len(abuse) if abuse else None,
        "others": sum(others) / len(others) if others else None,
        "named_right": sum(named) / len(named) if named else None,
        "kind": {k: {"n": len(v), "acc": sum(v) / len(v), "gold": gold_of[k]} for k, v in sorted(by_kind.items())},
        "wrong": [{"case_id": r["case_id"], "kind": r["kind"], "gold": r["gold"], "action": v["action"],
                   "labels": v["labels"], "text": r["text"]}
                  for r, v, c in zip(rows, verdicts, ok, strict=True) if not c],
    }


def policy_source(settings: Settings, policy_files: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The policy a probe run is judged under, as :func:`judge` builds it (the default policy file of ``settings``
    plus ``policy_files``, no server files, no stored overrides), said for a person.

    Returns:
        ``{"files": [str, ...], "version": str, "text": str}``: ``files`` the paths in layering order, ``version``
        the policy's version (:attr:`bot.core.policy.Policy.version`, 12 hex digits of its checksum), ``text``
        e.g. ``"the default policy + stricter.toml, policy version 1a2b3c4d5e6f"`` (``"the default policy"`` for the
        packaged ``bot/config/default.toml``; another default file, ``MODBOT_POLICY``, is named by its path).

    Raises:
        bot.core.policy.PolicyError: a file is missing or invalid (the CLI checks them before any model loads).
    """
    from bot.config import DEFAULT_POLICY_PATH
    from bot.core.policy import load_policy

    files = [settings.default_policy, *policy_files]
    policy = load_policy(*files)
    default = settings.default_policy
    names = ["the default policy" if Path(default).resolve() == DEFAULT_POLICY_PATH.resolve() else str(default),
             *(str(f) for f in policy_files)]
    return {"files": [str(f) for f in files], "version": policy.version,
            "text": f"{' + '.join(names)}, policy version {policy.version}"}


def print_scene(m: dict, console, title: str = "Founding scene") -> None:
    """Print :func:`scene_metrics` as rich tables (rates and every wrong case); with ``m["model"]``
    (:func:`bot.eval.common.model_source`) and/or ``m["policy"]`` (:func:`policy_source`), first one line naming the
    model and its version and the policy the cases were judged under and its version: ``"Founding scene: model
    embedded-minilm-v1, version 6be930fdb033; judged under the default policy, policy version 1a2b3c4d5e6f"``."""
    from rich.table import Table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}"

    said = ([m["model"]["text"]] if m.get("model") else []) + (
        [f"judged under {m['policy']['text']}"] if m.get("policy") else [])
    if said:  # plain text: a path with [brackets] is not rich markup, and the line is never wrapped
        console.print(f"{title}: {'; '.join(said)}", markup=False, highlight=False, soft_wrap=True)
    heading = f"{title} (n={m['n']}, judged under the policy: flagged = review or act)"
    t = Table(title=heading, min_width=len(heading))  # the heading on one line, not wrapped to the columns' width
    for col in ("metric", "%"):
        t.add_column(col)
    t.add_row("right overall", pct(m["overall"]))
    t.add_row("abuse flagged", pct(m["abuse"]))
    t.add_row("support, counter-speech and chat left alone", pct(m["others"]))
    t.add_row("abuse named right (expected label in the verdict)", pct(m["named_right"]))
    console.print(t)
    k = Table(title="per family")
    for col in ("family", "should be", "n", "right %"):
        k.add_column(col)
    for name, v in m["kind"].items():
        k.add_row(name, v["gold"], str(v["n"]), pct(v["acc"]))
    console.print(k)
    if m["wrong"]:
        w = Table(title="wrong cases")
        for col in ("case", "family", "should be", "bot did", "labels", "text"):
            w.add_column(col)
        for c in m["wrong"]:
            w.add_row(c["case_id"], c["kind"], c["gold"], c["action"], ", ".join(c["labels"]), c["text"][:90])
        console.print(w)


def eval_scene(path: Path, scorer: Scorer, console, *, settings=None, baseline: Scorer | None = None,
               policy_files: tuple[Path, ...] = (), baseline_policy_files: tuple[Path, ...] | None = None) -> dict:
    """Judge the founding-scene probe cases (or any file of this format) under the default policy plus
    ``policy_files`` and print them, each table set after a line naming the model and the policy, each with its
    version (:func:`print_scene`); with
    ``baseline``, also judge them with it (under ``baseline_policy_files`` when given, else the same files) and print
    the paired comparison (under ``"paired"``; the baseline's metrics, with its policy, under ``"baseline"``).

    Returns:
        :func:`scene_metrics` plus ``"model"`` (:func:`bot.eval.common.model_source`) and ``"policy"``
        (:func:`policy_source`) and, with a baseline, ``"baseline"`` (its own ``"model"`` and ``"policy"``) and
        ``"paired"``.
    """
    settings = settings or Settings.from_env()
    cases = read_cases(path)
    if not cases:
        raise EvalInputError(f"{path}: no cases (nothing after the header line)")
    verdicts = judge(cases, scorer, settings, policy_files)
    m = scene_metrics(cases, verdicts)
    m["model"] = model_source(scorer)
    m["policy"] = policy_source(settings, policy_files)
    print_scene(m, console)
    if baseline is not None:
        base_files = policy_files if baseline_policy_files is None else baseline_policy_files
        base = judge(cases, baseline, settings, base_files)
        mb = scene_metrics(cases, base)
        mb["model"] = model_source(baseline)
        mb["policy"] = policy_source(settings, base_files)
        print_scene(mb, console, title="Founding scene, baseline")
        m["baseline"] = mb
        a, b = correct(cases, base), correct(cases, verdicts)
        rows = [_paired_row("overall", a, b)]
        for name, gold in (("abuse", "flag"), ("others", "allow")):
            idx = [i for i, c in enumerate(cases) if c["gold"] == gold]
            if idx:  # a probe file may hold one side only: no row for an empty subset
                rows.append(_paired_row(name, [a[i] for i in idx], [b[i] for i in idx]))
        print_paired("Founding scene", rows, console, models=(baseline, scorer))
        m["paired"] = rows
    return m


__all__ = ["SCENE_CASES", "correct", "eval_scene", "judge", "policy_source", "print_scene", "read_cases",
           "scene_metrics"]
