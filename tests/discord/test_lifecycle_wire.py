"""Wire tests: retention purge at startup (and its background task), raid slowmode lifted when raid mode ends."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord


def age_message(env, message_id, days):
    """Backdate a stored message (created ``days`` ago) with a separate SQLite connection, bot stopped."""
    when = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="microseconds")
    con = sqlite3.connect(env.db)
    with con:
        con.execute("UPDATE messages SET created_at = ? WHERE message_id = ?", (when, message_id))
    con.close()


@pytest.mark.parametrize("days,purged", [(40, True), (29, False)])
async def test_startup_purges_text_older_than_retention(env, days, purged):
    """At startup the bot erases message text older than server.retention_days (30); the verdict stays."""
    msg, _ = await env.post(env.alice, "identityhate evidence")
    fresh, _ = await env.post(env.bob, "a fresh message")
    old_task = env.bot.retention_task
    await env.stop()
    assert old_task.cancelled()
    age_message(env, msg["id"], days)
    await env.start()
    row = env.rows("SELECT excerpt, purged_at FROM messages WHERE message_id = ?", (msg["id"],))[0]
    assert (row["excerpt"] is None) is purged and (row["purged_at"] is not None) is purged
    assert env.rows("SELECT excerpt FROM messages WHERE message_id = ?", (fresh["id"],))[0][0] == "a fresh message"
    assert len(env.rows("SELECT * FROM verdicts WHERE message_id = ?", (msg["id"],))) == 1
    assert len(env.rows("SELECT * FROM cases WHERE message_id = ?", (msg["id"],))) == 1
    assert env.bot.retention_task is not None and not env.bot.retention_task.done()


def board(env):
    """The workflow's one open raid board."""
    (b,) = env.bot.workflow._boards.values()
    return b


async def test_raid_slowmode_lifted_when_raid_mode_ends(env):
    """A raid alert sets 30 s slowmode; once raid_mode_duration_s passes without activity it is set back to 0 and
    raid mode is no longer saved."""
    env.write_policy(env.guild, env.review, env.modlog, "[rules.raid]\nraid_mode_duration_s = 0.3\n")
    env.bot.policies.invalidate()
    raiders = [env.fake.new_user(env.guild, f"raider{i}") for i in range(6)]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    assert env.rows("SELECT channel_id, slowmode_s FROM raid_modes")[0][1] == 30
    await asyncio.wait_for(board(env).end_task, 5)
    slow = [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")]
    assert slow == [30, 0]
    assert not env.bot.service.raid_mode("discord", env.guild["id"], env.general, datetime.now(UTC))
    assert [p for p in env.modlog_posts() if p.body["embeds"][0]["title"] == "Raid mode off"]
    assert env.rows("SELECT * FROM raid_modes") == []


async def raid(env, extra):
    """Five new members post flagged messages in #general (one raid alert) under server policy ``extra``."""
    env.write_policy(env.guild, env.review, env.modlog, extra)
    env.bot.policies.invalidate()
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}")
    assert len(env.rows("SELECT * FROM raids")) == 1


async def test_raidmode_off_lifts_slowmode_and_cancels_pending_lift(env):
    """/raidmode off during an automatic raid mode sets slowmode 0 at once and drops the scheduled end."""
    await raid(env, "")
    lift = board(env).end_task
    lead = await member_with_role(env, "lead", (1 << 13) | (1 << 4), 4)  # Manage Messages and Manage Channels
    cb = await env.fake.slash(env.guild, lead, "raidmode", [{"name": "state", "type": 3, "value": "off"}])
    assert cb.body["data"]["content"].startswith("Raid mode off")
    await asyncio.wait({lift}, timeout=5)
    assert lift.cancelled() and board(env).closed
    slow = [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")]
    assert slow == [30, 0]
    assert not env.bot.service.raid_mode("discord", env.guild["id"], env.general, datetime.now(UTC))


async def test_raid_alert_without_raid_mode_sets_no_slowmode(env):
    """With rules.raid.raid_mode = false an alert is posted but no slowmode is set or scheduled."""
    await raid(env, "[rules.raid]\nraid_mode = false\n")
    alerts = [p.body["embeds"][0]["title"] for p in env.modlog_posts()
              if p.body["embeds"][0]["title"].startswith("Raid alert")]
    assert alerts == ["Raid alert"]
    assert env.fake.find("PATCH", rf"/channels/{env.general}") == []
    assert board(env).end_task is None


async def test_bot_runs_the_one_lifecycle_in_order(env):
    """The Discord bot runs the workflow's lifecycle steps in the order of bot.workflow.lifecycle.STEPS (the Slack
    bot's twin test: tests/slack/test_lifecycle_slack.py): retention and watch before the gateway, recover and
    catch-up once ready; a second on_ready (a reconnect) runs nothing again; shutdown in order at close."""
    from bot.workflow.lifecycle import STEPS

    bot = env.bot
    await asyncio.wait_for(bot.caught_up.wait(), 10)
    assert bot.lifecycle.steps == list(STEPS[:4])
    task = bot.retention_task
    assert task is not None and not task.done()
    await bot.on_ready()
    assert bot.lifecycle.steps == list(STEPS[:4])
    await env.stop()
    assert bot.lifecycle.steps == list(STEPS)
    assert task.cancelled() and bot.retention_task is None
