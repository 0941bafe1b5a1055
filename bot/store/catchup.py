"""Catch-up after a restart: where each channel's recorded history ends (mixin of
:class:`bot.store.sqlite.SqliteStore`).

The bots ask, per server, for the latest message recorded in each channel, then fetch the platform's history after
it (bounded: docs/live-path.md) and feed it through the moderation service, whose dedupe makes this idempotent.
"""

from __future__ import annotations

from datetime import datetime

from bot.store.base import StoreBase
from bot.store.schema import from_db_time


class CatchupMixin(StoreBase):
    """Latest recorded message per channel."""

    async def latest_messages(self, platform: str, server_id: str) -> dict[str, tuple[str, datetime]]:
        """``{channel_id: (message_id, created_at)}``: per channel (a thread is its own channel) of the server, the recorded
        message with the latest ``created_at`` (the largest id among equal times; messages without a time are left out).
        Channels with no recorded timed message are absent; a server with none gives ``{}``.

        Cost: one pass over the server's messages (primary-key prefix ``platform, server_id``), once per start.
        """
        rows = await self._read_all(
            "SELECT channel_id, message_id, created_at FROM messages WHERE platform = ? AND server_id = ? "
            "AND created_at IS NOT NULL ORDER BY channel_id, created_at, length(message_id), message_id", (platform, server_id))
        out: dict[str, tuple[str, datetime]] = {}
        for row in rows:  # ordered: the last row of each channel is its latest message
            at = from_db_time(row["created_at"])
            assert isinstance(at, datetime)
            out[row["channel_id"]] = (row["message_id"], at)
        return out


__all__ = ["CatchupMixin"]
