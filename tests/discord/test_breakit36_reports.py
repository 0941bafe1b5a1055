"""Break-it: several members reporting one message share its review item (so a hostile member cannot flood the
queue), but the card stayed as the first report left it: the moderators never saw that a second member reported
it, nor what they wrote, nor who reported at all. Through the real discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text

pytestmark = pytest.mark.discord


async def report_message(env, reporter, msg, reason):
    cb = await env.fake.slash(env.guild, reporter, "Report to moderators", [], cmd_type=3, target_id=msg["id"],
                              resolved={"messages": {msg["id"]: msg}})
    return ephemeral_text(await env.fake.submit_modal(env.guild, reporter, cb, [reason]))


def fields(card):
    return {f["name"]: f["value"] for f in card["embeds"][0]["fields"]}


async def test_a_second_report_of_a_message_shows_on_its_card_with_who_reported(env):
    """Alice reports Bob's message, then Carol reports it too, with other words. Both are
    told it was sent; there is one card, and it now says who reported and what each wrote."""
    carol = env.fake.new_user(env.guild, "carol")
    msg, _ = await env.post(env.bob, "some rude but unscored text")
    assert "was sent to the moderators" in await report_message(env, env.alice, msg, "slur in the first line")
    card = env.card("Review #1 ")
    assert fields(card)["Reports"] == f"<@{env.alice['id']}>: slur in the first line"
    assert "was sent to the moderators" in await report_message(env, carol, msg, "he threatened me in DMs too")
    assert len(env.review_posts()) == 1
    card = env.fake.messages[card["id"]]
    assert fields(card)["Reports"] == (f"<@{env.alice['id']}>: slur in the first line\n"
                                       f"<@{carol['id']}>: he threatened me in DMs too")
