"""The identity-target signal: ``identity_attack`` reaches a tier but the message names no identity (the policy's
``[identity_target]``, :mod:`bot.core.identity_terms`).

Layer: ``bot.core``. Deterministic; reads the scores, so it runs in order after scoring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from pydantic import BaseModel

from bot.core.identity_terms import identity_reference
from bot.core.judge import effective_tiers
from bot.core.models import RuleHit, Scores
from bot.core.normalize import Normalized
from bot.core.policy import IdentityTargetSettings, Policy, Tier
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
        hit = untargeted_hit(ctx.policy, ctx.tiers, ctx.scores, ctx.parts, raid_mode=ctx.raid_mode)
        return [hit] if hit is not None else []


def untargeted_hit(policy: Policy, tiers: Mapping[str, Tier], scores: Scores | None, parts: Iterable[Normalized], *,
                   raid_mode: bool = False) -> RuleHit | None:
    """The ``identity_target`` hit of :class:`IdentityTargetRule` (``None``: none), for a caller without a
    :class:`RuleContext` (the scoring service's ``/v1/score``, which judges a text by the policy as the bots do).

    Args:
        policy: The effective policy (its ``[identity_target]``).
        tiers: The tiers after raid mode (:func:`bot.core.judge.effective_tiers`).
        scores: The model's scores, ``None`` when not scored.
        parts: The message's normalised parts; read only once ``identity_attack`` reaches a tier, and only until
            one names an identity (a generator normalises no more than that).
        raid_mode: Raid mode's stricter tiers apply to this member.
    """
    cfg = policy.identity_target
    score = scores.get("identity_attack") if scores is not None else None
    tier = tiers.get("identity_attack")
    if not cfg.required or score is None or tier is None:
        return None
    bars = [b for b in (tier.review, tier.act) if b is not None]
    if not bars or score < min(bars):
        return None
    seen = False
    for n in parts:
        seen = True
        if identity_reference(n, tuple(cfg.extra_terms), fuzzy=cfg.fuzzy) is not None:
            return None
    if not seen:
        return None
    bar = cfg.untargeted.review
    applied = effective_tiers(policy, {"identity_attack": cfg.untargeted}, raid_mode)["identity_attack"].review
    if bar is None:
        tier_text = "(off)"
    elif applied != bar:  # the tier decide() applies: raid mode makes the untargeted tier stricter too
        tier_text = f"{applied:.2f} (raid mode's; {bar:.2f} outside raid mode)"
    else:
        tier_text = f"{bar:.2f}"
    return RuleHit(
        rule="identity_target",
        detail=f"no identity named: identity_attack {score:.2f} judged against the untargeted tier {tier_text}",
        action=None,
    )
