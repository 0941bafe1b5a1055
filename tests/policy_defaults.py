"""The default policy's tiers as tests read them: ``bot/config/default.toml`` through the policy loader, never
copied into a test as a number.

A test whose number means "the default policy's identity_attack review tier" (a reason line ``0.80 >= 0.75``, a
report's ``review from 0.75``, raid mode's ``0.75 x 0.8``) reads it here, so a model with another calibrated
tier (``python -m bot.training`` writes it to the artifact's ``thresholds.json``, and ``default.toml`` follows)
changes the expected text with it instead of breaking tests about something else. A test that sets its own tier
in its own policy file keeps its own number. ``tests/test_policy.py`` checks that the default's tier is the
model's calibrated threshold.
"""

from __future__ import annotations

from bot.core.policy import DEFAULT_POLICY_PATH, Policy, load_policy

#: The packaged default policy, loaded once.
DEFAULT_POLICY: Policy = load_policy(DEFAULT_POLICY_PATH)


def review_tier(label: str) -> float:
    """The default policy's review tier of ``label``, a score in [0, 1].

    Raises:
        ValueError: the default has no review tier for ``label`` (``obscene``: profanity alone is allowed).
    """
    value = DEFAULT_POLICY.thresholds[label].review
    if value is None:
        raise ValueError(f"the default policy has no review tier for {label}")
    return value


def act_tier(label: str) -> float:
    """The default policy's act tier of ``label``, a score in [0, 1].

    Raises:
        ValueError: the default has no act tier for ``label``.
    """
    value = DEFAULT_POLICY.thresholds[label].act
    if value is None:
        raise ValueError(f"the default policy has no act tier for {label}")
    return value


#: identity_attack's review and act tiers in the default policy (0.75 and 0.95 for the shipped model).
IA_REVIEW = review_tier("identity_attack")
IA_ACT = act_tier("identity_attack")
#: Raid mode multiplies every tier by this for members who are not established (``rules.raid.threshold_factor``).
RAID_FACTOR = DEFAULT_POLICY.rules.raid.threshold_factor


def raid(tier: float) -> float:
    """``tier`` made stricter by raid mode, rounded as the judge rounds it (:func:`bot.core.judge.effective_tiers`)."""
    return round(tier * RAID_FACTOR, 4)
