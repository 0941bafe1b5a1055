"""A chat export of a guild scanned into the mod log (platform ``export``, the guild's id) follows the guild's
``/policy set`` overrides as it follows the guild's policy file: a stricter tier judges the scan, a shorter
``server.retention_days`` erases its text. Real policy files, a real SQLite mod log, the real ``run_scan`` job
(the suite's keyword FakeScorer)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from bot.config import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.runtime import OverrideBridge
from bot.settings import Settings
from bot.store import open_store
from bot.workflow.retention import Retention
from tests.fakes import FakeScorer
from tests.store_factories import T0, make_record
from tests.test_replay import RULES, _args, _rows, _scan

GUILD = "123456789012345678"  # a snowflake: a DiscordChatExporter export of that guild


def _guild_export(tmp_path: Path) -> Path:
    """A DiscordChatExporter JSON export of guild :data:`GUILD`: "good morning" and "what a moron" (insult 0.6)."""
    messages = [{"id": str(10_000 + i), "type": "Default", "timestamp": f"2024-03-01T10:0{i}:00+00:00",
                 "content": text, "author": {"id": str(900 + i), "name": f"member{i}", "isBot": False}}
                for i, text in enumerate(["good morning", "what a moron"])]
    p = tmp_path / "guild.json"
    p.write_text(json.dumps({"guild": {"id": GUILD, "name": "Main"}, "channel": {"id": "222", "name": "general",
                                                                                "type": "GuildTextChat"},
                             "messages": messages, "messageCount": len(messages)}), encoding="utf-8")
    return p


async def _set(db: Path, servers: Path, key: str, value: object) -> None:
    """``/policy set key value`` in guild :data:`GUILD` (what the bot's command stores in the mod log)."""
    store = await open_store(db)
    try:
        await PolicyRegistry(DEFAULT_POLICY_PATH, servers, store=OverrideBridge(store)).set_override(
            "discord", GUILD, key, value, "mod")
    finally:
        await store.close()


def test_a_scan_of_a_guilds_export_follows_its_policy_set_overrides(tmp_path):
    """The guild's moderators lowered insult's review tier to 0.5 with ``/policy set``: scanning the guild's export
    into the same mod log flags "what a moron" (0.6) as the bot would in the guild. The scan judged with the
    guild's file and ignored its overrides, so the export was judged by a policy the guild no longer has."""
    import asyncio

    servers = tmp_path / "servers"
    servers.mkdir()
    db = tmp_path / "mod.db"
    asyncio.run(_set(db, servers, "thresholds.insult.review", 0.5))
    out = tmp_path / "v.jsonl"
    assert _scan(_args([_guild_export(tmp_path)], out=out), Settings(db_path=db, servers_dir=servers),
                 FakeScorer(RULES)) == 0
    rows = {r["text"]: r for r in _rows(out).values()}
    assert rows["what a moron"]["flagged"] and rows["what a moron"]["labels"] == ["insult"]
    assert not rows["good morning"]["flagged"]


async def test_retention_erases_a_guilds_export_by_its_policy_set_retention(tmp_path):
    """``/policy set server.retention_days 7`` in the guild: the bot's retention erases its scanned export's
    10-day-old text too, as the guild's own; it kept it for the file's (here the default's) 30 days. A change
    made after the export's policy was read applies at the next purge."""
    servers = tmp_path / "servers"
    servers.mkdir()
    db = tmp_path / "mod.db"
    store = await open_store(db)
    try:
        await store.record_batch([make_record("m1", server=GUILD, platform="export"),
                                  make_record("m2", server=GUILD, platform="discord")])
        policies = PolicyRegistry(DEFAULT_POLICY_PATH, servers, store=OverrideBridge(store))
        retention = Retention("discord", store, policies)
        assert await retention.purge(now=T0 + timedelta(days=10)) == 0  # 30 days: kept
        await policies.set_override("discord", GUILD, "server.retention_days", 7, "mod")
        assert (await policies.get("export", GUILD)).server.retention_days == 7
        assert await retention.purge(now=T0 + timedelta(days=10)) == 2
        assert await store.message_excerpt("export", GUILD, "m1") == ("c1", "")
    finally:
        await store.close()


async def test_an_export_that_is_no_guilds_keeps_its_own_policy(tmp_path):
    """An export under a name that is no guild's or workspace's id (a JSON lines file) takes no server's
    overrides; a guild's export takes its guild's, not another platform's."""
    servers = tmp_path / "servers"
    servers.mkdir()
    store = await open_store(tmp_path / "mod.db")
    try:
        policies = PolicyRegistry(DEFAULT_POLICY_PATH, servers, store=OverrideBridge(store))
        await policies.set_override("slack", GUILD, "server.retention_days", 5, "mod")
        await policies.set_override("discord", "chat", "server.retention_days", 6, "mod")
        assert (await policies.get("export", GUILD)).server.retention_days == 30
        assert (await policies.get("export", "chat")).server.retention_days == 30
        assert PolicyRegistry.override_keys("export", "T0ABCDEF") == [("slack", "T0ABCDEF"), ("export", "T0ABCDEF")]
    finally:
        await store.close()
