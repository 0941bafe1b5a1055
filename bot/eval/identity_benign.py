"""Held-apart benign identity sentences (issue 26): % flagged under the default policy, per identity term.

``bot/eval/data/identity_benign.csv`` is written by :func:`write_cases` from the templates below (this project's
own, different from the training frames of :mod:`bot.training.counterfactual`, never trained on: a test checks
that no case is a training row). It has the probe-set columns of :mod:`bot.eval.scene` (``kind`` is the identity
term, ``gold`` always ``allow``), so it is judged exactly as production judges a message:

``python -m bot eval scene bot/eval/data/identity_benign.csv [--artifact DIR] [--baseline DIR]``

prints accuracy per ``kind``; % flagged for a term is 100 minus its accuracy (target: <= 1% for every term).
Regenerate the file with ``python -m bot.eval.identity_benign`` after changing the templates or the terms.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from bot.training.counterfactual import TERMS

IDENTITY_CASES = Path(__file__).resolve().parent / "data" / "identity_benign.csv"

#: ``{X}`` the term, ``{XU}`` in capitals, ``{a}`` its article, ``{n}`` man / woman / person (each is used).
TEMPLATES: tuple[str, ...] = (
    "Congratulations to my {X} cousin on the new job!",
    "Our team lead is {a} {X} {n} and runs the best standups",
    "Happy birthday to the most thoughtful {X} {n} I know",
    "I met {a} {X} {n} at the meetup today, great talk about compilers",
    "Can anyone recommend novels by {X} authors?",
    "My {X} friend taught me how to bake sourdough",
    "THANK YOU TO EVERY {XU} PERSON WHO SHARED THEIR STORY TODAY",
    "Being {X} is part of who I am, and I'm happy",
    "What a gorgeous photo, you look like a confident {X} {n}",
    "The {X} community here has been so welcoming to me",
    "Is it true that {X} families celebrate this holiday too? Curious!",
    "I'm a proud {X} {n} and a proud parent",
    "You are a genuinely good {X} {n}, never change",
    "Honestly the {X} folks in this channel are the nicest people",
    "WE STAND WITH {XU} PEOPLE, TODAY AND EVERY DAY",
    "My grandmother was {a} {X} woman who raised six kids",
)


def cases() -> list[dict[str, str]]:
    """Every template with every term of :data:`bot.training.counterfactual.TERMS` (and every noun where the
    template has one): rows ``{"case_id", "kind", "gold", "expect_label", "text"}`` in a fixed order."""
    rows = []
    for term in TERMS:
        nouns = ("woman", "person") if term == "lesbian" else ("man", "woman", "person")
        k = 0
        for t in TEMPLATES:
            for n in nouns if "{n}" in t else ("",):
                k += 1
                text = t.format(X=term, XU=term.upper(), a="an" if term[0] in "aeiou" else "a", n=n)
                rows.append({"case_id": f"{term.replace(' ', '_')}-{k:02d}", "kind": term, "gold": "allow",
                             "expect_label": "", "text": text})
    return rows


def render() -> str:
    """The CSV text of :func:`cases` (what ``identity_benign.csv`` holds)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["case_id", "kind", "gold", "expect_label", "text"], lineterminator="\n")
    w.writeheader()
    w.writerows(cases())
    return buf.getvalue()


def write_cases(path: Path = IDENTITY_CASES) -> int:
    """Write :func:`render` to ``path``; returns the number of cases."""
    path.write_text(render(), encoding="utf-8")
    return len(cases())


if __name__ == "__main__":
    print(f"{write_cases()} cases written to {IDENTITY_CASES}")  # noqa: T201
