"""Adversarial wire checks against the strict fake Discord (each test states what should happen)."""

from __future__ import annotations

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES
from tests.discord.helpers import ephemeral_text

pytestmark = pytest.mark.discord


async def test_breakit_manage_messages_helper_cannot_lift_a_timeout_by_dismissing_its_card(env):
    """A helper whose role grants Manage Messages only (no Timeout Members) pressing Dismiss on the card of an
    automatic timeout is refused; the timeout stays (one PATCH only), the case stays applied."""
    env.write_policy(env.guild, env.review, env.modlog, "[thresholds]\nthreat = { review = 0.8, act = 0.9 }\n")
    env.bot.policies.invalidate()
    role = await env.fake.add_role(env.guild, "Helpers", MANAGE_MESSAGES, 3)
    helper = env.fake.new_user(env.guild, "helper", roles=[role["id"]])
    _, outcome = await env.post(env.alice, "threatword you")
    patches = lambda: env.fake.find("PATCH", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}")  # noqa: E731
    await env.fake.wait_until(lambda: len(patches()) == 1)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(
        f"Review #{outcome.review_id} ") for m in env.fake.messages.values()))
    card = env.card(f"Review #{outcome.review_id} ")
    cb = await env.fake.click(env.guild, helper, card, f"mod:review:{outcome.review_id}:dismiss")
    await env.settle()
    assert len(patches()) == 1, "the timeout was lifted by a member without Timeout Members"
    assert "Moderate Members" in ephemeral_text(cb)
    assert env.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,))[0][0] == "applied"
