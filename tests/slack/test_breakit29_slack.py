"""Break-it: the Slack adapter through the real slack-bolt app and slack_sdk client against the fake Slack."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.slack.test_policy_slack import command, open_setup, picks

pytestmark = pytest.mark.slack


async def test_a_member_removed_from_the_moderators_user_group_is_refused_at_once(env):
    """Moderators are the policy's user group. A moderator taken out of the group (Slack answers
    usergroups.users.list without them) must be refused on their next command: rights are checked on every
    interaction with Slack's own answer, as owner/admin flags are (read afresh). Today the group's member list
    is reused for 5 minutes, so the removed moderator still reads every case and member record."""
    await env.start()
    assert await command(env, "/modcase", "list", env.mods.id) == "No cases in this server yet."
    env.fake.usergroups[env.group].remove(env.mods.id)  # an admin removes them from @moderators
    text = await command(env, "/modcase", "list", env.mods.id)
    assert "You need Manage Messages" in text, text


async def test_the_setup_modal_submission_is_acknowledged_within_3_seconds(env):
    """Slack needs the view_submission acknowledged within 3 s. The setup submission checks the picked channel
    with conversations.info BEFORE it calls ack(); one rate-limited answer (429, Retry-After: 3) is waited out by
    the SDK's retry handler, so bolt gives up on the ack after 3 s and answers 404 "unhandled request" (Slack shows
    the admin an error and keeps the modal open), while the listener goes on and writes the setup anyway."""
    await env.start()
    admin = env.fake.admin.id
    view = await open_setup(env, admin)
    cards = env.fake.add_channel("cards", private=True, members=[admin, env.fake.bot_user_id])
    env.fake.rate_limit("conversations.info", retry_after=3)
    sub = env.fake.view_submission_payload(user=admin, callback_id="mod_setup", values=picks(cards.id, None),
                                           private_metadata=view["private_metadata"], view_id=view["id"])
    before = (env.policy_dir / "servers").glob("*.toml")
    written = {p.name: p.read_text() for p in before}
    resp = await env.fake.deliver_interaction(env.url, sub)
    # bolt answers 404 "unhandled request" itself when the listener has not acked within its 3 s, so a 200 here is
    # the ack in time; the modal stays open with the reason, and nothing is written behind it
    assert resp.status == 200, (resp.status, resp.body)
    answer = json.loads(resp.body)
    assert answer["response_action"] == "errors" and "press Save again" in answer["errors"]["review"]
    await asyncio.sleep(3.5)  # the SDK's wait for Retry-After would be over by now
    assert {p.name: p.read_text() for p in (env.policy_dir / "servers").glob("*.toml")} == written
    assert env.rows("SELECT key FROM policy_changes") == []
    policy = await env.bot.policies.get("slack", env.fake.team_id)
    assert policy.server.review_channel != cards.id
    assert not any("Set up:" in (e.get("text") or "") for e in env.fake.ephemerals)


async def test_a_flagged_display_name_is_not_flagged_again_after_a_restart(env):
    """A user_change to a flagged display name opens one review case and card. After the bot restarts, the same
    member edits their status (Slack sends user_change for every profile edit, same display name): the name was
    judged and is in the mod log already, so no second case or card may open (nothing is done twice)."""
    import asyncio

    from tests.slack.test_app_wire import card_text

    def name_cases():
        return env.rows("SELECT member_id FROM cases WHERE reason LIKE 'display name %'")

    await env.start()
    newbie = env.fake.add_user("newbie")
    change = env.fake.user_change_event(newbie, display_name="borderline")
    assert (await env.fake.deliver_event(env.url, change)).status == 200
    await env.fake.wait_until(lambda: any("borderline" in card_text(c) for c in env.cards()))
    assert len(name_cases()) == 1
    await env.stop()
    await env.start()
    status_edit = env.fake.user_change_event(newbie, display_name="borderline")
    assert (await env.fake.deliver_event(env.url, status_edit)).status == 200
    await asyncio.sleep(0.5)
    assert len(name_cases()) == 1, name_cases()
    assert len([c for c in env.cards() if "borderline" in card_text(c)]) == 1


async def test_a_rate_limited_group_read_falls_back_to_the_list_read_just_before(env):
    """Slack rate-limits usergroups.users.list (Tier 2). When the read on a check is refused with 429, the list read
    on the check before stands in, so a moderator is not locked out in a busy raid; with no list read before, nobody
    is a moderator through the group."""
    await env.start()
    assert await command(env, "/modcase", "list", env.mods.id) == "No cases in this server yet."
    env.fake.rate_limit("usergroups.users.list", retry_after=30)
    assert await command(env, "/modcase", "list", env.mods.id) == "No cases in this server yet."
    asked = len(env.fake.calls_of("usergroups.users.list"))
    # while the limit lasts the list read before stands in without asking (each ask would wait 1 s for nothing)
    assert await command(env, "/modcase", "list", env.mods.id) == "No cases in this server yet."
    assert len(env.fake.calls_of("usergroups.users.list")) == asked
    env.bot._groups.clear()  # as after a restart: no list read before
    env.fake.rate_limit("usergroups.users.list", retry_after=30)
    text = await command(env, "/modcase", "list", env.mods.id)
    assert "You need Manage Messages" in text, text
