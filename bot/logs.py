"""Logging for every command: levels from ``-v``/``-vv``, plain text for people or JSON lines for log collectors.

Layer: composition root helper (called by :mod:`bot.cli` before any job starts). Everything goes to stderr (stdout
is for results: ``score``'s JSON lines, ``scan``'s summary, ``policy check``).

Levels: warnings and errors by default; ``-v`` adds INFO (what the bot does: connections, syncs, retention
purges); ``-vv`` adds DEBUG (ours, and every library's but those that would write tokens or members' words:
:data:`QUIET_AT_DEBUG`, kept at INFO). The ready line (logger :data:`READY_LOGGER`, INFO) is shown
at every level, because a bot that started and says nothing looks like one that hangs.

``--log-format json`` writes one JSON object per line (:class:`JsonFormatter`): ``{"time", "level", "logger",
"message"}``, plus ``"server"`` when the record names one and ``"exception"`` (the traceback text) when it carries
one. Our own ~30-line formatter rather than a library (python-json-logger would do the same): the fields are ours
to keep stable for the collectors' parsing rules, and it is one dependency fewer.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

#: The logger of the one line a bot prints when it is ready (shown even at the default WARNING level).
READY_LOGGER = "bot.ready"
#: ``--log-format`` choices.
FORMATS = ("text", "json")
#: Library loggers kept at INFO even at ``-vv``: at DEBUG they write credentials or members' words. discord.py's
#: gateway and HTTP loggers print every event (an ``INTERACTION_CREATE`` holds its interaction token, which lets
#: anyone answer as the bot for 15 minutes) and every route (``/interactions/<id>/<token>/callback``); aiosqlite
#: and asyncpg print SQL parameters (message text, the pseudonym salt); slack_sdk and slack_bolt print request and
#: response bodies; aiohttp's client prints URLs with ``?key=``.
QUIET_AT_DEBUG = ("discord.gateway", "discord.http", "discord.webhook", "discord.client", "discord.state",
                  "aiosqlite", "asyncpg", "slack_sdk", "slack_bolt", "aiohttp.client", "urllib3")
#: Attributes every ``LogRecord`` has: anything else on a record came from ``extra={...}``.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class PlainFormatter(logging.Formatter):
    """For people: ``LEVEL: message`` for warnings and errors, the message alone for the ready line (INFO), and
    ``time LEVEL logger: message`` at ``-v``/``-vv``."""

    def __init__(self, detailed: bool) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s" if detailed
                         else "%(levelname)s: %(message)s")
        self.detailed = detailed

    def format(self, record: logging.LogRecord) -> str:
        if not self.detailed and record.levelno == logging.INFO:
            return record.getMessage()
        return super().format(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line: ``time`` (ISO 8601, UTC, milliseconds), ``level``, ``logger``,
    ``message``, then any ``extra`` fields (``server``...; values that are not JSON become their ``str``), and
    ``exception`` with the formatted traceback when the record has one."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                doc[key] = value
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            doc["exception"] = record.exc_text
        if record.stack_info:
            doc["stack"] = record.stack_info
        return json.dumps(doc, ensure_ascii=False, default=str)


def level_for(verbosity: int) -> int:
    """``0`` -> WARNING, ``1`` (``-v``) -> INFO, ``2`` or more (``-vv``) -> DEBUG."""
    return logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG


def setup_logging(verbosity: int = 0, fmt: str = "text") -> logging.Handler:
    """Configure the root logger (replacing any earlier setup) and return its one stderr handler.

    Args:
        verbosity: How many ``-v`` were given (see :func:`level_for`).
        fmt: ``text`` (:class:`PlainFormatter`) or ``json`` (:class:`JsonFormatter`).

    Raises:
        ValueError: ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else PlainFormatter(detailed=verbosity > 0))
    logging.basicConfig(level=level_for(verbosity), handlers=[handler], force=True)
    # scan prints every skipped input itself, with its file and position: the ingest readers' own warnings about
    # them only with -v
    logging.getLogger("bot.ingest").setLevel(logging.ERROR if verbosity <= 0 else logging.NOTSET)
    logging.getLogger(READY_LOGGER).setLevel(logging.INFO if verbosity <= 1 else logging.DEBUG)
    for name in QUIET_AT_DEBUG:
        logging.getLogger(name).setLevel(logging.INFO if verbosity >= 2 else logging.NOTSET)
    return handler
