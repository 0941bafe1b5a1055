"""Break-it: a member who appealed was told "A moderator will look at it" and then never heard back: deciding the
appeal (Uphold or Overturn on its card) told the moderators and the mod log, never the member, who could only wait.
Through the real discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

from tests.discord.helpers import dm_posts, mod_on, text_opt

pytestmark = pytest.mark.discord


async def appeal_and_decide(env, number: int, decision: str) -> None:
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", number, 4)])
    await env.fake.submit_modal(env.guild, env.alice, cb, ["it was a quote, sorry"])
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(f"Appeal #{number}")
                                          for m in env.fake.messages.values()))
    card = env.card(f"Appeal #{number}")
    await env.fake.click(env.guild, env.mod, card, f"mod:appealdecide:{number}:{decision}")


@pytest.mark.parametrize("decision,title,says", [
    ("overturn", "Appeal of case #1 in Main: accepted", "Your appeal was accepted: case #1 is overturned"),
    ("uphold", "Appeal of case #1 in Main: declined", "Your appeal was reviewed and declined: case #1 stands"),
])
async def test_the_member_is_told_how_their_appeal_was_decided(env, decision, title, says):
    """Alice is warned (case #1, one DM with an Appeal button) and appeals; when a moderator decides the appeal
    she gets a second DM saying how, without an Appeal button."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "spam"))
    assert len(dm_posts(env, env.alice)) == 1
    await appeal_and_decide(env, 1, decision)
    await env.fake.wait_until(lambda: len(dm_posts(env, env.alice)) == 2)
    outcome = dm_posts(env, env.alice)[1].body
    assert outcome["embeds"][0]["title"] == title
    assert outcome["embeds"][0]["description"].startswith(says), outcome["embeds"][0]["description"]
    assert not outcome.get("components")
