"""The fast candidate loop (issue 26): a candidate fine-tuned *from the shipped student* in minutes, not hours.

``python -m bot.training.fast --seed N --out DIR [--families counterfactual,scene] [--replay 8000]``

Design (why not the whole recipe): the recipe (:func:`bot.training.train.train_recipe`) trains two teachers and a
student from the package weights, about 85-105 minutes on 2 cores, so a day tries one seed. Here the candidate
starts from the shipped weights (``bot/model/artifact``) and sees, for one epoch:

* the **new rows** of the chosen families (hard labels, plain BCE on the labels they know), and
* a **replay sample** of the shipped student's own training split (the recipe's default data, seed 13), whose
  targets are the *shipped student's* probabilities on all seven labels (self-distillation against forgetting,
  "learning without forgetting", Li & Hoiem 2016; the student was itself distilled to the teachers' mean, so its
  probabilities stand in for the teachers', which are not kept in git).

The replay targets are computed once per replay pool and cached as a build artifact under the cache dir
(``<cache>/fast/replay-<sha256 of the shipped delta, max_len and pool texts>.pt``, ~1 MB; written atomically),
so a second seed or a restart pays no scoring. The candidate is built in ``<out>.partial`` and moved to ``<out>``
only once its artifact and thresholds are complete: a run killed half-way leaves ``<out>`` as it was and the
shipped artifact is never written (``--out`` may not be ``bot/model/artifact``, a folder holding it or inside it,
or an existing folder other than a previous candidate: :func:`_check_out`; shipping is a deliberate copy).
Thresholds are calibrated as for every model (max F1 per label) on the recipe's dev split plus a 10% hold-out of
the new rows (never trained on).

``--refit`` finishes the candidate with :func:`bot.training.refit.refit` in the same run (the heads of the labels
``--new-labels`` does not name, re-fitted to the base's probabilities; one data build, one calibration): what ships
is such a re-fit. ``--freeze-layers N`` keeps the embeddings and the N lowest encoder layers as the base had them
(a cheaper backward pass; recipe Q with 2 frozen layers was measured over three seeds in the twenty-sixth session).

Time on a 2-core AMD EPYC (AVX2 only, fp32; the slowest CPU kind seen), one run with caches warm: recipe Q with
``--refit`` 20 min 13 s, with ``--freeze-layers 2 --refit`` 15 min 50 s to 16 min 5 s; on an AVX-512 chip (bf16)
recipe Q's fit took 339 s. Details and quality: docs/model-card.md, "Twenty-sixth session".
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bot.core.models import LABELS
from bot.model import artifact as art
from bot.training.data import Example
from bot.training.pools import (
    ANCHOR_POOL,
    ANCHOR_SOURCES,
    BORDERLINE_HIGH,
    BORDERLINE_LOW,
    FAMILIES,
    HOT_LOW,
    PROFANE_FRAMES,
    PROFANE_POOL,
    _check_out,
    anchor_texts,
    new_row_targets,
    new_rows,
    pick_anchors,
    pick_hot,
    pool_key,
    profane_anchor_texts,
    publish,
    replay_targets,
    restrict_labels,
    split_new,
)
from bot.training.train import (
    DEFAULT_DATA,
    TrainConfig,
    _fit,
    build_examples,
    calibrate,
    check_data_root,
    cpu_has_bf16,
)

log = logging.getLogger(__name__)

#: The loop's data live in :mod:`bot.training.pools` (shared with the re-fit and the soup); they are re-exported
#: here as before (``fast.FAMILIES``, ``fast.new_rows``...).
__all__ = [
    "ANCHOR_POOL",
    "ANCHOR_SOURCES",
    "BORDERLINE_HIGH",
    "BORDERLINE_LOW",
    "FAMILIES",
    "FastConfig",
    "HOT_LOW",
    "PROFANE_FRAMES",
    "PROFANE_POOL",
    "anchor_texts",
    "freeze_lower",
    "main",
    "new_row_targets",
    "new_rows",
    "pick_anchors",
    "pick_hot",
    "pool_key",
    "profane_anchor_texts",
    "publish",
    "replay_targets",
    "restrict_labels",
    "split_new",
    "train_fast",
    "untaught",
]


@dataclass(frozen=True)
class FastConfig:
    """Settings of one fast candidate. ``seed`` drives the replay sample, the new rows' dev hold-out, the batch
    order and dropout; the base is always the shipped artifact ``base``."""

    out: Path
    seed: int = 1
    families: tuple[str, ...] = ("counterfactual", "scene")
    replay: int = 8000
    epochs: int = 1
    lr: float = 3e-5
    data: Path = DEFAULT_DATA
    base: Path = art.ARTIFACT_DIR
    cache: Path | None = None
    #: The labels the new rows teach (names of :data:`LABELS`); ``None``: every label a row knows. With a subset,
    #: the other labels of new rows are left to the replay rows' soft targets (guards what the new data must not
    #: move, e.g. ``toxicity`` on OLID-like offensive language).
    new_labels: tuple[str, ...] | None = None
    #: With ``new_labels`` (or rows that leave a label unknown): the new rows' *other* labels are held at the base
    #: model's own probabilities on those rows (self-distillation, as for replay rows) instead of carrying no loss.
    #: Without it an unnamed label is free to move on exactly the texts the new rows add (the sixteenth session's
    #: G-s2 raised ``insult``/``toxicity`` on mild profanity although its rows taught neither).
    hold_unnamed: bool = False
    #: Unlabelled real chat messages (from :data:`ANCHOR_SOURCES`, never the ``bench/chat_flags.py`` test sets)
    #: added with the base model's probabilities on all seven labels as targets: anchors the model on chat-like
    #: text, where the labelled replay pool (Jigsaw, OLID, ...) has little. 0: none.
    anchor: int = 0
    #: Anchors drawn first from the *borderline* ones: texts on which the base model scores some label in
    #: [:data:`BORDERLINE_LOW`, :data:`BORDERLINE_HIGH`) (where a small drift crosses a review tier of the default
    #: policy, e.g. swearing at toxicity 0.9 against the 0.95 tier), the rest at random.
    anchor_borderline: bool = False
    #: Each new training row is seen this many times per epoch (an up-weight of what the new rows teach against
    #: the replay and anchor rows, which hold the base in place; 1: once, as before). The held-out new dev rows
    #: are never repeated.
    new_repeat: int = 1
    #: Extra replay rows drawn from the *hot* part of the replay pool: rows on which the base model scores one of
    #: the labels the new rows teach (``new_labels``, or all seven) at :data:`HOT_LOW` or more, held at the base's
    #: probabilities like every replay row (repeated when there are fewer than this). The new families are mostly
    #: benign identity text; without a counterweight the model lowers ``identity_attack`` on hateful text too
    #: (the nineteenth session's M and R recipes lost 1.4-3.3 points of HateCheck's hateful cases). 0: none.
    replay_hot: int = 0
    #: Extra anchors made by swearing in chat: anchor-pool messages with one profanity added by a seeded frame of
    #: :data:`PROFANE_FRAMES` (:func:`profane_anchor_texts`), held at the base model's probabilities on the
    #: sworn text. The anchor sources are programming chat that rarely swears, so nothing held the base's
    #: ``toxicity``/``insult`` on chat that does: every recipe since M added 5-9 Komodo flags on plain swearing
    #: ("some of that shit", "half-assed") just over those review tiers. 0: none.
    anchor_profane: int = 0
    #: Encoder layers (counted from the embeddings) kept as the base had them, with the whole embedding block: no
    #: gradient flows below the first trained layer, so a step costs the forward pass plus the backward of the
    #: layers above only (measured in docs/model-card.md, twenty-sixth session). 0: only the word embeddings are
    #: frozen, as in every recipe before.
    freeze_layers: int = 0
    #: Re-fit the untaught labels' heads in the same process (:func:`bot.training.refit.refit`, the labels not in
    #: ``new_labels``) before publishing: ``out`` is then the re-fit, bit for bit what ``python -m bot.training.refit``
    #: writes from the candidate, without a second data build, model load and calibration. Needs ``new_labels``.
    refit: bool = False
    #: Texts the in-process re-fit draws from the replay pool, the chat anchors and the sworn anchors
    #: (:class:`bot.training.refit.RefitConfig`'s ``pool``, ``anchors``, ``profane``).
    refit_sizes: tuple[int, int, int] = (16000, 8000, 6000)
    #: The recipe's own settings (batch 32, 48 tokens, warm-up 6%, weight decay 0.01, 2 threads) and its default
    #: data (seed 13): the replay pool is the shipped student's training split.
    recipe: TrainConfig = TrainConfig()


def train_fast(cfg: FastConfig, *, pool: tuple[list[Example], list[Example]] | None = None) -> dict:
    """Train one candidate into ``cfg.out`` (via ``<out>.partial``); returns the report (also ``fast.json``).

    ``pool`` replaces the recipe's ``(train, dev)`` split (tests pass a tiny one); default
    :func:`bot.training.train.build_examples` of ``cfg.recipe``.

    Raises:
        ValueError: ``cfg.out`` is the shipped artifact or the base, an unknown family, or ``new_repeat`` < 1.
        bot.model.artifact.ModelArtifactError: the base artifact cannot be read.
    """
    import torch
    from transformers import BertForSequenceClassification, BertTokenizerFast

    _check_out(cfg.out, cfg.base)
    if cfg.new_repeat < 1:
        raise ValueError(f"new_repeat must be at least 1, not {cfg.new_repeat}")
    if cfg.refit:
        untaught(cfg.new_labels)
    encoder_layers = json.loads((art.base_model_dir() / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"]
    if not 0 <= cfg.freeze_layers < encoder_layers:
        raise ValueError(f"freeze_layers must be in [0, {encoder_layers - 1}] for the {encoder_layers}-layer "
                         f"encoder, not {cfg.freeze_layers}")
    t0 = time.monotonic()
    rc = cfg.recipe
    torch.set_num_threads(rc.threads)
    torch.manual_seed(cfg.seed)
    fresh = new_rows(cfg.families, cfg.seed)
    pool_train, pool_dev = pool if pool is not None else build_examples(rc)
    new_train, new_dev = split_new(fresh, cfg.seed, rc.dev_fraction, frozenset(ex.text for ex in pool_dev))
    rng = random.Random(cfg.seed)
    tok = BertTokenizerFast.from_pretrained(str(art.base_model_dir()))
    pool_texts = [ex.text for ex in pool_train]
    pool_enc = tok(pool_texts, truncation=True, max_length=rc.max_len)["input_ids"]
    cache = cfg.cache or art.default_cache_dir()
    pool_probs = replay_targets(cfg.base, pool_texts, pool_enc, rc.max_len, cache)
    pick = sorted(rng.sample(range(len(pool_train)), min(cfg.replay, len(pool_train))))
    hot_cols = [LABELS.index(x) for x in (cfg.new_labels or LABELS)]
    pick += pick_hot(pool_probs, hot_cols, cfg.replay_hot, rng, frozenset(pick))

    anchors: list[str] = []
    anchor_enc: list[list[int]] = []
    anchor_probs = torch.zeros(0, len(LABELS))
    if cfg.anchor or cfg.anchor_profane:
        a_pool = anchor_texts(cfg.data, frozenset(ex.text for ex in pool_dev))
    if cfg.anchor:
        a_enc = tok(a_pool, truncation=True, max_length=rc.max_len)["input_ids"]
        a_probs = replay_targets(cfg.base, a_pool, a_enc, rc.max_len, cache)
        a_pick = pick_anchors(a_probs, cfg.anchor, rng, cfg.anchor_borderline)
        anchors = [a_pool[i] for i in a_pick]
        anchor_enc = [a_enc[i] for i in a_pick]
        anchor_probs = a_probs[a_pick]
    plain_anchors = len(anchors)
    if cfg.anchor_profane:
        p_pool = profane_anchor_texts(a_pool)
        p_enc = tok(p_pool, truncation=True, max_length=rc.max_len)["input_ids"]
        p_probs = replay_targets(cfg.base, p_pool, p_enc, rc.max_len, cache)
        p_pick = sorted(rng.sample(range(len(p_pool)), min(cfg.anchor_profane, len(p_pool))))
        anchors += [p_pool[i] for i in p_pick]
        anchor_enc += [p_enc[i] for i in p_pick]
        anchor_probs = torch.cat([anchor_probs, p_probs[p_pick]])
    t_data = time.monotonic() - t0

    new_enc = tok([ex.text for ex in new_train], truncation=True, max_length=rc.max_len)["input_ids"] if new_train else []
    hard = torch.tensor([[math.nan if v is None else v for v in ex.target] for ex in new_train],
                        dtype=torch.float32).reshape(len(new_train), len(LABELS))
    base_new = None
    if cfg.hold_unnamed and new_train:
        # the base's probabilities on every fresh text (a fixed list whatever the seed, so one cache file)
        fresh_texts = sorted({ex.text for ex in fresh})
        fresh_enc = tok(fresh_texts, truncation=True, max_length=rc.max_len)["input_ids"]
        fresh_probs = replay_targets(cfg.base, fresh_texts, fresh_enc, rc.max_len, cache)
        at = {t: i for i, t in enumerate(fresh_texts)}
        base_new = fresh_probs[[at[ex.text] for ex in new_train]]
    new_soft, new_mask = new_row_targets(hard, cfg.new_labels, base_new)
    new_enc = list(new_enc) * cfg.new_repeat
    enc = [pool_enc[i] for i in pick] + anchor_enc + new_enc
    new_soft, new_mask = new_soft.repeat(cfg.new_repeat, 1), new_mask.repeat(cfg.new_repeat, 1)
    soft = torch.cat([pool_probs[pick], anchor_probs, new_soft])
    mask = torch.cat([torch.ones(len(pick) + len(anchors), len(LABELS), dtype=torch.bool), new_mask])
    # distill_weight 1.0: every row's loss is plain BCE against ``soft`` on its known labels: the base model's
    # probabilities for replay rows, the hard labels for new rows (training_loss's docstring says why no pos_weight)
    fit_cfg = replace(rc, epochs=cfg.epochs, lr=cfg.lr, distill_weight=1.0)
    model = BertForSequenceClassification.from_pretrained(
        str(art.base_model_dir()), num_labels=len(LABELS), problem_type="multi_label_classification")
    model.load_state_dict(art.rebuild_state_dict(cfg.base))
    pos_weight = torch.ones(len(LABELS))
    freeze_lower(model, cfg.freeze_layers)
    t1 = time.monotonic()
    _fit(model, fit_cfg, cfg.seed, enc, soft, mask, pos_weight, cpu_has_bf16(), t1, soft)
    t_fit = time.monotonic() - t1

    staging = Path(f"{cfg.out}.unrefit.partial" if cfg.refit else f"{cfg.out}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    manifest = art.write_artifact(
        state, LABELS, staging, seed=cfg.seed, fast_loop=True, base=art.read_manifest(cfg.base)["delta_sha256"][:12],
        families=list(cfg.families), replay=len(pick), new_rows=len(new_train), epochs=cfg.epochs, lr=cfg.lr,
        max_len=rc.max_len, **({"new_labels": list(cfg.new_labels)} if cfg.new_labels is not None else {}),
        **({"hold_unnamed": True} if cfg.hold_unnamed else {}), **({"anchor": plain_anchors} if cfg.anchor else {}),
        **({"anchor_borderline": True} if cfg.anchor_borderline else {}),
        **({"new_repeat": cfg.new_repeat} if cfg.new_repeat != 1 else {}),
        **({"replay_hot": cfg.replay_hot} if cfg.replay_hot else {}),
        **({"anchor_profane": cfg.anchor_profane} if cfg.anchor_profane else {}),
        **({"freeze_layers": cfg.freeze_layers} if cfg.freeze_layers else {}))
    report = {"seed": cfg.seed, "families": list(cfg.families), "new_labels": list(cfg.new_labels or LABELS),
              "replay_rows": len(pick), "replay_hot": cfg.replay_hot, "anchor_rows": plain_anchors, "anchor_profane": len(anchors) - plain_anchors, "hold_unnamed": cfg.hold_unnamed,
              "freeze_layers": cfg.freeze_layers,
              "new_train_rows": len(new_train), "new_repeat": cfg.new_repeat, "new_dev_rows": len(new_dev), "dev_rows": len(pool_dev) + len(new_dev),
              "rows_per_epoch": len(enc), "steps": math.ceil(len(enc) / rc.batch_size) * cfg.epochs, "data_seconds": round(t_data),
              "fit_seconds": round(t_fit), "delta_sha256": manifest["delta_sha256"]}
    if cfg.refit:
        from bot.training.refit import RefitConfig, refit

        (staging / "fast.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        pool_n, anchors_n, profane_n = cfg.refit_sizes
        try:
            done = refit(RefitConfig(candidate=staging, out=Path(cfg.out), labels=untaught(cfg.new_labels),
                                     base=cfg.base, data=cfg.data, cache=cfg.cache, pool=pool_n, anchors=anchors_n,
                                     profane=profane_n),
                         dev=list(pool_dev) + new_dev, pool=(pool_train, pool_dev),
                         candidate_report={**report, "total_seconds": round(time.monotonic() - t0)}, t_start=t0)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return done
    thresholds, dev_report = calibrate(replace(rc, out=staging), list(pool_dev) + new_dev)
    (staging / art.THRESHOLDS_FILE).write_text(
        json.dumps({"thresholds": thresholds, "source": "max-F1 on the recipe's 10% dev split plus 10% of the "
                    "fast loop's new rows", "dev": dev_report}, indent=2) + "\n", encoding="utf-8")
    report.update(total_seconds=round(time.monotonic() - t0), thresholds=thresholds)
    return publish(staging, Path(cfg.out), report)


def untaught(new_labels: Sequence[str] | None) -> tuple[str, ...]:
    """The labels a candidate that taught ``new_labels`` re-fits: :data:`LABELS` minus them.

    Raises:
        ValueError: ``new_labels`` is ``None`` or names every label (nothing is left to re-fit).
    """
    rest = tuple(x for x in LABELS if x not in (new_labels or LABELS))
    if not rest:
        raise ValueError("a re-fit needs --new-labels naming some labels: it re-fits the heads of the others")
    return rest


def freeze_lower(model, layers: int) -> None:
    """Keep the embedding block and the lowest ``layers`` encoder layers of ``model`` (a
    ``BertForSequenceClassification``) as they are: ``requires_grad`` off, so autograd builds no graph below the
    first trained layer and the backward pass stops there. 0 leaves everything trainable (``_fit`` still freezes
    the word embeddings).

    Raises:
        ValueError: ``layers`` is negative or not fewer than the encoder's layers (nothing would be trained but
            the pooler and heads).
    """
    total = len(model.bert.encoder.layer)
    if not 0 <= layers < total:
        raise ValueError(f"freeze_layers must be in [0, {total - 1}] for this {total}-layer encoder, not {layers}")
    if not layers:
        return
    for p in model.bert.embeddings.parameters():
        p.requires_grad_(False)
    for layer in model.bert.encoder.layer[:layers]:
        for p in layer.parameters():
            p.requires_grad_(False)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, train one candidate; returns the exit status (2 with a one-line error for bad input)."""
    p = argparse.ArgumentParser(prog="python -m bot.training.fast", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="candidate artifact directory (never bot/model/artifact)")
    p.add_argument("--seed", type=int, default=FastConfig.seed)
    p.add_argument("--families", default=",".join(FastConfig.families),
                   help=f"comma-separated new-data families ({', '.join(FAMILIES)}; '' for replay only)")
    p.add_argument("--replay", type=int, default=FastConfig.replay, help="replay rows from the shipped training split")
    p.add_argument("--epochs", type=int, default=FastConfig.epochs)
    p.add_argument("--lr", type=float, default=FastConfig.lr)
    p.add_argument("--new-labels", default=None,
                   help="comma-separated labels the new rows teach (default: every label they know)")
    p.add_argument("--hold-unnamed", action="store_true",
                   help="hold the new rows' other labels at the base model's scores (distillation) instead of no loss")
    p.add_argument("--anchor", type=int, default=0,
                   help=f"unlabelled chat messages ({', '.join(ANCHOR_SOURCES)}) held at the base model's scores")
    p.add_argument("--anchor-borderline", action="store_true",
                   help=f"draw anchors first from texts the base scores in [{BORDERLINE_LOW}, {BORDERLINE_HIGH}) "
                        "on some label")
    p.add_argument("--new-repeat", type=int, default=1,
                   help="show each new training row this many times per epoch (up-weights the new data; default 1)")
    p.add_argument("--replay-hot", type=int, default=0,
                   help=f"extra replay rows the base scores >= {HOT_LOW} on a label the new rows teach (held at the "
                        "base's scores; a counterweight to benign new data)")
    p.add_argument("--anchor-profane", type=int, default=0,
                   help="extra anchors: anchor chat with one ordinary profanity added (held at the base's scores; "
                        "holds toxicity/insult on swearing chat)")
    p.add_argument("--freeze-layers", type=int, default=0,
                   help="keep the embeddings and this many lowest encoder layers as the base had them (faster steps; "
                        "default 0: only the word embeddings)")
    p.add_argument("--refit", action="store_true",
                   help="re-fit the heads of the labels --new-labels does not name in the same run (what python -m "
                        "bot.training.refit does next, without its second data build and calibration)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data root (default ../shared/data)")
    p.add_argument("--base", type=Path, default=art.ARTIFACT_DIR, help="artifact to start from (default: shipped)")
    p.add_argument("--cache", type=Path, default=None, help="replay-target cache root (default $MODBOT_CACHE)")
    args = p.parse_args(argv)
    families = tuple(f for f in args.families.split(",") if f)
    new_labels = tuple(x for x in args.new_labels.split(",") if x) if args.new_labels is not None else None
    try:
        bad = [x for x in new_labels or () if x not in LABELS]
        if bad:
            raise ValueError(f"--new-labels: unknown labels {bad}; known: {', '.join(LABELS)}")
        if args.replay < 0 or args.anchor < 0 or args.replay_hot < 0 or args.anchor_profane < 0 or args.epochs < 1 or args.new_repeat < 1 or not 0 < args.lr < 1:
            raise ValueError("--replay, --replay-hot, --anchor and --anchor-profane must be >= 0, --epochs and --new-repeat >= 1 and --lr in (0, 1)")
        unknown = [f for f in families if f not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
        if args.refit:
            untaught(new_labels)
        if args.freeze_layers < 0:
            raise ValueError(f"--freeze-layers must be >= 0, not {args.freeze_layers}")
        if not (args.base / art.DELTA_FILE).is_file():
            raise ValueError(f"--base {args.base}: not a model artifact directory (no {art.DELTA_FILE})")
        _check_out(args.out, args.base)
        check_data_root(args.data)
    except ValueError as exc:
        print(f"error: fast: {exc}", file=__import__("sys").stderr)  # noqa: T201
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cfg = FastConfig(out=args.out, seed=args.seed, families=families, replay=args.replay, epochs=args.epochs,
                     lr=args.lr, data=args.data, base=args.base, cache=args.cache, new_labels=new_labels,
                     hold_unnamed=args.hold_unnamed, anchor=args.anchor,
                     anchor_borderline=args.anchor_borderline, new_repeat=args.new_repeat, replay_hot=args.replay_hot,
                     anchor_profane=args.anchor_profane, freeze_layers=args.freeze_layers, refit=args.refit,
                     recipe=replace(TrainConfig(), data=args.data))
    try:
        train_fast(cfg)
    except ValueError as exc:
        print(f"error: fast: {exc}", file=__import__("sys").stderr)  # noqa: T201
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
