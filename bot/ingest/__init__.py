"""Chat-export readers for the offline ``scan`` job.

Formats: DiscordChatExporter JSON and CSV, Slack workspace exports (folder or zip) and our JSONL. Use
:func:`read_messages` for sorted, de-duplicated :class:`bot.core.models.Message` lists, or :func:`iter_messages`
and the per-format iterators for streaming in file order.
"""

from __future__ import annotations

from bot.ingest.discord_csv import iter_discord_csv, parse_dce_date
from bot.ingest.discord_json import iter_discord_json
from bot.ingest.errors import ErrorSink, IngestError
from bot.ingest.jsonl import iter_jsonl
from bot.ingest.reader import FORMATS, detect_file_format, detect_format, iter_messages
from bot.ingest.slack_export import iter_slack_export
from bot.ingest.stream import read_messages

__all__ = [
    "FORMATS",
    "ErrorSink",
    "IngestError",
    "detect_file_format",
    "detect_format",
    "iter_discord_csv",
    "iter_discord_json",
    "iter_jsonl",
    "iter_messages",
    "iter_slack_export",
    "parse_dce_date",
    "read_messages",
]
