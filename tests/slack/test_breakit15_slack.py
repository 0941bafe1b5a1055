"""The Slack HTTP Events API endpoint under slow clients (fifteenth session's break-it pass): the real bolt app of
``SlackBot`` in http mode on 127.0.0.1, a real SQLite mod log, the fake Slack, raw sockets as the slow clients."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from bot.adapters.slack.run import SlackBot, SlackSettings
from tests.fakes import FakeScorer
from tests.slack.test_app_wire import SCORES, SlackEnv

pytestmark = pytest.mark.slack


async def _until_closed(port: int, first: bytes, trickle: bytes, limit_s: float) -> tuple[float, bytes]:
    """Send ``first``, then ``trickle`` every 0.25 s, until the server answers or closes: ``(seconds, answer)``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    try:
        if first:
            writer.write(first)
            await writer.drain()
        while time.monotonic() - started < limit_s:
            try:
                data = await asyncio.wait_for(reader.read(4096), 0.25)
                return time.monotonic() - started, data or b"(closed)"
            except TimeoutError:
                pass
            if trickle:
                try:
                    writer.write(trickle)
                    await writer.drain()
                except (ConnectionError, OSError):
                    return time.monotonic() - started, b"(closed)"
        return limit_s, b""
    finally:
        writer.close()


async def test_slow_and_idle_connections_to_the_events_endpoint_are_closed(env: SlackEnv):
    """The HTTP Events API must be reachable from the internet, and its aiohttp server kept an idle connection, a
    trickle of headers and a trickle of body open for ever (aiohttp's handler default: an hour idle, no body
    bound): anyone could hold its connections until the process ran out of file descriptors. An idle or half-sent
    request is closed after the idle timeout, a body not received in time gets 408, and Slack's own events are
    still served."""
    fake = env.fake
    settings = SlackSettings(bot_token=fake.bot_token, app_token=fake.app_token, signing_secret=fake.signing_secret,
                             mode="http", host="127.0.0.1", port=0, api_url=fake.api_url, idle_timeout_s=2.0,
                             body_timeout_s=1.5)
    env.bot = SlackBot(settings, db_path=env.db, policy_dir=env.policy_dir, scorer_factory=lambda: FakeScorer(SCORES))
    await env.bot.start()
    env.url = f"http://127.0.0.1:{env.bot.port}/slack/events"
    port = env.bot.port
    assert port is not None
    body = json.dumps({"type": "url_verification", "challenge": "x"}).encode()
    head = (f"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    idle, headers, slow = await asyncio.gather(
        _until_closed(port, b"", b"", 15),
        _until_closed(port, b"POST /slack/events HTTP/1.1\r\nHost: x\r\n", b"X-A: b\r\n", 15),
        _until_closed(port, head + body[:5], b" ", 15))
    assert idle[1] == b"(closed)" and 1.5 <= idle[0] < 6
    assert headers[1] == b"(closed)" and 1.5 <= headers[0] < 6
    assert slow[1].startswith(b"HTTP/1.1 408") and 1.0 <= slow[0] < 6
    await env.say(env.mods.id, "see you all at the meetup tomorrow")  # a signed event is still judged
