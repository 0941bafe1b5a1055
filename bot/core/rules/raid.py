"""Raid / brigade detection and raid mode, per channel or thread.

Layer: ``bot.core``. Standard library only (plus the core's own modules). Time is message time.

A *burst* is, within ``window_s`` in one channel (a thread counts toward its parent channel), flagged messages from ``flagged_burst`` distinct
members, or messages from ``new_member_burst`` distinct new members. One member posting many flagged messages is
flood / escalation's business, not a raid, hence distinct members.

The first message that completes a burst returns one :class:`~bot.core.models.RaidAlert`. Later counting
messages (flagged or from new members) return ``None`` and extend the burst; a new alert for the channel is
possible only ``cooldown_s`` after the burst's last counting message. So a raid of fifty accounts raises one alert,
and a second raid after a quiet cooldown raises a second.

An alert switches raid mode on for the channel (if ``raid_mode``) until ``raid_mode_duration_s`` after the burst's
last counting message. Moderators switch it on or off by hand (``/raidmode on|off``), per channel or server-wide;
a manual ``on`` lasts until a manual ``off``.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from bot.core.models import Message, RaidAlert
from bot.core.rules._util import epoch_s
from bot.core.rules.settings import RaidSettings

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Event:
    t: float
    when: datetime
    author: str
    flagged: bool
    new: bool


@dataclass(slots=True)
class _Channel:
    events: deque[_Event]
    last_t: float = float("-inf")
    quiet_after: float = float("-inf")  # no alert before this time (cooldown)
    mode_until: float = float("-inf")  # automatic raid mode ends at this time


class RaidDetector:
    """Sliding-window raid detection for all servers at once; bounded memory.

    Args:
        settings: Default raid settings (a call may pass the server's own).
    """

    def __init__(self, settings: RaidSettings | None = None) -> None:
        self.settings = settings or RaidSettings()
        self._channels: OrderedDict[tuple[str, str], _Channel] = OrderedDict()
        # (server id, channel id or None for the whole server) -> True; set by moderators only.
        self._manual: dict[tuple[str, str | None], bool] = {}

    def __len__(self) -> int:
        """Channels tracked, for tests and metrics."""
        return len(self._channels)

    def observe(
        self,
        message: Message,
        *,
        flagged: bool,
        is_new_member: bool,
        settings: RaidSettings | None = None,
    ) -> RaidAlert | None:
        """Record one message and return an alert if it completes a burst.

        Args:
            message: The message; ``created_at`` is the clock; the place is the channel, and a thread counts
                toward its parent channel (a brigade spread over a post's thread and its channel is one burst).
            flagged: The message was flagged (review or action) by the model or a rule.
            is_new_member: The author is a new member (see :func:`bot.core.rules.accounts.is_new_member`).
            settings: The server's raid settings; default: the detector's.

        Returns:
            A :class:`RaidAlert` once per burst (``reason`` ``"flagged_burst"`` or ``"new_member_burst"``,
            ``members`` the distinct members of that burst in order of first message, ``count`` their messages
            in the window, ``started_at`` the first one's time), else ``None``.

        Raises:
            ValueError: ``message.created_at`` is naive.
        """
        s = settings or self.settings
        if not s.enabled or not (flagged or is_new_member) or message.created_at is None:  # untimed: no window
            return None
        now = epoch_s(message.created_at)
        key = (message.server.id, place_of(message))
        ch = self._channels.get(key)
        if ch is None:
            ch = _Channel(events=deque(maxlen=max(s.flagged_burst, s.new_member_burst) * 16))
            self._channels[key] = ch
        self._channels.move_to_end(key)
        ch.events.append(_Event(now, message.created_at, message.author.id, flagged, is_new_member))
        ch.last_t = max(ch.last_t, now)
        while ch.events and ch.events[0].t < now - s.window_s:
            ch.events.popleft()

        if now < ch.quiet_after:  # the same burst goes on: extend cooldown and raid mode, no second alert
            ch.quiet_after = now + s.cooldown_s
            if ch.mode_until > float("-inf"):
                ch.mode_until = max(ch.mode_until, now + s.raid_mode_duration_s)
            self._evict(now, s)
            return None

        alert = self._burst(message, ch, s)
        if alert is not None:
            ch.quiet_after = now + s.cooldown_s
            if s.raid_mode:
                ch.mode_until = now + s.raid_mode_duration_s
            log.info(  # the workflow posts the alert; a resumed scan replaying a burst must not warn again
                "raid alert in %s/%s: %s, %d members",
                alert.server_id,
                alert.channel_id,
                alert.reason,
                len(alert.members),
            )
        self._evict(now, s)
        return alert

    @staticmethod
    def _burst(message: Message, ch: _Channel, s: RaidSettings) -> RaidAlert | None:
        bursts: tuple[tuple[str, Callable[[_Event], bool], int], ...] = (
            ("flagged_burst", lambda e: e.flagged, s.flagged_burst),
            ("new_member_burst", lambda e: e.new, s.new_member_burst),
        )
        for reason, pick, need in bursts:
            events = [e for e in ch.events if pick(e)]
            members = list(dict.fromkeys(e.author for e in events))
            if len(members) >= need:
                return RaidAlert(
                    server_id=message.server.id,
                    channel_id=place_of(message),
                    started_at=min(e.when for e in events),
                    members=tuple(members),
                    count=len(events),
                    reason=reason,
                )
        return None

    def _evict(self, now: float, s: RaidSettings) -> None:
        horizon = now - max(s.window_s, s.cooldown_s, s.raid_mode_duration_s)
        while self._channels:
            oldest = next(iter(self._channels))
            ch = self._channels[oldest]
            if ch.last_t >= horizon and len(self._channels) <= s.max_tracked:
                break
            del self._channels[oldest]

    def raid_mode(self, server_id: str, channel_id: str, at: datetime, *, parent_id: str | None = None) -> bool:
        """Whether raid mode is on for a channel (or thread) at time ``at``.

        On when a moderator switched it on for the server or the channel (or, for a thread, its ``parent_id``),
        or when a burst switched it on automatically and ``raid_mode_duration_s`` has not passed since the burst's
        last counting message.

        Raises:
            ValueError: ``at`` is naive.
        """
        now = epoch_s(at)
        if self._manual.get((server_id, None)):
            return True
        for cid in (channel_id, parent_id):
            if cid is None:
                continue
            if self._manual.get((server_id, cid)):
                return True
            ch = self._channels.get((server_id, cid))
            if ch is not None and now < ch.mode_until:
                return True
        return False

    def set_raid_mode(self, server_id: str, channel_id: str | None, on: bool, at: datetime) -> None:
        """Switch raid mode on or off by hand (``/raidmode on|off``); ``channel_id=None`` means the whole server.

        ``on`` lasts until switched off. ``off`` for a channel also ends its automatic raid mode; ``off`` for the
        server ends every manual and automatic raid mode in the server. A later burst can switch it on again.

        Raises:
            ValueError: ``at`` is naive.
        """
        epoch_s(at)  # validate: the core only takes aware datetimes
        if on:
            self._manual[(server_id, channel_id)] = True
            log.info("raid mode on by moderator: server %s channel %s", server_id, channel_id or "*")
            return
        if channel_id is None:
            for key in [k for k in self._manual if k[0] == server_id]:
                del self._manual[key]
            for (sid, _cid), each in self._channels.items():
                if sid == server_id:
                    each.mode_until = float("-inf")
        else:
            self._manual.pop((server_id, channel_id), None)
            ch = self._channels.get((server_id, channel_id))
            if ch is not None:
                ch.mode_until = float("-inf")
        log.info("raid mode off by moderator: server %s channel %s", server_id, channel_id or "*")

    def active_channels(self, server_id: str, at: datetime) -> list[str]:
        """Channel ids with raid mode on at ``at`` (``"*"`` first when it is on server-wide), for ``/raidmode``."""
        now = epoch_s(at)
        out = ["*"] if self._manual.get((server_id, None)) else []
        out += [cid for (sid, cid), on in self._manual.items() if sid == server_id and cid is not None and on]
        out += [cid for (sid, cid), ch in self._channels.items() if sid == server_id and now < ch.mode_until]
        return list(dict.fromkeys(out))


def place_of(message: Message) -> str:
    """Where a burst is counted: the parent channel for a thread, else the channel itself."""
    return message.channel.parent_id or message.channel.id
