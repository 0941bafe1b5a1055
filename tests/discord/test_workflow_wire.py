"""Wire tests of the workflow's Discord behaviours: concurrent decisions, shutdown and restart, notices and appeals
from a DM, strikes after forget, raids, unreachable channels, Discord's size limits."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.policy import PolicyError
from tests.discord.fake_discord import MANAGE_GUILD, _counter, snowflake
from tests.discord.helpers import confirm, dm_posts, mod_on, text_opt
from tests.discord.replies import server_admin, settle

pytestmark = pytest.mark.discord


async def card_of(env, text="borderline needs a human", user=None):
    """Post a message the policy sends to review; return (message, outcome, card message)."""
    msg, outcome = await env.post(user or env.alice, text)
    assert outcome.review_id is not None
    prefix = f"Review #{outcome.review_id} "
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(prefix)
                                          for m in env.fake.messages.values()))
    return msg, outcome, env.card(prefix)


async def test_two_moderators_pressing_warn_and_ban_at_once_only_one_acts(env):
    """Warn and Ban clicked on one card at the same time: one decision is carried out, the other moderator is told
    who decided, and Discord sees one sanction."""
    _, outcome, card = await card_of(env)
    mod2 = env.fake.new_user(env.guild, "mod2", roles=[env.mod_role])
    modal = await env.fake.click(env.guild, mod2, card, f"mod:review:{outcome.review_id}:ban")  # asks first
    r1, r2 = await asyncio.gather(
        env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:warn"),
        env.fake.submit_modal(env.guild, mod2, modal, ["slurs"], message=card))
    answers = [r for r in (r1, r2) if r.body["type"] == 4]
    assert len(answers) == 1 and "already decided" in answers[0].body["data"]["content"]
    bans = env.fake.find("PUT", rf"/guilds/{env.guild['id']}/bans/{env.alice['id']}")
    warns = dm_posts(env, env.alice)
    assert len(bans) + len([w for w in warns if "Warning" in w.body["embeds"][0]["title"]]) == 1
    assert len(env.rows("SELECT 1 FROM cases WHERE moderator_id IS NOT NULL")) == 1


async def test_member_with_manage_messages_only_cannot_ban_a_moderator(env):
    """Manage Messages alone does not allow a ban, and nobody bans a member ranked at or above them."""
    from tests.discord.fake_discord import MANAGE_MESSAGES
    from tests.discord.replies import member_with_role

    helper = await member_with_role(env, "helper", MANAGE_MESSAGES, 2)
    cb = await mod_on(env, "ban", env.mod, text_opt("reason", "coup"), user=helper)
    assert "You need Ban Members" in cb.body["data"]["content"]
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == [] and env.rows("SELECT * FROM cases") == []


async def test_everyone_role_as_moderator_role_stops_the_bot_at_startup(env):
    """A server file whose moderator_roles holds the server id (@everyone) stops the bot with a clear error."""
    await env.stop()
    env.write_policy(env.guild, env.review, env.modlog, "")
    path = env.policy_dir / "servers" / f"discord-{env.guild['id']}.toml"
    path.write_text(path.read_text().replace(f'["{env.guild["mod_role"]}"]', f'["{env.guild["id"]}"]'))
    with pytest.raises(PolicyError, match="server.moderator_roles.*@everyone"):
        await env.start()


async def test_shutdown_carries_out_verdicts_before_closing(env):
    """A message judged while the bot stops is still carried out: the delete goes out and the case is applied."""
    msg = await env.fake.post(env.guild, env.general, env.alice, "identityhate right before shutdown")
    await env.fake.wait_until(lambda: env.bot.service.stats["messages"] >= 1 or env.bot.workflow._inflight)
    await env.stop()
    assert len(env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")) == 1
    assert [tuple(r) for r in env.rows("SELECT action, status FROM cases")] == [("delete", "applied")]


async def test_pending_case_left_by_a_stop_is_carried_out_at_startup(env):
    """A case left pending (the process died between recording and acting) is carried out at the next start and
    reported in the mod log."""
    await env.stop()
    con = sqlite3.connect(env.db)
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    with con:
        con.execute("INSERT INTO case_counters VALUES ('discord', ?, 1)", (env.guild["id"],))
        con.execute("INSERT INTO cases (platform, server_id, number, member_id, action, reason, status, created_at, "
                    "updated_at) VALUES ('discord', ?, 1, ?, 'kick', 'flood', 'pending', ?, ?)",
                    (env.guild["id"], env.alice["id"], now, now))
    con.close()
    await env.start()
    await env.fake.wait_for("DELETE", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}")
    await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages",
                            lambda r: r.body["embeds"][0]["title"] == "Recovered after a restart")
    assert env.rows("SELECT status FROM cases")[0][0] == "applied"


async def test_warning_counts_when_dms_are_closed(env):
    """A warning to a member whose DMs are closed (50007) is applied, earns its strike and notes the DM failure."""
    dm = env.fake.dm_channels.setdefault(env.alice["id"], snowflake())
    env.fake.fail("POST", rf"/channels/{dm}/messages", status=403, code=50007,
                  message="Cannot send messages to this user")
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", "be nice"))
    assert "DM" not in cb.body["data"]["content"] or "not delivered" in cb.body["data"]["content"]
    row = env.rows("SELECT status, failure FROM cases")[0]
    assert row["status"] == "applied" and "50007" in row["failure"]
    assert env.rows("SELECT points FROM strikes")[0][0] == 1


async def test_warn_dm_off_sends_no_dm(env):
    """With server.warn_dm = false a warning sends no DM and still counts."""
    env.write_policy(env.guild, env.review, env.modlog, "")
    path = env.policy_dir / "servers" / f"discord-{env.guild['id']}.toml"
    path.write_text(path.read_text().replace("[server]\n", "[server]\nwarn_dm = false\n"))
    env.bot.policies.invalidate()
    await mod_on(env, "warn", env.alice, text_opt("reason", "be nice"))
    assert dm_posts(env, env.alice) == []
    assert env.rows("SELECT points FROM strikes")[0][0] == 1


async def test_dismissing_an_automatic_timeout_lifts_it(env):
    """The card of an automatic timeout, dismissed: the timeout is lifted (communication_disabled_until null)."""
    env.write_policy(env.guild, env.review, env.modlog, "[thresholds]\nthreat = { review = 0.8, act = 0.9 }\n")
    env.bot.policies.invalidate()
    _, outcome = await env.post(env.alice, "threatword you")
    patches = lambda: env.fake.find("PATCH", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}")  # noqa: E731
    await env.fake.wait_until(lambda: len(patches()) == 1)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(
        f"Review #{outcome.review_id} ") for m in env.fake.messages.values()))
    card = env.card(f"Review #{outcome.review_id} ")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:dismiss")
    assert cb.body["type"] == 7
    assert [p.body["communication_disabled_until"] is None for p in patches()] == [False, True]
    assert env.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,))[0][0] == "overturned"


async def test_ban_on_the_card_of_an_automatic_delete_counts_a_bans_points(env):
    """Automod deleted the message (1 point); Ban on its card raises that message's strike to a ban's 5 points."""
    _, outcome = await env.post(env.alice, "identityhate raised")
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(
        f"Review #{outcome.review_id} ") for m in env.fake.messages.values()))
    card = env.card(f"Review #{outcome.review_id} ")
    await confirm(env, card, f"mod:review:{outcome.review_id}:ban")
    assert [tuple(r) for r in env.rows("SELECT points, message_id FROM strikes")] == [
        (5, outcome.verdict.message.id)]


async def test_reflagged_edit_updates_its_card(env):
    """An edit flagged again updates the existing card (PATCH), never posts a second one."""
    msg, first, card = await card_of(env)
    msg2, second = await env.post(env.alice, "borderline still", edit_of=msg)
    assert second.review_id == first.review_id
    await env.fake.wait_for("PATCH", rf"/channels/{env.review}/messages/{card['id']}")
    assert len(env.review_posts()) == 1
    assert env.rows("SELECT COUNT(*) FROM review_items")[0][0] == 1


async def test_cards_of_huge_messages_fit_discords_limits(env):
    """A 5,000-character flagged message gives a card within Discord's embed limits."""
    text = "identityhate " + "x" * 4990
    _, outcome = await env.post(env.alice, text)
    post = await env.fake.wait_for("POST", rf"/channels/{env.review}/messages")
    embed = post.body["embeds"][0]
    total = len(embed.get("title", "")) + len(embed.get("description", "")) + sum(
        len(f["name"]) + len(f["value"]) for f in embed["fields"]) + len(embed.get("footer", {}).get("text", ""))
    assert total <= 6000 and len(embed["fields"]) <= 25
    assert all(len(f["value"]) <= 1024 and len(f["name"]) <= 256 for f in embed["fields"])


async def test_ban_sends_a_notice_with_appeal_button_first_and_the_appeal_works_from_the_dm(env):
    """A ban DMs the member (case number, Appeal button) BEFORE the ban; Appeal clicked in the DM opens the modal,
    and the appeal it files reaches the review channel."""
    await mod_on(env, "ban", env.alice, text_opt("reason", "spam links"))
    order = [(r.method, r.path) for r in env.fake.requests
             if r.path.startswith(f"/guilds/{env.guild['id']}/bans") or r.path.endswith("/messages")
             and r.path.startswith("/channels/") and r.path.split("/")[2] in env.fake.dm_channels.values()]
    assert order[0][0] == "POST" and order[1][0] == "PUT"
    notice = dm_posts(env, env.alice)[0].body
    assert "Case" in str(notice["embeds"][0]["fields"]) and "#1" in str(notice["embeds"][0]["fields"])
    custom = notice["components"][0]["components"][0]["custom_id"]
    assert custom == f"mod:appeal:{env.guild['id']}:1"
    dm = env.fake.dm_channels[env.alice["id"]]
    notice_msg = next(m for m in env.fake.messages.values() if m["channel_id"] == dm)
    cb = await dm_interaction(env, env.alice, {"custom_id": custom, "component_type": 2}, 3, message=notice_msg)
    assert cb.body["type"] == 9
    modal = cb.body["data"]
    field = modal["components"][0]["components"][0]["custom_id"]
    done = await dm_interaction(env, env.alice, {"custom_id": modal["custom_id"], "components": [
        {"type": 1, "components": [{"type": 4, "custom_id": field, "value": "it was my little brother"}]}]}, 5)
    assert "appeal of case #1 was filed" in done.body["data"]["content"]
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #1")
                                          for m in env.fake.messages.values()))


async def dm_interaction(env, user, data, itype, message=None):
    """Dispatch an interaction from a DM (no guild) and return its settled answer."""
    dm = env.fake.dm_channels.setdefault(user["id"], snowflake())
    payload = {"id": snowflake(), "application_id": env.fake.app_id, "token": f"tok{next(_counter)}", "version": 1,
               "type": itype, "data": data, "channel_id": dm, "channel": {"id": dm, "type": 1}, "user": user,
               "app_permissions": "0", "locale": "en-US", "entitlements": [], "context": 1,
               "authorizing_integration_owners": {"1": user["id"]}, "attachment_size_limit": 8 * 1024 * 1024}
    if message is not None:
        payload["message"] = message
    cb = await env.fake._interact(payload, 5)
    return await settle(env.fake, cb)


async def test_temporary_ban_is_lifted_after_a_restart(env):
    """/mod ban days:1 is recorded with its end; after a restart with the end passed, the bot unbans."""
    await mod_on(env, "ban", env.alice, text_opt("reason", "cool off"), text_opt("days", 1, 4))
    assert env.rows("SELECT expires_at IS NOT NULL FROM cases")[0][0] == 1
    await env.stop()
    con = sqlite3.connect(env.db)
    with con:
        con.execute("UPDATE cases SET expires_at = ?",
                    ((datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="microseconds"),))
    con.close()
    await env.start()
    await env.fake.wait_for("DELETE", rf"/guilds/{env.guild['id']}/bans/{env.alice['id']}")
    await env.fake.wait_until(lambda: env.rows("SELECT lifted_at FROM cases")[0][0] is not None)


async def test_forget_keeps_strikes_so_a_reoffence_escalates(env):
    """/mydata forget erases text but the member's strikes still count: the next warning crosses the ladder."""
    for reason in ("one", "two"):
        await mod_on(env, "warn", env.alice, text_opt("reason", reason))
    cb = await env.fake.slash(env.guild, env.alice, "mydata", [{"name": "forget", "type": 1, "options": [
        {"name": "confirm", "type": 3, "value": "FORGET"}]}])
    assert "active strikes and case history still count" in cb.body["data"]["content"]
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", "three"))
    assert "escalation: case #4 timeout" in cb.body["data"]["content"]


async def test_unreachable_mod_log_is_reported_once_and_not_retried_per_message(env):
    """A deleted mod-log channel is reported once (in the review channel) and not tried again for every case."""
    env.fake.deleted_channels.add(env.modlog)
    env.bot.get_guild(int(env.guild["id"]))._remove_channel(env.bot.get_channel(int(env.modlog)))
    for i in range(3):
        await env.post(env.alice, f"identityhate number {i}")
    await env.bot.workflow.drain()
    tries = env.fake.find("GET", rf"/channels/{env.modlog}") + env.modlog_posts()
    assert len(tries) == 1
    problems = [p for p in env.review_posts() if p.body["embeds"][0]["title"] == "Channel problem"]
    assert len(problems) == 1 and "Unknown Channel" in problems[0].body["embeds"][0]["description"]


async def test_channel_hidden_from_the_bot_by_an_overwrite_is_detected_before_sending(env):
    """An overwrite denying the bot View Channel on the review channel is detected from its permissions: no card is
    sent into it, and the mod log says why."""
    channel = env.bot.get_channel(int(env.review))
    everyone = env.bot.get_guild(int(env.guild["id"])).default_role
    bot_role = next(r for r in env.guild["roles"] if r["name"] == "ModBot")
    overwrite = {"id": bot_role["id"], "type": 0, "allow": "0", "deny": str(1 << 10)}
    raw = next(c for c in env.guild["channels"] if c["id"] == env.review)
    raw["permission_overwrites"] = [overwrite]
    updated = env.bot.wait_for("guild_channel_update", timeout=5)
    await env.fake.dispatch("CHANNEL_UPDATE", {**raw, "guild_id": env.guild["id"]})
    await updated
    assert not channel.permissions_for(channel.guild.me).view_channel and everyone is not None
    await env.post(env.alice, "borderline hidden card")
    await env.bot.workflow.drain()
    assert env.review_posts() == []
    problem = await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages",
                                      lambda r: r.body["embeds"][0]["title"] == "Channel problem")
    assert "view_channel" in problem.body["embeds"][0]["description"]


async def test_review_channel_that_cannot_hold_messages_is_reported_not_raised(env):
    """A review channel set to a forum (Discord: no messages of its own, only posts) cannot take a card: it is
    reported once in the mod log ("not a text channel") like any unusable channel, and no card is attempted;
    before, ``ForumChannel.send`` did not exist and the card failed with an AttributeError (found by mypy)."""
    forum = env.fake.add_channel(env.guild, "review-forum", type_=15)
    await env.bot.policies.set_override("discord", env.guild["id"], "server.review_channel", forum, None)
    env.bot.desk.forget_problems()
    await env.post(env.alice, "borderline card for a forum")
    await env.bot.workflow.drain()
    assert env.fake.find("POST", rf"/channels/{forum}/messages") == []
    problem = await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages",
                                      lambda r: r.body["embeds"][0]["title"] == "Channel problem")
    assert f"<#{forum}>" in problem.body["embeds"][0]["description"]
    assert "not a text channel" in problem.body["embeds"][0]["description"]


async def test_raid_gives_one_card_bulk_deletes_and_ban_all(env):
    """Eight raiders: one raid card with bulk buttons, the raid's later deletes in one bulk request, no card per
    message after the alert, and Ban all bans every raider."""
    raiders = [env.fake.new_user(env.guild, f"raider{i}") for i in range(8)]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    bulk = env.fake.find("POST", rf"/channels/{env.general}/messages/bulk-delete")
    assert len(bulk) == 1 and len(bulk[0].body["messages"]) == 4
    raid_cards = [p for p in env.review_posts() if p.body["embeds"][0]["title"].startswith("Raid #")]
    assert len(raid_cards) == 1
    buttons = [c["custom_id"] for row in raid_cards[0].body["components"] for c in row["components"]]
    assert f"mod:raid:{env.guild['id']}:1:ban" in buttons
    review_cards = [p for p in env.review_posts() if p.body["embeds"][0]["title"].startswith("Review #")]
    assert len(review_cards) == 4  # only those judged before the burst was recognised
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    _, cb = await confirm(env, card, f"mod:raid:{env.guild['id']}:1:ban")
    assert cb.body["data"]["content"].startswith("ban: 8 of 8")
    assert len(env.fake.find("PUT", rf"/guilds/{env.guild['id']}/bans/\d+")) == 8


async def test_raid_mode_and_its_slowmode_survive_a_restart(env):
    """Raid mode is saved: after a restart it is still on in the channel and its slowmode is lifted when it ends."""
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}")
    await env.stop()
    con = sqlite3.connect(env.db)
    with con:
        con.execute("UPDATE raid_modes SET until = ?",
                    ((ends := datetime.now(UTC) + timedelta(seconds=3)).isoformat(timespec="microseconds"),))
    con.close()
    await env.start()
    # asked at a time before the saved end (a start on a loaded machine can take longer than the window itself)
    assert env.bot.service.raid_mode("discord", env.guild["id"], env.general, ends - timedelta(seconds=1))
    await env.fake.wait_until(lambda: [r.body["rate_limit_per_user"] for r in
                                       env.fake.find("PATCH", rf"/channels/{env.general}")] == [30, 0], timeout=15)
    await env.fake.wait_until(lambda: env.rows("SELECT * FROM raid_modes") == [])


async def test_join_burst_raises_one_raid_card_offering_to_pause_invites(env):
    """Twelve accounts joining within seconds: one join-burst raid card, with a Pause invites button."""
    for i in range(12):
        user = env.fake.new_user(env.guild, f"joiner{i}")
        member = env.fake.member(env.guild, user["id"])
        await env.fake.dispatch("GUILD_MEMBER_ADD", {**member, "guild_id": env.guild["id"]})
    await env.fake.wait_until(lambda: any(p.body["embeds"][0]["title"].startswith("Raid #")
                                          for p in env.review_posts()))
    await asyncio.sleep(0.2)
    cards = [p for p in env.review_posts() if p.body["embeds"][0]["title"].startswith("Raid #")]
    assert len(cards) == 1 and "join burst" in cards[0].body["embeds"][0]["title"]
    buttons = [c["custom_id"] for row in cards[0].body["components"] for c in row["components"]]
    pause = next(b for b in buttons if b.endswith(":pause_invites"))
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    cb = await env.fake.click(env.guild, env.mod, card, pause)
    assert "You need Manage Server" in cb.body["data"]["content"]  # lockdown is an admin's call
    admin = await server_admin(env)
    bot_role = env.fake.role(env.guild, "ModBot")  # Discord needs Manage Server for incident actions
    await env.fake.set_role_permissions(env.guild, bot_role["id"], int(bot_role["permissions"]) | MANAGE_GUILD)
    cb = await env.fake.click(env.guild, admin, card, pause)
    assert cb.body["data"]["content"] == "Invites paused for 24 hours."
    (put,) = env.fake.find("PUT", rf"/guilds/{env.guild['id']}/incident-actions")
    until = datetime.fromisoformat(put.body["invites_disabled_until"])
    assert timedelta(hours=23) < until - datetime.now(UTC) <= timedelta(hours=24)


async def test_purge_deletes_a_members_recent_messages_in_bulk_and_says_what_discord_refuses(env):
    """/purge count:10 member:alice bulk-deletes alice's recent messages, leaves bob's, and says that a message
    older than 14 days was left because Discord refuses to bulk delete it."""
    old = env.fake.message_payload(env.guild, env.general, env.alice, "ancient",
                                   mid=snowflake(datetime.now(UTC) - timedelta(days=20)))
    mine = [(await env.post(env.alice, f"hello {i}"))[0]["id"] for i in range(3)]
    theirs = (await env.post(env.bob, "bob stays"))[0]["id"]
    opt = {"name": "member", "type": 6, "value": env.alice["id"]}
    cb = await env.fake.slash(env.guild, env.mod, "purge", [text_opt("count", 10, 4), opt],
                              resolved={"users": {env.alice["id"]: env.alice}})
    text = cb.body["data"]["content"]
    assert text.startswith("Deleted 3 message(s).") and "1 older than 14 days" in text
    (bulk,) = env.fake.find("POST", rf"/channels/{env.general}/messages/bulk-delete")
    assert sorted(map(str, bulk.body["messages"])) == sorted(mine)
    assert theirs not in map(str, bulk.body["messages"]) and old["id"] not in map(str, bulk.body["messages"])
    assert env.rows("SELECT action, status, moderator_id, failure FROM cases")[0][:] == (
        "delete", "failed", env.mod["id"], "partially applied: 3 of 4 deleted, 1 refused (older than 14 days)")


async def test_purge_needs_manage_messages(env):
    """/purge by a member without Manage Messages is refused; nothing is read or deleted."""
    cb = await env.fake.slash(env.guild, env.bob, "purge", [text_opt("count", 5, 4)])
    assert "You need Manage Messages" in cb.body["data"]["content"]
    assert env.fake.find("POST", r"/channels/.*/messages/bulk-delete") == []


async def test_ban_click_during_a_rate_limit_is_acknowledged_in_time_and_done_once(env):
    """Discord rate-limits the ban route for 3.5 s: the click is still acknowledged within Discord's 3 seconds (a
    deferred update), the ban lands once after the wait, and the card is then edited with the decision."""
    _, outcome, card = await card_of(env)
    env.fake.rate_limit("PUT", rf"/guilds/{env.guild['id']}/bans/\d+", retry_after=3.5)
    _, cb = await confirm(env, card, f"mod:review:{outcome.review_id}:ban", timeout=15)
    assert cb.body["deferred"] == 6 and cb.body["type"] == 7  # the fake answers 10062 to a late callback
    bans = env.fake.find("PUT", rf"/guilds/{env.guild['id']}/bans/{env.alice['id']}")
    assert [b.response for b in bans][-1] in (204, 200) and len([b for b in bans if b.response in (200, 204)]) == 1
    decision = next(f["value"] for f in cb.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")
    assert "banned" in decision


async def test_raid_in_a_thread_puts_slowmode_on_the_thread_itself(env):
    """A raid inside a thread sets slowmode on that thread (PATCH /channels/{thread}), not only on its channel."""
    created = env.bot.wait_for("thread_create", timeout=5)
    thread, _ = await env.fake.create_thread(env.guild, env.general, env.alice, "celebration")
    await created
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}", channel=thread["id"])
    patches = env.fake.find("PATCH", rf"/channels/{thread['id']}")
    assert [p.body.get("rate_limit_per_user") for p in patches] == [30]


async def test_a_notice_to_closed_dms_is_noted_and_the_ban_still_counts(env):
    """The member closed their DMs: the ban's notice fails with 50007, the ban is applied and the case says so."""
    env.fake.close_dms(env.alice["id"])
    cb = await mod_on(env, "ban", env.alice, text_opt("reason", "spam"))
    assert "not delivered" in cb.body["data"]["content"]
    row = env.rows("SELECT status, failure FROM cases")[0]
    assert row["status"] == "applied" and "50007" in row["failure"]


async def test_messages_missed_while_disconnected_are_judged_once_after_resume(env):
    """The gateway connection drops; a message posted meanwhile is replayed on RESUME and judged exactly once."""
    await env.fake.drop_connection(4000, hold_resume=True)
    msg = await env.fake.post(env.guild, env.general, env.alice, "identityhate while you were away")
    waiter = asyncio.ensure_future(env.bot.wait_for(
        "moderation_outcome", check=lambda o: o.verdict.message.id == msg["id"], timeout=15))
    env.fake.allow_resume()
    outcome = await waiter
    assert outcome.verdict.flagged and not outcome.duplicate
    await env.bot.workflow.drain()
    assert env.rows("SELECT COUNT(*) FROM verdicts WHERE message_id = ?", (msg["id"],))[0][0] == 1
    assert len(env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")) == 1


async def test_a_banned_member_is_gone_for_later_decisions(env):
    """After the bot's ban Discord sends GUILD_MEMBER_REMOVE; a later Warn on that member's card is refused as
    "no longer in this server" without calling Discord."""
    _, outcome, card = await card_of(env)
    await mod_on(env, "ban", env.alice, text_opt("reason", "raid"))
    await env.fake.wait_until(lambda: env.bot.get_guild(int(env.guild["id"])).get_member(int(env.alice["id"])) is None)
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:warn")
    assert "no longer in this server" in cb.body["data"]["content"]


async def test_a_failed_member_lookup_refuses_the_ban_instead_of_skipping_the_hierarchy_check(env):
    """Discord refuses the bot's lookup of the target (403 Missing Access, not "unknown member"): the ban is refused
    with the reason, nothing is recorded or sent, rather than carried out without the role-hierarchy check."""
    stranger = env.fake.new_user(env.guild, "uncached")  # in the guild on Discord, never dispatched to the bot
    env.fake.fail("GET", rf"/guilds/{env.guild['id']}/members/{stranger['id']}", status=403, code=50001,
                  message="Missing Access")
    cb = await mod_on(env, "ban", stranger, text_opt("reason", "raid"))
    text = cb.body["data"]["content"]
    assert "did not answer" in text and "Missing Access" in text and "try again" in text
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == [] and env.rows("SELECT * FROM cases") == []
