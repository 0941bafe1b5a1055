"""Fixtures: a fresh :class:`FakeSlack` per test, the bot on it (``env``), and a helper serving a bolt ``AsyncApp``
on 127.0.0.1:0."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from tests.slack.fake_slack import FakeSlack

if TYPE_CHECKING:
    from tests.slack.test_app_wire import SlackEnv


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A running fake Slack on 127.0.0.1 (port 0), closed after the test."""
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[SlackEnv]:
    """The Slack bot (:class:`tests.slack.test_app_wire.SlackEnv`: the real app, a real SQLite mod log) on a fresh
    fake Slack, stopped after the test. A test module may define its own ``env`` (it then takes precedence)."""
    from tests.slack.test_app_wire import SlackEnv

    async with FakeSlack() as fake:
        e = SlackEnv(fake, tmp_path)
        try:
            yield e
        finally:
            await e.stop()


def bolt_app(fake: FakeSlack, **kwargs: object) -> AsyncApp:
    """A bolt ``AsyncApp`` whose Web API client points at the fake (bot token, base_url with trailing slash)."""
    client = AsyncWebClient(base_url=fake.api_url, token=fake.bot_token)
    return AsyncApp(client=client, signing_secret=fake.signing_secret, **kwargs)  # type: ignore[arg-type]


@asynccontextmanager
async def serve_http(app: AsyncApp, path: str = "/slack/events") -> AsyncIterator[str]:
    """Serve ``app`` with bolt's own aiohttp server app on 127.0.0.1:0; yields the endpoint URL."""
    runner = web.AppRunner(app.web_app(path=path), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        await runner.cleanup()
