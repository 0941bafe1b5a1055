"""Quality harness: HateCheck, Multilingual HateCheck and the OLID hold-out, printed as rich tables.

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
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from bot.core.policy import Policy
from bot.core.ports import Scorer
from bot.eval.errors import EvalInputError
from bot.training.splits import olid_split, read_olid

log = logging.getLogger(__name__)

KINDS = ("hatecheck", "olid", "mhc", "scene")
#: Targets from issue 19 (HateCheck dev split, OLID hold-out); printed next to the measured numbers, never lowered
#: in code. ``functionality`` is the floor for every HateCheck functionality.
TARGETS = {"overall": 0.88, "hateful": 0.88, "non_hateful": 0.88, "counter_quote_nh": 0.90, "counter_ref_nh": 0.90,
           "trans_non_hateful": 0.90, "functionality": 0.70, "olid_macro_f1": 0.78}


#: Benign chat lines written by this project for ``--pad``: one is put before each HateCheck case to measure whether
#: a harmless sentence in front of an attack hides it (round-robin, so the run is deterministic).
PAD_SENTENCES = (
    "Morning all, the build finally passed on the second try.",
    "I just got back from the grocery store and it was packed.",
    "Has anyone tried the new patch yet? The loading times look better.",
    "We're meeting at the usual place around seven tonight.",
    "Thanks for the link, I'll read it after lunch.",
    "My cat knocked the coffee off my desk again this morning.",
    "The stream starts in ten minutes, grab a snack.",
    "I spent the weekend repainting the kitchen and I'm exhausted.",
    "Quick reminder that the poll closes on Friday.",
    "Nice screenshot, what settings are you running?",
    "Traffic was terrible today so I'm late to the call.",
    "That recipe turned out great, I added a bit more garlic.",
    "Can someone pin the rules message in this channel?",
    "I finally beat the second boss after twenty attempts.",
    "The weather here has been grey and rainy all week.",
    "Welcome back, we missed you in voice chat yesterday.",
)


def padded(texts: Sequence[str]) -> list[str]:
    """Each text after one benign sentence of :data:`PAD_SENTENCES` (round-robin), separated by a space."""
    return [f"{PAD_SENTENCES[i % len(PAD_SENTENCES)]} {t}" for i, t in enumerate(texts)]


def _default_threshold(label: str) -> float:
    from bot.model.artifact import read_thresholds

    try:
        return read_thresholds()[label]
    except (OSError, KeyError, ValueError):
        return 0.5


def _score(scorer: Scorer, texts: Sequence[str], label: str, batch_size: int, *, pieces: bool = True) -> list[float]:
    """``label``'s score per raw text, through :func:`bot.core.pieces.score_texts` (the moderation service's own
    scoring path); ``pieces=False`` scores the whole text only (the policy's ``[scoring] pieces = "whole"``).

    Raises:
        EvalInputError: a text is empty after normalisation (the bot would not score it).
        ValueError: the scorer lacks ``label``.
    """
    from bot.core.pieces import score_texts

    out: list[float] = []
    step = batch_size * 16
    for s in range(0, len(texts), step):
        chunk = texts[s : s + step]
        for i, sc in enumerate(score_texts(scorer, chunk, "sentences" if pieces else "whole")):
            if sc is None:
                raise EvalInputError(f"case {s + i + 1} has no text to score")
            v = sc.get(label)
            if v is None:
                raise ValueError(f"scorer {scorer.name} has no {label!r} label")
            out.append(v)
    return out


def _acc(pairs: list[tuple[bool, bool]]) -> float | None:
    return sum(p == g for p, g in pairs) / len(pairs) if pairs else None


def hatecheck_metrics(rows: list[dict[str, str]], scores: list[float], threshold: float) -> dict:
    """Accuracy of ``score >= threshold`` vs ``label_gold``: overall, by gold class, functionality, target group.

    Args:
        rows: HateCheck CSV rows (``functionality``, ``label_gold``, ``target_ident``...).
        scores: ``identity_attack`` per row, in [0, 1].
        threshold: Decision threshold.

    Returns:
        ``{"n", "threshold", "overall", "hateful", "non_hateful", "functionality": {name: {"n", "acc"}},
        "target": {group: {"hateful", "non_hateful", "n_hateful", "n_non_hateful"}}, "trans_non_hateful"}``
        (accuracies in [0, 1]; ``None`` when no case).
    """
    pairs = [(s >= threshold, r["label_gold"] == "hateful") for r, s in zip(rows, scores, strict=True)]
    by_func: dict[str, list] = defaultdict(list)
    by_target: dict[str, dict[bool, list]] = defaultdict(lambda: {True: [], False: []})
    for r, p in zip(rows, pairs, strict=True):
        by_func[r["functionality"]].append(p)
        tgt = (r.get("target_ident") or "").strip() or "none"
        by_target[tgt][p[1]].append(p)
    target = {
        t: {"hateful": _acc(d[True]), "non_hateful": _acc(d[False]), "n_hateful": len(d[True]), "n_non_hateful": len(d[False])}
        for t, d in sorted(by_target.items())
    }
    trans = [p for t, d in by_target.items() if "trans" in t.lower() for p in d[False]]
    return {
        "n": len(pairs),
        "threshold": threshold,
        "overall": _acc(pairs),
        "hateful": _acc([p for p in pairs if p[1]]),
        "non_hateful": _acc([p for p in pairs if not p[1]]),
        "functionality": {f: {"n": len(v), "acc": _acc(v)} for f, v in sorted(by_func.items())},
        "target": target,
        "trans_non_hateful": _acc(trans),
    }


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _print_hatecheck(title: str, m: dict, console) -> None:
    from rich.table import Table

    t = Table(title=f"{title} (n={m['n']}, identity_attack >= {m['threshold']:.2f})")
    t.add_column("metric")
    t.add_column("accuracy %", justify="right")
    t.add_column("target %", justify="right")
    for key in ("overall", "hateful", "non_hateful", "trans_non_hateful"):
        t.add_row(key, _fmt(m[key]), _fmt(TARGETS.get(key)))
    console.print(t)
    f = Table(title="per functionality")
    f.add_column("functionality")
    f.add_column("n", justify="right")
    f.add_column("accuracy %", justify="right")
    f.add_column("target %", justify="right")
    for name, v in m["functionality"].items():
        f.add_row(name, str(v["n"]), _fmt(v["acc"]), _fmt(TARGETS.get(name, TARGETS["functionality"])))
    console.print(f)
    g = Table(title="per target group")
    for col in ("target", "hateful %", "n", "non-hateful %", "n"):
        g.add_column(col)
    for name, v in m["target"].items():
        g.add_row(name, _fmt(v["hateful"]), str(v["n_hateful"]), _fmt(v["non_hateful"]), str(v["n_non_hateful"]))
    console.print(g)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def with_target_check(texts: Sequence[str], scores: Sequence[float], untargeted_review: float | None,
                      fuzzy: bool = True) -> list[float]:
    """Scores as the bot judges them with the default policy's identity-target check (``[identity_target]``).

    A text that names no identity (:func:`bot.core.identity_terms.identity_reference`, with ``fuzzy`` as the
    policy's ``identity_target.fuzzy``) keeps its score only when it reaches ``untargeted_review``; otherwise it
    counts as 0. ``None`` (no untargeted tier) zeroes all of them.
    """
    from bot.core.identity_terms import identity_reference
    from bot.core.normalize import normalize

    out = []
    for text, s in zip(texts, scores, strict=True):
        keep = identity_reference(normalize(text), fuzzy=fuzzy) is not None or (untargeted_review is not None and s >= untargeted_review)
        out.append(s if keep else 0.0)
    return out


def eval_hatecheck(
    path: Path, scorer: Scorer, threshold: float, batch_size: int, console, title: str = "HateCheck", pad: bool = False,
    policy: Policy | None = None,
) -> dict:
    """Score one HateCheck-format CSV (``test_case``, ``label_gold``...) and print its tables.

    The tables measure the model (``identity_attack >= threshold``). One more line shows the bot's decision with
    the default policy's identity-target check, returned under ``"with_target_check"`` (same keys).

    ``pad=True`` puts one benign sentence (:func:`padded`) before every case: an evasion test. It also prints and
    returns under ``"whole_text_only"`` what scoring only the whole text (no sentence pieces) would give.

    ``policy`` gives the identity-target check's untargeted tier (default: the packaged default policy).
    """
    from bot.core.policy import load_policy

    rows = _read_csv(path)
    if not rows:
        raise EvalInputError(f"{path}: no cases (nothing after the header line)")
    texts = [r["test_case"] for r in rows]
    if pad:
        texts = padded(texts)
        title = f"{title}, each case after one benign sentence"
    scores = _score(scorer, texts, "identity_attack", batch_size)
    m = hatecheck_metrics(rows, scores, threshold)
    _print_hatecheck(title, m, console)
    if pad:
        w = hatecheck_metrics(rows, _score(scorer, texts, "identity_attack", batch_size, pieces=False), threshold)
        console.print(
            f"whole text only (no sentence pieces): overall {_fmt(w['overall'])}, hateful {_fmt(w['hateful'])}, "
            f"non-hateful {_fmt(w['non_hateful'])}"
        )
        m["whole_text_only"] = w
    it = (policy or load_policy()).identity_target
    untargeted = it.untargeted.review
    g = hatecheck_metrics(rows, with_target_check(texts, scores, untargeted, fuzzy=it.fuzzy), threshold)
    m["target_check_paired"] = compare_target_checks(rows, texts, scores, threshold, untargeted, console)
    console.print(
        f"with the bot's identity-target check (no identity named: untargeted tier {untargeted}): "
        f"overall {_fmt(g['overall'])}, hateful {_fmt(g['hateful'])}, non-hateful {_fmt(g['non_hateful'])}, "
        f"trans non-hateful {_fmt(g['trans_non_hateful'])}"
    )
    m["with_target_check"] = g
    return m


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
    """Score the fixed 20% OLID hold-out (same split as training) and print macro-F1."""
    from rich.table import Table

    if path.is_dir():
        path = path / "olid-training-v1.0.tsv"
    held = _olid_holdout(path)
    scores = _score(scorer, [r.text for r in held], "toxicity", batch_size)
    m = olid_metrics([r.a == "OFF" for r in held], scores, threshold)
    t = Table(title=f"OLID hold-out 20% (n={m['n']}, toxicity >= {threshold:.2f})")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for key in ("macro_f1", "f1_off", "f1_not", "accuracy"):
        t.add_row(key, f"{m[key]:.3f}")
    t.add_row("target macro_f1", f"{TARGETS['olid_macro_f1']:.2f}")
    console.print(t)
    return m


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


def artifact_threshold(artifact_dir: Path, label: str) -> float:
    """``label``'s calibrated decision threshold in [0, 1] from an artifact directory's ``thresholds.json`` (the
    one ``python -m bot.training --out DIR`` writes): how ``eval olid --artifact/--baseline DIR`` judges each model
    at its own calibrated threshold, not the shipped model's.

    Raises:
        EvalInputError: the file is missing or unreadable, lacks ``label``, or its value is outside [0, 1] (naming
            the file).
    """
    from bot.model.artifact import THRESHOLDS_FILE, read_thresholds

    f = Path(artifact_dir) / THRESHOLDS_FILE
    try:
        value = read_thresholds(Path(artifact_dir))[label]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvalInputError(f"{f}: no calibrated {label} threshold ({type(exc).__name__}: {exc})") from None
    if not 0.0 <= value <= 1.0:
        raise EvalInputError(f"{f}: the {label} threshold {value} is outside [0, 1]")
    return value


def compare_target_checks(rows: list[dict[str, str]], texts: Sequence[str], scores: Sequence[float], threshold: float,
                          untargeted: float | None, console) -> list[dict]:
    """The identity-target check's variants on the same scores, paired (:func:`print_paired` rows): A = the exact
    lexicon check (``identity_target.fuzzy = false``), B = the fuzzy check, and B against no check at all; per
    line overall, hateful, non-hateful and the functionalities where the two disagree."""
    gold = [r["label_gold"] == "hateful" for r in rows]

    def right(vals: Sequence[float]) -> list[bool]:
        return [(s >= threshold) == g for s, g in zip(vals, gold, strict=True)]

    none = right(scores)
    exact = right(with_target_check(texts, scores, untargeted, fuzzy=False))
    fuzzy = right(with_target_check(texts, scores, untargeted, fuzzy=True))
    out = []
    for tag, a in (("exact->fuzzy", exact), ("none->fuzzy", none)):
        part = [_paired_row(f"{tag} overall", a, fuzzy)]
        for name, keep in (("hateful", lambda i: gold[i]), ("non_hateful", lambda i: not gold[i])):
            idx = [i for i in range(len(rows)) if keep(i)]
            if idx:
                part.append(_paired_row(f"{tag} {name}", [a[i] for i in idx], [fuzzy[i] for i in idx]))
        for func in sorted({r["functionality"] for r in rows}):
            idx = [i for i, r in enumerate(rows) if r["functionality"] == func]
            pa, pb = [a[i] for i in idx], [fuzzy[i] for i in idx]
            if pa != pb:
                part.append(_paired_row(f"{tag} {func}", pa, pb))
        out += part
    print_paired(f"identity-target check (A: exact lexicon / no check, B: fuzzy; at {threshold:.2f})", out, console)
    return out


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
        console: A ``rich.console.Console``; a new one when ``None``.
        scorer: Any :class:`bot.core.ports.Scorer`; default the model of ``Settings.from_env()``
            (:func:`bot.runtime.load_scorer`).
        policy: The policy whose identity-target check is applied (default: the packaged default policy).
        pad: hatecheck/mhc only: put one benign sentence before every case (see :func:`eval_hatecheck`).
        baseline: A second scorer to compare with on the same cases: prints a paired comparison
            (:mod:`bot.eval.paired`: McNemar's exact test and a paired bootstrap 95% interval) and returns it under
            ``"paired"``; ``scorer`` is the candidate (B), ``baseline`` is A.
        baseline_threshold: The baseline's threshold (default: ``threshold``).
        settings: ``bot.settings.Settings`` for ``scene`` (its default policy file); default from the environment.

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
        from rich.console import Console

        console = Console()
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
            return eval_scene(path, scorer, console, settings=settings, baseline=baseline)
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
        files = sorted(path.glob("mhc_*.csv")) if path.is_dir() else [path]
        if not files:
            raise EvalInputError(f"{path}: no mhc_*.csv files in this folder")
        results = {}
        for f in files:
            lang = f.stem.removeprefix("mhc_").split("_")[0]
            results[lang] = eval_hatecheck(f, scorer, thr, batch_size, console,
                                           title=f"Multilingual HateCheck: {lang}", pad=pad, policy=policy)
            if baseline is not None:
                results[lang]["paired"] = compare_hatecheck(f, baseline, scorer, base_thr, thr, batch_size, console,
                                                            pad=pad, title=f"Multilingual HateCheck: {lang}")
        return results
    except (KeyError, StopIteration, IndexError, UnicodeDecodeError, csv.Error, IsADirectoryError) as exc:
        raise EvalInputError(f"{path}: not a {kind} file ({type(exc).__name__}: {exc})") from None


class _Remembered:
    """A scorer that keeps every text's :class:`Scores` for the rest of one evaluation, so a text scored for the
    candidate's tables is not scored again for the paired comparison (same model, same text: same scores)."""

    def __init__(self, scorer: Scorer) -> None:
        self._scorer = scorer
        self.name, self.version, self.labels = scorer.name, scorer.version, scorer.labels
        self.languages = getattr(scorer, "languages", None)
        self._known: dict[str, object] = {}

    def score_batch(self, texts: Sequence[str]) -> list:
        todo = list(dict.fromkeys(t for t in texts if t not in self._known))
        if todo:
            self._known.update(zip(todo, self._scorer.score_batch(todo), strict=True))
        return [self._known[t] for t in texts]


def _paired_row(name: str, a: list[bool], b: list[bool]) -> dict:
    from bot.eval.paired import accuracy_stat, mcnemar, paired_bootstrap

    test = mcnemar(a, b)
    ci = paired_bootstrap(a, b, accuracy_stat)
    return {"name": name, "n": len(a), "a": accuracy_stat(range(len(a)), a), "b": accuracy_stat(range(len(b)), b),
            "diff": ci.diff, "low": ci.low, "high": ci.high, "only_a": test.only_a, "only_b": test.only_b,
            "p_value": test.p_value}


def print_paired(title: str, rows: list[dict], console) -> None:
    """One table: per metric, A's and B's value, B - A with its paired bootstrap 95% interval, the discordant
    counts and McNemar's exact p-value. A difference whose interval contains 0 is printed as such."""
    from rich.table import Table

    t = Table(title=f"{title}: paired comparison, A = baseline, B = candidate")
    for col in ("metric", "n", "A %", "B %", "B - A (points)", "95% interval", "only A right", "only B right",
                "McNemar p"):
        t.add_column(col, justify="right" if col != "metric" else "left")
    for r in rows:
        p = r.get("p_value")
        t.add_row(r["name"], str(r["n"]), f"{100 * r['a']:.1f}", f"{100 * r['b']:.1f}", f"{100 * r['diff']:+.1f}",
                  f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}]", str(r.get("only_a", "-")),
                  str(r.get("only_b", "-")), "-" if p is None else f"{p:.3g}")
    console.print(t)


def compare_hatecheck(path: Path, baseline: Scorer, candidate: Scorer, base_thr: float, cand_thr: float,
                      batch_size: int, console, *, pad: bool = False, title: str = "HateCheck") -> list[dict]:
    """Score one HateCheck-format file with both models and print :func:`print_paired` rows: overall, hateful,
    non-hateful, trans non-hateful and every functionality where the two disagree on at least one case.

    Returns:
        The rows (``name``, ``n``, ``a``, ``b``, ``diff``, ``low``, ``high`` in [0, 1] / [-1, 1]; ``only_a``,
        ``only_b``; ``p_value``).
    """
    rows = _read_csv(path)
    texts = [r["test_case"] for r in rows]
    if pad:
        texts = padded(texts)
    gold = [r["label_gold"] == "hateful" for r in rows]
    a = [(s >= base_thr) == g for s, g in zip(_score(baseline, texts, "identity_attack", batch_size), gold, strict=True)]
    b = [(s >= cand_thr) == g for s, g in zip(_score(candidate, texts, "identity_attack", batch_size), gold, strict=True)]

    def pick(keep) -> tuple[list[bool], list[bool]]:
        idx = [i for i, r in enumerate(rows) if keep(r)]
        return [a[i] for i in idx], [b[i] for i in idx]

    out = [_paired_row("overall", a, b)]
    for name, keep in (("hateful", lambda r: r["label_gold"] == "hateful"),
                       ("non_hateful", lambda r: r["label_gold"] != "hateful"),
                       ("trans_non_hateful", lambda r: r["label_gold"] != "hateful"
                        and "trans" in (r.get("target_ident") or "").lower())):
        pa, pb = pick(keep)
        if pa:
            out.append(_paired_row(name, pa, pb))
    for func in sorted({r["functionality"] for r in rows}):
        pa, pb = pick(lambda r, f=func: r["functionality"] == f)
        if pa != pb:
            out.append(_paired_row(func, pa, pb))
    print_paired(f"{title} (A at {base_thr:.2f}, B at {cand_thr:.2f})", out, console)
    return out


def compare_olid(path: Path, baseline: Scorer, candidate: Scorer, base_thr: float, cand_thr: float,
                 batch_size: int, console) -> list[dict]:
    """OLID hold-out with both models: macro-F1 difference with a paired bootstrap 95% interval, and accuracy with
    McNemar's test; printed with :func:`print_paired`."""
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
    print_paired(f"OLID hold-out (A at {base_thr:.2f}, B at {cand_thr:.2f})", out, console)
    return out


def eval_scene(path: Path, scorer: Scorer, console, *, settings=None, baseline: Scorer | None = None) -> dict:
    """Judge the founding-scene probe cases under the policy (:mod:`bot.eval.scene`) and print them; with
    ``baseline``, also judge them with it and print the paired comparison (under ``"paired"``)."""
    from bot.eval import scene

    cases = scene.read_cases(path)
    if not cases:
        raise EvalInputError(f"{path}: no cases (nothing after the header line)")
    verdicts = scene.judge(cases, scorer, settings)
    m = scene.scene_metrics(cases, verdicts)
    scene.print_scene(m, console)
    if baseline is not None:
        base = scene.judge(cases, baseline, settings)
        mb = scene.scene_metrics(cases, base)
        scene.print_scene(mb, console, title="Founding scene, baseline")
        a, b = scene.correct(cases, base), scene.correct(cases, verdicts)
        rows = [_paired_row("overall", a, b)]
        for name, gold in (("abuse", "flag"), ("others", "allow")):
            idx = [i for i, c in enumerate(cases) if c["gold"] == gold]
            if idx:  # a probe file may hold one side only: no row for an empty subset
                rows.append(_paired_row(name, [a[i] for i in idx], [b[i] for i in idx]))
        print_paired("Founding scene", rows, console)
        m["paired"] = rows
    return m


__all__ = ["KINDS", "REQUIRED_COLUMNS", "check_input", "compare_hatecheck", "compare_target_checks", "artifact_threshold", "compare_olid", "eval_scene", "print_paired", "PAD_SENTENCES", "TARGETS", "EvalInputError", "hatecheck_metrics", "olid_metrics", "padded", "run_eval", "with_target_check"]
