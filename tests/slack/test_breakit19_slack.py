"""The appeal workflow through the real slack-bolt app against the local fake Slack (nineteenth session's break-it
pass): who may decide an appeal, two moderators deciding one at once, and an appeal's review item pressed as a review
decision (``mod:review:<its id>:dismiss`` overturned the case and pardoned its strike while the appeal stayed open;
now refused, decided only with Uphold / Overturn)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.slack.test_app_wire import (
    card_text,
    click,
    file_appeal,
    senv,  # noqa: F401 - fixture
    warn_from_card,
)

pytestmark = pytest.mark.slack


async def _appeal_card(senv: Any) -> dict[str, Any]:  # noqa: F811
    """A moderator warns the member from a card (case #2, one strike); the member appeals from the DM's Appeal
    button. Returns the appeal card (appeal #1, review item #2)."""
    dm, notice = await warn_from_card(senv)
    await file_appeal(senv, dm, notice)
    assert senv.rows("SELECT id, source, case_number FROM review_items WHERE source = 'appeal'") == [(2, "appeal", 2)]
    return next(c for c in senv.cards() if "Appeal #1" in card_text(c))


def _unchanged(senv: Any) -> None:  # noqa: F811
    """The appeal is open, the warning's case applied and its strike active."""
    assert senv.rows("SELECT status, moderator_id FROM appeals") == [("open", None)]
    assert senv.rows("SELECT status FROM cases WHERE number = 2") == [("applied",)]
    assert senv.rows("SELECT pardoned_at FROM strikes") == [(None,)]
    assert senv.rows("SELECT decision FROM review_items WHERE id = 2") == [("open",)]


async def _answer(senv: Any, words: str) -> str:  # noqa: F811
    await senv.fake.wait_until(lambda: any(words in h.body.get("text", "") for h in senv.fake.hook_posts))
    await senv.settle()
    return next(h.body["text"] for h in senv.fake.hook_posts if words in h.body.get("text", ""))


@pytest.mark.parametrize(("who", "refusal"), [
    ("bystander", "You need Manage Messages (or a moderator role) for this. Nothing was changed."),
    ("member", "You cannot decide an appeal about yourself. Nothing was changed."),
])
async def test_a_non_moderator_pressing_overturn_is_refused_and_nothing_changes(senv, who, refusal):  # noqa: F811
    card = await _appeal_card(senv)
    user = senv.fake.add_user("bystander").id if who == "bystander" else senv.fake.member.id
    assert (await click(senv, user, card, "mod:appealdecide:1:overturn")).status == 200
    assert await _answer(senv, "Nothing was changed") == refusal
    _unchanged(senv)


@pytest.mark.parametrize("choice", ["dismiss", "warn", "delete", "investigating"])
async def test_an_appeals_review_item_cannot_be_decided_as_a_review(senv, choice):  # noqa: F811
    """``mod:review:2:<choice>`` names the appeal's review item: refused, the appeal stays open and the case and
    its strike stay; before, Dismiss overturned the case and pardoned the strike with the appeal still open, and
    Warn warned the member again for appealing."""
    card = await _appeal_card(senv)
    assert (await click(senv, senv.mods.id, card, f"mod:review:2:{choice}")).status == 200
    assert await _answer(senv, "is an appeal") == ("Review #2 is an appeal of case #2: decide it with Uphold or "
                                                   "Overturn on its card. Nothing was changed.")
    _unchanged(senv)
    assert senv.rows("SELECT COUNT(*) FROM cases") == [(2,)]  # no new sanction


async def test_the_appeals_own_buttons_still_decide_it_after_a_refused_review_press(senv):  # noqa: F811
    card = await _appeal_card(senv)
    await click(senv, senv.mods.id, card, "mod:review:2:dismiss")
    await _answer(senv, "is an appeal")
    await click(senv, senv.mods.id, card, "mod:appealdecide:1:overturn")
    await senv.fake.wait_until(lambda: senv.rows("SELECT status FROM appeals") == [("overturned",)])
    await senv.settle()
    assert senv.rows("SELECT status FROM cases WHERE number = 2") == [("overturned",)]
    assert senv.rows("SELECT pardoned_at IS NOT NULL FROM strikes") == [(1,)]
    assert senv.rows("SELECT decision FROM review_items WHERE id = 2") == [("dismissed",)]


async def test_two_moderators_deciding_one_appeal_at_once_only_one_decides(senv):  # noqa: F811
    """Overturn and Uphold pressed at once by two moderators: one decision is recorded, the other moderator is
    told who decided."""
    card = await _appeal_card(senv)
    await asyncio.gather(click(senv, senv.mods.id, card, "mod:appealdecide:1:overturn"),
                         click(senv, senv.mod2.id, card, "mod:appealdecide:1:uphold"))
    text = await _answer(senv, "already decided")
    ((status, moderator),) = senv.rows("SELECT status, moderator_id FROM appeals")
    loser = senv.mod2.id if moderator == senv.mods.id else senv.mods.id
    assert (status, moderator) in (("overturned", senv.mods.id), ("upheld", senv.mod2.id))
    assert text == f"Appeal #1: appeal 1 was already decided: {status} by <@{moderator}>. Nothing was done."
    assert [e["user"] for e in senv.fake.ephemerals if "already decided" in e["text"]] == [loser]
    assert senv.rows("SELECT status FROM cases WHERE number = 2") == [("overturned" if status == "overturned"
                                                                      else "applied",)]


@pytest.mark.parametrize("action_id", ["mod:appealdecide:1:", "mod:appealdecide:1:Uphold", "mod:appealdecide:1:x"])
async def test_an_appeal_button_that_is_neither_uphold_nor_overturn_decides_nothing(senv, action_id):  # noqa: F811
    """Only ``uphold`` and ``overturn`` decide an appeal (as on Discord); before, any other word overturned it
    (it was not ``uphold``), pardoning the strike."""
    card = await _appeal_card(senv)
    assert (await click(senv, senv.mods.id, card, action_id)).status == 200
    assert await _answer(senv, "Unknown button") == "Unknown button."
    _unchanged(senv)
