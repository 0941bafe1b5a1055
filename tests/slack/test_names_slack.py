"""Members' names on Slack (issue 25 item 16): the real bolt app against the fake Slack, judging display names on
``team_join`` and ``user_change`` (FakeScorer presets)."""

from __future__ import annotations

import asyncio

import pytest

from tests.slack.test_app_wire import SlackEnv, card_text, senv  # noqa: F401  (senv: the fixture)

pytestmark = pytest.mark.slack


def name_cases(env: SlackEnv) -> list[tuple]:
    """``(member_id, action, reason)`` of the cases opened for names."""
    return env.rows("SELECT member_id, action, reason FROM cases WHERE reason LIKE 'display name %' "
                     "OR reason LIKE 'full name %'")


async def test_a_hostile_display_name_change_opens_one_review_card_and_an_unchanged_profile_edit_nothing(
        senv: SlackEnv):  # noqa: F811
    """A clean team_join opens nothing; a user_change to a flagged display name opens one review case and card
    naming it; the same profile sent again (a status edit) is not judged twice."""
    await senv.start()
    newbie = senv.fake.add_user("newbie")
    assert (await senv.fake.deliver_event(senv.url, senv.fake.team_join_event(newbie))).status == 200
    await asyncio.sleep(0.3)
    assert name_cases(senv) == []
    change = senv.fake.user_change_event(newbie, display_name="borderline")
    assert (await senv.fake.deliver_event(senv.url, change)).status == 200
    await senv.fake.wait_until(lambda: any("borderline" in card_text(c) for c in senv.cards()))
    ((member_id, action, reason),) = name_cases(senv)
    assert (member_id, action) == (newbie.id, "review")
    assert reason == "display name 'borderline': insult 0.90 >= 0.85"
    again = senv.fake.user_change_event(newbie, display_name="borderline")
    assert (await senv.fake.deliver_event(senv.url, again)).status == 200
    await asyncio.sleep(0.3)
    assert len(name_cases(senv)) == 1
    assert len([c for c in senv.cards() if "borderline" in card_text(c)]) == 1
