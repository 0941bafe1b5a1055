"""Wire test: a moderator's unban done by hand in Discord (GUILD_BAN_REMOVE) reaches the workflow, so a temporary
ban's end no longer acts on a member already unbanned."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from tests.discord.helpers import ephemeral_text, guild_requests, mod_cmd, text_opt

pytestmark = pytest.mark.discord


async def _lifted(env, number: int) -> None:
    for _ in range(300):
        if env.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (number,))[0][0]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"case #{number} was not marked lifted")


async def test_a_hand_unban_in_discord_stops_the_temporary_ban_s_end(env):
    """/mod ban for a day, then a moderator unbans by hand in Discord: the bot, told by GUILD_BAN_REMOVE, marks the
    case lifted and drops its timer; after a restart past the ban's end it sends no unban and posts no end."""
    opt = {"name": "member", "type": 6, "value": env.alice["id"]}
    cb = await mod_cmd(env, "ban", opt, text_opt("reason", "cool off"), text_opt("days", 1, 4),
                       resolved={"users": {env.alice["id"]: env.alice}})
    assert ephemeral_text(cb).endswith("done.")
    assert list(env.bot.workflow._timers) == [(env.guild["id"], 1)]
    # the moderator's unban in Discord's own interface: the ban is gone and the gateway says so
    ban = env.fake.bans[env.guild["id"]].pop(env.alice["id"])
    await env.fake.dispatch("GUILD_BAN_REMOVE", {"guild_id": env.guild["id"], "user": ban["user"]})
    await _lifted(env, 1)
    assert env.bot.workflow._timers == {}
    posts_before = len(env.modlog_posts())
    await env.stop()
    con = sqlite3.connect(env.db)
    con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00' WHERE number = 1")
    con.commit()
    con.close()
    await env.start()
    await asyncio.sleep(0.3)
    assert guild_requests(env, "DELETE", "bans", env.alice) == []
    assert not [p for p in env.modlog_posts()[posts_before:] if "temporary ban ended" in str(p.body)]


async def test_a_late_unban_event_after_the_member_was_banned_again_lifts_nothing(env):
    """A moderator unbanned by hand and /mod ban banned the member again before the first unban's GUILD_BAN_REMOVE
    came (the gateway is late, or replays it on a resume): Discord still has the ban, so the new case stays in
    force in the mod log and its end-of-ban timer is kept."""
    opt = {"name": "member", "type": 6, "value": env.alice["id"]}
    cb = await mod_cmd(env, "ban", opt, text_opt("reason", "cool off"), text_opt("days", 1, 4),
                       resolved={"users": {env.alice["id"]: env.alice}})
    assert ephemeral_text(cb).endswith("done.")
    assert env.alice["id"] in env.fake.bans[env.guild["id"]]
    await env.fake.dispatch("GUILD_BAN_REMOVE", {"guild_id": env.guild["id"], "user": env.alice})
    for _ in range(50):  # the event's handling, had it lifted the case, is done well within this
        if guild_requests(env, "GET", "bans", env.alice):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    assert env.rows("SELECT lifted_at IS NULL FROM cases WHERE number = 1")[0][0] == 1
    assert list(env.bot.workflow._timers) == [(env.guild["id"], 1)]


async def test_a_hand_unban_while_the_bot_was_down_is_not_retried_as_a_failed_unban(env):
    """The member was unbanned by hand while the bot was stopped (no event reaches a stopped bot): at the ban's end
    Discord answers the bot's unban 404 Unknown Ban. The member is not banned, which is what the end wanted: the
    case is marked lifted, the post is no failure, and no retry follows (not five refusals asking for an unban by
    hand)."""
    opt = {"name": "member", "type": 6, "value": env.alice["id"]}
    cb = await mod_cmd(env, "ban", opt, text_opt("reason", "cool off"), text_opt("days", 1, 4),
                       resolved={"users": {env.alice["id"]: env.alice}})
    assert ephemeral_text(cb).endswith("done.")
    await env.stop()
    env.fake.bans[env.guild["id"]].pop(env.alice["id"])  # by hand, while the bot is down
    con = sqlite3.connect(env.db)
    con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00' WHERE number = 1")
    con.commit()
    con.close()
    posts_before = len(env.modlog_posts())
    await env.start()
    await _lifted(env, 1)
    await asyncio.sleep(0.2)
    assert len(guild_requests(env, "DELETE", "bans", env.alice)) == 1
    ended = [str(p.body) for p in env.modlog_posts()[posts_before:] if "temporary ban ended" in str(p.body)]
    assert len(ended) == 1 and "FAILED" not in ended[0]
    ((failure, tries),) = env.rows("SELECT failure, lift_tries FROM cases WHERE number = 1")
    assert "FAILED" not in (failure or "") and tries == 0
    assert env.bot.workflow._timers == {}
