"""``python -m bot.eval hatecheck|olid|mhc|scene [FILE] [--threshold T] [--pad]``: standalone quality harness (exit 2
for a bad input or a model that cannot load)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from bot.eval import KINDS, EvalInputError, check_input, run_eval
from bot.scoring import ScorerLoadError


def main(argv: list[str] | None = None) -> int:
    """Run one evaluation, print tables, optionally write the metrics as JSON; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m bot.eval")
    p.add_argument("kind", choices=KINDS)
    p.add_argument("path", type=Path, nargs="?", default=None,
                   help="data file or folder (scene: default the bundled bot/eval/data/scene_cases.csv)")
    p.add_argument("--threshold", type=float, default=None, help="default: the artifact's calibrated threshold")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--pad", action="store_true",
                   help="hatecheck/mhc: put one benign sentence before every case (evasion test)")
    p.add_argument("--json", type=Path, default=None, help="also write the metrics here")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.path is None:
        if args.kind != "scene":
            p.error(f"{args.kind}: name the data file or folder")
        from bot.eval.scene import SCENE_CASES

        args.path = SCENE_CASES
    try:
        check_input(args.kind, args.path, args.threshold)  # before the model loads
        result = run_eval(args.kind, args.path, threshold=args.threshold, batch_size=args.batch_size, pad=args.pad)
    except (EvalInputError, FileNotFoundError) as exc:
        print(f"error: eval: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except ScorerLoadError as exc:
        print(f"error: the model could not be loaded: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
