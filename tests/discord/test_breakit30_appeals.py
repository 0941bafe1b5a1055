"""Break-it: a case overturned one way (Dismiss on its card, Overturn on its appeal) closes the other open decision
about it, through the real discord.py client against the fake: an Uphold pressed on the appeal of a case already
dismissed recorded "upheld" on an overturned case, and a Delete pressed on the card of a case already overturned
on appeal struck the member again under that overturned case."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, text_opt
from tests.discord.test_breakit19_discord import _automatic_timeout
from tests.discord.test_review_buttons_wire import review_card

pytestmark = pytest.mark.discord


async def _appeal(env, number: int) -> dict:
    """Alice appeals case ``number``; returns the appeal card."""
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", number, 4)])
    await env.fake.submit_modal(env.guild, env.alice, cb, ["it was a quote, sorry"])
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    return env.card("Appeal #")


async def test_uphold_of_an_appeal_whose_case_was_dismissed_on_its_card_is_refused(env):
    """The bot times Alice out (case #1, with its card); she appeals. One moderator dismisses the card (the case is
    overturned, the timeout lifted); the appeal is settled with it (no longer open in /mystatus), and another
    moderator's Uphold on the appeal card then changes nothing: before, the appeal was recorded "upheld" (mod log
    and all) on a case that stood overturned."""
    outcome = await _automatic_timeout(env)
    appeal_card = await _appeal(env, outcome.case_number)
    card = env.card(f"Review #{outcome.review_id} ")
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:dismiss")
    assert env.rows("SELECT status FROM cases")[0][0] == "overturned"
    assert env.rows("SELECT status FROM appeals")[0][0] != "open"
    status = await env.fake.slash(env.guild, env.alice, "mystatus", [])
    assert status.body["data"]["embeds"][0]["fields"][1]["value"] == "none"  # no open appeal left
    cb = await env.fake.click(env.guild, env.mod, appeal_card, "mod:appealdecide:1:uphold")
    assert "already decided" in ephemeral_text(cb)
    assert [tuple(r) for r in env.rows("SELECT status FROM appeals")] == [("overturned",)]
    assert not [p for p in env.modlog_posts() if "upheld" in p.body["embeds"][0]["title"]]


async def test_delete_on_the_card_of_a_case_overturned_on_appeal_is_refused(env):
    """A flag held for review (case #1, its card); Alice appeals and a moderator overturns the appeal. The case's
    own card is settled with it: Delete pressed on it later neither deletes the message nor strikes Alice under the
    overturned case (before, an overturned case carried an active strike)."""
    msg, outcome, card = await review_card(env)
    appeal_card = await _appeal(env, outcome.case_number)
    await env.fake.click(env.guild, env.mod, appeal_card, "mod:appealdecide:1:overturn")
    assert env.rows("SELECT status FROM cases")[0][0] == "overturned"
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    assert "already decided" in ephemeral_text(cb)
    assert env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}") == []
    assert env.rows("SELECT COUNT(*) FROM strikes WHERE pardoned_at IS NULL")[0][0] == 0
