"""Burst through the real discord.py client: interaction acks while 2,000 real chat messages are judged.

Run: ``python bench/discord_burst.py [--messages 2000] [--seconds 4] [--ack-every 1.0]`` from a checkout (it uses
the local fake Discord of ``tests/discord``, so it is a script, not part of the package). Needs the chat exports
(``$MODBOT_SHARED/data/chats``) and loads the embedded model. Prints figures only.

What it does: starts the fake Discord on 127.0.0.1 and the real ``ModBot`` (discord.py ``AutoShardedBot``, real
SQLite file, the embedded model) connected to it; posts ``--messages`` real chat messages as MESSAGE_CREATE
events over ``--seconds`` seconds from 50 members; meanwhile, every ``--ack-every`` seconds until every message
is judged, a moderator runs ``/modstats`` (an INTERACTION_CREATE that reads the mod log) and the time until the
bot's interaction callback reaches the fake is recorded (Discord's deadline: 3 s). Also: the largest number of
messages held by the service, the process's resident memory (start and peak) and the time to judge the burst.
The fake runs in the bot's event loop, as the wire tests do, so its own work counts against the bot's latency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import discord  # noqa: E402
import yarl  # noqa: E402
from discord.gateway import DiscordWebSocket  # noqa: E402

from bot.jobs.bench import load_chat, rss_now_mb  # noqa: E402
from tests.discord.fake_discord import FakeDiscord, snowflake  # noqa: E402

DEADLINE_S = 3.0


async def burst(n: int, seconds: float, ack_every: float, scorer: Any) -> dict[str, Any]:
    """Run one burst; return the figures (see the module docstring)."""
    from bot.adapters.discord.client import ModBot

    messages = load_chat(n)
    async with FakeDiscord() as fake:
        base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
        discord.http.Route.BASE = fake.rest_base  # type: ignore[misc]
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                return await _run(fake, Path(tmp), messages, seconds, ack_every, scorer, ModBot)
        finally:
            discord.http.Route.BASE = base  # type: ignore[misc]
            DiscordWebSocket.DEFAULT_GATEWAY = gateway


async def _run(fake: FakeDiscord, tmp: Path, messages: list[Any], seconds: float, ack_every: float, scorer: Any,
               bot_class: Any) -> dict[str, Any]:
    old = datetime.now(UTC) - timedelta(days=400)
    guild = fake.add_guild("Burst")
    general, review, modlog = (fake.channel(guild, c) for c in ("general", "review", "mod-log"))
    mod = fake.new_user(guild, "mod", created=old, roles=[guild["mod_role"]])
    members = [fake.new_user(guild, f"member{i}", created=old) for i in range(50)]
    for m in guild["members"]:
        m["joined_at"] = (old + timedelta(days=1)).isoformat()
    (tmp / "config" / "servers").mkdir(parents=True)
    (tmp / "config" / "servers" / f"discord-{guild['id']}.toml").write_text(
        f'[server]\nreview_channel = "{review}"\nmod_log_channel = "{modlog}"\n'
        f'moderator_roles = ["{guild["mod_role"]}"]\n', encoding="utf-8")
    bot = bot_class(db_path=tmp / "burst.db", policy_dir=tmp / "config", scorer_factory=lambda: scorer,
                    guild_ready_timeout=0.05, chunk_guilds_at_startup=False)
    judged = 0
    all_judged = asyncio.Event()

    async def on_moderation_outcome(_outcome: Any) -> None:
        nonlocal judged
        judged += 1
        if judged >= len(messages):
            all_judged.set()

    bot.add_listener(on_moderation_outcome)
    runner = asyncio.create_task(bot.start("fake-token-not-logged"))
    await asyncio.wait_for(bot.ready_event.wait(), 60)
    rss0 = rss_now_mb()
    peak = {"held": 0, "rss": rss0}
    acks: list[float] = []

    async def post_all() -> None:
        start = time.perf_counter()
        for i, m in enumerate(messages):
            delay = start + i * seconds / len(messages) - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await fake.post(guild, general, members[i % len(members)], m.text[:2000] or ".")

    async def ack_loop() -> None:
        while not all_judged.is_set():
            payload = fake.interaction_base(guild, mod, general)
            payload.update(type=2, data={"id": snowflake(), "name": "modstats", "type": 1, "options": [],
                                         "guild_id": guild["id"], "resolved": {}})
            t = time.perf_counter()
            await fake.send_interaction(payload)
            await fake.wait_for("POST", rf"/interactions/{payload['id']}/.*/callback", timeout=60)
            acks.append(time.perf_counter() - t)
            peak["held"] = max(peak["held"], bot.service.pending)
            peak["rss"] = max(peak["rss"], rss_now_mb())
            await asyncio.sleep(ack_every)

    t0 = time.perf_counter()
    acker = asyncio.create_task(ack_loop())
    await post_all()
    posted = time.perf_counter() - t0
    await asyncio.wait_for(all_judged.wait(), 3600)
    dt = time.perf_counter() - t0
    await acker
    await bot.close()
    await asyncio.wait({runner}, timeout=10)
    acks.sort()
    return {
        "messages": len(messages), "posted_s": posted, "judged_s": dt, "msgs_per_s": len(messages) / dt,
        "acks": len(acks), "ack_p50_ms": statistics.median(acks) * 1000,
        "ack_p99_ms": acks[min(len(acks) - 1, int(0.99 * len(acks)))] * 1000, "ack_max_ms": acks[-1] * 1000,
        "acks_over_3s": sum(1 for a in acks if a > DEADLINE_S), "peak_held": peak["held"],
        "queue_max": bot.settings.queue_max, "rss_start_mb": rss0, "rss_peak_mb": peak["rss"],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the burst and print one line of figures."""
    ap = argparse.ArgumentParser(prog="discord_burst")
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds over which the burst is posted")
    ap.add_argument("--ack-every", type=float, default=1.0, help="seconds between two /modstats interactions")
    args = ap.parse_args(argv)
    from bot.runtime import load_scorer
    from bot.settings import Settings

    scorer = load_scorer(Settings(model="embedded", int8=bool(os.environ.get("MODBOT_INT8"))))
    r = asyncio.run(burst(args.messages, args.seconds, args.ack_every, scorer))
    print(f"discord.py burst of {r['messages']:,} messages posted in {r['posted_s']:.1f} s, judged in "  # noqa: T201
          f"{r['judged_s']:.1f} s ({r['msgs_per_s']:.1f} msg/s); /modstats acks: {r['acks']}, p50 "
          f"{r['ack_p50_ms']:.0f} ms, p99 {r['ack_p99_ms']:.0f} ms, max {r['ack_max_ms']:.0f} ms, "
          f"{r['acks_over_3s']} over 3 s; held <= {r['peak_held']:,} (queue bound {r['queue_max']:,}); RSS "
          f"{r['rss_start_mb']:.0f} -> {r['rss_peak_mb']:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
