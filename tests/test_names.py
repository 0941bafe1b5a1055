"""Judging members' names (bot/workflow/names.py, issue 25 item 16): the neutral frame the model reads a name in,
the content rules on the bare normalised name, and the [names] policy section."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError, load_policy
from bot.core.policy_registry import PolicyRegistry
from bot.core.rules import ContentRules
from bot.core.service import ModerationService
from bot.store import open_store
from bot.workflow.names import flagged_labels, framed, name_rule_hits
from tests.fakes import FakeScorer
from tests.policy_defaults import IA_REVIEW

POLICY = load_policy(DEFAULT_POLICY_PATH)


def test_the_model_reads_a_name_in_the_default_neutral_frame():
    """A name is put in the sentence "My name is {name}." (bench.name_scores: ordinary names ~0.02 there)."""
    assert framed("Mohammed", POLICY) == "My name is Mohammed."


def test_a_leet_slur_as_a_bare_name_is_matched_by_the_slur_list():
    """The slur list matches a leet slur on the bare normalised name, and an ordinary name matches nothing."""
    rules = ContentRules(POLICY.rules)
    assert [(h.rule, h.detail) for h in name_rule_hits("n1gger", rules)] == [("blocklist", "slurs: nigger")]
    assert name_rule_hits("Mohammed", rules) == []
    assert name_rule_hits("Tyrone", rules) == []


def test_an_invite_in_a_name_is_matched_by_the_invite_rule():
    """A Discord invite in a display name is an invite hit on the bare name."""
    rules = ContentRules(POLICY.rules)
    assert [h.rule for h in name_rule_hits("join discord.gg/abcdef", rules)] == ["invite"]


def test_a_label_at_its_review_tier_flags_a_name_and_below_it_does_not():
    """flagged_labels names each label at or above its [thresholds] review tier with the score (the default
    policy's identity_attack tier, read from it): a score at the tier is named, one just under it is not."""
    (scores,) = FakeScorer({"vermin": {"identity_attack": IA_REVIEW}}).score_batch(["My name is vermin."])
    assert flagged_labels(scores, POLICY) == [f"identity_attack {IA_REVIEW:.2f} >= {IA_REVIEW:.2f}"]
    (under,) = FakeScorer({"vermin": {"identity_attack": round(IA_REVIEW - 0.01, 4)}}).score_batch(["My name is vermin."])
    assert flagged_labels(under, POLICY) == []
    (clean,) = FakeScorer({}).score_batch(["My name is Tyrone."])
    assert flagged_labels(clean, POLICY) == []


async def test_the_scorer_gets_the_framed_name_not_the_bare_one(tmp_path: Path):
    """score_aside scores exactly the framed text on the service's scorer thread and records no verdict."""
    scorer = FakeScorer({"my name is tyrone.": {"toxicity": 0.02}, "tyrone": {"toxicity": 0.72}})
    store = await open_store(tmp_path / "mod.db")
    svc = ModerationService(scorer=scorer, store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH))
    try:
        scores = await svc.score_aside(framed("Tyrone", POLICY))
    finally:
        await svc.close()
        await store.close()
    assert scorer.calls == [["My name is Tyrone."]]
    assert scores.get("toxicity") == 0.72  # FakeScorer keeps the highest matching preset: the frame holds the name
    assert svc.stats["messages"] == 0


def test_names_policy_refuses_a_sanction_and_a_frame_without_the_name(tmp_path: Path):
    """[names] action must be review or none, and frame must hold {name} once; the error names the key."""
    bad = tmp_path / "bad.toml"
    bad.write_text('[names]\naction = "ban"\n')
    with pytest.raises(PolicyError, match="action"):
        load_policy(DEFAULT_POLICY_PATH, bad)
    bad.write_text('[names]\nframe = "hello"\n')
    with pytest.raises(PolicyError, match="frame"):
        load_policy(DEFAULT_POLICY_PATH, bad)
