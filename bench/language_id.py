"""How well the bot's language check tells English from other languages on short chat messages.

Run: ``python bench/language_id.py [--n 3000]``. Needs ``../shared/data`` (``$MODBOT_SHARED/data``). Prints figures
only; nothing here is asserted in tests. It runs :func:`bot.core.language.unsupported` exactly as the service does
(whole text, lines and sentences: :func:`bot.core.language.message_parts`; the embedded model's languages ``("en",)``, the default policy's ``[languages]`` limits).

Two sets:
- **non-English**: every test case of Multilingual HateCheck (10 languages, the 70% dev files; short, chat-like
  sentences). It is an evaluation suite, used here only to measure the detector. Recall = the share called "not a
  language the model reads". Hindi cases are romanised ("mujhe ... se nafrat hai"), a hard case for n-gram detectors.
- **English chat**: a random sample of ``--n`` messages from the JuliaLang Slack export and ``--n`` from the
  Komodo Discord export. False-foreign rate = the share called not English (some messages really are in another
  language: the figure is an upper bound). Messages under ``min_letters`` letters are never called foreign.

``--score N`` also scores N Multilingual HateCheck cases (half hateful, half not; seed 7) with the embedded model as
the bot does (:func:`bot.core.pieces.score_messages`) and prints, per gold label, the share that reaches a review
tier of the default policy (the English model's own flag, target check not applied), the share whose highest label
reaches ``[languages] suspect_score`` and the share the default ``review_suspect`` sends to review on scores alone
(flagged, or called not-English with a suspect score). Needs the model (about a minute per 1,000 cases here).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("MODBOT_SHARED", REPO.parent / "shared")) / "data"

CODES = {"arabic": "ar", "dutch": "nl", "french": "fr", "german": "de", "hindi": "hi", "italian": "it",
         "mandarin": "zh", "polish": "pl", "portuguese": "pt", "spanish": "es"}


def mhc() -> list[tuple[str, str]]:
    rows = []
    for f in sorted(glob.glob(str(DATA / "multilingual-hatecheck" / "mhc_*_dev_70pct.csv"))):
        lang = CODES[Path(f).name.split("_")[1]]
        with open(f, encoding="utf-8") as fh:
            rows += [(lang, r["test_case"]) for r in csv.DictReader(fh)]
    return rows


def julia(n: int, rng: random.Random) -> list[str]:
    texts = []
    for f in sorted(glob.glob(str(DATA / "chats" / "julialang-slack-export" / "*" / "*.json"))):
        texts += [m["text"] for m in json.loads(Path(f).read_text("utf-8")) if m.get("text") and not m.get("subtype")]
    return rng.sample(texts, min(n, len(texts)))


def komodo(n: int, rng: random.Random) -> list[str]:
    texts = []
    for f in sorted(glob.glob(str(DATA / "chats" / "komodo-discord-dce-csv" / "**" / "*.csv"), recursive=True)):
        with open(f, encoding="utf-8", newline="") as fh:
            texts += [r["Content"] for r in csv.DictReader(fh, delimiter=";") if r.get("Content")]
    return rng.sample(texts, min(n, len(texts)))


def score_cases(n: int, kw: dict) -> None:
    """Print how the embedded model and the default policy treat ``n`` Multilingual HateCheck cases."""
    from bot.core.language import message_parts, unsupported
    from bot.core.models import LABELS
    from bot.core.pieces import score_messages
    from bot.core.policy import load_policy
    from bot.scoring.detoxify_scorer import DetoxifyScorer

    policy = load_policy()
    rows = []
    for f in sorted(glob.glob(str(DATA / "multilingual-hatecheck" / "mhc_*_dev_70pct.csv"))):
        with open(f, encoding="utf-8") as fh:
            rows += [(r["label_gold"], r["test_case"]) for r in csv.DictReader(fh)]
    rng = random.Random(7)
    sample = []
    for gold in ("hateful", "non-hateful"):
        group = [r for r in rows if r[0] == gold]
        sample += rng.sample(group, min(n // 2, len(group)))
    scorer = DetoxifyScorer.load()
    scores = score_messages(scorer, [t for _, t in sample])
    for gold in ("hateful", "non-hateful"):
        idx = [i for i, (g, _) in enumerate(sample) if g == gold]
        flagged = suspect = review = 0
        for i in idx:
            vals = scores[i].values
            flag = any(
                (t := policy.thresholds.get(lb)) is not None and t.review is not None and vals.get(lb, 0.0) >= t.review
                for lb in LABELS
            )
            sus = max(vals.values()) >= policy.languages.suspect_score
            foreign = unsupported(message_parts(sample[i][1]), scorer.languages, **kw) is not None
            flagged += flag
            suspect += sus
            review += flag or (foreign and sus)
        k = len(idx)
        print(f"  {gold}: {k} cases; English model flags {flagged / k:.1%}; highest label >= "
              f"{policy.languages.suspect_score} {suspect / k:.1%}; reviewed under review_suspect {review / k:.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000, help="messages sampled from each chat export")
    ap.add_argument("--show", type=int, default=10, help="English-chat messages called foreign to print")
    ap.add_argument("--score", type=int, default=0, help="also score this many Multilingual HateCheck cases")
    args = ap.parse_args()
    from bot.core.language import message_parts, unsupported
    from bot.core.policy import load_policy

    cfg = load_policy().languages
    kw = {"min_letters": cfg.min_letters, "min_confidence": cfg.min_confidence}
    print(f"limits: min_letters={cfg.min_letters} min_confidence={cfg.min_confidence}; model reads ('en',)")
    rows = mhc()
    t0 = time.perf_counter()
    called = [(lang, unsupported(message_parts(t), ("en",), **kw)) for lang, t in rows]
    ms = 1000 * (time.perf_counter() - t0) / max(1, len(rows))
    per: dict[str, list[int]] = {}
    for lang, d in called:
        per.setdefault(lang, [0, 0])
        per[lang][0] += d is not None
        per[lang][1] += 1
    hit = sum(v[0] for v in per.values())
    right = sum(d is not None and d.language == lang for lang, d in called)
    print(f"Multilingual HateCheck: {len(rows)} cases, called not-English {hit / len(rows):.1%} "
          f"(language also named right: {right / len(rows):.1%}); {ms:.2f} ms per message")
    for lang, (k, n) in sorted(per.items()):
        print(f"  {lang}: {k / n:.1%} of {n}")
    print(f"  without romanised Hindi: {(hit - per['hi'][0]) / (len(rows) - per['hi'][1]):.1%}")
    if args.score:
        score_cases(args.score, kw)
    rng = random.Random(7)
    for name, texts in (("JuliaLang Slack", julia(args.n, rng)), ("Komodo Discord", komodo(args.n, rng))):
        found = [(t, unsupported(message_parts(t), ("en",), **kw)) for t in texts]
        bad = [(t, d) for t, d in found if d is not None]
        print(f"{name}: {len(texts)} messages, called not-English {len(bad) / len(texts):.2%} ({len(bad)})")
        for t, d in bad[: args.show]:
            print(f"    {d.language} {d.confidence:.3f} {t[:90]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
