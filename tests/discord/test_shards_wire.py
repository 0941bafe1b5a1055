"""Wire test: two shard-owning bots (real discord.py ``AutoShardedBot`` with ``shard_ids=[0]`` / ``[1]`` of 2)
against the fake Discord, which routes each guild's events to shard ``(guild_id >> 22) % 2``, on ONE mod log.

The mod log comes from the ``shared_db`` fixture: a SQLite file in WAL mode, and a ``postgresql://`` URL on the
throwaway PostgreSQL server (``pytest -m postgres``)."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import discord
import pytest
import yarl
from discord.gateway import DiscordWebSocket

from tests.discord.conftest import FakeScorer
from tests.discord.fake_discord import FakeDiscord, shard_of, snowflake
from tests.discord.helpers import ephemeral_text
from tests.discord.replies import answering

pytestmark = pytest.mark.discord

SHARDS = 2


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def shared_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where both bots' mod log lives, as ``--db`` / ``MODBOT_DB`` would name it: a SQLite file (WAL), or a fresh
    database on the throwaway PostgreSQL server (``pg_url``)."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "shared.db")


class Shards:
    """Two guilds, one per shard, and one bot process per shard (two ``ModBot`` in this event loop)."""

    def __init__(self, fake: FakeDiscord, tmp: Path, db: str) -> None:
        self.fake, self.db = fake, db
        old = datetime.now(UTC) - timedelta(days=400)
        self.guilds = [fake.add_guild(f"Guild {i}", shard=(i, SHARDS)) for i in range(SHARDS)]
        self.policy_dir = tmp / "config"
        (self.policy_dir / "servers").mkdir(parents=True)
        self.members: list[dict[str, Any]] = []
        for g in self.guilds:
            (self.policy_dir / "servers" / f"discord-{g['id']}.toml").write_text(
                f'[server]\nreview_channel = "{fake.channel(g, "review")}"\n'
                f'mod_log_channel = "{fake.channel(g, "mod-log")}"\nmoderator_roles = ["{g["mod_role"]}"]\n'
                '[identity_target]\nextra_terms = ["identityhate"]\n')
            self.members.append(fake.new_user(g, f"member-{g['name']}", created=old))
            fake.new_user(g, f"mod-{g['name']}", created=old, roles=[g["mod_role"]])
            for m in g["members"]:
                m["joined_at"] = (old + timedelta(days=1)).isoformat()
        self.bots: list[Any] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        from bot.adapters.discord.client import ModBot

        for shard in range(SHARDS):
            bot = ModBot(db_path=self.db, policy_dir=self.policy_dir, scorer_factory=FakeScorer,
                         shard_ids=[shard], shard_count=SHARDS, guild_ready_timeout=0.05,
                         chunk_guilds_at_startup=False)
            self.bots.append(bot)
            self.tasks.append(asyncio.create_task(bot.start("fake-token-not-logged")))
        await asyncio.wait_for(asyncio.gather(*(b.ready_event.wait() for b in self.bots)), 15)

    async def stop(self) -> None:
        for bot in self.bots:
            await bot.close()
        await asyncio.wait(self.tasks, timeout=5)

    def owner(self, guild: dict[str, Any]) -> Any:
        return self.bots[shard_of(guild["id"], SHARDS)]

    async def post(self, guild: dict[str, Any], user: dict[str, Any], text: str) -> tuple[dict[str, Any], Any]:
        """Post in #general and wait for the owning bot's outcome."""
        mid = snowflake()
        waiter = asyncio.ensure_future(self.owner(guild).wait_for(
            "moderation_outcome", check=lambda o: o.verdict.message.id == mid, timeout=5))
        msg = await self.fake.post(guild, self.fake.channel(guild, "general"), user, text, mid=mid)
        return msg, await waiter

    async def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` (``?`` placeholders) read straight from the mod log, bypassing the bots' store."""
        if self.db.startswith("postgresql://"):
            n = iter(range(1, 100))
            con = await asyncpg.connect(self.db)
            try:
                return [tuple(r) for r in await con.fetch(re.sub(r"\?", lambda _: f"${next(n)}", sql), *params)]
            finally:
                await con.close()
        lite = sqlite3.connect(self.db)
        try:
            return [tuple(r) for r in lite.execute(sql, params).fetchall()]
        finally:
            lite.close()


@pytest.fixture
async def shards(tmp_path: Path, shared_db: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Shards]:
    async with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.rest_base)
        monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway))
        answering(fake)
        s = Shards(fake, tmp_path, shared_db)
        try:  # a bot that failed to start is closed too (else its gateway reconnects forever)
            await s.start()
            yield s
        finally:
            await s.stop()


async def test_each_shard_gets_only_its_guilds(shards):
    """IDENTIFY carries [shard, 2]; each bot sees only the guild routed to its shard."""
    assert sorted(tuple(i["shard"]) for i in shards.fake.identifies) == [(0, 2), (1, 2)]
    for i, bot in enumerate(shards.bots):
        assert [str(g.id) for g in bot.guilds] == [shards.guilds[i]["id"]]


async def test_two_shard_bots_on_one_mod_log(shards):
    """Two shard-owning bots on one mod log: one verdict per message, gap-free unique case numbers per server,
    one raid per burst, and a review card decided once."""
    for g, member in zip(shards.guilds, shards.members, strict=True):
        for text in ("hello all", "identityhate one", "identityhate two", "nice weather"):
            await shards.post(g, member, text)
    assert await shards.rows("SELECT message_id, COUNT(*) FROM verdicts GROUP BY message_id HAVING COUNT(*) > 1") == []
    assert await shards.rows("SELECT COUNT(*) FROM verdicts") == [(8,)]
    for g in shards.guilds:
        numbers = [n for (n,) in await shards.rows("SELECT number FROM cases WHERE server_id = ? ORDER BY number",
                                             (g["id"],))]
        assert numbers == list(range(1, len(numbers) + 1)) and numbers
    assert [b.service.stats["messages"] for b in shards.bots] == [4, 4]

    raid_guild = shards.guilds[1]
    for i in range(5):
        user = shards.fake.new_user(raid_guild, f"raider{i}")
        await shards.post(raid_guild, user, f"identityhate raid {user['id']}")
    assert await shards.rows("SELECT COUNT(*) FROM raids WHERE server_id = ?", (raid_guild["id"],)) == [(1,)]
    assert await shards.rows("SELECT COUNT(*) FROM raids WHERE server_id = ?", (shards.guilds[0]["id"],)) == [(0,)]

    g = shards.guilds[0]
    msg, outcome = await shards.post(g, shards.members[0], "borderline needs a human")
    assert outcome.review_id is not None
    prefix = f"Review #{outcome.review_id} "
    await shards.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(prefix)
                                             for m in shards.fake.messages.values()))
    card = next(m for m in shards.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith(
        prefix))
    mod = next(m["user"] for m in g["members"] if g["mod_role"] in m["roles"])
    first = await shards.fake.click(g, mod, card, f"mod:review:{outcome.review_id}:delete")
    second = await shards.fake.click(g, mod, card, f"mod:review:{outcome.review_id}:warn")
    assert first.body["type"] == 7
    assert "already decided" in ephemeral_text(second)
    assert await shards.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,)) == [("deleted",)]
    assert len(shards.fake.find("DELETE", rf"/channels/.*/messages/{msg['id']}")) == 1
    assert await shards.rows("SELECT COUNT(*) FROM cases WHERE message_id = ? AND action = 'warn'", (msg["id"],)) == [(0,)]


async def test_start_up_recovery_runs_once_per_guild_in_the_process_of_its_shard(tmp_path, shared_db, monkeypatch):
    """What a stop left in a shared mod log (a ban still pending, a temporary ban that ended, raid mode that ran
    out) is carried out once, by the process that runs the guild's shard: one ban, one unban and one slowmode lift
    per guild, never a second from the other shard's process (before, both processes recovered every guild: two
    bans, and a second unban that Discord refused as Unknown Ban)."""
    from bot.core.models import ActionKind, CaseStatus
    from bot.store import open_store

    async with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.rest_base)
        monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway))
        answering(fake)
        s = Shards(fake, tmp_path, shared_db)
        now = datetime.now(UTC)
        banned = {}
        store = await open_store(shared_db)
        try:
            for g, member in zip(s.guilds, s.members, strict=True):
                await store.open_case("discord", g["id"], member["id"], ActionKind.BAN, "left pending by a stop",
                                      moderator_id=None, now=now - timedelta(seconds=30))
                gone = fake.new_user(g, f"tempbanned-{g['name']}")
                fake.add_ban(g, gone, "temporary")
                banned[g["id"]] = gone["id"]
                await store.open_case("discord", g["id"], gone["id"], ActionKind.BAN, "a week", status=CaseStatus.APPLIED,
                                      expires_at=now - timedelta(minutes=1), now=now - timedelta(days=7))
                await store.save_raid_mode("discord", g["id"], fake.channel(g, "general"), now - timedelta(minutes=5),
                                           30, None, now=now - timedelta(minutes=20))
        finally:
            await store.close()
        try:
            await s.start()
            await fake.wait_until(lambda: all(not fake.bans.get(g["id"], {}).get(banned[g["id"]]) for g in s.guilds))
            await asyncio.sleep(0.5)  # time for a second process's tries, had it made any
        finally:
            await s.stop()
        for g, member in zip(s.guilds, s.members, strict=True):
            assert len(fake.find("PUT", rf"/guilds/{g['id']}/bans/{member['id']}$")) == 1
            assert len(fake.find("DELETE", rf"/guilds/{g['id']}/bans/{banned[g['id']]}$")) == 1
            assert len(fake.find("PATCH", rf"/channels/{fake.channel(g, 'general')}$")) == 1
        statuses = await s.rows("SELECT server_id, status FROM cases WHERE reason = 'left pending by a stop'")
        assert sorted(statuses) == sorted((g["id"], "applied") for g in s.guilds)


def test_shard_owner_follows_discords_shard_formula():
    """A guild is owned by the process running shard ``(guild_id >> 22) % shard_count``; no split owns all."""
    from bot.adapters.discord.client import shard_owner
    from tests.discord.fake_discord import snowflake_on_shard

    ids = [snowflake_on_shard(k, 3) for k in (0, 1, 2, 1)]
    owns = shard_owner([1], 3)
    assert [owns(i) for i in ids] == [False, True, False, True]
    assert [shard_owner([0, 2], 3)(i) for i in ids] == [True, False, True, False]
    assert all(shard_owner(None, 3)(i) and shard_owner(None, None)(i) for i in ids)
    assert shard_owner([0], 2)("export") is False
