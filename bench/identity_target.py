"""Cost of the identity-target check per message, exact lexicon against exact + fuzzy (issue 26), side by side.

Run: ``python bench/identity_target.py [--n 2000]``. Prints microseconds per message for messages that name no
identity (the only ones the fuzzy pass reads, and only when ``identity_attack`` reached a tier). Figures only.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TEXTS = ("what a freak, honestly the worst person on this server I have ever seen",
         "kill -9 the parent pid then murder the zombie threads", "Re 21e8",
         "you are a disgrace to this whole team and everyone knows it")


def main(argv: list[str] | None = None) -> int:
    """Time both variants on the same normalised messages; returns 0."""
    from bot.core.identity_terms import identity_reference
    from bot.core.normalize import normalize

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="repetitions")
    n = ap.parse_args(argv).n
    msgs = [normalize(t) for t in TEXTS]
    for m in msgs:  # warm the term caches
        identity_reference(m, fuzzy=True)
    for fuzzy in (False, True, False, True):  # interleaved, so load on the machine hits both alike
        s = timeit.timeit(lambda f=fuzzy: [identity_reference(m, fuzzy=f) for m in msgs], number=n)
        print(f"{'exact + fuzzy' if fuzzy else 'exact only   '}: {s / n / len(msgs) * 1e6:8.1f} us/message")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
