"""The appeal workflow through the real discord.py client against the local fake Discord (nineteenth session's
break-it pass): an appeal's review item pressed as a review decision (``mod:review:<its id>:dismiss`` overturned the
case and pardoned its strike while the appeal stayed open; ``...:ban`` opened the reason modal to ban the member for
appealing) is refused by the workflow; a non-moderator's Overturn changes nothing."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text
from tests.discord.test_review_buttons_wire import appeal_card

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
