"""Head re-fit of a fast-loop candidate (issue 26): the labels its new rows did not teach, put back where the
shipped model had them.

``python -m bot.training.refit CANDIDATE --out DIR [--labels toxicity,insult,...]``

Why: every fast-loop recipe since D teaches ``identity_attack`` and ``threat`` only (``--new-labels``), holds the
other labels with replay, anchors and ``--hold-unnamed``, and still drifts on them: the shared encoder moves, and
the untaught heads read the moved features. The drift is what stopped recipes Q and P (docs/model-card.md): 5-9
Komodo messages newly over the ``toxicity`` / ``insult`` review tiers on every seed (plain swearing), and OLID's
macro-F1 (read on ``toxicity``) 0.5-1.7 points lower. Holding those labels *during* training only holds them on
average.

What this does instead: the candidate's encoder and pooler stay as trained, and so do the classifier rows of the
labels the new rows taught; each other label's classifier row (a linear read-out of the 384-wide pooled output,
``BertForSequenceClassification.classifier``) is re-fitted so that, on a fixed set of texts, the candidate's
probability matches the base (shipped) model's: a convex problem (logistic regression on soft targets, plain BCE,
an L2 pull of ``--l2`` towards the candidate's own row), solved exactly by L-BFGS in seconds. One forward pass of
the candidate over the texts gives the features; the base's probabilities are the fast loop's cached replay
targets. It is the output-space version of "learning without forgetting" (Li & Hoiem 2016) restricted to the
heads, where it is convex. Nothing changes for the taught labels: a candidate's HateCheck figures (read on
``identity_attack``) are the same before and after.

The texts (:func:`refit_texts`): a seeded sample of the shipped student's training split (the fast loop's replay
pool), of the chat anchor pool (borderline texts first: where a small drift crosses a review tier) and of the
sworn anchors (``--anchor-profane``'s pool), 10% of them held out to report how well the fit carries to texts it
did not see (mean absolute difference to the base, and messages newly over the default policy's review tier).

Like the fast loop and the soup, the result is built in ``<out>.partial`` and moved to ``<out>`` only when
complete; ``--out`` may not be the shipped artifact, the candidate, or a folder holding either. Its thresholds are
calibrated on the candidate's own dev rows (:func:`candidate_dev_rows`: the recipe's dev split and the new rows the
candidate held out; for a soup the dev split alone), so the untouched ``identity_attack`` keeps the candidate's
threshold. The manifest keeps the candidate's ``meta`` (so it is
still a candidate of the same base) and adds ``refit`` (the labels) and ``refit_of`` (the candidate's id).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bot.core.models import LABELS
from bot.model import artifact as art
from bot.training.pools import publish
from bot.training.train import DEFAULT_DATA, TrainConfig, build_examples, calibrate, check_data_root, contains

log = logging.getLogger(__name__)

#: The default policy's review tiers (``bot/config/default.toml``) of the labels a re-fit usually restores, used
#: only to *report* how many held-out texts a model puts newly over them; the fit itself knows no tier.
REPORT_TIERS = {"toxicity": 0.95, "insult": 0.85, "severe_toxicity": 0.95, "sexual_explicit": 0.95}


@dataclass(frozen=True)
class RefitConfig:
    """Settings of one re-fit. The sizes are texts drawn (seed ``seed``) from each source; 10% of the drawn texts
    are held out of the fit for the report."""

    candidate: Path
    out: Path
    labels: tuple[str, ...]
    base: Path = art.ARTIFACT_DIR
    data: Path = DEFAULT_DATA
    cache: Path | None = None
    pool: int = 16000
    anchors: int = 8000
    profane: int = 6000
    l2: float = 1e-3
    seed: int = 13


def untaught_labels(candidate: Path) -> tuple[str, ...]:
    """The labels ``candidate``'s new rows did not teach: :data:`LABELS` minus its manifest's ``meta.new_labels``.

    Raises:
        ValueError: the manifest records no ``new_labels`` (its new rows taught every label, or it is not a
            fast-loop candidate): name the labels with ``--labels``.
    """
    taught = art.read_manifest(candidate).get("meta", {}).get("new_labels")
    if not taught:
        raise ValueError(f"{candidate}: its manifest names no new_labels (the new rows taught every label they "
                         "knew); name the labels to re-fit with --labels")
    return tuple(x for x in LABELS if x not in taught)


def check_candidate(candidate: Path, base: Path) -> dict:
    """``candidate``'s manifest, once it is known to be a fast-loop candidate of ``base``.

    Raises:
        ValueError: not an artifact directory, not a fast-loop candidate (no ``meta.base``), or fine-tuned from
            another base than ``base`` (its probabilities would not be the ones it drifted from).
    """
    if not (candidate / art.DELTA_FILE).is_file():
        raise ValueError(f"{candidate}: not a model artifact directory (no {art.DELTA_FILE})")
    manifest = art.read_manifest(candidate)
    meta = manifest.get("meta", {})
    if meta.get("base") is None:
        raise ValueError(f"{candidate}: not a fast-loop candidate (its manifest names no base artifact)")
    if meta["base"] != art.read_manifest(base)["delta_sha256"][:12]:
        raise ValueError(f"{candidate}: fine-tuned from {meta['base']}, not from the base {base}")
    if list(manifest.get("labels", [])) != list(LABELS):
        raise ValueError(f"{candidate}: its labels are not {', '.join(LABELS)} in this order")
    return manifest


def check_out(out: Path, candidate: Path, base: Path) -> None:
    """Refuse an ``--out`` the final replace would harm (the fast loop's and the soup's rule).

    Raises:
        ValueError: ``out`` is, holds or is inside the shipped artifact, the base or the candidate, or is an
            existing folder that is not a candidate (no ``fast.json``).
    """
    for what, folder in (("the shipped artifact", art.ARTIFACT_DIR), ("the base", base), ("the candidate", candidate)):
        if contains(out, folder) or contains(folder, out):
            raise ValueError(f"--out {out}: a re-fit never writes {what} or a folder holding it or inside it")
    if out.is_dir() and any(out.iterdir()) and not (out / "fast.json").is_file():
        raise ValueError(f"--out {out}: a folder that is not a candidate (no fast.json); a re-fit replaces --out whole")


def pooled_features(state: dict, enc: Sequence[Sequence[int]], batch_size: int = 128):
    """The pooled output (what the classifier reads) of the model ``state`` on token ids ``enc``: a float64
    tensor ``(len(enc), hidden)``, eval mode, length-sorted batches padded with 0 (the tokenizer's [PAD])."""
    import torch
    from transformers import BertForSequenceClassification

    model = BertForSequenceClassification.from_pretrained(
        str(art.base_model_dir()), num_labels=len(LABELS), problem_type="multi_label_classification")
    model.load_state_dict(state)
    model.eval()
    order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
    out = torch.zeros(len(enc), model.config.hidden_size, dtype=torch.float64)
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            width = max(len(enc[i]) for i in idx)
            ids = torch.tensor([list(enc[i]) + [0] * (width - len(enc[i])) for i in idx])
            out[idx] = model.bert(input_ids=ids, attention_mask=(ids != 0).long()).pooler_output.double()
    return out


def fit_heads(features, targets, weight0, bias0, l2: float = 1e-3, max_iter: int = 500):
    """Re-fit linear read-outs: ``(weight, bias)`` (float32, shapes ``(k, d)`` and ``(k,)``) minimising the mean
    plain BCE between ``sigmoid(features @ weight.T + bias)`` and the soft ``targets`` (``(n, k)`` in [0, 1]) plus
    ``l2 * ||weight - weight0||^2`` (sum over the ``k`` rows), started from ``(weight0, bias0)``. Convex, so L-BFGS
    (strong Wolfe line search, float64) finds the optimum.

    Raises:
        ValueError: shapes that do not agree.
    """
    import torch

    n, d = features.shape
    if targets.shape[0] != n or weight0.shape != (targets.shape[1], d) or bias0.shape != (targets.shape[1],):
        raise ValueError(f"shapes disagree: features {tuple(features.shape)}, targets {tuple(targets.shape)}, "
                         f"weight0 {tuple(weight0.shape)}, bias0 {tuple(bias0.shape)}")
    x = features.double()
    t = targets.double().clamp(0.0, 1.0)
    w0 = weight0.detach().double()
    w = w0.clone().requires_grad_(True)
    b = bias0.detach().double().clone().requires_grad_(True)
    opt = torch.optim.LBFGS([w, b], lr=1.0, max_iter=max_iter, tolerance_grad=1e-9, tolerance_change=1e-12,
                            history_size=50, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(x @ w.T + b, t) + l2 * ((w - w0) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach().float(), b.detach().float()


def refit_texts(cfg: RefitConfig, tok, pool_split: tuple[list, list] | None = None
                ) -> dict[str, tuple[list[str], list[list[int]], object]]:
    """The re-fit's texts by source: ``{"pool" | "anchors" | "profane": (texts, token ids, base probabilities
    (n, 7))}``, each a seeded sample (``cfg.seed``) of the fast loop's own pools, the base's probabilities read from
    (or written to) the fast loop's replay-target cache. Anchors come borderline-first, as ``--anchor-borderline``
    draws them (:func:`bot.training.pools.pick_anchors`). ``pool_split`` is the recipe's ``(train, dev)`` split when the
    caller has built it already (the fast loop's ``--refit``); default :func:`bot.training.train.build_examples`."""
    from bot.training.pools import anchor_texts, pick_anchors, profane_anchor_texts, replay_targets

    rc = replace(TrainConfig(), data=cfg.data)
    cache = cfg.cache or art.default_cache_dir()
    rng = random.Random(cfg.seed)
    pool_train, pool_dev = pool_split if pool_split is not None else build_examples(rc)
    out: dict[str, tuple[list[str], list[list[int]], object]] = {}

    def scored(texts: list[str]):
        enc = tok(texts, truncation=True, max_length=rc.max_len)["input_ids"]
        return enc, replay_targets(cfg.base, texts, enc, rc.max_len, cache)

    pool = [ex.text for ex in pool_train]
    enc, probs = scored(pool)
    pick = sorted(rng.sample(range(len(pool)), min(cfg.pool, len(pool))))
    out["pool"] = ([pool[i] for i in pick], [enc[i] for i in pick], probs[pick])
    if cfg.anchors or cfg.profane:
        a_pool = anchor_texts(cfg.data, frozenset(ex.text for ex in pool_dev))
    if cfg.anchors:
        enc, probs = scored(a_pool)
        pick = sorted(set(pick_anchors(probs, cfg.anchors, rng, borderline=True)))
        out["anchors"] = ([a_pool[i] for i in pick], [enc[i] for i in pick], probs[pick])
    if cfg.profane:
        p_pool = profane_anchor_texts(a_pool)
        enc, probs = scored(p_pool)
        pick = sorted(rng.sample(range(len(p_pool)), min(cfg.profane, len(p_pool))))
        out["profane"] = ([p_pool[i] for i in pick], [enc[i] for i in pick], probs[pick])
    return out


def candidate_dev_rows(manifest: dict, pool_dev: Sequence, dev_fraction: float = 0.1) -> list:
    """The dev rows ``manifest``'s candidate was calibrated on: ``pool_dev`` (the recipe's dev split) plus, for a
    fast-loop candidate of one seed (``meta.seed`` and ``meta.families``), the same ``dev_fraction`` of its new rows
    that it held out (:func:`bot.training.pools.split_new` with its seed), so the re-fit's thresholds are calibrated
    as the candidate's were and its untouched ``identity_attack`` keeps its threshold; for a soup (no single seed,
    every new row trained on by some member) ``pool_dev`` alone, the soup's rule."""
    from bot.training.pools import new_rows, split_new

    meta = manifest.get("meta", {})
    if meta.get("seed") is None or not meta.get("families"):
        return list(pool_dev)
    fresh = new_rows(tuple(meta["families"]), int(meta["seed"]))
    _, new_dev = split_new(fresh, int(meta["seed"]), dev_fraction, frozenset(ex.text for ex in pool_dev))
    return list(pool_dev) + new_dev


def _agreement(probs, base, columns: list[int]) -> dict[str, dict]:
    """Per label: mean |p - base| and the number of texts ``probs`` puts at or over :data:`REPORT_TIERS` where
    ``base`` is under it (and the reverse)."""
    report = {}
    for k in columns:
        label = LABELS[k]
        row = {"mean_abs_diff": round(float((probs[:, k] - base[:, k]).abs().mean()), 5)}
        if label in REPORT_TIERS:
            tier = REPORT_TIERS[label]
            row["newly_over_tier"] = int(((probs[:, k] >= tier) & (base[:, k] < tier)).sum())
            row["no_longer_over_tier"] = int(((probs[:, k] < tier) & (base[:, k] >= tier)).sum())
        report[label] = row
    return report


def refit(cfg: RefitConfig, *, texts: dict | None = None, dev: list | None = None, pool: tuple[list, list] | None = None,
          candidate_report: dict | None = None, t_start: float | None = None) -> dict:
    """Re-fit ``cfg.labels``' classifier rows of ``cfg.candidate`` into the artifact ``cfg.out``; returns the report
    (also ``out/fast.json``). ``texts`` replaces :func:`refit_texts` (tests pass a tiny set: ``{name: (texts,
    token ids, base probabilities)}``), ``dev`` the calibration rows (default :func:`candidate_dev_rows`), ``pool``
    the recipe's ``(train, dev)`` split when already built. The fast loop's ``--refit`` passes its own report as
    ``candidate_report`` (kept under ``"candidate"``) and its start time as ``t_start`` (``time.monotonic()``), so
    ``total_seconds`` is the whole run's.

    Raises:
        ValueError: see :func:`check_candidate` and :func:`check_out`; an unknown label, or no label.
    """
    import torch
    from transformers import BertTokenizerFast

    t0 = time.monotonic()
    started = t_start if t_start is not None else t0
    candidate, out = Path(cfg.candidate), Path(cfg.out)
    manifest = check_candidate(candidate, cfg.base)
    check_out(out, candidate, cfg.base)
    bad = [x for x in cfg.labels if x not in LABELS]
    if bad or not cfg.labels:
        raise ValueError(f"labels to re-fit: {list(cfg.labels)}; each must be one of {', '.join(LABELS)}")
    columns = [LABELS.index(x) for x in cfg.labels]
    rc = replace(TrainConfig(), data=cfg.data)
    torch.set_num_threads(rc.threads)
    tok = BertTokenizerFast.from_pretrained(str(art.base_model_dir()))
    sources = texts if texts is not None else refit_texts(cfg, tok, pool)
    enc = [e for _, es, _ in sources.values() for e in es]
    base_probs = torch.cat([torch.as_tensor(p, dtype=torch.float32) for _, _, p in sources.values()])
    t_data = time.monotonic() - t0

    state = art.rebuild_state_dict(candidate)
    t1 = time.monotonic()
    feats = pooled_features(state, enc)
    t_feat = time.monotonic() - t1
    idx = list(range(len(enc)))
    random.Random(cfg.seed).shuffle(idx)
    held = sorted(idx[: len(idx) // 10])
    fit = sorted(idx[len(idx) // 10 :])
    w_all, b_all = state["classifier.weight"].float(), state["classifier.bias"].float()

    def probs_of(w, b, rows):
        return torch.sigmoid((feats[rows] @ w.double().T + b.double()).float())

    before = probs_of(w_all, b_all, held)
    w_new, b_new = fit_heads(feats[fit], base_probs[fit][:, columns], w_all[columns], b_all[columns], l2=cfg.l2)
    w_out, b_out = w_all.clone(), b_all.clone()
    w_out[columns], b_out[columns] = w_new, b_new
    after = probs_of(w_out, b_out, held)
    state = dict(state)
    state["classifier.weight"], state["classifier.bias"] = w_out, b_out

    staging = Path(f"{out}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    cand_id = manifest["delta_sha256"][:12]
    meta = {k: v for k, v in manifest.get("meta", {}).items() if not k.startswith("refit")}
    written = art.write_artifact(state, LABELS, staging, **meta, refit=list(cfg.labels), refit_of=cand_id,
                                 refit_rows=len(fit), refit_texts={k: len(v[0]) for k, v in sources.items()},
                                 refit_asked=[cfg.pool, cfg.anchors, cfg.profane], refit_l2=cfg.l2,
                                 refit_seed=cfg.seed)
    dev_rows = dev if dev is not None else candidate_dev_rows(
        manifest, (pool or build_examples(rc))[1], rc.dev_fraction)
    thresholds, dev_report = calibrate(replace(rc, out=staging), list(dev_rows))
    (staging / art.THRESHOLDS_FILE).write_text(
        json.dumps({"thresholds": thresholds, "source": "max-F1 on the candidate's own dev rows (the recipe's 10% "
                    f"dev split and the new rows it held out; a re-fit of {cand_id}'s {', '.join(cfg.labels)} "
                    "heads)", "dev": dev_report}, indent=2) + "\n", encoding="utf-8")
    base_held = base_probs[held]
    report = {"refit_of": cand_id, "labels": list(cfg.labels), "texts": {k: len(v[0]) for k, v in sources.items()},
              "fit_rows": len(fit), "held_out_rows": len(held), "l2": cfg.l2,
              "held_out_before": _agreement(before, base_held, columns),
              "held_out_after": _agreement(after, base_held, columns),
              "data_seconds": round(t_data), "feature_seconds": round(t_feat),
              "refit_seconds": round(time.monotonic() - t0), "total_seconds": round(time.monotonic() - started),
              "delta_sha256": written["delta_sha256"], "thresholds": thresholds,
              **({"candidate": candidate_report} if candidate_report is not None else {})}
    return publish(staging, out, report)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, re-fit one candidate; returns the exit status (2 with a one-line error for bad input)."""
    p = argparse.ArgumentParser(prog="python -m bot.training.refit", description=__doc__.split("\n\n")[0])
    p.add_argument("candidate", type=Path, help="fast-loop candidate artifact directory")
    p.add_argument("--out", type=Path, required=True, help="re-fitted artifact directory (never bot/model/artifact)")
    p.add_argument("--labels", default=None,
                   help="comma-separated labels whose heads to re-fit (default: those the candidate's new rows did "
                        "not teach, from its manifest's new_labels)")
    p.add_argument("--pool", type=int, default=RefitConfig.pool, help="texts from the shipped training split")
    p.add_argument("--anchors", type=int, default=RefitConfig.anchors, help="chat anchor texts (borderline first)")
    p.add_argument("--profane", type=int, default=RefitConfig.profane, help="sworn chat anchor texts")
    p.add_argument("--l2", type=float, default=RefitConfig.l2, help="pull of each re-fitted row towards the candidate's")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data root (default ../shared/data)")
    p.add_argument("--base", type=Path, default=art.ARTIFACT_DIR,
                   help="the artifact the candidate was fine-tuned from (default: shipped), whose probabilities the "
                        "re-fitted heads match")
    p.add_argument("--cache", type=Path, default=None, help="replay-target cache root (default $MODBOT_CACHE)")
    args = p.parse_args(argv)
    try:
        if not (args.base / art.DELTA_FILE).is_file():
            raise ValueError(f"--base {args.base}: not a model artifact directory (no {art.DELTA_FILE})")
        check_candidate(args.candidate, args.base)
        check_out(args.out, args.candidate, args.base)
        labels = (tuple(x for x in args.labels.split(",") if x) if args.labels is not None
                  else untaught_labels(args.candidate))
        bad = [x for x in labels if x not in LABELS]
        if bad or not labels:
            raise ValueError(f"--labels: {bad or 'none given'}; known: {', '.join(LABELS)}")
        if min(args.pool, args.anchors, args.profane) < 0 or args.pool + args.anchors + args.profane < 10 or args.l2 < 0:
            raise ValueError("--pool, --anchors and --profane must be >= 0 and add up to at least 10; --l2 >= 0")
        check_data_root(args.data)
    except ValueError as exc:
        print(f"error: refit: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    refit(RefitConfig(candidate=args.candidate, out=args.out, labels=labels, base=args.base, data=args.data, cache=args.cache,
                      pool=args.pool, anchors=args.anchors, profane=args.profane, l2=args.l2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
