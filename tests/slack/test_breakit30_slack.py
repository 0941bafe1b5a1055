"""Break-it (thirtieth session): the Slack adapter through the real slack-bolt app and slack_sdk client against the
fake Slack, a real SQLite mod log. Each test failed on main before its fix."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.slack.test_app_wire import SlackEnv, card_text, click

pytestmark = pytest.mark.slack


async def report_by_shortcut(env: SlackEnv, reporter: str, channel: str, ts: str, reason: str = "rude") -> None:
    """``reporter`` uses "Report message" on the message ``ts`` in ``channel`` and submits the modal."""
    fake = env.fake
    before = len(fake.calls_of("views.open"))
    short = fake.message_action_payload(user=reporter, channel=channel, message_ts=ts, callback_id="report_message")
    assert (await fake.deliver_interaction(env.url, short)).status == 200
    opened = (await fake.wait_for("views.open", count=before + 1))[-1]
    view: dict[str, Any] = opened.params["view"] if isinstance(opened.params["view"], dict) \
        else json.loads(opened.params["view"])
    sub = fake.view_submission_payload(user=reporter, callback_id="mod_report",
                                       values={"text": {"value": {"type": "plain_text_input", "value": reason}}},
                                       private_metadata=view["private_metadata"])
    assert (await fake.deliver_interaction(env.url, sub)).status == 200


def dm_texts(env: SlackEnv, user: str) -> list[str]:
    dm = env.fake.channels.get("D" + user[1:])
    return [m["text"] for m in dm.messages.values()] if dm is not None else []


async def test_a_report_from_a_channel_the_bot_is_not_in_is_answered_in_a_dm(env):
    """Message shortcuts work in every conversation, also public channels the bot was never invited to. The report
    is recorded and carded, but its answer was an ephemeral in that channel, which Slack refuses (``not_in_channel``):
    the reporter was told nothing, not even that the report arrived. Now the answer comes in a DM with the bot."""
    await env.start()
    fake = env.fake
    lobby = fake.add_channel("lobby", members=[fake.owner.id, fake.member.id], bot_member=False)
    msg = fake.add_message(lobby.id, fake.member.id, "you are all idiots")
    await report_by_shortcut(env, fake.owner.id, lobby.id, msg["ts"])
    await fake.wait_until(lambda: dm_texts(env, fake.owner.id), timeout=5)
    assert dm_texts(env, fake.owner.id) == ["Thanks. Your report (review #1) was sent to the moderators."]
    assert env.rows("SELECT source, member_id FROM review_items") == [("report", fake.member.id)]


async def test_a_refused_report_from_a_channel_the_bot_is_not_in_is_answered_in_a_dm(env):
    """Reporting one's own message there is refused; the refusal reaches the member too."""
    await env.start()
    fake = env.fake
    lobby = fake.add_channel("lobby", members=[fake.member.id], bot_member=False)
    msg = fake.add_message(lobby.id, fake.member.id, "my own words")
    await report_by_shortcut(env, fake.member.id, lobby.id, msg["ts"])
    await fake.wait_until(lambda: dm_texts(env, fake.member.id), timeout=5)
    assert dm_texts(env, fake.member.id) == ["You cannot report yourself."]
    assert env.rows("SELECT COUNT(*) FROM review_items") == [(0,)]


async def test_a_report_in_a_channel_the_bot_is_in_is_still_answered_ephemerally(env):
    await env.start()
    fake = env.fake
    msg = fake.add_message(fake.general.id, fake.member.id, "you are all idiots")
    await report_by_shortcut(env, fake.owner.id, fake.general.id, msg["ts"])
    await fake.wait_until(lambda: fake.ephemerals)
    assert [(e["channel"], e["user"], e["text"]) for e in fake.ephemerals] == [
        (fake.general.id, fake.owner.id, "Thanks. Your report (review #1) was sent to the moderators.")]
    assert dm_texts(env, fake.owner.id) == []


async def test_a_reported_messages_text_shows_on_the_card_as_the_member_typed_it(env):
    """Slack sends a message's ``&``, ``<`` and ``>`` as entities, also in a message shortcut's payload. A message the
    bot never judged (a channel it is not in) is quoted on the card from the shortcut's text, which was escaped a
    second time: ``Tom & Jerry <3`` showed as ``Tom &amp; Jerry &lt;3`` to the moderators. It is read back from
    Slack's entities first, as a message event's text is."""
    await env.start()
    fake = env.fake
    lobby = fake.add_channel("lobby", members=[fake.owner.id, fake.member.id], bot_member=False)
    msg = fake.add_message(lobby.id, fake.member.id, "Tom &amp; Jerry &lt;3 &lt;!channel&gt; <!here>")
    await report_by_shortcut(env, fake.owner.id, lobby.id, msg["ts"])
    await fake.wait_until(lambda: env.cards())
    (card,) = env.cards()
    quoted = next(b["text"]["text"] for b in card["blocks"]
                  if b.get("type") == "section" and b["text"]["text"].startswith("*Text:*"))
    assert quoted == "*Text:*\n>Tom &amp; Jerry &lt;3 &lt;!channel&gt; &lt;!here&gt;", quoted
    assert "<!here>" not in card_text(card)


def tombstone_event(env: SlackEnv, channel: str, ts: str) -> dict[str, Any]:
    """What Slack sends when a message with thread replies is deleted: no ``message_deleted`` but a
    ``message_changed`` whose message is Slackbot's ``tombstone`` ("This message was deleted."), which keeps the
    thread; the world's message becomes that tombstone."""
    fake = env.fake
    previous = dict(fake.channels[channel].messages[ts])
    tomb = {"type": "message", "subtype": "tombstone", "text": "This message was deleted.", "user": "USLACKBOT",
            "hidden": True, "ts": ts, "thread_ts": ts, "parent_user_id": "USLACKBOT", "reply_count": 1}
    fake.channels[channel].messages[ts] = tomb
    event_ts = fake.new_ts()
    return {"type": "message", "subtype": "message_changed", "hidden": True, "channel": channel, "ts": event_ts,
            "event_ts": event_ts, "message": dict(tomb), "previous_message": previous, "channel_type": "channel"}


def quoted_text(card: dict[str, Any]) -> str:
    return next(b["text"]["text"] for b in card["blocks"]
                if b.get("type") == "section" and b["text"]["text"].startswith("*Text:*"))


async def test_a_flagged_message_deleted_with_its_thread_keeps_its_evidence_and_its_card_says_so(env):
    """A member's flagged message that has thread replies is deleted (by its author, to hide it): Slack sends a
    ``message_changed`` to Slackbot's tombstone "This message was deleted.". It was judged as an edit, so the mod
    log's record of the message (its excerpt, and its verdict: now clean) was overwritten with the tombstone's
    words, the card was not told the message was gone, and once a moderator decided, the card quoted "This message
    was deleted." instead of what the member wrote. Now it is read as the deletion it is."""
    await env.start()
    fake = env.fake
    ev = await env.say(fake.member.id, "borderline take")
    await fake.wait_until(lambda: env.cards())
    await env.say(fake.owner.id, "please stop that", thread_ts=ev["ts"])
    key = f"{fake.general.id}:{ev['ts']}"
    updates = len(fake.calls_of("chat.update"))
    assert (await fake.deliver_event(env.url, tombstone_event(env, fake.general.id, ev["ts"]))).status == 200
    await fake.wait_for("chat.update", count=updates + 1)
    await env.settle()
    (card,) = env.cards()
    assert "deleted on the platform" in card_text(card)
    assert env.rows("SELECT excerpt FROM messages WHERE message_id = ?", (key,)) == [("borderline take",)]
    assert env.rows("SELECT flagged, revision FROM verdicts WHERE message_id = ?", (key,)) == [(1, 1)]
    assert env.rows("SELECT COUNT(*) FROM member_first_seen WHERE member_id = 'USLACKBOT'") == [(0,)]
    assert (await click(env, env.mods.id, card, "mod:review:1:dismiss")).status == 200
    await fake.wait_until(lambda: env.rows("SELECT decision FROM review_items") == [("dismissed",)])
    await env.settle()
    await asyncio.sleep(0.2)
    (card,) = env.cards()
    assert quoted_text(card) == "*Text:*\n>borderline take"


async def test_an_admin_of_another_workspace_is_not_exempt_as_an_admin_here(env):
    """A policy may exempt this workspace's admins (``exempt.roles = ["admin"]``; Slack has no role ids, so the
    workspace roles "admin" and "owner" stand in). A Slack Connect member in a shared channel is an admin of THEIR
    workspace (``users.info``: ``is_admin``, another ``team_id``), not of this one: their abuse was not judged at
    all, as if they were one of this workspace's admins. Rights here are never read from another workspace (as for
    buttons and commands), so their message is judged like any member's; this workspace's own admin stays exempt."""
    policy = env.policy_dir / "servers" / f"slack-{env.fake.team_id}.toml"
    policy.write_text(policy.read_text() + '[exempt]\nroles = ["admin"]\n')
    guest = env.fake.add_user("guest", is_admin=True, home_team="TEXTERNAL1")
    env.fake.general.members.add(guest.id)
    await env.start()
    await env.say(env.fake.admin.id, "borderline take")
    assert env.rows("SELECT exempt FROM verdicts") == [("role",)]
    await env.say(guest.id, "borderline take")
    await env.fake.wait_until(lambda: env.cards())
    assert env.rows("SELECT member_id, exempt FROM verdicts ORDER BY id") == [(env.fake.admin.id, "role"),
                                                                              (guest.id, None)]
    assert env.rows("SELECT member_id FROM review_items") == [(guest.id,)]
