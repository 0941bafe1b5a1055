"""Members' names on Slack: judge a member's display name (``profile.display_name``, else ``profile.real_name``)
on ``team_join`` and ``user_change`` (issue 25 item 16).

Layer: adapters (thin): the judging, the case and the review card live in :mod:`bot.workflow.names`, which skips a
name it judged last for that member (``user_change`` fires for every profile edit: status, photo, time zone).
Registered from :func:`bot.adapters.slack.app.register`; the ``team_join`` handler there calls :func:`judge_user`
too (bolt runs one listener per event type). Needs the ``users:read`` scope the bot already has.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.adapters.slack.parts import SlackListeners

log = logging.getLogger(__name__)


def shown_name(user: dict[str, Any]) -> tuple[str, str]:
    """``(name, kind)`` of a Slack ``user`` object: the display name, else the full name, else the username."""
    profile = found if isinstance(found := user.get("profile"), dict) else {}
    for key, kind in (("display_name", "display name"), ("real_name", "full name")):
        value = profile.get(key) if isinstance(profile.get(key), str) else None
        if value and value.strip():
            return value, kind
    name = user.get("name")
    return (name if isinstance(name, str) else ""), "username"


async def judge_user(handlers: SlackListeners, body: dict[str, Any], event: dict[str, Any]) -> None:
    """Judge the name of the ``user`` object in a ``team_join`` / ``user_change`` event (a bare id: nothing)."""
    user = event.get("user")
    if not isinstance(user, dict) or not user.get("id") or handlers.bot.closing:
        return
    if user.get("is_bot") or user.get("deleted"):
        return
    team = body.get("team_id") or handlers.bot.team_id
    name, kind = shown_name(user)
    try:
        await handlers.bot.workflow.names.name_seen(team, user["id"], name, kind=kind)
    except Exception:  # a failed judgement of a name must not stop the bot; logged with the member id
        log.exception("judging the name of member %s failed", user["id"], extra={"server": team})


def register_names(app: AsyncApp, handlers: SlackListeners) -> None:
    """Attach ``user_change`` to a bolt app (``team_join`` is shared with the join-burst handler)."""

    async def on_user_change(body: dict[str, Any], event: dict[str, Any]) -> None:
        await judge_user(handlers, body, event)

    app.event("user_change")(on_user_change)
