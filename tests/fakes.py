"""Test doubles that implement the core's ports (never patches of our own functions)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.models import LABELS, Scores


class FakeScorer:
    """A Scorer whose scores come from keyword rules: ``{"keyword": {label: score}}``.

    A text gets, per label, the highest score of the keywords it contains (case-insensitive), else ``base``.
    ``fail_on`` makes ``score_batch`` raise when a text contains it (to test ``on_scorer_error``). ``languages``
    declares the languages it reads (``("en",)`` like the embedded model), or ``None`` for an undeclared scorer.
    """

    name = "fake"
    version = "1"
    labels = LABELS

    def __init__(self, rules: dict[str, dict[str, float]] | None = None, base: float = 0.01,
                 fail_on: str | None = None, languages: tuple[str, ...] | None = None) -> None:
        self.languages = languages  # None: the scorer does not declare its languages (no language check)
        self.rules = {k.lower(): v for k, v in (rules or {}).items()}
        self.base = base
        self.fail_on = fail_on
        self.calls: list[list[str]] = []

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        self.calls.append(list(texts))
        if self.fail_on and any(self.fail_on in t for t in texts):
            raise RuntimeError("fake scorer failure")
        out = []
        for t in texts:
            low = t.lower()
            vals = {label: self.base for label in LABELS}
            for kw, scores in self.rules.items():
                if kw in low:
                    for label, s in scores.items():
                        vals[label] = max(vals[label], s)
            out.append(Scores(values=vals, model=self.name))
        return out


ABUSE = {
    "freak": {"toxicity": 0.95, "identity_attack": 0.97, "insult": 0.9},
    "vermin": {"toxicity": 0.9, "identity_attack": 0.88},
    "idiot": {"toxicity": 0.86, "insult": 0.88},
}
