"""How the embedded model scores member names bare and in a neutral frame (issue 25 item 16, measurement only).

Usage: ``python -m bench.name_scores`` (loads the real embedded model through detoxify, offline). Prints toxicity
and identity_attack for ordinary personal and place names in a sentence, single names scored bare, the same names
in the neutral frame ``My name is <name>.``, and hostile "names" both ways. It informs how a name filter should
score names; it is not one (the member-name filter of item 16 is not built yet).
"""

from __future__ import annotations

import os
import platform

SENTENCES = ["Maria and José drove from Lagos to Dublin with Aisha and Chen.",
             "Priya, Mohammed, Olga and Tomás met in Nairobi, Kraków and Osaka."]
NAMES = ["Mohammed", "Muhammad", "Jesus", "Aisha", "Shlomo", "Deshawn", "Tyrone", "Nguyen", "Fatima", "Rahul"]
HOSTILE = ["kill all gays", "trannies are freaks", "fuck you all", "gas the jews", "n1gger"]


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from bot.core.normalize import for_scoring
    from bot.runtime import load_scorer
    from bot.settings import Settings

    scorer = load_scorer(Settings())
    print(f"model: {scorer.name} {scorer.version}; cpu: {platform.machine()}, {os.cpu_count()} cores")

    def show(title: str, texts: list[str]) -> None:
        print(title)
        for text, s in zip(texts, scorer.score_batch(texts), strict=True):
            print(f"  {s.values['toxicity']:.2f} toxicity  {s.values['identity_attack']:.2f} identity_attack  {text}")

    show("sentences of names:", [for_scoring(t) for t in SENTENCES])
    show("names, bare:", NAMES)
    show("names, framed:", [f"My name is {n}." for n in NAMES])
    show("hostile names, bare:", [for_scoring(n) for n in HOSTILE])
    show("hostile names, framed:", [f"My name is {for_scoring(n)}." for n in HOSTILE])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
