"""Wire tests of the live path with the real discord.py client: catch-up after a restart (history fetched from the
fake Discord since the last recorded message, judged once) and a mod log that refuses writes stopping the bot."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence

import pytest

from bot.core.errors import StoreRefused
from bot.core.ports import RecordResult, VerdictRecord
from bot.store.sqlite import SqliteStore
from tests.discord.fake_discord import snowflake

pytestmark = pytest.mark.discord


def verdicts(env, message_id: str) -> int:
    return len(env.rows("SELECT * FROM verdicts WHERE message_id = ?", (message_id,)))


async def restart(env) -> None:
    await env.start()
    await asyncio.wait_for(env.bot.caught_up.wait(), 10)
    await env.settle()


async def test_messages_posted_while_down_are_judged_once_after_restart(env):
    """Messages posted while the bot was down (also in a channel created meanwhile) are fetched from the channel
    history at the next start and judged once (the attack gets its case); a second restart judges nothing again."""
    seen, _ = await env.post(env.alice, "hello before the restart")
    await env.stop()
    missed = [env.fake.message_payload(env.guild, env.general, env.bob, text)
              for text in ("anyone here?", "identityhate you all", "quiet day")]
    fresh = env.fake.add_channel(env.guild, "announcements")
    missed.append(env.fake.message_payload(env.guild, fresh, env.alice, "new channel, new message"))
    await restart(env)
    assert verdicts(env, seen["id"]) == 1
    for m in missed:
        assert verdicts(env, m["id"]) == 1, m["content"]
    assert len(env.rows("SELECT * FROM cases WHERE message_id = ?", (missed[1]["id"],))) == 1
    report = env.bot.catchup_reports[env.guild["id"]]
    assert report.judged == 4 and report.cut_short == []
    history = env.fake.find("GET", rf"/channels/{env.general}/messages")
    assert history and all(int(r.query["limit"]) <= 100 for r in history)
    assert history[0].query["after"] == seen["id"]
    await env.stop()
    await restart(env)
    assert env.bot.catchup_reports[env.guild["id"]].judged == 0
    assert len(env.rows("SELECT * FROM verdicts")) == 5


async def test_catch_up_stops_at_the_message_bound(env, monkeypatch):
    """With MODBOT_CATCHUP_MESSAGES=3, the three oldest messages after the last recorded one are judged, the
    channel is reported cut short, and the later ones are not judged."""
    seen, _ = await env.post(env.alice, "hello before the restart")
    await env.stop()
    missed = [env.fake.message_payload(env.guild, env.general, env.bob, f"message {i}") for i in range(5)]
    monkeypatch.setenv("MODBOT_CATCHUP_MESSAGES", "3")
    await restart(env)
    assert [verdicts(env, m["id"]) for m in missed] == [1, 1, 1, 0, 0]
    assert env.bot.catchup_reports[env.guild["id"]].cut_short == [env.general]
    assert verdicts(env, seen["id"]) == 1


class _RefusingStore(SqliteStore):
    """The bot's real SQLite mod log, whose batch writes are then refused for good (as the store maps a full disk
    or a read-only file)."""

    async def record_batch(self, records: Sequence[VerdictRecord], *, model_version: str | None = None
                           ) -> list[RecordResult]:
        raise StoreRefused(str(self.path), "database or disk is full")


async def test_a_refused_write_closes_the_bot_with_the_error(env):
    """When the mod log refuses a write for good, the bot closes by itself and keeps the error in ``fatal`` (the
    CLI prints it as one line and exits 2); the message is not recorded."""
    bot = env.bot
    refusing = await _RefusingStore.open(env.db)
    bot.service.store = refusing
    try:
        msg = await env.fake.post(env.guild, env.general, env.bob, "identityhate you all")
        await asyncio.wait_for(env._task, 10)
        assert isinstance(bot.fatal, StoreRefused) and "disk is full" in str(bot.fatal)
        assert bot.is_closed()
        assert verdicts(env, msg["id"]) == 0
    finally:
        await refusing.close()
        env.bot = None


async def test_messages_during_a_held_write_lock_are_all_recorded(short_busy_timeout, env):
    """While another connection holds the mod log's write lock past the busy timeout (6 s against 5 s in
    production; here 4 times the short timeout of the fixture, which the bot's store was opened with), messages
    posted through the gateway are kept and retried: each ends up recorded once and the attack gets its case."""
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        con = sqlite3.connect(env.db, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        taken.set()
        release.wait(4 * short_busy_timeout)
        con.execute("COMMIT")
        con.close()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert await asyncio.to_thread(taken.wait, 5)
    ids = []
    waiters = []
    for text in ("hello during the lock", "identityhate during the lock", "still locked?"):
        mid = snowflake()
        waiters.append(asyncio.ensure_future(env.bot.wait_for(
            "moderation_outcome", check=lambda o, mid=mid: o.verdict.message.id == mid, timeout=30)))
        await env.fake.post(env.guild, env.general, env.bob, text, mid=mid)
        ids.append(mid)
    outcomes = await asyncio.gather(*waiters)
    await asyncio.to_thread(holder.join, 10)
    assert [o.duplicate for o in outcomes] == [False, False, False]
    assert [verdicts(env, mid) for mid in ids] == [1, 1, 1]
    assert len(env.rows("SELECT * FROM cases WHERE message_id = ?", (ids[1],))) == 1
    assert env.bot.service.stats["write_retries"] >= 1
