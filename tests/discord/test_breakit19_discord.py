"""The appeal workflow through the real discord.py client against the local fake Discord (nineteenth session's
break-it pass): an appeal's review item pressed as a review decision (``mod:review:<its id>:dismiss`` overturned the
case and pardoned its strike while the appeal stayed open; ``...:ban`` opened the reason modal to ban the member for
appealing) is refused by the workflow; a non-moderator's Overturn changes nothing; a timeout Discord refuses to lift
when its case is dismissed or overturned on appeal is recorded on the case (it said only "overturned", as if the
timeout had ended), and so is a moderator's Delete refused on an automod card (the case said nothing)."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text
from tests.discord.test_review_buttons_wire import appeal_card, review_card

pytestmark = pytest.mark.discord


def _unchanged(env, number: int) -> None:
    """The appeal is open, the case applied, its strike active, and nothing was sent to Discord's member routes."""
    assert [tuple(r) for r in env.rows("SELECT status, moderator_id FROM appeals")] == [("open", None)]
    assert env.rows("SELECT status FROM cases WHERE number = ?", (number,))[0][0] == "applied"
    assert [r[0] for r in env.rows("SELECT pardoned_at FROM strikes")] == [None]
    assert env.rows("SELECT decision FROM review_items WHERE source = 'appeal'")[0][0] == "open"
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == [] and env.fake.find("DELETE", r"/guilds/.*/bans/.*") == []


@pytest.mark.parametrize("choice", ["dismiss", "warn", "ban", "kick"])
async def test_an_appeals_review_item_cannot_be_decided_as_a_review(env, choice):
    number, _, card = await appeal_card(env)
    (review_id,) = [r[0] for r in env.rows("SELECT id FROM review_items WHERE source = 'appeal'")]
    custom_id = f"mod:review:{review_id}:{choice}"
    # discord.py dispatches only ids present on the message: the pressed message carries a review button naming
    # the appeal's item (as a forged or stale card would); the workflow, not the button's origin, must refuse it
    stored = env.fake.messages[card["id"]]
    stored["components"] = [{"type": 1, "components": [{"type": 2, "style": 2, "label": choice,
                                                          "custom_id": custom_id}]}]
    cb = await env.fake.click(env.guild, env.mod, card, custom_id)
    assert ephemeral_text(cb) == (f"Review #{review_id} is an appeal of case #{number}: decide it with Uphold or "
                                  "Overturn on its card. Nothing was changed.")  # Ban/Kick: no reason modal opens
    _unchanged(env, number)
    assert len(env.rows("SELECT 1 FROM cases")) == 1  # no new sanction


async def test_a_non_moderator_pressing_overturn_is_refused(env):
    number, appeal_id, card = await appeal_card(env)
    bystander = env.fake.new_user(env.guild, "bystander")
    cb = await env.fake.click(env.guild, bystander, card, f"mod:appealdecide:{appeal_id}:overturn")
    assert "You need Manage Messages" in ephemeral_text(cb)
    _unchanged(env, number)


async def _automatic_timeout(env):
    """A threat over the act tier: the bot times Alice out (case #1) and posts its card. Returns the outcome."""
    env.write_policy(env.guild, env.review, env.modlog, "[thresholds]\nthreat = { review = 0.8, act = 0.9 }\n")
    env.bot.policies.invalidate()
    _, outcome = await env.post(env.alice, "threatword you")
    await env.fake.wait_until(lambda: env.rows("SELECT status FROM cases")[0][0] == "applied"
                              if env.rows("SELECT status FROM cases") else False)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(
        f"Review #{outcome.review_id} ") for m in env.fake.messages.values()))
    return outcome


def _decision(cb) -> str:
    return next(f["value"] for f in cb.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")


async def test_a_refused_lift_on_dismissing_an_automatic_timeout_is_recorded_on_the_case(env):
    outcome = await _automatic_timeout(env)
    card = env.card(f"Review #{outcome.review_id} ")
    env.fake.fail("PATCH", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:dismiss")
    assert "could not lift the timeout: FAILED: Missing Permissions (50013)" in _decision(cb)
    assert [tuple(r) for r in env.rows("SELECT number, action, status, failure FROM cases")] == [
        (outcome.case_number, "timeout", "overturned", "timeout not lifted: Missing Permissions (50013)")]


async def test_a_refused_lift_on_overturning_an_appeal_is_recorded_on_the_case(env):
    outcome = await _automatic_timeout(env)
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [{"name": "case", "type": 4,
                                                               "value": outcome.case_number}])
    await env.fake.submit_modal(env.guild, env.alice, cb, ["it was a quote, sorry"])
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    card = env.card("Appeal #")
    env.fake.fail("PATCH", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}")
    cb = await env.fake.click(env.guild, env.mod, card, "mod:appealdecide:1:overturn")
    assert "could not lift the timeout: FAILED: Missing Permissions (50013)" in _decision(cb)
    assert [tuple(r) for r in env.rows("SELECT status FROM appeals")] == [("overturned",)]
    assert [tuple(r) for r in env.rows("SELECT status, failure FROM cases")] == [
        ("overturned", "timeout not lifted: Missing Permissions (50013)")]


async def test_a_lifted_timeout_leaves_no_failure_on_the_case(env):
    outcome = await _automatic_timeout(env)
    card = env.card(f"Review #{outcome.review_id} ")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:dismiss")
    assert "timeout lifted" in _decision(cb)
    assert [tuple(r) for r in env.rows("SELECT status, failure FROM cases")] == [("overturned", None)]


async def test_a_refused_delete_on_an_automod_card_is_recorded_on_its_case(env):
    """Delete on the card of a review-only automod case, refused by Discord: the card says FAILED and the case
    records why (before, the case said nothing and the mod log read as if the message was gone)."""
    msg, outcome, card = await review_card(env)
    env.fake.fail("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    assert "delete FAILED: Missing Permissions (50013)" in _decision(cb)
    assert [tuple(r) for r in env.rows("SELECT number, action, status, failure FROM cases")] == [
        (outcome.case_number, "review", "applied", "delete: Missing Permissions (50013)")]
    assert env.rows("SELECT COUNT(*) FROM strikes")[0][0] == 0  # nothing was deleted: no strike
