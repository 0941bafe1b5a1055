"""Guessing where a scanned message came from by its ids: the platform (Discord snowflake, Slack ``C…:ts``) and a
link to a Discord message when its id is real (its embedded time matches the export's).

Layer: ``bot.report`` (standard library only).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_SNOWFLAKE = re.compile(r"^\d{15,20}$")
_SLACK_ID = re.compile(r"^[A-Z0-9]+(?::\d+\.\d+)?:\d+\.\d+$")
#: Seconds a Discord message id's embedded time may differ from the export's timestamp for the id to count as real.
_SNOWFLAKE_TOLERANCE_S = 60.0
_DISCORD_EPOCH = datetime(2015, 1, 1, tzinfo=UTC)


def platform_name(platform: str, message_id: str) -> str:
    """Display name of where a message comes from: ``"Discord"``, ``"Slack"`` or ``"export"``.

    Offline readers record DiscordChatExporter files as platform ``"export"``; their message ids are Discord
    snowflakes, and Slack export ids are ``"<channel>:<ts>"``, which tells the two apart.
    """
    if platform in ("discord", "slack"):
        return platform.capitalize()
    if _SNOWFLAKE.match(message_id):
        return "Discord"
    if _SLACK_ID.match(message_id):
        return "Slack"
    return platform or "export"


def discord_link(server_id: str, channel_id: str, message_id: str, created_at: datetime | None) -> str | None:
    """``https://discord.com/channels/<guild>/<channel>/<message>`` when all three ids are real snowflakes.

    A message id counts as real when the time it encodes is within a minute of the export's timestamp (made-up
    ids and the channel names a CSV export uses in place of ids give no link). ``None`` otherwise.
    """
    if not all(_SNOWFLAKE.match(x or "") for x in (server_id, channel_id, message_id)):
        return None
    if created_at is not None:
        encoded = _DISCORD_EPOCH + timedelta(milliseconds=int(message_id) >> 22)
        if abs((encoded - created_at).total_seconds()) > _SNOWFLAKE_TOLERANCE_S:
            return None
    return f"https://discord.com/channels/{server_id}/{channel_id}/{message_id}"
