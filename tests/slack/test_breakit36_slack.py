"""Breaking the Slack app as a workspace admin, a moderator and a member would, through the real slack-bolt app and
slack_sdk client against the fake Slack (a real SQLite mod log). Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.slack.test_app_wire import SlackEnv
from tests.slack.test_policy_slack import command, open_setup, picks, submit

pytestmark = pytest.mark.slack

#: Another organisation's workspace, which a Slack Connect channel is shared with.
OTHER_ORG = "T0OTHERORG"
SHARED = "this channel is shared with another organisation (Slack Connect)"


@pytest.mark.parametrize("key", ["server.review_channel", "server.mod_log_channel"])
async def test_modpolicy_set_refuses_a_channel_shared_with_another_organisation(env: SlackEnv, key: str) -> None:
    """``/modpolicy set`` of the review or mod-log channel naming a Slack Connect channel (``conversations.info``:
    ``is_ext_shared``), or one whose sharing invitation is pending, is refused with the reason and nothing is
    stored: the people of the other organisation in it would read every card (members' flagged words, scores,
    decisions) and mod-log entry. Before, it was stored and the cards went there."""
    await env.start()
    admin = env.fake.admin.id
    shared = env.fake.add_channel("partners", members=[admin], shared_with=[OTHER_ORG])
    pending = env.fake.add_channel("vendor", private=True, members=[admin], pending_share=True)
    for channel in (shared, pending):
        text = await command(env, "/modpolicy", f"set {key} <#{channel.id}|x>", admin)
        assert SHARED in text and text.endswith("Nothing was changed."), text
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    own = env.fake.add_channel("cards", private=True, members=[admin])
    assert (await command(env, "/modpolicy", f"set {key} {own.id}", admin)).startswith("Policy updated")


async def test_modsetup_refuses_a_channel_shared_with_another_organisation(env: SlackEnv) -> None:
    """The setup modal's submission naming a Slack Connect channel stays open with the reason under the field and
    writes nothing (the picker's own filter is the client's; the channel is checked as the bot on submit)."""
    await env.start()
    admin = env.fake.admin.id
    view = await open_setup(env, admin)
    shared = env.fake.add_channel("partners", members=[admin], shared_with=[OTHER_ORG])
    resp = await submit(env, admin, view, picks(shared.id, env.modlog.id))
    answer = resp.json()
    assert answer["response_action"] == "errors" and list(answer["errors"]) == ["review"]
    assert SHARED in answer["errors"]["review"]
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]


async def report_member(env: SlackEnv, reporter: str, member: str, channel: str, reason: str) -> None:
    """``/report @member`` typed by ``reporter`` in ``channel``, its modal submitted with ``reason``; waits until the
    report's card is in the review channel."""
    before = len(env.cards())
    fields = env.fake.command_payload("/report", f"<@{member}|x>", user=reporter, channel=channel)
    opened = len(env.fake.calls_of("views.open")) + 1
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    view = (await env.fake.wait_for("views.open", count=opened))[-1].response["view"]
    sub = env.fake.view_submission_payload(user=reporter, callback_id="mod_report", view_id=view["id"],
                                           private_metadata=view["private_metadata"],
                                           values={"text": {"value": {"type": "plain_text_input", "value": reason}}})
    assert (await env.fake.deliver_interaction(env.url, sub)).status == 200
    await env.fake.wait_until(lambda: len(env.cards()) > before)


async def test_a_report_of_a_member_names_no_channel_and_offers_no_remove_from_channel(env: SlackEnv) -> None:
    """``/report @member`` reports a member, not a message: like Discord's ``/report``, its review item names no
    channel, so its card says none and offers no "Remove from channel" (Warn and Dismiss stay). Before, the channel
    the reporter happened to type the command in (#random, or their DM with the bot) was recorded as the report's:
    the card said the member's behaviour was there, and "Remove from channel" removed the reported member from that
    unrelated channel (or failed in a DM after the moderator had typed a reason). The reporter is still answered
    where they typed the command."""
    from tests.slack.test_app_wire import buttons, card_text

    await env.start()
    troll = env.fake.add_user("troll")
    env.fake.random.members.add(troll.id)
    reporter = env.fake.member.id
    await report_member(env, reporter, troll.id, env.fake.random.id, "insults me in DMs")
    dm = env.fake._open_dm(reporter)  # noqa: SLF001 - the reporter's DM with the bot, where a command may be typed
    await report_member(env, env.fake.owner.id, troll.id, env.fake.random.id, "spams my DMs too")
    await report_member(env, reporter, env.fake.owner.id, dm.id, "threatened me")
    assert env.rows("SELECT member_id, channel_id, message_id FROM review_items ORDER BY id") == [
        (troll.id, None, None), (troll.id, None, None), (env.fake.owner.id, None, None)]
    for card in env.cards():
        assert not any(b.endswith(":kick") for b in buttons(card)), buttons(card)
        assert any(b.endswith(":warn") for b in buttons(card)) and "*Channel:* -" in card_text(card)
    assert troll.id in env.fake.random.members
    thanks = await env.fake.wait_until(lambda: (found := [e for e in env.fake.ephemerals
                                                          if "Thanks" in (e.get("text") or "")]) and len(found) == 3
                                       and found)
    assert [(e["user"], e["channel"]) for e in thanks] == [(reporter, env.fake.random.id),
                                                          (env.fake.owner.id, env.fake.random.id),
                                                          (reporter, dm.id)]


async def test_exempt_roles_naming_a_user_group_or_a_member_exempts_them(env: SlackEnv) -> None:
    """``/modpolicy set exempt.roles`` takes user groups and members (as ``server.moderator_roles`` does, and the
    policy stores their ids ``S…`` / ``U…``); a message by a member of that group, or by the member named, is exempt
    (``role``), and anyone else's is judged. Before, the answer said "Policy updated" but a Slack author carried only
    the workspace roles (admin, owner), so no user group or member listed there was ever exempt: the moderators'
    own quotes in the review channel were flagged, carded and struck."""
    await env.start()
    admin = env.fake.admin.id
    helper = env.fake.add_user("helper")
    env.fake.general.members.add(helper.id)
    text = await command(env, "/modpolicy", f"set exempt.roles @moderators, &lt;@{helper.id}&gt;", admin)
    assert text == f'Policy updated: `exempt.roles` = `["{env.group}", "{helper.id}"]`.', text
    await env.say(env.mods.id, "borderline take")
    await env.say(helper.id, "borderline take")
    await env.say(env.fake.member.id, "borderline take")
    assert env.rows("SELECT member_id, exempt, flagged FROM verdicts ORDER BY id") == [
        (env.mods.id, "role", 0), (helper.id, "role", 0), (env.fake.member.id, None, 1)]
    assert env.rows("SELECT member_id FROM review_items") == [(env.fake.member.id,)]


async def test_a_report_of_a_member_offers_no_delete_and_a_delete_without_a_message_is_refused(env: SlackEnv) -> None:
    """With an admin token the bot can delete messages, but a report of a member (``/report @member``) names no
    message: its card offers no Delete, and a Delete click (an old card, a crafted action) is refused with nothing
    changed. Before, the card offered Delete and pressing it closed the item as "message deleted" (the note said
    "no message to delete"): the report left the queue with nothing done."""
    from tests.slack.test_app_wire import buttons, click

    await env.start(admin=True)
    troll = env.fake.add_user("troll")
    await report_member(env, env.fake.member.id, troll.id, env.fake.random.id, "insults me in DMs")
    (card,) = env.cards()
    assert not any(b.endswith(":delete") for b in buttons(card)), buttons(card)
    assert (await click(env, env.mods.id, card, "mod:review:1:delete")).status == 200
    (hook,) = await env.fake.wait_for_hook()
    assert "names no message" in hook.body["text"] and "Nothing was changed" in hook.body["text"], hook.body
    assert env.rows("SELECT decision FROM review_items") == [("open",)]


async def test_a_reported_direct_message_offers_no_channel_action(env: SlackEnv) -> None:
    """A member harassed in a direct message reports it with the "Report message" shortcut: the card quotes the
    message and offers Warn, but neither Remove from channel (Slack cannot remove anyone from a DM:
    ``method_not_supported_for_channel_type``) nor Delete (an admin's token cannot reach a DM it is not in); the
    reporter is answered. Before, the DM was recorded as the report's channel: the card offered both, and Remove
    from channel asked the moderator for a reason, then failed and recorded a failed removal."""
    from tests.slack.test_app_wire import buttons, card_text

    await env.start(admin=True)
    victim, troll = env.fake.member.id, env.fake.add_user("troll").id
    dm = env.fake.add_dm(victim, troll)
    msg = env.fake.add_message(dm.id, troll, "you are worthless, leave the workspace")
    short = env.fake.message_action_payload(user=victim, channel=dm.id, message_ts=msg["ts"],
                                            callback_id="report_message")
    assert (await env.fake.deliver_interaction(env.url, short)).status == 200
    view = (await env.fake.wait_for("views.open"))[-1].response["view"]
    sub = env.fake.view_submission_payload(user=victim, callback_id="mod_report", view_id=view["id"],
                                           private_metadata=view["private_metadata"],
                                           values={"text": {"value": {"type": "plain_text_input", "value": "DMs"}}})
    assert (await env.fake.deliver_interaction(env.url, sub)).status == 200
    await env.fake.wait_until(lambda: env.cards())
    (card,) = env.cards()
    assert "you are worthless" in card_text(card) and "*Channel:* -" in card_text(card)
    assert [b.rsplit(":", 1)[1] for b in buttons(card)] == ["dismiss", "warn", "investigating"]
    assert env.rows("SELECT member_id, channel_id FROM review_items") == [(troll, None)]
    await env.fake.wait_until(lambda: any("Thanks" in (m.get("text") or "") for c in env.fake.channels.values()
                                          if c.is_im and victim in c.members and env.fake.bot_user_id in c.members
                                          for m in c.messages.values()))


@pytest.mark.parametrize("stamp", ["abc", "1e9", "", "٣٣٣"])
async def test_a_request_with_a_malformed_timestamp_header_gets_401_not_500(env: SlackEnv, stamp: str,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    """Anyone can reach the HTTP Events API: a request whose ``X-Slack-Request-Timestamp`` is not a number is
    refused like any unsigned request (401 ``invalid request``), logs no error and judges nothing. Before, the
    signature check raised on it (``int("abc")``): the app answered 500 and logged "slack listener failed" with a
    traceback for every such request."""
    import json
    import logging

    await env.start()
    event = env.fake.event_callback(env.fake.message_event(env.fake.general.id, env.fake.member.id, "identityhate"))
    body = json.dumps(event).encode()
    assert env.fake._session is not None  # noqa: SLF001 - a raw request, as a scanner would send it
    caplog.set_level(logging.WARNING)
    headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
               "X-Slack-Signature": env.fake.sign(body, 0)}
    async with env.fake._session.post(env.url, data=body, headers=headers) as resp:  # noqa: SLF001
        assert (resp.status, await resp.json()) == (401, {"error": "invalid request"})
    await env.settle()
    assert env.rows("SELECT COUNT(*) FROM verdicts") == [(0,)]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_connection_reset_on_a_web_api_call_is_retried(env: SlackEnv) -> None:
    """A connection to Slack's Web API closed before the answer (a reset on the way, a restarted edge) is tried
    again, as slack_sdk's default retry handlers do: the review card lands and the warning DM reaches the member.
    Before, the app's client replaced the SDK's defaults with the rate-limit handler alone, so one reset lost the
    card (and raised an aiohttp error where a Slack error was expected)."""
    from tests.slack.test_app_wire import click

    await env.start()
    env.fake.reset_connection("chat.postMessage")
    await env.say(env.fake.member.id, "borderline take")
    (card,) = env.cards()
    posts = env.fake.calls_of("chat.postMessage")
    assert [p.status for p in posts[:2]] == [0, 200]
    env.fake.reset_connection("conversations.open")
    assert (await click(env, env.mods.id, card, "mod:review:1:warn")).status == 200
    await env.fake.wait_until(lambda: env.rows("SELECT status FROM cases WHERE action = 'warn'") == [("applied",)])
    dm = env.fake.channels["D" + env.fake.member.id[1:]]
    assert any("You were warned" in (m.get("text") or "") for m in dm.messages.values())


async def test_a_decided_card_keeps_its_evidence(env: SlackEnv) -> None:
    """A card rebuilt after it was posted (a decision stamped on it, its message deleted by its author) keeps the
    evidence the moderators decided on: the automod rules that fired stay listed, and a score whose tier was not
    recorded is shown without a tier. Before, the rebuilt card said "Rules fired: none" and every score's tier
    "(off)", as if the policy had switched the label off."""
    import re

    from tests.slack.test_app_wire import card_text, click

    policy = env.policy_dir / "servers" / f"slack-{env.fake.team_id}.toml"
    policy.write_text(policy.read_text() + '[[rules.regex]]\nname = "invite-spam"\npattern = "discord\\\\.gg/"\n')
    await env.start()
    await env.say(env.fake.member.id, "borderline take, join discord.gg/abc")
    (card,) = env.cards()
    assert "invite-spam" in card_text(card) and "review from" in card_text(card)
    assert (await click(env, env.mods.id, card, "mod:review:1:warn")).status == 200
    await env.fake.wait_until(lambda: "Decision" in card_text(env.cards()[0]))
    decided = card_text(env.cards()[0])
    assert "invite-spam" in decided and "Rules fired:* none" not in decided, decided
    assert "(off)" not in decided and re.search(r"`insult` \*0\.90\*", decided), decided


async def test_delete_on_a_card_whose_message_is_already_gone_counts_as_done(env: SlackEnv) -> None:
    """The author deletes their flagged message (the card notes it) and a moderator then presses Delete on its card:
    Slack answers ``message_not_found``, which means the message is gone, as the Delete asked. The decision stands
    without a failure (the card says the message was already gone) and the strike counts. Before, the card said
    "delete FAILED: message_not_found" and the case was marked with that failure."""
    from tests.slack.test_app_wire import card_text, click

    await env.start(admin=True)
    ev = await env.say(env.fake.member.id, "borderline take")
    (card,) = env.cards()
    resp = await env.fake.deliver_event(env.url, env.fake.message_deleted_event(env.fake.general.id, ev["ts"]))
    assert resp.status == 200
    await env.fake.wait_until(lambda: "deleted on the platform" in card_text(env.cards()[0]))
    assert (await click(env, env.mods.id, card, "mod:review:1:delete")).status == 200
    await env.fake.wait_until(lambda: "Decision" in card_text(env.cards()[0]))
    await env.settle()
    decided = card_text(env.cards()[0])
    assert "FAILED" not in decided and "already gone" in decided, decided
    assert [f for (f,) in env.rows("SELECT failure FROM cases") if f and "message_not_found" in f] == []
    assert env.rows("SELECT decision FROM review_items") == [("deleted",)]
    assert env.rows("SELECT COUNT(*) FROM strikes WHERE member_id = ?", (env.fake.member.id,)) == [(1,)]


async def test_a_command_that_fails_unexpectedly_is_answered(env: SlackEnv) -> None:
    """When a listener fails on something that is no refusal (Slack unreachable twice in a row, a mod-log error),
    the person is told, as Discord's interactions say: "Something went wrong; it was logged." (ephemeral, through
    the command's response URL; a submitted modal's in a DM). Before, the error was only logged: the member who
    typed ``/appeal 3`` or submitted a report saw nothing at all and could only guess whether it went through."""
    await env.start()
    env.fake.reset_connection("views.open", times=2)  # the SDK tries a reset call once more, then gives up
    fields = env.fake.command_payload("/appeal", "3", user=env.fake.member.id, channel=env.fake.general.id)
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    (hook,) = await env.fake.wait_for_hook()
    assert hook.body["text"].startswith("Something went wrong; it was logged.")
    assert hook.body["response_type"] == "ephemeral"
