"""Reader for our plain JSONL format: one JSON object per line.

Shape per line: ``{"id": str, "text": str}`` required; optional ``"channel"`` (str id, or
``{"id","name","parent_id","category_id","is_thread"}``), ``"author"`` (str id, or ``{"id","name","joined_at",
"created_at","roles","is_bot"}``), ``"server"`` (str id, or ``{"platform","id","name"}``; default
``ServerRef("export", <file stem>)``), ``"created_at"`` / ``"edited_at"`` (ISO-8601; zone-less = UTC),
``"reply_to"``, ``"mentions_everyone"``.

A line without ``author`` is posted by the member :data:`NO_AUTHOR_ID`; a line without ``created_at`` has no time
(``created_at=None``, never a stand-in such as the Unix epoch: a line that says ``1970-01-01T00:00:00Z`` means it),
and the time-ordered merge of :mod:`bot.ingest.stream` keeps it after the line before it. Rate-based rules (flood, duplicates, raids, strikes and the
escalation ladder) are meaningless on such messages: :func:`lacks_author_or_time` tells ``scan`` to switch them off
(the field list and which rule needs which field are in the README, "JSON lines input"). Blank lines are ignored. A bad line is an :class:`IngestError` at ``"line N"`` (1-based).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.core.models import NO_AUTHOR_ID, ChannelRef, MemberRef, Message, ServerRef
from bot.ingest.bounded import MAX_LINE_BYTES, TooLarge, inner_name, iter_lines, open_binary
from bot.ingest.common import TOO_DEEP_REASON, clean_text, get_str, parse_iso
from bot.ingest.errors import ErrorSink, IngestError

log = logging.getLogger(__name__)

def lacks_author_or_time(message: Message) -> bool:
    """True when ``message`` came from a JSON line without ``author`` (:data:`NO_AUTHOR_ID`) or without a time
    (``created_at`` is ``None``): spam, raid and strike windows cannot judge it."""
    return not message.in_rate_windows


def _time(obj: dict[str, Any], key: str) -> datetime | None:
    """``obj[key]`` as an ISO-8601 time; ``None`` when absent, ``null`` or ``""``.

    Raises:
        ValueError: an unparseable string, or a value that is not a string (``1704067200``, ``true``, a list): it
            was read as "no time", so the line silently lost its time and the rate-based rules skipped it.
    """
    v = obj.get(key)
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        got = (f"a boolean ({json.dumps(v)})" if isinstance(v, bool) else
               f"a number ({json.dumps(v)[:40]})" if isinstance(v, int | float) else
               "a list" if isinstance(v, list) else "an object")
        raise ValueError(f"{key}: expected an ISO-8601 time as a string (\"2024-01-01T12:00:00Z\"), got {got}")
    return parse_iso(v)


def _server(v: Any, default: ServerRef) -> ServerRef:
    if isinstance(v, dict) and get_str(v, "id"):
        return ServerRef(get_str(v, "platform") or "export", str(v["id"]), clean_text(v.get("name")))
    if isinstance(v, (str, int)) and str(v):
        return ServerRef("export", str(v), str(v))
    return default


def _channel(v: Any) -> ChannelRef:
    if isinstance(v, dict) and get_str(v, "id"):
        return ChannelRef(
            str(v["id"]),
            clean_text(v.get("name")),
            parent_id=get_str(v, "parent_id"),
            category_id=get_str(v, "category_id"),
            is_thread=bool(v.get("is_thread", False)),
        )
    if isinstance(v, (str, int)) and str(v):
        return ChannelRef(str(v), str(v))
    return ChannelRef("default", "default")


def _author(v: Any) -> MemberRef:
    if isinstance(v, dict) and get_str(v, "id"):
        roles = v.get("roles") or ()
        return MemberRef(
            str(v["id"]),
            clean_text(v.get("name")),
            joined_at=_time(v, "joined_at"),
            created_at=_time(v, "created_at"),
            roles=tuple(str(r) for r in roles) if isinstance(roles, list) else (),
            is_bot=bool(v.get("is_bot", False)),
        )
    if isinstance(v, (str, int)) and str(v):
        return MemberRef(str(v), str(v))
    return MemberRef(NO_AUTHOR_ID, NO_AUTHOR_ID)


def iter_jsonl(path: Path, *, sink: ErrorSink | None = None, data: bytes | None = None) -> Iterator[Message]:
    """Yield one :class:`Message` per non-blank line of a JSONL file, in line order.

    Args:
        path: The ``.jsonl`` file.
        sink: Error policy (default: skip and log).
        data: The file's bytes if already read.

    Raises:
        IngestError: Only with a ``"stop"`` sink: a line that is not a JSON object, lacks ``id``/``text``, or
            has an unparseable time, or is nested too deeply to parse (position ``"line N"``, plus the column for JSON
            errors).
    """
    sink = sink or ErrorSink()
    default_server = ServerRef("export", inner_name(path).stem, inner_name(path).stem)
    n = 0
    try:
        with open_binary(path, data) as fh:
            for n, line in enumerate(iter_lines(fh, str(path)), 1):
                if line is None:
                    sink.report(IngestError(path, f"line {n}", f"line longer than {MAX_LINE_BYTES:,} bytes; skipped"))
                    continue
                msg = _parse_line(path, n, line, sink, default_server)
                if msg is not None:
                    yield msg
    except TooLarge as exc:
        sink.report(IngestError(path, f"line {n + 1}", str(exc)))
    except (OSError, EOFError) as exc:
        sink.report(IngestError(path, f"line {n + 1}", f"unreadable: {exc}"))


def _parse_line(path: Path, n: int, line: str, sink: ErrorSink, default_server: ServerRef) -> Message | None:
    """One line's :class:`Message` (``None``: blank, or reported to ``sink``)."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        sink.report(IngestError(path, f"line {n}, column {exc.colno}", f"malformed JSON: {exc.msg}"))
        return None
    except RecursionError:
        sink.report(IngestError(path, f"line {n}", TOO_DEEP_REASON))
        return None
    if not isinstance(obj, dict) or get_str(obj, "id") is None or "text" not in obj:
        sink.report(IngestError(path, f"line {n}", "expected a JSON object with 'id' and 'text'"))
        return None
    try:
        created = _time(obj, "created_at")
        edited = _time(obj, "edited_at")
        author = _author(obj.get("author"))
    except ValueError as exc:
        sink.report(IngestError(path, f"line {n}", f"bad time: {exc}"))
        return None
    return Message(
        server=_server(obj.get("server"), default_server),
        channel=_channel(obj.get("channel")),
        author=author,
        id=str(obj["id"]),
        text=clean_text(obj.get("text")),
        created_at=created,
        edited_at=edited,
        reply_to=get_str(obj, "reply_to"),
        mentions_everyone=bool(obj.get("mentions_everyone", False)),
    )
