"""The regex rule: the server's named RE2 patterns on the original and / or normalised text (``[[rules.regex]]``).

Layer: ``bot.core``. Stateless and deterministic; patterns are compiled once per policy version.
"""

from __future__ import annotations

from typing import ClassVar

import re2
from pydantic import BaseModel

from bot.core.models import RuleHit
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import RegexRuleSettings, RulesSettings, compile_pattern

#: Longest matched text quoted in a hit's ``detail``, in characters.
DETAIL_CHARS = 80


def encodable(text: str) -> str:
    """``text`` with lone UTF-16 surrogates replaced by U+FFFD: RE2 needs valid UTF-8 (the original is kept)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


class RegexRule:
    """``regex`` hits: one per pattern that matches (``detail`` ``"<name>: <first 80 characters matched>"``), with the
    pattern's label and action.

    Raises:
        RuleConfigError: a pattern does not compile (only if the settings bypassed validation).
    """

    name: ClassVar[str] = "regex"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT, Stage.PART})
    settings_model: ClassVar[type[BaseModel]] = RegexRuleSettings
    hit_names: ClassVar[tuple[str, ...]] = ("regex",)

    def __init__(self, settings: RulesSettings) -> None:
        self._regex: list[tuple[RegexRuleSettings, re2._Regexp]] = [
            (r, compile_pattern(r.pattern, name=r.name, case_sensitive=r.case_sensitive)) for r in settings.regex
        ]

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        norm = ctx.norm
        hits: list[RuleHit] = []
        for rule, rx in self._regex:
            targets = {
                "original": (norm.original,),
                "normalized": (norm.matching,),
                "both": (norm.original, norm.matching),
            }[rule.target]
            for text in targets:
                m = rx.search(encodable(text))
                if m is not None:
                    found = m.group(0)[:DETAIL_CHARS]
                    hits.append(
                        RuleHit(rule="regex", detail=f"{rule.name}: {found}", label=rule.label, action=rule.action)
                    )
                    break
        return hits
