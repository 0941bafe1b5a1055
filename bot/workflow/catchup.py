"""Catch-up after a restart: messages posted while the bot was down are judged once, through the same pipeline.

Layer: ``bot.workflow``. Platform-neutral: each adapter hands in its readable channels as :class:`ChannelHistory`
(Discord: ``GET /channels/{id}/messages?after=``; Slack: ``conversations.history?oldest=``), this module decides
where each channel's catch-up starts and feeds the messages to :meth:`ModerationWorkflow.moderate`, whose dedupe
(one verdict per platform, server, message id) makes a second catch-up of the same history a no-op.

Where a channel starts (``now`` is the time of the catch-up, bounds from settings, docs/live-path.md):

* a channel with a recorded message: after that message, but never earlier than ``now - hours``;
* a channel with none, in a server with recorded messages (a channel created while the bot was down): after the
  server's latest recorded message time, never earlier than ``now - hours``;
* a server with no recorded message at all (the bot was just installed): no catch-up (old history is not judged).

At most ``messages`` messages per channel are judged; the platform decides which (Discord: the oldest after the
start, in order; Slack: the newest, judged oldest first). A channel cut short is logged with its id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from bot.core.models import Message
from bot.core.service import Outcome
from bot.core.store_port import CatchupStore
from bot.workflow.common import Observer

log = logging.getLogger(__name__)

#: Messages submitted together before waiting for their outcomes (one platform page: Discord's limit is 100).
PAGE = 100


@dataclass(frozen=True, slots=True)
class CatchupBounds:
    """How far back catch-up reads, per channel.

    Attributes:
        messages: Most messages judged per channel (``MODBOT_CATCHUP_MESSAGES``, default 200; 0: no catch-up).
        hours: Oldest message read, in hours before the catch-up (``MODBOT_CATCHUP_HOURS``, default 24).
    """

    messages: int = 200
    hours: float = 24.0


class ChannelHistory(Protocol):
    """One channel (or thread) the bot can read, as a platform adapter exposes its history."""

    channel_id: str

    def after(self, message_id: str | None, since: datetime, limit: int) -> AsyncIterator[Message]:
        """Up to ``limit`` messages of members (not the bot's own, no system messages) posted after
        ``message_id`` (or, when ``None``, after ``since``), oldest first, as core messages."""
        ...


@dataclass
class CatchupReport:
    """What one server's catch-up did.

    Attributes:
        channels: Channels read.
        messages: Messages submitted (already judged ones come back as duplicates and are not counted in
            ``judged``).
        judged: Messages judged now (new verdicts).
        cut_short: Channels where the ``messages`` bound was reached (more may have been posted).
        failed: Channels whose history could not be read (``(channel_id, reason)``).
    """

    channels: int = 0
    messages: int = 0
    judged: int = 0
    cut_short: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def start_of(latest: dict[str, tuple[str, datetime]], channel_id: str, now: datetime,
             bounds: CatchupBounds) -> tuple[str | None, datetime] | None:
    """Where a channel's catch-up starts: ``(after_message_id or None, since)``, or ``None`` for no catch-up
    (see the module docstring). ``latest`` is :meth:`CatchupStore.latest_messages` of the server."""
    if not latest or bounds.messages <= 0:
        return None
    floor = now - timedelta(hours=bounds.hours)
    last = latest.get(channel_id)
    if last is not None:
        message_id, at = last
        return (message_id, at) if at >= floor else (None, floor)
    server_last = max(at for _, at in latest.values())
    return None, max(server_last, floor)


class Moderates(Protocol):
    """What :func:`catch_up` uses of :class:`~bot.workflow.workflow.ModerationWorkflow`."""

    async def moderate(self, message: Message, observers: Iterable[Observer] = ()) -> Outcome | None: ...


async def catch_up(workflow: Moderates, store: CatchupStore, platform: str, server_id: str,
                   channels: Sequence[ChannelHistory], *, now: datetime, bounds: CatchupBounds,
                   observers: Sequence[Observer] = ()) -> CatchupReport:
    """Judge what was posted in ``channels`` of one server while the bot was down (see the module docstring).

    Messages go through ``workflow.moderate`` (judged, recorded, carried out) a page at a time, in order; the
    service's bounded queue applies (``moderate`` waits for a slot). A channel whose history cannot be read is
    logged and skipped; the others go on.
    """
    report = CatchupReport()
    latest = await store.latest_messages(platform, server_id)
    for ch in channels:
        start = start_of(latest, ch.channel_id, now, bounds)
        if start is None:
            continue
        report.channels += 1
        after_id, since = start
        n = 0
        page: list[asyncio.Future[Outcome | None]] = []
        try:
            async for message in ch.after(after_id, since, bounds.messages):
                n += 1
                page.append(asyncio.ensure_future(workflow.moderate(message, observers=observers)))
                if len(page) >= PAGE:
                    report.judged += _judged(await asyncio.gather(*page))
                    page = []
        except Exception as exc:  # noqa: BLE001 - one unreadable channel must not stop the others
            report.failed.append((ch.channel_id, f"{type(exc).__name__}: {exc}"))
            log.warning("catch-up: cannot read the history of channel %s in %s %s: %s", ch.channel_id, platform,
                        server_id, exc)
        report.judged += _judged(await asyncio.gather(*page))
        report.messages += n
        if n >= bounds.messages:
            report.cut_short.append(ch.channel_id)
            log.warning("catch-up: channel %s in %s %s reached the bound of %d messages; older or later ones "
                        "posted while the bot was down are not judged", ch.channel_id, platform, server_id,
                        bounds.messages)
    if report.messages:
        log.info("catch-up %s %s: %d channel(s), %d message(s) read, %d judged", platform, server_id,
                 report.channels, report.messages, report.judged)
    return report


def _judged(outcomes: Sequence[Outcome | None]) -> int:
    return sum(1 for o in outcomes if o is not None and not o.duplicate)


__all__ = ["PAGE", "CatchupBounds", "CatchupReport", "ChannelHistory", "catch_up", "start_of"]
