"""The zalgo signal: stacked combining marks, detected by the normaliser (``[rules.zalgo]``).

Layer: ``bot.core``. Stateless and deterministic.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from bot.core.models import RuleHit
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import RulesSettings, ZalgoSettings


class ZalgoRule:
    """``zalgo``: the normalised text had stacked combining marks (``Normalized.zalgo``)."""

    name: ClassVar[str] = "zalgo"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT})
    settings_model: ClassVar[type[BaseModel]] = ZalgoSettings
    hit_names: ClassVar[tuple[str, ...]] = ("zalgo",)

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings.zalgo

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        if self.settings.enabled and ctx.norm.zalgo:
            return [RuleHit(rule="zalgo", detail="stacked combining marks", action=self.settings.action)]
        return []
