"""Break-it: a review card, once decided, is rebuilt from the mod log, and lost its evidence: "Rules fired" read
"none" although a rule had fired, and the score read "(off)" as if its tier were switched off, so the card a
moderator (or a later one, checking the decision) reads no longer showed why the message was flagged. Through the
real discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.discord


def fields(card):
    return {f["name"]: f["value"] for f in card["embeds"][0]["fields"]}


async def test_a_decided_card_keeps_the_rules_that_fired_and_does_not_call_a_tier_off(env):
    """An insult with an invite link is held for review (the invite rule fired, insult 0.90 over its review tier);
    after Warn the card still names the invite rule's hit and the insult score without calling its tier "off"."""
    _, outcome = await env.post(env.alice, "borderline join discord.gg/abcdef now")
    card = env.card(f"Review #{outcome.review_id} ")
    assert fields(card)["Rules fired"] == "invite: abcdef"
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:warn")
    decided = fields(env.fake.messages[card["id"]])
    assert "Decision" in decided
    assert decided["Rules fired"] == "invite: abcdef"
    assert "`insult` **0.90**" in decided["Scores (threshold)"] and "off" not in decided["Scores (threshold)"]
