"""Break-it: secrets in the logs at ``-vv`` (the CLI's documented DEBUG level)."""

from __future__ import annotations

import io
import logging

import pytest

from bot.logs import QUIET_AT_DEBUG, READY_LOGGER, setup_logging
from tests.discord.helpers import ephemeral_text

pytestmark = pytest.mark.discord


@pytest.fixture
def vv_logs():
    """``python -m bot ... -vv``: the bot's own logging setup at DEBUG, captured as the operator's log file."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    setup_logging(2)
    buf = io.StringIO()
    capture = logging.StreamHandler(buf)
    capture.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root.addHandler(capture)
    yield buf
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)
    logging.getLogger("bot.ingest").setLevel(logging.NOTSET)
    logging.getLogger(READY_LOGGER).setLevel(logging.NOTSET)
    for name in QUIET_AT_DEBUG:
        logging.getLogger(name).setLevel(logging.NOTSET)


async def test_interaction_tokens_do_not_reach_the_log_at_vv(vv_logs, env):
    """A member runs /mystatus. Its interaction token is a credential (for 15 minutes it lets anyone post and edit
    as the bot in that channel through /webhooks/<app>/<token>). With -vv, discord.py's DEBUG loggers write every
    gateway event (INTERACTION_CREATE with its "token") and every REST URL (/interactions/<id>/<token>/callback,
    /webhooks/<app>/<token>) into the bot's log; tokens must never reach the logs."""
    before = set(env.fake.interactions)
    cb = await env.fake.slash(env.guild, env.alice, "mystatus", [])
    assert cb.body["type"] in (4, 5) or ephemeral_text(cb)
    (token,) = set(env.fake.interactions) - before
    # the fake Discord's own access log (aiohttp.access) is the test's server, not the bot's
    logged = "\n".join(line for line in vv_logs.getvalue().splitlines() if not line.startswith("aiohttp.access:"))
    assert "fake-token-not-logged" not in logged  # the bot token itself stays out
    assert token not in logged, [line for line in logged.splitlines() if token in line][:3]
    assert "DEBUG" in logging.getLevelName(logging.getLogger("bot").getEffectiveLevel())  # our own DEBUG stays
