"""Duplicate, crowd-duplicate and flood spam over sliding windows of message time.

Layer: ``bot.core``. Standard library only (plus the core's own modules). Time comes from
``Message.created_at``, never from the wall clock, so an offline replay of an export sees the real timing.

Memory is bounded: per-member and per-text deques hold at most a few times the count thresholds, and keys idle
for longer than the longest window are evicted (least recently active first, amortised O(1) per message); at
most ``SpamSettings.max_tracked`` keys of each kind are kept.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel

from bot.core.models import Message, RuleHit
from bot.core.rules._util import epoch_s, scaled_limit
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import RulesSettings, SpamSettings

if TYPE_CHECKING:
    from bot.core.normalize import Normalized

log = logging.getLogger(__name__)

#: Characters of normalised text kept as a duplicate key (longer texts are compared on this prefix).
KEY_CHARS = 512


@dataclass(slots=True)
class _Seen:
    t: float
    message_id: str
    key: str


def text_key(norm: Normalized) -> str:
    """The duplicate key of a message: its normalised matching text, whitespace collapsed, first 512 chars."""
    return " ".join(norm.matching.split())[:KEY_CHARS]


class SpamTracker:
    """Tracks recent messages per member and per text, for all servers at once.

    Args:
        settings: Default spam settings (a call may pass the server's own).
        raid_threshold_factor: Count thresholds are multiplied by this in raid mode (``RaidSettings``).
    """

    def __init__(self, settings: SpamSettings | None = None, *, raid_threshold_factor: float = 0.8) -> None:
        self.settings = settings or SpamSettings()
        self.raid_threshold_factor = raid_threshold_factor
        self._members: OrderedDict[tuple[str, str, str], deque[_Seen]] = OrderedDict()
        self._texts: OrderedDict[tuple[str, str, str], deque[tuple[float, str]]] = OrderedDict()

    def __len__(self) -> int:
        """Keys tracked (members plus texts), for tests and metrics."""
        return len(self._members) + len(self._texts)

    def observe(
        self,
        message: Message,
        norm: Normalized,
        *,
        settings: SpamSettings | None = None,
        raid_mode: bool = False,
        established: bool = False,
    ) -> list[RuleHit]:
        """Record a new message and return the spam rules it trips.

        Call once per new message, in time order per member (edits carry the same id and are ignored: a message
        id already seen for the member is not counted twice).

        Args:
            message: The message; ``created_at`` is the clock.
            norm: ``normalize(message.text)``.
            settings: The server's spam settings; default: the tracker's.
            raid_mode: Raid mode is on: count thresholds are scaled by ``raid_threshold_factor`` (at least 2).
            established: The author is an established member (``RaidSettings.established_min_messages``): repeats
                of a text shorter than ``short_text_chars`` give a signal-only ``duplicate_spam`` hit (chat such as
                "agreed" six times is judged on content, not repetition), and a flood acts only from
                ``established_flood_count`` messages (below that it is a signal). Their hits' ``detail`` says so.

        Returns:
            ``duplicate_spam`` (``duplicate_count`` identical texts from the member within ``duplicate_window_s``),
            ``crowd_spam`` (the same long-enough text from ``crowd_duplicate_count`` distinct members within
            ``crowd_window_s``, server-wide) and ``flood`` (``flood_count`` messages from the member within
            ``flood_window_s``). The message that reaches a count and every later one in the window hit; earlier
            ones are not re-judged.

        Raises:
            ValueError: ``message.created_at`` is naive.
        """
        s = settings or self.settings
        if not s.enabled or message.created_at is None:  # an untimed message cannot be placed in a window
            return []
        now = epoch_s(message.created_at)
        factor = self.raid_threshold_factor if raid_mode else 1.0
        dup_count = scaled_limit(s.duplicate_count, factor, 2)
        flood_count = scaled_limit(s.flood_count, factor, 2)
        crowd_count = scaled_limit(s.crowd_duplicate_count, factor, 2)
        key = text_key(norm)
        server = (message.server.platform, message.server.id)

        member_key = (*server, message.author.id)
        seen = self._members.get(member_key)
        if seen is None:
            seen = deque(maxlen=max(s.duplicate_count, s.flood_count) * 4)
            self._members[member_key] = seen
        elif any(item.message_id == message.id for item in seen):
            return []
        self._members.move_to_end(member_key)
        seen.append(_Seen(now, message.id, key))

        hits: list[RuleHit] = []
        if key:
            dups = sum(1 for it in seen if it.key == key and now - s.duplicate_window_s <= it.t <= now)
            if dups >= dup_count:
                short = established and len(key) < s.short_text_chars
                hits.append(
                    RuleHit(
                        rule="duplicate_spam",
                        detail=f"{dups} identical messages in {s.duplicate_window_s:g}s"
                        + (" (short reply from an established member: signal only)" if short else ""),
                        action=None if short else s.action,
                    )
                )
        if key and len(key) >= s.crowd_min_chars and len(norm.tokens) >= s.crowd_min_tokens:
            crowd = self._crowd(server, key, message.author.id, now, s)
            if crowd >= crowd_count:
                hits.append(
                    RuleHit(
                        rule="crowd_spam",
                        detail=f"same text from {crowd} members in {s.crowd_window_s:g}s",
                        action=s.crowd_action,
                    )
                )
        recent = sum(1 for it in seen if now - s.flood_window_s <= it.t <= now)
        if recent >= flood_count:
            mild = established and recent < max(s.established_flood_count, flood_count)
            hits.append(
                RuleHit(
                    rule="flood",
                    detail=f"{recent} messages in {s.flood_window_s:g}s"
                    + (f" (established member, under {s.established_flood_count}: signal only)" if mild else ""),
                    action=None if mild else s.action,
                )
            )

        self._evict(now, s)
        return hits

    def _crowd(self, server: tuple[str, str], key: str, author: str, now: float, s: SpamSettings) -> int:
        text_key_ = (*server, key)
        posts = self._texts.get(text_key_)
        if posts is None:
            posts = deque(maxlen=s.crowd_duplicate_count * 4)
            self._texts[text_key_] = posts
        self._texts.move_to_end(text_key_)
        posts.append((now, author))
        return len({a for t, a in posts if now - s.crowd_window_s <= t <= now})

    def _evict(self, now: float, s: SpamSettings) -> None:
        horizon = now - max(s.duplicate_window_s, s.flood_window_s, s.crowd_window_s)
        for table in (self._members, self._texts):
            while table:
                oldest_key = next(iter(table))
                entries = table[oldest_key]
                last = entries[-1].t if isinstance(entries[-1], _Seen) else entries[-1][0]
                if last >= horizon and len(table) <= s.max_tracked:
                    break
                del table[oldest_key]


class SpamRule:
    """``duplicate_spam`` / ``crowd_spam`` / ``flood`` (see :meth:`SpamTracker.observe`): counted in the server's
    windows (``ctx.spam``), in arrival order; nothing for an edit or a stateless run (``ctx.spam`` is ``None``)."""

    name: ClassVar[str] = "spam"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.ORDERED})
    settings_model: ClassVar[type[BaseModel]] = SpamSettings
    hit_names: ClassVar[tuple[str, ...]] = ("duplicate_spam", "crowd_spam", "flood")

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings.spam

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        if ctx.spam is None:
            return []
        return ctx.spam.observe(ctx.message, ctx.norm, raid_mode=ctx.raid_mode, established=ctx.established)
