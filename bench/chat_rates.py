"""Flag rates of the default policy on real, mostly benign chat: how many messages would go to review.

Run: ``python bench/chat_rates.py [--n 4000] [--artifact DIR]``. Needs ``../shared/data/chats``. Prints figures
only; nothing here is asserted in tests.

Two sets, both never trained on:
- **calibration**: DISCO Discord (Clojure, Racket) and Slack software chats (Elm, Racket) XML messages that
  ``bot.training.data.load_chats`` did NOT pick as training negatives (it takes 1,000 of each set, seed 13);
- **Komodo**: the Komodo Discord DCE CSV export (35k messages, crypto community), never used in training.

For each label: the share of messages at or above the default policy's review threshold, and the score at which
the calibration set's share would be 0.2% (the 99.8th percentile), which is how the review tiers in
``bot/config/default.toml`` were checked. "any" = the message reaches at least one label's review tier. The "target
check" rows apply the policy's ``[identity_target]`` check (what the bot does): identity_attack on a message that
names no identity counts only from the untargeted tier.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("MODBOT_SHARED", REPO.parent / "shared")) / "data"


def calibration_texts(n: int) -> list[str]:
    """``n`` held-out XML chat messages (seeded), excluding the ones used as training negatives."""
    from bot.training.data import load_chats, xml_texts

    used = {ex.text for ex in load_chats(DATA, random.Random(13))}
    pool = [t for sub in ("disco-discord-xml", "slack-software-chats-xml") for t in xml_texts(DATA / "chats" / sub)]
    pool = sorted({t for t in pool if t not in used})
    random.Random(7).shuffle(pool)
    return pool[:n]


def komodo_texts(n: int) -> list[str]:
    """``n`` non-empty Komodo messages (seeded sample)."""
    from bot.ingest import read_messages

    texts = [m.text for m in read_messages([DATA / "chats" / "komodo-discord-dce-csv"]) if m.text and m.text.strip()]
    random.Random(7).shuffle(texts)
    return texts[:n]


def main(argv: list[str] | None = None) -> int:
    """Score both sets and print per-label rates; returns 0."""
    import numpy as np
    from rich.table import Table

    from bot.core.models import LABELS
    from bot.core.pieces import score_messages
    from bot.core.policy import load_policy
    from bot.eval.common import table_console
    from bot.scoring.detoxify_scorer import DetoxifyScorer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4000, help="messages per set")
    ap.add_argument("--artifact", type=Path, default=None, help="artifact folder (default: the committed one)")
    args = ap.parse_args(argv)
    if args.artifact is not None:
        from bot.model import artifact as art

        built = art.assemble(Path(tempfile.mkdtemp()), args.artifact)
        scorer = DetoxifyScorer.load("local", checkpoint=built.checkpoint, config_dir=built.config_dir)
    else:
        scorer = DetoxifyScorer.load()
    policy = load_policy()
    review = np.array([(policy.thresholds[lb].review if lb in policy.thresholds and policy.thresholds[lb].review
                        is not None else 2.0) for lb in LABELS])
    sets = {"calibration": calibration_texts(args.n), "komodo": komodo_texts(args.n)}
    scores = {}
    for name, texts in sets.items():
        out = score_messages(scorer, texts)
        scores[name] = np.array([[s.get(lb) or 0.0 for lb in LABELS] for s in out])
    table = Table(title=f"Share of messages reaching the review tier (n={args.n} per set)")
    for col in ("label", "review tier", "calibration %", "Komodo %", "calibration p99.8"):
        table.add_column(col, justify="right")
    for k, lb in enumerate(LABELS):
        table.add_row(lb, f"{review[k]:.2f}" if review[k] <= 1 else "off",
                      f"{(scores['calibration'][:, k] >= review[k]).mean() * 100:.2f}",
                      f"{(scores['komodo'][:, k] >= review[k]).mean() * 100:.2f}",
                      f"{np.quantile(scores['calibration'][:, k], 0.998):.2f}")
    table.add_row("any", "", f"{(scores['calibration'] >= review).any(1).mean() * 100:.2f}",
                  f"{(scores['komodo'] >= review).any(1).mean() * 100:.2f}", "")
    # what the bot does: identity_attack on a message naming no identity counts from the untargeted tier only
    from bot.eval import with_target_check

    ia = LABELS.index("identity_attack")
    for name, texts in sets.items():
        gated = scores[name].copy()
        gated[:, ia] = with_target_check(texts, list(gated[:, ia]), policy.identity_target.untargeted.review)
        scores[name + "_gated"] = gated
    table.add_row("identity_attack, target check", f"{review[ia]:.2f}",
                  f"{(scores['calibration_gated'][:, ia] >= review[ia]).mean() * 100:.2f}",
                  f"{(scores['komodo_gated'][:, ia] >= review[ia]).mean() * 100:.2f}", "")
    table.add_row("any, target check", "", f"{(scores['calibration_gated'] >= review).any(1).mean() * 100:.2f}",
                  f"{(scores['komodo_gated'] >= review).any(1).mean() * 100:.2f}", "")
    table_console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
