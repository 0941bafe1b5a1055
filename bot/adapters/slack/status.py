"""The Slack side of :mod:`bot.workflow.status`: the ready line and ``/modstatus`` (the twin of Discord's
``/modbot status``).

Layer: ``bot.adapters.slack``. :func:`register_status` is called from :func:`bot.adapters.slack.app.register`;
the command is acknowledged at once (Slack's 3 seconds), the caller's rights are read afresh from Slack
(:meth:`~bot.adapters.slack.app.SlackHandlers.actor`), and the platform-neutral
:func:`bot.workflow.status.status_report` writes the lines (and refuses anyone but a moderator).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.adapters.slack import blocks
from bot.adapters.slack.parts import SlackBotParts, SlackListeners
from bot.adapters.slack.translate import PLATFORM
from bot.logs import READY_LOGGER
from bot.workflow.authz import Refused
from bot.workflow.status import ServerView, database_location, ready_line, status_report

log = logging.getLogger(__name__)
ready_log = logging.getLogger(READY_LOGGER)

#: The slash commands this module listens to (also in ``config/slack-app-manifest.yml``).
STATUS_COMMANDS = ("/modstatus",)


def model_of(bot: SlackBotParts) -> tuple[str, str]:
    """``(name, version)`` of the running bot's scorer (``("?", "?")`` before it is loaded)."""
    scorer = getattr(getattr(bot, "runtime", None), "scorer", None)
    return str(getattr(scorer, "name", "?")), str(getattr(scorer, "version", "?"))


async def workspace_view(bot: SlackBotParts, team_id: str, name: str = "") -> ServerView:
    """The workspace with its effective policy."""
    return ServerView(id=team_id, name=name, policy=await bot.policies.get(PLATFORM, team_id))


async def announce_ready(bot: SlackBotParts) -> str:
    """Log the ready line (shown at the default log level): the workspace (name from ``auth.test``), the transport,
    the absolute database location, the model, unset channels and the workspace's policy file. Remembers when the
    bot became ready (``bot.ready_at``, UTC) for ``/modstatus``. Returns the line."""
    if bot.ready_at is None:
        bot.ready_at = datetime.now(UTC)
    name = ""
    try:
        name = str((await bot.app.client.auth_test()).get("team") or "")
    except Exception:  # noqa: BLE001 - the name is a nicety; the id is enough
        log.debug("auth.test for the workspace name failed", exc_info=True)
    view = await workspace_view(bot, bot.team_id, name)
    model, version = model_of(bot)
    policy_file = bot.settings.servers_dir / f"slack-{bot.team_id}.toml"
    line = ready_line(PLATFORM, [view], database=database_location(bot.settings.db_path), model=model,
                      model_version=version, mode=bot.slack.mode)
    line += f"; its policy file is {policy_file}"
    ready_log.info(line)
    return line


def register_status(app: AsyncApp, handlers: SlackListeners) -> None:
    """Attach ``/modstatus`` to a bolt app (``handlers``: the app's :class:`SlackHandlers`)."""

    async def on_status(ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        bot = handlers.bot
        team = command.get("team_id") or bot.team_id
        try:
            actor = await handlers.actor(team, command.get("user_id", ""))
            model, version = model_of(bot)
            lines = await status_report(
                actor, bot.store, PLATFORM, await workspace_view(bot, team), database=database_location(
                    bot.settings.db_path), model=model, model_version=version,
                started_at=bot.ready_at or datetime.now(UTC),
                service_stats=getattr(bot.service, "stats", None))
            text = "*ModBot in this workspace*\n" + "\n".join(lines)
        except Refused as exc:
            text = blocks.refusal(exc)
        await respond(text=text, response_type="ephemeral")

    for name in STATUS_COMMANDS:
        app.command(name)(on_status)
