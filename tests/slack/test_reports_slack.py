"""A report card on Slack lists who reported and what each wrote, as Discord's does (``Reports``): several members
reporting one message share its review item, and the card is rebuilt when another joins it. Through the real
slack-bolt app and slack_sdk client against the fake Slack, a real SQLite mod log."""

from __future__ import annotations

import pytest

from tests.slack.test_app_wire import SlackEnv, card_text
from tests.slack.test_breakit30_slack import report_by_shortcut

pytestmark = pytest.mark.slack


async def test_a_second_report_of_a_message_shows_on_its_slack_card_with_who_reported(env: SlackEnv) -> None:
    """The member reports the owner's message, then the admin reports it too, with other words: there is one card,
    and it names both reporters with their words (``<@U…>: reason``, escaped). Before, the Slack card stayed as
    the first report left it and named no reporter at all: the moderators never saw who reported, nor what they
    wrote, nor that a second member did."""
    await env.start()
    fake = env.fake
    msg = fake.add_message(fake.random.id, fake.owner.id, "some rude but unscored text")
    await report_by_shortcut(env, fake.member.id, fake.random.id, msg["ts"], "slur in <the> first line")
    await fake.wait_until(lambda: len(env.cards()) == 1)
    (card,) = env.cards()
    assert f"<@{fake.member.id}>: slur in &lt;the&gt; first line" in card_text(card)
    await report_by_shortcut(env, fake.admin.id, fake.random.id, msg["ts"], "he threatened me in DMs too")
    await fake.wait_until(lambda: "he threatened me" in card_text(env.cards()[0]))
    (card,) = env.cards()
    text = card_text(card)
    assert f"*Reports:*\\n<@{fake.member.id}>: slur in &lt;the&gt; first line\\n<@{fake.admin.id}>: he threatened me " \
           "in DMs too" in text, text
