"""What a running bot says about itself: the one ready line at start and ``/modbot status`` (Discord) /
``/modstatus`` (Slack), the same words on both platforms.

Layer: ``bot.workflow`` (platform-neutral; the standard library and ``bot.core`` only). The adapters gather the
facts (their servers, the database location, the loaded model) and call :func:`ready_line` or
:func:`status_report`; they only render the returned text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.core.models import ActionKind
from bot.core.policy import Policy
from bot.core.store_port import ReviewStore
from bot.workflow import words
from bot.workflow.authz import Actor, authorize

#: The channels a server needs before cards and the mod log can be posted: policy key -> what it is for.
CHANNELS = {"review_channel": "review cards", "mod_log_channel": "the mod log"}
#: Most open review items counted for ``status`` (the store's ``open_reviews`` reads at most this many).
OPEN_REVIEWS_COUNTED = 500


def database_location(db: str | os.PathLike[str]) -> str:
    """Where the mod log lives, for people: an absolute file path (resolved against the folder the process started
    in, symlinks followed), or a database URL with any password replaced by ``***`` (never logged in full)."""
    text = os.fspath(db)
    if "://" in text:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", text)
    return str(Path(text).expanduser().resolve())


def unset_channels(policy: Policy) -> list[str]:
    """The :data:`CHANNELS` keys ``policy.server`` leaves unset (``[]`` when both are set), in that order."""
    return [key for key in CHANNELS if not getattr(policy.server, key, None)]


@dataclass(frozen=True)
class ServerView:
    """One server (Discord guild, Slack workspace) as the bot sees it: id, display name and effective policy."""

    id: str
    name: str
    policy: Policy

    @property
    def label(self) -> str:
        """``Name (id)``, or the id alone when the name is unknown or the id itself."""
        return f"{self.name} ({self.id})" if self.name and self.name != self.id else self.id


def ready_line(platform: str, servers: Sequence[ServerView], *, database: str, model: str, model_version: str,
               identity: str = "", mode: str = "") -> str:
    """The one line a bot prints when it is ready, e.g. ``discord bot ready as ModBot#0001 in 2 servers: Main
    (1), Other (2); database /var/lib/modbot/modlog.db; model embedded-minilm version 6be930fdb033; not set yet:
    Other (2) review_channel, mod_log_channel (python -m bot policy check; /policy set)``.

    Args:
        platform: ``discord`` or ``slack``.
        servers: The servers it is in, with their effective policies.
        database: :func:`database_location` of the mod log.
        model / model_version: The loaded scorer's ``name`` and ``version``.
        identity: The bot's own name on the platform (optional).
        mode: Transport (Slack: ``socket`` or ``http``; optional).
    """
    who = f" as {identity}" if identity else ""
    how = f" ({mode} mode)" if mode else ""
    noun = "server" if platform == "discord" else "workspace"
    names = ", ".join(s.label for s in servers) or "none yet"
    line = (f"{platform} bot ready{who}{how} in {len(servers)} {noun}{'s' if len(servers) != 1 else ''}: {names}; "
            f"database {database}; model {model} version {model_version}")
    missing = [f"{s.label} {', '.join(keys)}" for s in servers if (keys := unset_channels(s.policy))]
    if missing:
        line += f"; not set yet: {'; '.join(missing)} (set them with /policy set or in the server's policy file)"
    return line


async def status_report(actor: Actor, store: ReviewStore, platform: str, server: ServerView, *, database: str, model: str,
                        model_version: str, started_at: datetime, service_stats: dict[str, int] | None = None,
                        problems: Sequence[str] = (), now: datetime | None = None) -> list[str]:
    """The lines of ``/modbot status`` for one server (moderators only: Manage Messages or a moderator role).

    Args:
        actor: Who asks (their permissions read from the platform, in this server).
        store: The mod log (``open_reviews(platform, server_id, limit)``).
        platform / server: Where it is asked.
        database / model / model_version: As for :func:`ready_line`.
        started_at: When this process became ready (UTC-aware); the uptime is counted from it.
        service_stats: The moderation service's counters (``messages``: judged since start).
        problems: Startup problems still true (missing intent or permissions), one sentence each.
        now: The clock (default ``datetime.now(UTC)``).

    Raises:
        Refused: the actor is not a moderator here.
    """
    authorize(actor, ActionKind.LOG)
    now = now or datetime.now(UTC)
    policy = server.policy
    open_items = await store.open_reviews(platform, server.id, limit=OPEN_REVIEWS_COUNTED)
    n_open = len(open_items)
    lines = [
        f"Running for {words.duration((now - started_at).total_seconds())} (since {started_at:%Y-%m-%d %H:%M} UTC).",
        f"Messages judged since then: {(service_stats or {}).get('messages', 0):,}.",
        f"Model: {model} version {model_version}.",
        f"Database: {database}.",
        f"Policy version {policy.version}{' (shadow mode: nothing is acted on)' if policy.shadow_mode else ''}.",
    ]
    for key, what in CHANNELS.items():
        value = getattr(policy.server, key, None)
        lines.append(f"{key} ({what}): {f'<#{value}>' if value else 'not set yet'}.")  # a mention on both platforms
    roles = list(policy.server.moderator_roles)
    lines.append(f"Moderator roles: {len(roles)}." if roles else
                 "Moderator roles: none (only members with Manage Messages may moderate).")
    more = "+" if n_open >= OPEN_REVIEWS_COUNTED else ""
    lines.append(f"Open review items: {n_open:,}{more}.")
    lines.extend(f"Problem: {p}" for p in problems)
    return lines
