"""The identity-target signal: ``identity_attack`` reaches a tier but the message names no identity (the policy's
``[identity_target]``, :mod:`bot.core.identity_terms`).

Layer: ``bot.core``. Deterministic; reads the scores, so it runs in order after scoring.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from bot.core.identity_terms import identity_reference
from bot.core.judge import effective_tiers
from bot.core.models import RuleHit
from bot.core.policy import IdentityTargetSettings
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import RulesSettings


class IdentityTargetRule:
    """``identity_target``: a signal-only hit when ``identity_attack`` reaches its review or act tier (``ctx.tiers``,
    after raid mode) but no identity is named in any part of the message (the lexicon is not consulted below the
    tiers). Its presence makes :func:`bot.core.judge.decide` judge the label against the untargeted tier; the hit
    records why."""

    name: ClassVar[str] = "identity_target"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.ORDERED})
    settings_model: ClassVar[type[BaseModel]] = IdentityTargetSettings
    hit_names: ClassVar[tuple[str, ...]] = ("identity_target",)

    def __init__(self, settings: RulesSettings) -> None:
        """Its settings are the policy's ``[identity_target]``, read from ``ctx.policy`` (``settings`` unused)."""

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        if ctx.policy is None or ctx.tiers is None:
            return []
        cfg = ctx.policy.identity_target
        score = ctx.scores.get("identity_attack") if ctx.scores is not None else None
        tier = ctx.tiers.get("identity_attack")
        if not cfg.required or score is None or tier is None or not ctx.parts:
            return []
        bars = [b for b in (tier.review, tier.act) if b is not None]
        if not bars or score < min(bars):
            return []
        if any(identity_reference(n, tuple(cfg.extra_terms), fuzzy=cfg.fuzzy) is not None for n in ctx.parts):
            return []
        bar = cfg.untargeted.review
        applied = effective_tiers(ctx.policy, {"identity_attack": cfg.untargeted}, ctx.raid_mode)["identity_attack"].review
        if bar is None:
            tier_text = "(off)"
        elif applied != bar:  # the tier decide() applies: raid mode makes the untargeted tier stricter too
            tier_text = f"{applied:.2f} (raid mode's; {bar:.2f} outside raid mode)"
        else:
            tier_text = f"{bar:.2f}"
        return [RuleHit(
            rule="identity_target",
            detail=f"no identity named: identity_attack {score:.2f} judged against the untargeted tier {tier_text}",
            action=None,
        )]
