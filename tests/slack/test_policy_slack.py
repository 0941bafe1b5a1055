"""Wire tests: ``/modpolicy show|set|reset`` (the whole policy as a file, never cut) and the ``/modsetup`` modal
(channel and moderator pickers, checked as the bot, written as overrides), through the real slack-bolt app and
slack_sdk client against the fake Slack."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.core.policy import load_policy
from tests.slack.test_app_wire import SlackEnv

pytestmark = pytest.mark.slack


async def command(env: SlackEnv, name: str, text: str, user: str) -> str:
    """Deliver a slash command over HTTP; the ephemeral answer's text ("" when none came, e.g. a modal opened)."""
    fields = env.fake.command_payload(name, text, user=user, channel=env.fake.general.id)
    count = len(env.fake.hook_posts) + 1
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    hook = (await env.fake.wait_for_hook(count=count))[-1]
    assert hook.body["response_type"] == "ephemeral"
    return hook.body["text"]


def dm_of(env: SlackEnv, user: str) -> Any:
    return env.fake.channels.get("D" + user[1:])


async def test_modpolicy_show_sends_the_whole_policy_as_a_file_in_the_dm(env):
    """/modpolicy show uploads the whole effective policy (over 3,000 characters) as policy-<team>.json to the
    moderator's DM (files.getUploadURLExternal + completeUploadExternal); the file parses and equals the effective
    policy, overrides included; one small key is shown inline."""
    await env.start()
    mod = env.mods.id
    assert (await command(env, "/modpolicy", "set thresholds.insult.review 0.91", env.fake.admin.id)).startswith(
        "Policy updated")
    text = await command(env, "/modpolicy", "show", mod)
    team = env.fake.team_id
    assert text.startswith("The effective policy of this workspace (") and text.endswith(
        f"bytes) was sent to your direct messages as `policy-{team}.json`.")
    (upload,) = [f for f in env.fake.files.values() if f["name"] == f"policy-{team}.json"]
    dm = dm_of(env, mod)
    assert upload["channels"] == [dm.id]
    doc = json.loads(env.fake.file_text(upload["id"]))
    assert len(env.fake.file_text(upload["id"])) > 3000
    assert doc["thresholds"]["insult"]["review"] == 0.91
    assert doc["server"]["review_channel"] == env.review.id
    assert set(doc) == set(load_policy().model_dump(mode="json"))
    small = await command(env, "/modpolicy", "show server.retention_days", mod)
    assert small == "```\n30\n```"
    assert await command(env, "/modpolicy", "show nope.nothing", mod) == "Unknown policy key `nope.nothing`."
    assert "You need Manage Messages" in await command(env, "/modpolicy", "show", env.fake.member.id)


async def test_modpolicy_show_says_which_default_tier_is_switched_off(env):
    """After ``/modpolicy set thresholds.insult.act false`` the insult tiers show ``"act": null`` inline with a
    line saying the act tier is off, and the whole policy's answer carries the same line."""
    await env.start()
    mod = env.mods.id
    assert await command(env, "/modpolicy", "set thresholds.insult.act false", env.fake.admin.id) == \
        "Policy updated: `thresholds.insult.act` = `false`."
    small = await command(env, "/modpolicy", "show thresholds.insult", mod)
    note = "`thresholds.insult.act is off: insult never acts on its score alone (review from 0.85);"
    assert '"act": null' in small and small.split("```\n")[-1].startswith(note)
    whole = await command(env, "/modpolicy", "show", mod)
    assert whole.split("\n")[1].startswith(note) and "was sent to your direct messages" in whole.split("\n")[0]


async def test_modpolicy_show_without_the_upload_sends_pages_that_join_into_the_json(env):
    """When Slack refuses the upload, the policy reaches the DM in numbered pages whose code blocks join into
    the whole JSON (never cut)."""
    await env.start()
    env.fake.fail("files.getUploadURLExternal", "missing_scope", needed="files:write")
    text = await command(env, "/modpolicy", "show", env.mods.id)
    pages = [m["text"] for m in dm_of(env, env.mods.id).messages.values()]
    assert len(pages) >= 2 and text.endswith(f"was sent to your direct messages in {len(pages)} parts.")
    assert pages[0].startswith(f"`policy-{env.fake.team_id}.json`, part 1 of {len(pages)}")
    assert all(len(p) < 4000 for p in pages)
    joined = "".join(p.split("```", 1)[1].rsplit("```", 1)[0] for p in pages)
    assert json.loads(joined)["server"]["mod_log_channel"] == env.modlog.id


async def test_modpolicy_set_and_reset_share_the_workflow(env):
    """set and reset by an admin are stored, audited and posted to the mod log; a bad value changes nothing."""
    await env.start()
    admin = env.fake.admin.id
    assert await command(env, "/modpolicy", "set thresholds.insult.review 0.93", admin) == \
        "Policy updated: `thresholds.insult.review` = `0.93`."
    assert (await command(env, "/modpolicy", "set thresholds.insult.review 7", admin)).startswith(
        "Refused `thresholds.insult.review`")
    assert await command(env, "/modpolicy", "reset thresholds.insult.review", admin) == \
        "Policy updated: `thresholds.insult.review` reset."
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    assert len(env.rows("SELECT * FROM policy_changes")) == 2
    await env.fake.wait_until(lambda: sum("Policy change" in (m.get("text") or "")
                                          for m in env.modlog.messages.values()) == 2)
    assert (await command(env, "/modpolicy", "explode", admin)).startswith("Usage: /modpolicy")


async def open_setup(env: SlackEnv, user: str) -> dict[str, Any]:
    """/modsetup by ``user``: the modal it opened."""
    before = len(env.fake.calls_of("views.open"))
    fields = env.fake.command_payload("/modsetup", "", user=user, channel=env.fake.general.id)
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    calls = await env.fake.wait_for("views.open", count=before + 1)
    assert calls[-1].response["ok"], calls[-1].response
    return calls[-1].response["view"]


def picks(review: str | None = None, modlog: str | None = None, group: str | None = None,
          users: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """``view.state.values`` of the setup modal as Slack sends them."""
    return {"review": {"channel": {"type": "conversations_select", "selected_conversation": review}},
            "modlog": {"channel": {"type": "conversations_select", "selected_conversation": modlog}},
            "group": {"group": {"type": "static_select",
                                "selected_option": {"value": group, "text": {"type": "plain_text", "text": "g"}}
                                if group else None}},
            "users": {"users": {"type": "multi_users_select", "selected_users": users or []}}}


async def submit(env: SlackEnv, user: str, view: dict[str, Any], values: dict[str, Any]) -> Any:
    sub = env.fake.view_submission_payload(user=user, callback_id="mod_setup", values=values,
                                           private_metadata=view["private_metadata"], view_id=view["id"])
    resp = await env.fake.deliver_interaction(env.url, sub)
    assert resp.status == 200
    return resp


async def test_modsetup_modal_writes_the_channels_and_moderators(env):
    """/modsetup opens a modal with conversation pickers (current channels preselected), the workspace's user
    groups and a users picker; a valid submission closes it, writes the overrides (audited), posts the setup to
    the new mod-log channel and tells the admin what was set; the bot's channel problems then start afresh."""
    env.fake.add_usergroup("helpers", [env.fake.member.id])
    await env.start()
    admin = env.fake.admin.id
    view = await open_setup(env, admin)
    blocks = {b["block_id"]: b["element"] for b in view["blocks"]}
    assert blocks["review"]["type"] == "conversations_select"
    assert blocks["review"]["initial_conversation"] == env.review.id
    assert blocks["modlog"]["initial_conversation"] == env.modlog.id
    assert [o["text"]["text"] for o in blocks["group"]["options"]] == ["@moderators", "@helpers"]
    assert blocks["users"]["type"] == "multi_users_select"
    cards = env.fake.add_channel("cards", private=True, members=[admin, env.fake.bot_user_id])
    log = env.fake.add_channel("modlog2", members=[admin, env.fake.bot_user_id])
    helpers = blocks["group"]["options"][1]["value"]
    resp = await submit(env, admin, view, picks(cards.id, log.id, helpers, [env.mod2.id]))
    assert resp.body == ""  # a plain ack: the modal closes
    await env.fake.wait_until(lambda: any("Set up:" in (e.get("text") or "") for e in env.fake.ephemerals))
    (told,) = [e for e in env.fake.ephemerals if "Set up:" in (e.get("text") or "")]
    assert told["user"] == admin and told["channel"] == env.fake.general.id
    assert told["text"] == (f"Set up: review channel: <#{cards.id}>; mod-log channel: <#{log.id}>; moderators: "
                            f"<!subteam^{helpers}>, <@{env.mod2.id}>.")
    policy = await env.bot.policies.get("slack", env.fake.team_id)
    assert (policy.server.review_channel, policy.server.mod_log_channel) == (cards.id, log.id)
    assert policy.server.moderator_roles == [env.group, helpers, env.mod2.id]
    assert [r[0] for r in env.rows("SELECT key FROM policy_changes ORDER BY id")] == [
        "server.review_channel", "server.mod_log_channel", "server.moderator_roles"]
    await env.fake.wait_until(lambda: any(m.get("text") == "Setup" for m in log.messages.values()))
    (entry,) = [json.dumps(m["blocks"]) for m in log.messages.values() if m.get("text") == "Setup"]
    assert f'server.review_channel = \\"{cards.id}\\"' in entry and f"<@{admin}>" in entry
    # a member of the new group is a moderator now
    assert (await command(env, "/modcase", "list", env.fake.member.id)) == "No cases in this server yet."


async def test_modsetup_refuses_channels_the_bot_cannot_post_in(env):
    """A private channel the bot was not invited to (invisible to it) and a public one it is not in keep the modal
    open with the reason under each field; nothing is written."""
    await env.start()
    admin = env.fake.admin.id
    view = await open_setup(env, admin)
    secret = env.fake.add_channel("secret", private=True, members=[admin], bot_member=False)
    public = env.fake.add_channel("lobby", members=[admin], bot_member=False)
    resp = await submit(env, admin, view, picks(secret.id, public.id))
    answer = resp.json()
    assert answer["response_action"] == "errors"
    assert answer["errors"] == {
        "review": "the bot cannot see this channel: invite @modbot to it (`/invite @modbot`)",
        "modlog": "the bot is not in this channel: invite @modbot to it (`/invite @modbot`)"}
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    assert not any("Set up" in (e.get("text") or "") for e in env.fake.ephemerals)


async def test_modsetup_is_for_admins_and_an_empty_submission_changes_nothing(env):
    """/modsetup by a moderator (not an admin) is refused without a modal, and so is a moderator's submission of
    the form; an admin's empty submission says what to pick; an expired trigger says to try again."""
    await env.start()
    assert await command(env, "/modsetup", "", env.mods.id) == "You need Manage Server for this. Nothing was changed."
    assert env.fake.calls_of("views.open") == []
    admin = env.fake.admin.id
    view = await open_setup(env, admin)
    await submit(env, admin, view, picks())
    await env.fake.wait_until(lambda: any("Pick a review channel" in (e.get("text") or "")
                                          for e in env.fake.ephemerals))
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    forged = await submit(env, env.mods.id, view, picks(env.review.id))  # a moderator submitting the admin's form
    assert forged.body == ""
    await env.fake.wait_until(lambda: any(e["user"] == env.mods.id and "You need Manage Server" in (e.get("text") or "")
                                          for e in env.fake.ephemerals))
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
    env.fake.fail("views.open", "expired_trigger_id")
    assert "try again" in await command(env, "/modsetup", "", admin)


async def test_modpolicy_set_moderator_roles_reads_user_group_names_handles_mentions_and_ids(env):
    """``/modpolicy set server.moderator_roles`` takes what ``/modsetup`` offers, typed: a user group by ``@handle``,
    handle or name (any case; ``usergroups.list``, as the setup reads it), by mention or id, and members by
    mention or id; the policy stores the ids, once each, in order, and a member of the named group may moderate."""
    helpers = env.fake.add_usergroup("helpers", [env.fake.member.id])
    await env.start()
    admin, mod2 = env.fake.admin.id, env.mod2.id
    # /modpolicy has should_escape false: Slack sends what was typed, its & < > as entities (a pasted <@U…> too)
    text = await command(env, "/modpolicy", f"set server.moderator_roles @helpers, &lt;@{mod2}&gt;, {env.group}",
                         admin)
    assert text == f'Policy updated: `server.moderator_roles` = `["{helpers}", "{mod2}", "{env.group}"]`.', text
    assert env.bot is not None
    assert (await env.bot.policies.get("slack", env.fake.team_id)).server.moderator_roles == [helpers, mod2, env.group]
    assert (await command(env, "/modcase", "list", env.fake.member.id)) == "No cases in this server yet."
    text = await command(env, "/modpolicy", 'set server.moderator_roles ["Moderators", "helpers", '
                         f'"&lt;!subteam^{helpers}|@helpers&gt;"]', admin)
    assert text == f'Policy updated: `server.moderator_roles` = `["{env.group}", "{helpers}"]`.', text


async def test_modpolicy_set_moderator_roles_refuses_what_names_no_group_or_member(env):
    """A name no user group has (``@nobody``, or markup such as ``<!channel>``: shown escaped), a user id Slack does
    not know, and a workspace whose user groups Slack will not list: each is refused with the reason and nothing
    is stored (before, the words were stored as given and named nobody)."""
    await env.start()
    admin = env.fake.admin.id
    text = await command(env, "/modpolicy", "set server.moderator_roles @nobody", admin)
    assert text.startswith("There is no user group or member `@nobody` in this workspace") and text.endswith(
        "Nothing was changed."), text
    text = await command(env, "/modpolicy", "set server.moderator_roles &lt;!channel&gt;", admin)
    assert text.startswith("There is no user group or member `&lt;!channel&gt;` in this workspace"), text
    text = await command(env, "/modpolicy", "set server.moderator_roles U0NOSUCH", admin)
    assert text.startswith("There is no user group or member `U0NOSUCH` in this workspace"), text
    env.fake.fail("usergroups.list", "missing_scope", needed="usergroups:read")
    text = await command(env, "/modpolicy", "set server.moderator_roles @moderators", admin)
    assert text.startswith("Slack would not list this workspace's user groups") and "missing_scope" in text, text
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]
