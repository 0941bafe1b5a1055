"""Wire tests for issue 25 (correctness sweep), Discord / workflow items: a moderator action on a channel's content
uses the member's permissions IN THAT CHANNEL (overwrites), a 28-day timeout under clock skew, join-burst bulk
actions on every joiner."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES
from tests.discord.helpers import confirm, ephemeral_text, guild_requests, mod_on, text_opt
from tests.discord.test_workflow_wire import card_of

pytestmark = pytest.mark.discord


async def _deny_manage_messages_here(env) -> None:
    await env.fake.set_overwrite(env.guild, env.general, env.guild["mod_role"], deny=MANAGE_MESSAGES)
    for _ in range(100):  # until the bot's cache holds the overwrite (CHANNEL_UPDATE)
        channel = env.bot.get_channel(int(env.general))
        if channel is not None and channel.overwrites:
            return
        await asyncio.sleep(0.02)


async def test_purge_is_refused_where_an_overwrite_denies_the_moderator_manage_messages(env):
    """/purge in a channel whose overwrite denies the moderators' role Manage Messages is refused; nothing is
    deleted, even though the role holds Manage Messages at server level."""
    await env.post(env.alice, "hello there")
    await _deny_manage_messages_here(env)
    cb = await env.fake.slash(env.guild, env.mod, "purge", [text_opt("count", 5, 4)])
    assert "You need Manage Messages" in cb.body["data"]["content"]
    assert env.fake.find("POST", r"/channels/.*/messages/bulk-delete") == []
    assert env.rows("SELECT * FROM cases WHERE action = 'delete' AND moderator_id IS NOT NULL") == []


async def test_review_delete_is_refused_where_an_overwrite_denies_the_moderator_manage_messages(env):
    """A review card's Delete for a message in a channel where the moderator is denied Manage Messages by an
    overwrite is refused (the card's own channel allows it); the message stays and the card stays open."""
    msg, outcome, card = await card_of(env)
    await _deny_manage_messages_here(env)
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    assert cb is not None
    await asyncio.sleep(0.3)
    assert env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}") == []
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))] == [("open",)]


async def test_review_delete_works_where_the_moderator_holds_manage_messages(env):
    """Without an overwrite the same Delete goes through (the check is not a blanket refusal)."""
    msg, outcome, card = await card_of(env)
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    await env.fake.wait_until(lambda: env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}"))
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))] == [("deleted",)]


async def test_a_28_day_timeout_lands_when_the_bots_clock_runs_fast(env):
    """/mod timeout minutes:40320 (exactly 28 days) with the bot's clock 2 minutes ahead of Discord's: the timeout
    is sent capped (28 days less 1 h) and lands, and the case says it was capped; sent uncapped Discord refuses."""
    from datetime import UTC, datetime, timedelta

    from tests.discord.helpers import mod_on

    env.fake.clock_behind = timedelta(minutes=2)
    sent_at = datetime.now(UTC)
    await mod_on(env, "timeout", env.alice, text_opt("minutes", 40320, 4), text_opt("reason", "cool off"))
    await env.fake.wait_until(lambda: env.rows("SELECT status FROM cases WHERE action = 'timeout'"))
    (status, failure), = [tuple(r) for r in env.rows("SELECT status, failure FROM cases WHERE action = 'timeout'")]
    assert status == "applied" and failure.startswith("timeout capped at 27 d 23 h")
    until = datetime.fromisoformat(env.fake.member(env.guild, env.alice["id"])["communication_disabled_until"])
    assert timedelta(days=28) - timedelta(hours=1, seconds=5) < until - sent_at < timedelta(days=28) - timedelta(
        minutes=59)


async def test_join_burst_ban_all_bans_all_25_joiners_and_says_so(env):
    """25 accounts joining (the alert fires at the tenth): the raid card's "Ban all" bans every one of them on
    Discord and answers "ban: 25 of 25"; "End raid mode" then closes that raid (its card has no buttons)."""
    joiners = []
    for i in range(25):
        user = env.fake.new_user(env.guild, f"joiner{i}")
        joiners.append(user["id"])
        member = env.fake.member(env.guild, user["id"])
        await env.fake.dispatch("GUILD_MEMBER_ADD", {**member, "guild_id": env.guild["id"]})
    await env.fake.wait_until(lambda: any(p.body["embeds"][0]["title"].startswith("Raid #")
                                          for p in env.review_posts()))
    raid = await env.bot.workflow.store.get_raid("discord", env.guild["id"], 1)
    for _ in range(100):
        raid = await env.bot.workflow.store.get_raid("discord", env.guild["id"], 1)
        if len(raid.members) == 25:
            break
        await asyncio.sleep(0.05)
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    _, cb = await confirm(env, card, f"mod:raid:{env.guild['id']}:1:ban", timeout=30)
    assert cb.body["data"]["content"].startswith("ban: 25 of 25 raider(s)."), cb.body["data"]["content"]
    banned = {r.path.rsplit("/", 1)[1] for r in env.fake.find("PUT", rf"/guilds/{env.guild['id']}/bans/\d+")}
    assert banned == set(joiners)
    await env.fake.click(env.guild, env.mod, card, f"mod:raid:{env.guild['id']}:1:end")
    await env.fake.wait_until(lambda: all(b.closed for b in env.bot.workflow._boards.values()))
    assert env.bot.workflow.open_join_raid(env.guild["id"], await env.bot.workflow.policies.get(
        "discord", env.guild["id"])) is None


async def test_review_ban_where_the_moderator_may_not_delete_bans_but_leaves_the_message(env):
    """A review card's Ban by a moderator denied Manage Messages in the message's channel: the member is banned
    (Ban Members is a server permission), the message is not deleted, and the case says why."""
    msg, outcome, card = await card_of(env)
    await _deny_manage_messages_here(env)
    await confirm(env, card, f"mod:review:{outcome.review_id}:ban")
    await env.fake.wait_until(lambda: env.fake.find("PUT", rf"/guilds/{env.guild['id']}/bans/{env.alice['id']}"))
    await env.fake.wait_until(lambda: env.rows("SELECT 1 FROM cases WHERE action = 'ban' AND status != 'pending'"))
    assert env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}") == []
    (failure,), = [tuple(r) for r in env.rows("SELECT failure FROM cases WHERE action = 'ban'")]
    assert f"delete: not deleted: you lack Manage Messages in <#{env.general}>" in failure


async def test_raid_bulk_delete_is_not_sent_where_an_overwrite_denies_the_bot_manage_messages(env):
    """A raid's automatic deletes in a channel whose overwrite denies the bot's role Manage Messages are not sent
    (the bot's permissions IN that channel, as /purge and Delete check the moderator's): no bulk-delete request,
    each queued delete's case is failed with the reason, and the raid card's notes say so."""
    bot_role = next(r for r in env.guild["roles"] if r["name"] == "ModBot")
    await env.fake.set_overwrite(env.guild, env.general, bot_role["id"], deny=MANAGE_MESSAGES)
    for _ in range(100):  # until the bot's cache holds the overwrite (CHANNEL_UPDATE)
        channel = env.bot.get_channel(int(env.general))
        if channel is not None and channel.overwrites:
            break
        await asyncio.sleep(0.02)
    raiders = [env.fake.new_user(env.guild, f"raider{i}") for i in range(8)]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    await env.bot.workflow.flush_raids()
    assert env.fake.find("POST", rf"/channels/{env.general}/messages/bulk-delete") == []
    failed = [tuple(r) for r in env.rows("SELECT status, failure FROM cases WHERE action = 'delete' "
                                         "AND moderator_id IS NULL AND failure LIKE '%lacks Manage Messages%'")]
    assert len(failed) == 4 and all(status == "failed" for status, _ in failed), failed
    board = next(iter(env.bot.workflow._boards.values()))
    assert any("4 delete(s) not sent: the bot lacks Manage Messages" in n for n in board.notes)


async def test_raid_bulk_delete_is_sent_where_the_bot_holds_manage_messages(env):
    """Without the overwrite the same raid's deletes go out in one bulk request (the check is not a blanket
    refusal)."""
    raiders = [env.fake.new_user(env.guild, f"raider{i}") for i in range(8)]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    await env.bot.workflow.flush_raids()
    bulk = env.fake.find("POST", rf"/channels/{env.general}/messages/bulk-delete")
    assert len(bulk) == 1 and len(bulk[0].body["messages"]) == 4


async def _ban_then_make_it_due(env, *, then_permanent: bool) -> None:
    """/mod ban days:1 of alice (case 1), optionally a permanent /mod ban after it, then a restart with case 1's
    end in the past and not lifted (as an older build left a superseded case)."""
    cb = await mod_on(env, "ban", env.alice, text_opt("reason", "cool off"), text_opt("days", 1, 4))
    assert "done." in ephemeral_text(cb), ephemeral_text(cb)
    if then_permanent:
        cb = await mod_on(env, "ban", env.alice, text_opt("reason", "for good"))
        assert "done." in ephemeral_text(cb), ephemeral_text(cb)
    await env.stop()
    con = sqlite3.connect(env.db)
    with con:
        con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00', lifted_at = NULL "
                    "WHERE number = 1")
    con.close()
    await env.start()
    await asyncio.sleep(0.5)  # recovery schedules what is due at once


async def test_temporary_bans_timer_does_not_lift_a_later_permanent_ban_after_a_restart(env):
    """A 1-day /mod ban followed by a permanent /mod ban of the same member: when the bot restarts after the first
    ban's end, Discord gets no unban (DELETE /guilds/{g}/bans/{u}); the member stays banned."""
    await _ban_then_make_it_due(env, then_permanent=True)
    assert len(guild_requests(env, "PUT", "bans", env.alice)) == 2
    assert guild_requests(env, "DELETE", "bans", env.alice) == []
    assert env.alice["id"] in env.fake.bans.get(env.guild["id"], {})


async def test_temporary_ban_alone_is_lifted_when_due_after_a_restart(env):
    """The same 1-day ban without a later ban is lifted by its timer after the restart (the check above is not a
    timer that never fires)."""
    await _ban_then_make_it_due(env, then_permanent=False)
    await env.fake.wait_until(lambda: guild_requests(env, "DELETE", "bans", env.alice))
    assert len(guild_requests(env, "DELETE", "bans", env.alice)) == 1


async def _until_overwrites(env, channel_id: str, n: int) -> None:
    for _ in range(100):  # until the bot's cache holds the channel's n overwrites (CHANNEL_UPDATE)
        channel = env.bot.get_channel(int(channel_id))
        if channel is not None and len(channel.overwrites) >= n:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the bot never saw {n} overwrite(s) on {channel_id}")


@pytest.mark.parametrize("decision", ["uphold", "overturn"])
async def test_appeal_decision_is_refused_where_an_overwrite_denies_the_moderator_in_the_cases_channel(env, decision):
    """An appeal of a case about a message in #general, decided (Uphold / Overturn on its card in the review
    channel) by a moderator whose role holds Manage Messages server-wide but is denied it in #general by an
    overwrite: refused, the appeal stays open and the case stands. A second moderator of the same role whose own
    overwrite allows it there decides the same appeal."""
    from tests.discord.test_review_buttons_wire import appeal_card

    number, appeal_id, card = await appeal_card(env)
    action = env.rows("SELECT action FROM cases WHERE number = ?", (number,))[0][0]
    assert action == "delete"  # a case whose overturn needs Manage Messages, the permission the overwrite denies
    other = env.fake.new_user(env.guild, "mod2", roles=[env.mod_role])
    await _deny_manage_messages_here(env)
    await env.fake.set_overwrite(env.guild, env.general, other["id"], allow=MANAGE_MESSAGES)
    await _until_overwrites(env, env.general, 2)
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:appealdecide:{appeal_id}:{decision}")
    assert "You need Manage Messages" in ephemeral_text(cb)
    assert [tuple(r) for r in env.rows("SELECT status, moderator_id FROM appeals")] == [("open", None)]
    assert env.rows("SELECT status FROM cases WHERE number = ?", (number,))[0][0] == "applied"
    assert env.rows("SELECT pardoned_at FROM strikes")[0][0] is None
    cb = await env.fake.click(env.guild, other, card, f"mod:appealdecide:{appeal_id}:{decision}")
    assert cb.body["type"] == 7, cb.body
    done = "upheld" if decision == "uphold" else "overturned"
    assert [tuple(r) for r in env.rows("SELECT status, moderator_id FROM appeals")] == [(done, other["id"])]
    assert env.rows("SELECT status FROM cases WHERE number = ?", (number,))[0][0] == (
        "applied" if decision == "uphold" else "overturned")


async def test_appeal_of_a_case_in_a_deleted_channel_is_decided_on_server_permissions(env):
    """The channel of the appealed case's message was deleted since (Discord answers Unknown Channel): no overwrite
    can apply there any more, so the moderator's server-wide permissions decide, never "could not be read" for
    ever; the appeal is upheld."""
    from tests.discord.test_review_buttons_wire import appeal_card

    number, appeal_id, card = await appeal_card(env)
    channel = next(c for c in env.guild["channels"] if c["id"] == env.general)
    env.guild["channels"].remove(channel)
    env.fake.deleted_channels.add(env.general)
    await env.fake.dispatch("CHANNEL_DELETE", channel)
    for _ in range(100):  # until the bot's cache dropped the channel (CHANNEL_DELETE)
        if env.bot.get_channel(int(env.general)) is None:
            break
        await asyncio.sleep(0.02)
    assert env.bot.get_channel(int(env.general)) is None
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:appealdecide:{appeal_id}:uphold")
    assert cb.body["type"] == 7, cb.body
    assert [tuple(r) for r in env.rows("SELECT status, moderator_id FROM appeals")] == [("upheld", env.mod["id"])]
    assert env.rows("SELECT status FROM cases WHERE number = ?", (number,))[0][0] == "applied"
