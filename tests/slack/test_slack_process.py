"""``python -m bot slack`` as a process: the real model, Socket Mode against the local fake Slack, SIGTERM drains."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.slack.fake_slack import FakeSlack

pytestmark = [pytest.mark.slack, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


async def test_python_m_bot_slack_judges_over_socket_mode_and_stops_cleanly_on_sigterm(tmp_path):
    """The CLI process connects through apps.connections.open, acknowledges an events_api envelope, sends an
    identity attack to the review channel (no admin token: not deleted, author told privately), and on SIGTERM
    exits 0 with the case recorded."""
    async with FakeSlack() as fake:
        review = fake.add_channel("mod-review", private=True, members=[fake.admin.id])
        servers = tmp_path / "servers"
        servers.mkdir()
        (servers / f"slack-{fake.team_id}.toml").write_text(
            f'[server]\nreview_channel = "{review.id}"\nmod_log_channel = "{review.id}"\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MODBOT_", "DISCORD_"))}
        env.update({"SLACK_BOT_TOKEN": fake.bot_token, "SLACK_APP_TOKEN": fake.app_token,
                    "SLACK_API_URL": fake.api_url, "MODBOT_SLACK_MODE": "socket", "MODBOT_DB": str(tmp_path / "m.db"),
                    "MODBOT_SERVERS_DIR": str(servers), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "slack", cwd=REPO, env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            await fake.wait_for_connections(1, timeout=180)  # the model loads first
            event = fake.message_event(fake.general.id, fake.member.id,
                                       "trans people are disgusting freaks and should not exist")
            envelope = await fake.send_envelope("events_api", fake.event_callback(event))
            acked = await fake.wait_for_ack(envelope.envelope_id, timeout=10)
            assert acked.ack_latency_s is not None and acked.ack_latency_s < 3
            await fake.wait_until(lambda: any(c.params.get("channel") == review.id and "Review #1" in str(
                c.params.get("text")) for c in fake.calls_of("chat.postMessage")), timeout=60)
            assert fake.calls_of("chat.delete") == []
            assert any(e["user"] == fake.member.id for e in fake.ephemerals)
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()[-2000:]
        assert fake.bot_token not in (out + err).decode()  # tokens never reach the logs
    con = sqlite3.connect(tmp_path / "m.db")
    try:
        labels = con.execute("SELECT labels FROM verdicts").fetchone()[0]
        cases = con.execute("SELECT action, status FROM cases").fetchall()
    finally:
        con.close()
    assert "identity_attack" in labels
    assert cases == [("delete", "failed")]  # deleting needs an admin token: recorded truthfully


async def test_sigterm_during_start_still_closes_the_mod_log_and_exits(tmp_path):
    """A SIGTERM that arrives right after the Socket Mode connection, while start is still recovering and catching
    up, exits 0 within seconds: the mod log is closed on that path too (its aiosqlite worker thread is not a daemon,
    so an unclosed connection kept the process alive at exit for ever). Three stops, because how far start has got
    when the signal lands varies; before the fix two of three such stops hung."""
    async with FakeSlack() as fake:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MODBOT_", "DISCORD_"))}
        env.update({"SLACK_BOT_TOKEN": fake.bot_token, "SLACK_APP_TOKEN": fake.app_token,
                    "SLACK_API_URL": fake.api_url, "MODBOT_SLACK_MODE": "socket", "MODBOT_DB": str(tmp_path / "m.db"),
                    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        for attempt in range(3):
            proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "slack", cwd=REPO, env=env,
                                                        stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.PIPE)
            try:
                await fake.wait_for_connections(attempt + 1, timeout=180)
            finally:
                proc.send_signal(signal.SIGTERM)
            try:
                out, err = await asyncio.wait_for(proc.communicate(), 30)
            except TimeoutError:
                proc.kill()
                await proc.communicate()
                pytest.fail(f"stop {attempt + 1}: the process did not exit within 30 s of SIGTERM")
            assert proc.returncode == 0, err.decode()[-2000:]


async def test_sigterm_stops_a_bot_started_with_sigint_ignored(tmp_path):
    """A bot started as ``python -m bot slack &`` from a script inherits SIGINT ignored; SIGTERM is turned into
    SIGINT inside the process, which was then dropped: the bot never exited (seen when the test suite itself ran
    in the background). It exits 0 now."""
    async with FakeSlack() as fake:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MODBOT_", "DISCORD_"))}
        env.update({"SLACK_BOT_TOKEN": fake.bot_token, "SLACK_APP_TOKEN": fake.app_token,
                    "SLACK_API_URL": fake.api_url, "MODBOT_SLACK_MODE": "socket", "MODBOT_DB": str(tmp_path / "m.db"),
                    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "slack", cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            await fake.wait_for_connections(1, timeout=180)
        finally:
            proc.send_signal(signal.SIGTERM)
        try:
            _, err = await asyncio.wait_for(proc.communicate(), 30)
        except TimeoutError:
            proc.kill()
            await proc.communicate()
            pytest.fail("the process did not exit within 30 s of SIGTERM")
        assert proc.returncode == 0, err.decode()[-2000:]
