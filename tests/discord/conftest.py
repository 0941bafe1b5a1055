"""Harness: a fake Discord on 127.0.0.1 (port 0) and the real discord.py client (``ModBot``) connected to it.

The only patches are discord.py's two configuration constants (``Route.BASE`` and
``DiscordWebSocket.DEFAULT_GATEWAY``), pointed at the fake. The scorer is a ``FakeScorer`` implementing the
``Scorer`` port with preset scores per text; the store is a real SQLite file on ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import discord
import pytest
import yarl
from discord.gateway import DiscordWebSocket

from bot.core.models import LABELS, Scores
from tests.discord.fake_discord import FakeDiscord
from tests.discord.replies import answering

#: Preset scores: a message containing the key (lower-case) gets these label scores; other labels 0.01.
SCORES: dict[str, dict[str, float]] = {
    "identityhate": {"identity_attack": 0.95, "toxicity": 0.90},
    "borderline": {"insult": 0.90, "toxicity": 0.50},
    "threatword": {"threat": 0.95, "toxicity": 0.85},
}


class FakeScorer:
    """Implements the ``Scorer`` port: preset scores by keyword, 0.01 otherwise."""

    name = "fake"
    version = "1"
    labels = LABELS

    def __init__(self) -> None:
        self.calls = 0

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """One :class:`Scores` per text."""
        self.calls += 1
        out = []
        for text in texts:
            values = {label: 0.01 for label in LABELS}
            for key, preset in SCORES.items():
                if key in text.lower():
                    values.update(preset)
            out.append(Scores(values=values, model=self.name))
        return out


class Env:
    """One test's world: the fake, its guild, policy folder, database, and the bot (restartable)."""

    def __init__(self, fake: FakeDiscord, tmp: Path) -> None:
        self.fake = fake
        self.tmp = tmp
        self.guild = fake.add_guild("Main")
        self.other = fake.add_guild("Other")
        self.general = fake.channel(self.guild, "general")
        self.review = fake.channel(self.guild, "review")
        self.modlog = fake.channel(self.guild, "mod-log")
        self.mod_role = self.guild["mod_role"]
        old = datetime.now(UTC) - timedelta(days=400)
        self.alice = fake.new_user(self.guild, "alice", created=old)
        self.bob = fake.new_user(self.guild, "bob", created=old)
        self.mod = fake.new_user(self.guild, "mod", created=old, roles=[self.mod_role])
        for m in self.guild["members"]:
            m["joined_at"] = (old + timedelta(days=1)).isoformat()
        self.db = tmp / "modlog.db"
        self.policy_dir = tmp / "config"
        (self.policy_dir / "servers").mkdir(parents=True)
        self.write_policy(self.guild, self.review, self.modlog)
        self.write_policy(self.other, fake.channel(self.other, "review"), fake.channel(self.other, "mod-log"))
        self.bot: Any = None
        self._task: asyncio.Task[None] | None = None

    def write_policy(self, guild: dict[str, Any], review: str, modlog: str, extra: str = "") -> None:
        (self.policy_dir / "servers" / f"discord-{guild['id']}.toml").write_text(
            f'[server]\nreview_channel = "{review}"\nmod_log_channel = "{modlog}"\n'
            f'moderator_roles = ["{guild["mod_role"]}"]\n'
            # the preset keyword stands for an identity attack, so it also names the (imaginary) identity
            f'[identity_target]\nextra_terms = ["identityhate"]\n{extra}')

    async def start(self) -> Any:
        """Start a fresh ``ModBot`` against the fake and wait for ``on_ready`` (event-based, 10 s cap)."""
        from bot.adapters.discord.client import ModBot

        self.bot = ModBot(db_path=self.db, policy_dir=self.policy_dir, scorer_factory=FakeScorer,
                          guild_ready_timeout=0.05, chunk_guilds_at_startup=False)
        self._task = asyncio.create_task(self.bot.start("fake-token-not-logged"))
        ready = asyncio.create_task(self.bot.ready_event.wait())
        done, _ = await asyncio.wait({ready, self._task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if self._task in done:
            self._task.result()
        assert ready in done, "bot did not become ready"
        return self.bot

    async def stop(self) -> None:
        """Close the bot (store and service closed by it)."""
        if self.bot is not None:
            await self.bot.close()
            if self._task is not None:
                await asyncio.wait({self._task}, timeout=5)
            self.bot = None

    async def settle(self) -> None:
        """Wait until the service has judged everything submitted (event-based)."""
        await asyncio.wait_for(self.bot.service.drain(), 5)

    async def post(self, user: dict[str, Any], text: str, *, channel: str | None = None,
                   edit_of: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
        """Post (or edit) a message and wait for the bot's outcome (the ``moderation_outcome`` event)."""
        from tests.discord.fake_discord import snowflake

        mid = edit_of["id"] if edit_of else snowflake()
        waiter = asyncio.ensure_future(self.bot.wait_for(
            "moderation_outcome", check=lambda o: o.verdict.message.id == mid, timeout=5))
        if edit_of:
            msg = await self.fake.edit(edit_of, text)
        else:
            msg = await self.fake.post(self.guild, channel or self.general, user, text, mid=mid)
        return msg, await waiter

    def card(self, title_prefix: str) -> dict[str, Any]:
        """The stored bot message in the review channel whose embed title starts with ``title_prefix``."""
        return next(m for m in self.fake.messages.values() if m["channel_id"] == self.review and m["embeds"]
                    and m["embeds"][0]["title"].startswith(title_prefix))

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Read the real SQLite file (separate connection)."""
        con = sqlite3.connect(self.db)
        con.row_factory = sqlite3.Row
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()

    def modlog_posts(self) -> list[Any]:
        return self.fake.find("POST", rf"/channels/{self.modlog}/messages")

    def review_posts(self) -> list[Any]:
        return self.fake.find("POST", rf"/channels/{self.review}/messages")


@pytest.fixture
async def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Env]:
    """A started fake Discord with two servers and a running bot."""
    async with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.rest_base)
        monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway))
        answering(fake)
        e = Env(fake, tmp_path)
        await e.start()
        try:
            yield e
        finally:
            await e.stop()
