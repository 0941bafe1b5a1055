"""Flag rates on real chat under the default policy, judged as the bot judges (the ``score`` job's path: policy
tiers, rules, the identity-target check, language status), for one model or two side by side.

Run: ``python bench/chat_flags.py [--n 3000] [--artifact DIR] [--baseline DIR]``. Needs ``../shared/data/chats``.
Prints figures only; nothing here is asserted in tests.

Sets (seeded samples of non-empty messages, never trained on): the Komodo Discord export (crypto community) and the
JuliaLang Slack export (programming community). Issue 19's targets: Komodo <= 1.0% flagged, JuliaLang <= 0.5%.
Each message is judged on its own (no spam windows or strikes), so the rate is the model's and the content rules'.
With ``--baseline``, both models judge the same messages and McNemar's exact test compares their flag decisions
(:func:`bot.eval.paired.mcnemar`, "right" meaning *not flagged*: almost all of this chat is benign).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("MODBOT_SHARED", REPO.parent / "shared")) / "data"
SETS = {"komodo": "komodo-discord-dce-csv", "julialang": "julialang-slack-export"}
TARGETS = {"komodo": 0.010, "julialang": 0.005}


def sample(folder: str, n: int, seed: int = 7) -> list[str]:
    """``n`` non-empty messages of ``../shared/data/chats/<folder>`` (seeded shuffle)."""
    from bot.ingest import read_messages

    texts = [m.text for m in read_messages([DATA / "chats" / folder]) if m.text and m.text.strip()]
    random.Random(seed).shuffle(texts)
    return texts[:n]


def main(argv: list[str] | None = None) -> int:
    """Judge both sets with the model (and the baseline) and print the rates; returns 0."""
    from rich.table import Table

    from bot.eval.common import table_console
    from bot.eval.paired import mcnemar
    from bot.eval.scene import judge
    from bot.runtime import load_artifact_scorer, load_scorer
    from bot.settings import Settings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000, help="messages per set")
    ap.add_argument("--artifact", type=Path, default=None, help="model artifact folder (default: the configured model)")
    ap.add_argument("--baseline", type=Path, default=None, help="a second artifact folder to compare with")
    ap.add_argument("--show", type=int, default=8, help="messages flagged by only one model to print per set")
    ap.add_argument("--policy", type=Path, action="append", default=[], metavar="FILE",
                    help="policy file layered on the default for the model (repeatable)")
    ap.add_argument("--baseline-policy", type=Path, action="append", default=[], metavar="FILE",
                    help="policy file layered on the default for the baseline (default: --policy's)")
    args = ap.parse_args(argv)
    files = tuple(args.policy)
    base_files = tuple(args.baseline_policy) if args.baseline_policy else files
    settings = Settings.from_env()
    model = load_artifact_scorer(args.artifact, settings) if args.artifact else load_scorer(settings)
    base = load_artifact_scorer(args.baseline, settings) if args.baseline else None
    console = table_console()
    under = "the default policy" + "".join(f" + {f}" for f in files)
    if base is not None and base_files != files:
        under += " (baseline: the default" + "".join(f" + {f}" for f in base_files) + ")"
    table = Table(title=f"Flagged under {under} (n={args.n} per set, each message alone)")
    for col in ("set", "target %", "model %", "baseline %", "only model flags", "only baseline flags", "McNemar p"):
        table.add_column(col, justify="right")
    for name, folder in SETS.items():
        texts = sample(folder, args.n)
        rows = [{"case_id": str(i), "text": t} for i, t in enumerate(texts)]
        verdicts = judge(rows, model, settings, files)
        flags = [v["flagged"] for v in verdicts]
        cells = [name, f"{100 * TARGETS[name]:.1f}", f"{100 * sum(flags) / len(flags):.2f}"]
        if base is None:
            cells += ["-", "-", "-", "-"]
        else:
            bverdicts = judge(rows, base, settings, base_files)
            bflags = [v["flagged"] for v in bverdicts]
            test = mcnemar([not f for f in bflags], [not f for f in flags])
            cells += [f"{100 * sum(bflags) / len(bflags):.2f}", str(test.only_a), str(test.only_b), f"{test.p_value:.3g}"]
            for who, mine, other, vs in (("model", flags, bflags, verdicts), ("baseline", bflags, flags, bverdicts)):
                only = [(t, v) for t, a, b, v in zip(texts, mine, other, vs, strict=True) if a and not b][: args.show]
                for t, v in only:
                    why = ",".join(v.get("labels") or []) or "-"
                    console.print(f"[{name}] flagged only by the {who} ({v.get('action')}: {why}): {t[:140]!r}",
                                  markup=False)
        table.add_row(*cells)
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
