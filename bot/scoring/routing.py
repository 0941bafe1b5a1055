"""Route messages the main model cannot read to a second model that can (detoxify's ``multilingual``).

The embedded model reads English only. An admin with detoxify's ``multilingual`` model (XLM-RoBERTa; English,
French, Spanish, Italian, Portuguese, Turkish, Russian: :data:`bot.scoring.detoxify_scorer.MODEL_LANGUAGES`) can
keep the fast English model for most chat and send only the messages confidently written in one of the second
model's other languages to it (``MODBOT_ROUTE_MODEL=multilingual``). A routed message is scored whole by the second
model (all its pieces), so one verdict never mixes two models' scores; its verdict records that model's name.

Routing uses the same offline detector as the service's language check (:func:`bot.core.language.unsupported`),
at the default thresholds (``min_letters``, ``min_confidence``), on the message's raw text as a whole
(:meth:`LanguageRoutedScorer.route_hint`, where emoji are not English words) and on its scoring plan (whole text,
then its sentence pieces). The service's check looks at the raw message's lines and sentences under the server's own
``[languages]`` settings, so the two can differ (a quoted line, ``[scoring] pieces = "whole"``); the service
therefore checks each message against the languages of the model :meth:`LanguageRoutedScorer.route` picks for it
(:func:`bot.core.judging.read_limits`): a part the chosen model does not read stays
``unsupported_language``. This scorer declares the union of both models' languages.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.language import unsupported
from bot.core.models import Scores
from bot.core.ports import Scorer


class LanguageRoutedScorer:
    """A :class:`bot.core.ports.Scorer` made of a main model and a second model for other languages.

    Attributes:
        main: The model for everything it reads (e.g. the embedded English model).
        second: The model for text confidently in one of its languages that ``main`` does not read.
        name: ``"<main name>+<second name>"`` (each verdict's ``Scores.model`` names the model that scored it).
        version: ``"<main version>+<second version>"``.
        labels: The labels both models produce (``LABELS`` order).
        languages: ``main``'s languages, then ``second``'s others (ISO 639-1).
    """

    def __init__(self, main: Scorer, second: Scorer, *, min_letters: int = 20, min_confidence: float = 0.9) -> None:
        """Combine two scorers; both must declare ``languages``.

        Raises:
            ValueError: a scorer declares no languages, or ``second`` reads no language ``main`` does not.
        """
        main_langs = tuple(getattr(main, "languages", ()) or ())
        second_langs = tuple(getattr(second, "languages", ()) or ())
        if not main_langs or not second_langs:
            raise ValueError("both models must declare the languages they read")
        extra = tuple(lang for lang in second_langs if lang not in main_langs)
        if not extra:
            raise ValueError(f"the second model ({second.name}) reads no language the main model "
                             f"({main.name}: {', '.join(main_langs)}) does not")
        self.main, self.second = main, second
        self.name = f"{main.name}+{second.name}"
        self.version = f"{main.version}+{second.version}"
        self.labels = tuple(label for label in main.labels if label in second.labels)
        self.languages = main_langs + extra
        self._extra = frozenset(extra)
        self._main_langs = main_langs
        self.min_letters, self.min_confidence = min_letters, min_confidence

    def route_hint(self, text: str) -> str | None:
        """The language that routes a message by its raw ``text``: the one of ``second``'s extra languages the whole
        text is confidently in (:func:`bot.core.language.unsupported` of the text alone, at this scorer's
        thresholds), else ``None``. The plan :meth:`route` reads is normalised, where each emoji is spelt out in
        English words: a French line with emoji is not confidently French there, while the language check on the
        raw text calls it French (and would mark it ``unsupported_language`` under the English model)."""
        found = unsupported((text,), self._main_langs, min_letters=self.min_letters,
                            min_confidence=self.min_confidence)
        return found.language if found is not None and found.language in self._extra else None

    def route(self, plan: Sequence[str], hint: str | None = None) -> Scorer:
        """The model for one message's scoring plan (its whole text first, then its pieces): ``second`` when the
        message's :meth:`route_hint` (``hint``) is one of ``second``'s extra languages or a part of the plan is
        confidently in one, else ``main``."""
        if hint is not None and hint in self._extra:
            return self.second
        found = unsupported(plan, self._main_langs, min_letters=self.min_letters, min_confidence=self.min_confidence)
        return self.second if found is not None and found.language in self._extra else self.main

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """Score each text with the model :meth:`route` picks for it alone (callers with whole messages use
        :func:`bot.core.pieces.score_plans`, which routes a message's pieces together).

        Raises:
            Whatever the chosen scorer raises (``ScorerError`` for the detoxify scorer).
        """
        picks = [self.route((t,)) for t in texts]
        out: list[Scores | None] = [None] * len(texts)
        for model in (self.main, self.second):
            idx = [i for i, m in enumerate(picks) if m is model]
            if idx:
                for i, s in zip(idx, model.score_batch([texts[i] for i in idx]), strict=True):
                    out[i] = s
        return [s for s in out if s is not None]


__all__ = ["LanguageRoutedScorer"]
