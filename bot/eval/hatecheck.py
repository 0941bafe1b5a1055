"""HateCheck-format files (HateCheck's dev split; Multilingual HateCheck uses the same format): accuracy of
``identity_attack >= threshold`` against ``label_gold`` overall, per functionality and per target group, the bot's
identity-target check, and the paired comparison of two models. HateCheck files are evaluation only: never used for
training.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from bot.core.policy import Policy
from bot.core.ports import Scorer
from bot.eval.common import (
    TARGETS,
    _acc,
    _fmt,
    _paired_row,
    _read_csv,
    _score,
    padded,
    print_model,
    print_paired,
)
from bot.eval.errors import EvalInputError


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

    The tables measure the model (``identity_attack >= threshold``), named with its version on the line above them
    (``"HateCheck: model embedded-minilm-v1, version 6be930fdb033"``, returned under ``"model"``:
    :func:`bot.eval.common.model_source`). One more line shows the bot's decision with the default policy's
    identity-target check, returned under ``"with_target_check"`` (same keys).

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
    m["model"] = print_model(title, scorer, console)
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


def compare_hatecheck(path: Path, baseline: Scorer, candidate: Scorer, base_thr: float, cand_thr: float,
                      batch_size: int, console, *, pad: bool = False, title: str = "HateCheck") -> list[dict]:
    """Score one HateCheck-format file with both models and print :func:`print_paired` rows (after a line naming
    each model and its version): overall, hateful, non-hateful, trans non-hateful and every functionality where the
    two disagree on at least one case.

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
    print_paired(f"{title} (A at {base_thr:.2f}, B at {cand_thr:.2f})", out, console, models=(baseline, candidate))
    return out
