"""Wire test: the Slack bot runs the one workflow lifecycle (bot.workflow.lifecycle) in the same order as the
Discord bot (tests/discord/test_lifecycle_wire.py::test_bot_runs_the_one_lifecycle_in_order)."""

from __future__ import annotations

import pytest

from bot.workflow.lifecycle import STEPS
from tests.slack.test_app_wire import SlackEnv, senv  # noqa: F401 - the fixture

pytestmark = pytest.mark.slack


async def test_slack_bot_runs_the_one_lifecycle_in_order(senv: SlackEnv) -> None:  # noqa: F811
    """Retention and watch before listening, recover and catch-up once the transport is up, then shutdown in
    order at close; the periodic purge runs between start and close."""
    bot = await senv.start()
    assert bot.lifecycle is not None
    assert bot.lifecycle.steps == list(STEPS[:4])
    task = bot.lifecycle.retention_task
    assert task is not None and not task.done()
    await senv.stop()
    assert bot.lifecycle.steps == list(STEPS)
    assert task.cancelled() and bot.lifecycle.retention_task is None
