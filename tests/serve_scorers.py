"""Scorer factories for the scoring service's tests (``python -m bot serve --scorer tests.serve_scorers:NAME``).

Each is a zero-argument callable returning a :class:`bot.core.ports.Scorer` built on :class:`tests.fakes.FakeScorer`,
so a service subprocess starts in well under a second on two cores. ``MODBOT_TEST_BATCH_DELAY_S`` makes every
forward pass take that long (default 0.05 s), so concurrent requests queue up behind a running batch as they do
behind the real model. As strict as the real model: a batch holding a text that is not valid Unicode (a lone
surrogate) fails as a whole, as the ``tokenizers`` package refuses it (``TypeError``, wrapped in ``ScorerError``),
and so does a batch holding ``MODBOT_TEST_FAIL_ON`` (when set), a model that fails on one input.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence

from bot.core.models import LABELS, Scores
from bot.scoring import ScorerError
from bot.scoring.routing import LanguageRoutedScorer
from tests.fakes import ABUSE, FakeScorer

RULES = {**ABUSE, "kill you": {"toxicity": 0.93, "threat": 0.96}}
_SURROGATE = re.compile("[\ud800-\udfff]")


class SlowFakeScorer(FakeScorer):
    """:class:`FakeScorer` with the keyword rules :data:`RULES`, English only, and a fixed time per batch."""

    name = "fake-served"
    version = "served-1"

    def __init__(self, labels: tuple[str, ...] = LABELS) -> None:
        super().__init__(RULES, languages=("en",))
        self.labels = labels
        self.delay_s = float(os.environ.get("MODBOT_TEST_BATCH_DELAY_S", "0.05"))
        self.fail_on_text = os.environ.get("MODBOT_TEST_FAIL_ON") or None

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        time.sleep(self.delay_s)
        if any(_SURROGATE.search(t) for t in texts):  # the real tokenizer's TypeError, as the ONNX scorer wraps it
            raise ScorerError(f"{self.name} failed to score {len(texts)} texts: TypeError: TextEncodeInput must be "
                              "Union[TextInputSequence, Tuple[InputSequence, InputSequence]]")
        if self.fail_on_text and any(self.fail_on_text in t for t in texts):
            raise ScorerError(f"{self.name} failed to score {len(texts)} texts: RuntimeError: fake model failure")
        out = super().score_batch(texts)
        missing = tuple(label for label in LABELS if label not in self.labels)
        return [Scores(values={k: v for k, v in s.values.items() if k in self.labels}, missing=missing,
                       model=self.name) for s in out]


def fake() -> SlowFakeScorer:
    """All seven labels."""
    return SlowFakeScorer()


def no_threat() -> SlowFakeScorer:
    """A model without the ``threat`` label (THREAT must be refused, never answered 0)."""
    return SlowFakeScorer(tuple(label for label in LABELS if label != "threat"))


def int8_checked() -> SlowFakeScorer:
    """A scorer reporting the precision the real model would after a passing paired check (the ready line and
    /readyz show it)."""
    scorer = SlowFakeScorer()
    scorer.precision = "int8"  # type: ignore[attr-defined]
    scorer.precision_reason = "auto: paired check passed (4400 verdict flags on 400 texts unchanged)"  # type: ignore[attr-defined]
    return scorer


def bilingual() -> SlowFakeScorer:
    """One model reading English and French (as a service serving detoxify's ``multilingual`` model reads several
    languages), with the keyword rules :data:`RULES`; it routes nothing."""
    scorer = SlowFakeScorer()
    scorer.languages = ("en", "fr")
    return scorer


def routed() -> LanguageRoutedScorer:
    """Two models named apart, routed as ``MODBOT_ROUTE_MODEL`` routes: text confidently in French to
    ``fake-served-fr`` (no keyword rules, every score 0.2), everything else to ``fake-served`` (:data:`RULES`)."""
    second = SlowFakeScorer()
    second.name, second.version, second.languages, second.base = "fake-served-fr", "fr-1", ("en", "fr"), 0.2
    second.rules = {}
    return LanguageRoutedScorer(SlowFakeScorer(), second)


def routed_apart_labels() -> LanguageRoutedScorer:
    """:func:`routed`'s two models, each lacking a label the other has: the English one ``threat``, the French one
    ``sexual_explicit`` (as detoxify's ``original`` and ``multilingual`` models differ in the labels they produce)."""
    main = SlowFakeScorer(tuple(label for label in LABELS if label != "threat"))
    second = SlowFakeScorer(tuple(label for label in LABELS if label != "sexual_explicit"))
    second.name, second.version, second.languages, second.base = "fake-served-fr", "fr-1", ("en", "fr"), 0.2
    second.rules = {}
    return LanguageRoutedScorer(main, second)
