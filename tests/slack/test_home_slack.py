"""Wire tests: the Slack App Home tab shows a member their own record, and moderators the open review queue with
links to the cards (real slack-bolt app against the local fake Slack)."""

from __future__ import annotations

import json

import pytest

from tests.slack.test_app_wire import SlackEnv

pytestmark = pytest.mark.slack


async def open_home(env: SlackEnv, user: str) -> str:
    """Deliver app_home_opened for ``user``; the published Home view's blocks as JSON text."""
    count = len(env.fake.calls_of("views.publish")) + 1
    event = {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home",
             "event_ts": env.fake.new_ts()}
    assert (await env.fake.deliver_event(env.url, event)).status == 200
    await env.fake.wait_for("views.publish", count=count)
    return json.dumps(env.fake.home_tabs[user]["blocks"])


async def test_home_shows_a_member_their_own_record_only(env):
    """A member who was flagged sees their open case and strikes on the Home tab, not the moderators' queue."""
    await env.start()
    await env.say(env.fake.member.id, "identityhate in general")
    home = await open_home(env, env.fake.member.id)
    assert "Your moderation record" in home and "Active strikes:" in home
    assert "#1 " in home and "Open review queue" not in home


async def test_home_shows_moderators_the_queue_with_card_links(env):
    """A moderator's Home tab lists the open review item with a link to its card in the review channel."""
    await env.start()
    await env.say(env.fake.member.id, "identityhate in general")
    (card,) = env.cards()
    home = await open_home(env, env.mods.id)
    assert "Open review queue (moderators)" in home
    link = f"https://{env.fake.domain}.slack.com/archives/{env.review.id}/p{card['ts'].replace('.', '')}"
    assert f"<{link}|Review #1>" in home and f"<@{env.fake.member.id}>" in home
    assert "Your moderation record" in home and "Active strikes:* no strikes" in home


async def test_home_queue_of_long_reports_full_of_markup_keeps_every_item(env):
    """Twelve open reports whose reasons are 1,000 ``&`` (5,000 characters each once escaped): the moderator's
    queue keeps a line for every item, card link and member mention included, within the section's 3,000
    characters (the fake refuses more); the reasons share the room, shortened between entities."""
    import re

    await env.start()
    assert env.bot is not None
    for i in range(12):
        reporter = env.fake.add_user(f"reporter{i}")
        result = await env.bot.workflow.report(reporter.id, env.fake.team_id, env.fake.member.id, "&" * 1000,
                                               message_id=f"{env.fake.general.id}:17000000{i:02d}.000001",
                                               channel_id=env.fake.general.id)
        assert result.ok, result.text
    await open_home(env, env.mods.id)
    (call,) = env.fake.calls_of("views.publish")
    assert call.response["ok"], call.response
    sections = [b["text"]["text"] for b in env.fake.home_tabs[env.mods.id]["blocks"] if b["type"] == "section"]
    queue = sections[-1]
    lines = queue.split("\n")
    assert len(queue) <= 3000 and len(lines) == 12, queue[-200:]
    assert all(re.search(rf"^• <https://[^|]+\|Review #\d+> \(report\) <@{env.fake.member.id}>: (&amp;)+…$", line)
               for line in lines), lines[-1]


async def test_home_queue_shows_a_reporters_words_as_written(env):
    """A report's text on the moderators' queue is shown as written (escaped only), as the mod log page and the
    card show it. It went through the rewording meant for automod's rule details ("30s" -> "30 seconds", " < " ->
    ", under "), so "he said 5 < 6 then spammed for 30s" read "he said 5, under 6 then spammed for 30 seconds";
    an automod item's reason is still put in words."""
    said = "he said 5 < 6 then spammed for 30s"
    await env.start()
    assert env.bot is not None
    reporter = env.fake.add_user("reporter")
    result = await env.bot.workflow.report(reporter.id, env.fake.team_id, env.fake.member.id, said,
                                           message_id=f"{env.fake.general.id}:1700000001.000001",
                                           channel_id=env.fake.general.id)
    assert result.ok, result.text
    await env.bot.store.open_review("slack", env.fake.team_id, env.fake.member.id, "automod",
                                    "account age 6734s < 604800s")
    await open_home(env, env.mods.id)
    queue = [b["text"]["text"] for b in env.fake.home_tabs[env.mods.id]["blocks"] if b["type"] == "section"][-1]
    assert f"(report) <@{env.fake.member.id}>: {said.replace('<', '&lt;')}" in queue, queue
    assert "30 seconds" not in queue
    assert f"(automod) <@{env.fake.member.id}>: account age 1 hour 52 minutes, under 7 days" in queue, queue
