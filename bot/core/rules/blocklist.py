"""The blocklist rule: blocked terms (the default list, named lists, channel terms) matched on normalised text,
with the allowlist winning over every list (``[rules.blocklist]``).

Layer: ``bot.core``. Stateless and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel

from bot.core.models import RuleHit
from bot.core.normalize import Normalized, contains_term
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import BlocklistSettings, RulesSettings


def term_key(term: str) -> str:
    """Identity of a term for allowlist comparison: casefolded, whitespace collapsed."""
    return " ".join(term.casefold().split())


@dataclass(frozen=True, slots=True)
class _TermList:
    name: str
    terms: tuple[str, ...]
    label: str | None
    action: str | None


class BlocklistRule:
    """``blocklist`` hits: one per blocked term found (``detail`` the term, ``"<list>: <term>"`` for a named list or
    ``"channel: <term>"`` for a channel's term), with that list's label and action."""

    name: ClassVar[str] = "blocklist"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT, Stage.PART})
    settings_model: ClassVar[type[BaseModel]] = BlocklistSettings
    hit_names: ClassVar[tuple[str, ...]] = ("blocklist",)

    def __init__(self, settings: RulesSettings) -> None:
        bl = self.settings = settings.blocklist
        self._lists: list[_TermList] = []
        if bl.terms:
            self._lists.append(_TermList("blocklist", tuple(bl.terms), bl.label, bl.action))
        for group in bl.lists:
            self._lists.append(_TermList(group.name, tuple(group.terms), group.label, group.action))
        self._allow = frozenset(term_key(t) for t in bl.allow)

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        return self.matches(ctx.norm, ctx.extra_terms, ctx.allow_terms)

    def matches(self, norm: Normalized, extra: Sequence[str], allow: Sequence[str]) -> list[RuleHit]:
        """The hits on one normalised text, given the channel's extra blocked and allowed terms."""
        bl = self.settings
        if not bl.enabled:
            return []
        allowed = self._allow | {term_key(t) for t in allow}
        lists = self._lists
        if extra:
            lists = [*lists, _TermList("channel", tuple(extra), bl.label, bl.action)]
        hits: list[RuleHit] = []
        seen: set[str] = set()
        for tl in lists:
            for term in tl.terms:
                key = term_key(term)
                if not key or key in allowed or key in seen:
                    continue
                if contains_term(norm, term):
                    seen.add(key)
                    detail = term if tl.name == "blocklist" else f"{tl.name}: {term}"
                    hits.append(RuleHit(rule="blocklist", detail=detail, label=tl.label, action=tl.action))
        return hits
