"""``python -m bot.training``: rebuild the embedded model artifact from the shared data (seeded)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from bot.model.artifact import ARTIFACT_DIR, DELTA_FILE, default_cache_dir, read_manifest
from bot.training.train import DEFAULT_DATA, TrainConfig, check_data_root, check_out_dir, contains, train, train_recipe


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, train, write ``bot/model/artifact``; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m bot.training", description=__doc__)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data root (default ../shared/data)")
    p.add_argument("--seed", type=int, default=TrainConfig.seed)
    p.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    p.add_argument("--out", type=Path, default=TrainConfig.out, help="artifact directory (default: the shipped one, refused while the shipped model is a fast-loop "
                        "candidate: name another folder)")
    p.add_argument("--limit", type=int, default=0, help="train on at most N rows (smoke runs)")
    p.add_argument("--runs", type=int, default=TrainConfig.runs,
                   help="fine-tunes averaged into the shipped model (same init, data order seed+k)")
    p.add_argument("--keep-runs", type=Path, default=None, help="also write each run's own artifact under this folder")
    p.add_argument("--stance-families", action=argparse.BooleanOptionalAction, default=TrainConfig.stance_families,
                   help="add the stance/hostility template families of runs D-F (default: off, as for the shipped model)")
    p.add_argument("--scene-families", action=argparse.BooleanOptionalAction, default=TrainConfig.scene_families,
                   help="add the founding-scene template families of issue 19 (default: off, as for the student "
                        "6be930fdb033, the shipped model's base; run KS in docs/model-card.md trained the recipe "
                        "with them)")
    p.add_argument("--composites", type=int, default=TrainConfig.composites,
                   help="two-sentence examples (benign chat + a hand-written example) added to the training split "
                        "(default 3000, as for the shipped model; 0: none)")
    p.add_argument("--davidson-gendered-mask", action=argparse.BooleanOptionalAction,
                   default=TrainConfig.davidson_gendered_mask,
                   help="mask identity_attack on Davidson 'offensive' tweets with gendered slurs "
                        "(default: off, as for the shipped model)")
    p.add_argument("--max-len", type=int, default=TrainConfig.max_len,
                   help=f"training truncation in tokens (default {TrainConfig.max_len}, as for the shipped model; "
                        "serving scores up to 128 tokens per window)")
    p.add_argument("--teacher", type=Path, action="append", default=[],
                   help="artifact directory of a teacher model to distil from (repeatable); replaces the recipe's two "
                        "teachers, which are trained when no --teacher is given")
    p.add_argument("--distill", action=argparse.BooleanOptionalAction, default=True,
                   help="without --teacher: train the recipe's two teachers, then distil the model from them "
                        "(default, as for the shipped model; --no-distill trains one model, no teachers)")
    p.add_argument("--teachers-dir", type=Path, default=None,
                   help="where the recipe's teachers are written and reused (default $MODBOT_CACHE/teachers or "
                        "~/.cache/modbot/model/teachers)")
    p.add_argument("--retrain-teachers", action="store_true",
                   help="train the recipe's teachers again even when a finished one with the same settings exists")
    p.add_argument("--distill-weight", type=float, default=TrainConfig.distill_weight,
                   help="weight of the distillation term (BCE against the teachers' mean probability) in the loss; the rest "
                        "is the pos-weighted BCE on the labels (0-1, default %(default)s: teachers only)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.runs < 1:
        p.error("--runs must be at least 1")
    if not 8 <= args.max_len <= 512:
        p.error("--max-len must be between 8 and 512 tokens")
    if not 0.0 <= args.distill_weight <= 1.0:
        p.error("--distill-weight must be between 0 and 1")
    if args.teacher and not args.distill:
        p.error("--teacher and --no-distill contradict each other")
    if (args.teachers_dir is not None or args.retrain_teachers) and (args.teacher or not args.distill):
        p.error("--teachers-dir and --retrain-teachers apply only to the recipe's teachers (no --teacher, "
                "no --no-distill)")
    if args.distill and args.distill_weight == 0.0:
        p.error("--distill-weight 0 ignores the teachers: train without them (--no-distill, no --teacher)")
    for t in args.teacher:
        if not (t / DELTA_FILE).is_file():
            p.error(f"--teacher {t}: not a model artifact directory (no {DELTA_FILE})")
    if args.out.resolve() != ARTIFACT_DIR.resolve() and (contains(args.out, ARTIFACT_DIR)
                                                        or contains(ARTIFACT_DIR, args.out)):
        p.error(f"--out {args.out}: a folder holding the shipped artifact or inside it ({ARTIFACT_DIR}); name the "
                "artifact folder itself (the default, unless the shipped model is a fast-loop candidate) or another one")
    shipped = read_manifest(ARTIFACT_DIR).get("meta", {}) if (ARTIFACT_DIR / DELTA_FILE).is_file() else {}
    if args.out.resolve() == ARTIFACT_DIR.resolve() and shipped.get("fast_loop"):
        base = shipped.get("base")
        p.error(f"--out {args.out}: the shipped model is a fast-loop candidate of {base}, which this command builds: "
                f"rebuild that base with --out bot/model/artifact-{base}, then the fast loop and the re-fit "
                "recorded in the shipped manifest (docs/model-card.md, \"Reproducing the shipped model\")")
    try:
        check_data_root(args.data)
        check_out_dir(args.out)
        if args.keep_runs is not None:
            check_out_dir(args.keep_runs, "--keep-runs")
    except ValueError as exc:
        p.error(str(exc))
    cfg = TrainConfig(data=args.data, seed=args.seed, epochs=args.epochs, out=args.out, limit=args.limit,
                      runs=args.runs, keep_runs=args.keep_runs, stance_families=args.stance_families,
                      scene_families=args.scene_families,
                      composites=args.composites, davidson_gendered_mask=args.davidson_gendered_mask,
                      max_len=args.max_len, teachers=tuple(args.teacher), distill_weight=args.distill_weight)
    if args.teacher or not args.distill:
        train(cfg)
    else:
        train_recipe(cfg, args.teachers_dir or default_cache_dir() / "teachers", reuse=not args.retrain_teachers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
