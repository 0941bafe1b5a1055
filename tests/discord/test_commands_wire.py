"""Wire tests: member and moderator slash commands, modals and their bad-input paths."""

from __future__ import annotations

import json

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES
from tests.discord.replies import member_with_role, server_admin

MANAGE_CHANNELS = 1 << 4

pytestmark = pytest.mark.discord


def user_opt(env, name, user, guild=None):
    """An option of type 6 with its ``resolved`` entry (member included when they are in the guild)."""
    member = env.fake.member(guild or env.guild, user["id"])
    resolved = {"users": {user["id"]: user}}
    if member:
        resolved["members"] = {user["id"]: {k: v for k, v in member.items() if k != "user"}}
    return {"name": name, "type": 6, "value": user["id"]}, resolved


def ephemeral_text(cb):
    assert cb.body["type"] == 4 and cb.body["data"]["flags"] & 64
    return cb.body["data"]["content"]


async def test_report_modal_creates_review_card(env):
    """/report opens a modal; submitting it records a report review item and posts its card."""
    opt, resolved = user_opt(env, "member", env.bob)
    cb = await env.fake.slash(env.guild, env.alice, "report", [opt], resolved=resolved)
    assert cb.body["type"] == 9
    done = await env.fake.submit_modal(env.guild, env.alice, cb, ["keeps insulting me in DMs"])
    assert "was sent to the moderators" in ephemeral_text(done)
    card = await env.fake.wait_for("POST", rf"/channels/{env.review}/messages")
    assert "(report)" in card.body["embeds"][0]["title"]
    rows = env.rows("SELECT source, member_id, reason FROM review_items")
    assert [tuple(r) for r in rows] == [("report", env.bob["id"], "keeps insulting me in DMs")]


async def test_report_context_menu_on_message(env):
    """The "Report to moderators" message menu queues the message with its jump link."""
    msg, _ = await env.post(env.bob, "some rude but unscored text")
    cb = await env.fake.slash(env.guild, env.alice, "Report to moderators", [], cmd_type=3, target_id=msg["id"],
                              resolved={"messages": {msg["id"]: msg}})
    await env.fake.submit_modal(env.guild, env.alice, cb, ["rude"])
    card = await env.fake.wait_for("POST", rf"/channels/{env.review}/messages")
    fields = {f["name"]: f["value"] for f in card.body["embeds"][0]["fields"]}
    assert msg["id"] in fields["Channel"] and fields["Text"] == "||some rude but unscored text||"
    assert env.rows("SELECT message_id FROM review_items")[0][0] == msg["id"]


async def test_report_with_deleted_review_channel_is_kept_and_moderators_alerted(env):
    """With the review channel deleted, a /report is still recorded (nothing lost), the member is told the
    moderators could not be reached, and the mod log reports the broken review channel."""
    env.fake.deleted_channels.add(env.review)
    env.bot.get_guild(int(env.guild["id"]))._remove_channel(env.bot.get_channel(int(env.review)))
    opt, resolved = user_opt(env, "member", env.bob)
    cb = await env.fake.slash(env.guild, env.alice, "report", [opt], resolved=resolved)
    done = await env.fake.submit_modal(env.guild, env.alice, cb, ["spam"])
    assert "review channel cannot be reached" in ephemeral_text(done)
    assert [tuple(r) for r in env.rows("SELECT source, reason FROM review_items")] == [("report", "spam")]
    problem = await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages",
                                      lambda r: "Channel problem" in r.body["embeds"][0]["title"])
    assert "Unknown Channel" in problem.body["embeds"][0]["description"]


async def test_appeal_own_case_creates_appeal_card(env):
    """/appeal of one's own case opens a modal and posts an appeal card; Overturn by a moderator overturns."""
    _, outcome = await env.post(env.alice, "identityhate appeal me")
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [{"name": "case", "type": 4,
                                                               "value": outcome.case_number}])
    assert cb.body["type"] == 9
    done = await env.fake.submit_modal(env.guild, env.alice, cb, ["it was a quote, sorry"])
    assert "appeal of case" in ephemeral_text(done)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    card = env.card("Appeal #")
    appeal_id = env.rows("SELECT id FROM appeals")[0][0]
    click = await env.fake.click(env.guild, env.mod, card, f"mod:appealdecide:{appeal_id}:overturn")
    assert click.body["type"] == 7
    assert env.rows("SELECT status FROM appeals")[0][0] == "overturned"
    assert env.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,))[0][0] == "overturned"


@pytest.mark.parametrize("case,expect", [(0, "from 1 to"), (-5, "from 1 to")])
async def test_appeal_out_of_range_case_numbers(env, case, expect):
    """/appeal of an out-of-range case number answers an ephemeral error at once; nothing is stored."""
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [{"name": "case", "type": 4, "value": case}])
    assert expect in ephemeral_text(cb)
    assert env.rows("SELECT * FROM appeals") == []


async def appeal_via_modal(env, guild, user, case):
    """/appeal opens its modal at once (Discord: a modal must be the first answer); submit it, return the answer."""
    cb = await env.fake.slash(guild, user, "appeal", [{"name": "case", "type": 4, "value": case}])
    assert cb.body["type"] == 9
    return ephemeral_text(await env.fake.submit_modal(guild, user, cb, ["please reconsider"]))


async def test_appeal_unknown_case_refused_on_submit(env):
    """An appeal of a case that does not exist is refused when the modal is submitted; nothing is stored."""
    assert "no case #999" in await appeal_via_modal(env, env.guild, env.alice, 999)
    assert env.rows("SELECT * FROM appeals") == []


async def test_appeal_other_members_and_other_servers_cases_refused(env):
    """A member cannot appeal someone else's case, nor reach another server's case by number."""
    _, outcome = await env.post(env.alice, "identityhate not bob's")
    assert await appeal_via_modal(env, env.guild, env.bob, outcome.case_number) == \
        f"You have no case #{outcome.case_number} in that server: you can only appeal your own cases."
    stranger = env.fake.new_user(env.other, "stranger")
    assert "no case" in await appeal_via_modal(env, env.other, stranger, outcome.case_number)
    assert env.rows("SELECT * FROM appeals") == []


async def test_mystatus_shows_active_strikes(env):
    """/mystatus (ephemeral) lists active strikes with points and expiry."""
    await env.post(env.alice, "identityhate strike")
    cb = await env.fake.slash(env.guild, env.alice, "mystatus", [])
    assert cb.body["data"]["flags"] & 64
    field = cb.body["data"]["embeds"][0]["fields"][0]
    assert field["name"] == "Active strikes: 1" and "expires <t:" in field["value"]
    assert field["value"].startswith("1 point: ")


async def test_mydata_export_sends_json_file(env):
    """/mydata export sends the member's records as a JSON file."""
    await env.post(env.alice, "identityhate export")
    cb = await env.fake.slash(env.guild, env.alice, "mydata", [{"name": "export", "type": 1, "options": []}])
    assert cb.body["data"]["flags"] & 64
    (name, blob), = cb.files.items()
    record = json.loads(blob)
    assert name.endswith(".json") and record["member_id"] == env.alice["id"] and len(record["cases"]) == 1


async def test_policy_set_by_moderator_and_refusals(env):
    """/policy set by a moderator is stored and audited; a non-moderator and an invalid value are refused."""
    sub = [{"name": "set", "type": 1, "options": [{"name": "key", "type": 3, "value": "thresholds.insult.review"},
                                                   {"name": "value", "type": 3, "value": "0.95"}]}]
    cb = await env.fake.slash(env.guild, env.bob, "policy", sub)
    assert "You need Manage Server" in ephemeral_text(cb)
    cb = await env.fake.slash(env.guild, env.mod, "policy", sub)
    assert "You need Manage Server" in ephemeral_text(cb)  # a moderator role is not enough to change the policy
    assert env.rows("SELECT * FROM policy_overrides") == []
    admin = await server_admin(env)
    cb = await env.fake.slash(env.guild, admin, "policy", sub)
    assert "Policy updated" in ephemeral_text(cb)
    assert (await env.bot.policy(env.guild["id"])).thresholds["insult"].review == 0.95
    bad = [{"name": "set", "type": 1, "options": [{"name": "key", "type": 3, "value": "thresholds.insult.review"},
                                                   {"name": "value", "type": 3, "value": "7"}]}]
    cb = await env.fake.slash(env.guild, admin, "policy", bad)
    assert "Refused" in ephemeral_text(cb)
    assert (await env.bot.policy(env.guild["id"])).thresholds["insult"].review == 0.95


@pytest.mark.parametrize("minutes,expect", [(0, "between 1 and 40320"), (40321, "between 1 and 40320")])
async def test_mod_timeout_out_of_range(env, minutes, expect):
    """/mod timeout outside 1 minute..28 days is refused; nothing is sent to Discord or stored."""
    opt, resolved = user_opt(env, "member", env.alice)
    sub = [{"name": "timeout", "type": 1, "options": [opt, {"name": "minutes", "type": 4, "value": minutes},
                                                       {"name": "reason", "type": 3, "value": "x"}]}]
    cb = await env.fake.slash(env.guild, env.mod, "mod", sub, resolved=resolved)
    assert expect in ephemeral_text(cb)
    assert env.fake.find("PATCH", r"/guilds/.*/members/.*") == [] and env.rows("SELECT * FROM cases") == []


async def test_mod_timeout_member_who_left(env):
    """/mod timeout of a user who left the server answers an error; nothing changes."""
    gone = env.fake.new_user(env.guild, "gone")
    env.guild["members"].remove(env.fake.member(env.guild, gone["id"]))
    await env.fake.dispatch("GUILD_MEMBER_REMOVE", {"guild_id": env.guild["id"], "user": gone})
    await env.fake.wait_until(lambda: env.bot.get_guild(int(env.guild["id"])).get_member(int(gone["id"])) is None)
    sub = [{"name": "timeout", "type": 1, "options": [{"name": "member", "type": 6, "value": gone["id"]},
                                                       {"name": "minutes", "type": 4, "value": 10},
                                                       {"name": "reason", "type": 3, "value": "x"}]}]
    cb = await env.fake.slash(env.guild, env.mod, "mod", sub,
                              resolved={"users": {gone["id"]: gone}})
    assert "is not in this server" in ephemeral_text(cb)
    assert env.rows("SELECT * FROM cases") == []


async def test_case_show_other_servers_case_not_found(env):
    """/case show in another server cannot see this server's case."""
    _, outcome = await env.post(env.alice, "identityhate private case")
    other_mod = env.fake.new_user(env.other, "othermod", roles=[env.other["mod_role"]])
    sub = [{"name": "show", "type": 1, "options": [{"name": "number", "type": 4, "value": outcome.case_number}]}]
    cb = await env.fake.slash(env.other, other_mod, "case", sub)
    assert "no case" in ephemeral_text(cb)
    cb = await env.fake.slash(env.guild, env.mod, "case", sub)
    assert f"Case #{outcome.case_number}: delete" in cb.body["data"]["embeds"][0]["title"]


async def test_mod_warn_dms_reason_case_and_appeal_button(env):
    """/mod warn DMs the member the reason, the case number and an Appeal button, and adds a strike."""
    opt, resolved = user_opt(env, "member", env.alice)
    sub = [{"name": "warn", "type": 1, "options": [opt, {"name": "reason", "type": 3, "value": "be nice"}]}]
    cb = await env.fake.slash(env.guild, env.mod, "mod", sub, resolved=resolved)
    assert "Case #1: warn" in ephemeral_text(cb)
    dm = env.fake.find("POST", rf"/channels/{env.fake.dm_channels[env.alice['id']]}/messages")[0].body
    assert dm["embeds"][0]["description"] == "be nice" and dm["embeds"][0]["fields"][0]["value"] == "#1"
    assert dm["components"][0]["components"][0]["custom_id"] == f"mod:appeal:{env.guild['id']}:1"
    assert [tuple(r) for r in env.rows("SELECT points, case_number FROM strikes")] == [(1, 1)]


async def test_raidmode_command_sets_slowmode(env):
    """/raidmode on needs Manage Channels (slowmode is Discord's Manage Channels action): a moderator without it is
    refused; one with it sets slowmode on the channel."""
    opt = {"name": "state", "type": 3, "value": "on"}
    cb = await env.fake.slash(env.guild, env.mod, "raidmode", [opt])
    assert "You need Manage Channels" in ephemeral_text(cb)
    assert env.fake.find("PATCH", rf"/channels/{env.general}") == []
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MANAGE_CHANNELS, 4)
    cb = await env.fake.slash(env.guild, lead, "raidmode", [opt])
    assert "Raid mode on" in ephemeral_text(cb)
    assert [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")] == [30]


@pytest.mark.parametrize("who,synced", [("owner", 1), ("alice", 0)])
async def test_mention_sync_only_for_server_managers(env, who, synced):
    """``@ModBot sync`` syncs slash commands to this server for the server owner only, never globally."""
    user = env.fake.owner if who == "owner" else env.alice
    if who == "owner":
        env.fake.add_member(env.guild, user)
        await env.fake.dispatch("GUILD_MEMBER_ADD", {**env.fake.member(env.guild, user["id"]),
                                                     "guild_id": env.guild["id"]})
    await env.post(user, f"<@{env.fake.bot_user['id']}> sync")
    if not synced:
        await env.fake.wait_for("POST", rf"/channels/{env.general}/messages",
                                pred=lambda r: "Only members with Manage Server" in r.body["content"])
    if synced:
        put = await env.fake.wait_for("PUT", rf"/applications/{env.fake.app_id}/guilds/{env.guild['id']}/commands")
        assert {"report", "appeal", "mod", "policy", "Report to moderators"} <= {c["name"] for c in put.body}
    assert len(env.fake.find("PUT", r"/applications/.*/guilds/.*/commands")) == synced
    assert env.fake.find("PUT", rf"/applications/{env.fake.app_id}/commands") == []


async def test_mod_timeout_dm_says_its_duration_in_words(env):
    """The timeout notice said a week as "10080 minutes" (and a ladder step's 30 seconds as "0 minutes"); it says
    "7 days", as the moderators' cards and the mod log do."""
    opt, resolved = user_opt(env, "member", env.alice)
    sub = [{"name": "timeout", "type": 1, "options": [opt, {"name": "minutes", "type": 4, "value": 10080},
                                                       {"name": "reason", "type": 3, "value": "cool off"}]}]
    await env.fake.slash(env.guild, env.mod, "mod", sub, resolved=resolved)
    dm = env.fake.find("POST", rf"/channels/{env.fake.dm_channels[env.alice['id']]}/messages")[0].body
    assert {f["name"]: f["value"] for f in dm["embeds"][0]["fields"]}["Duration"] == "7 days"
