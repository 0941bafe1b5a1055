"""Shared helpers of the export readers: time parsing, text clean-up, JSON recovery, file ordering."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Discord's snowflake epoch (2015-01-01T00:00:00Z), in milliseconds since the Unix epoch (Discord API docs).
DISCORD_EPOCH_MS = 1_420_070_400_000

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_DIGITS = re.compile(r"(\d+)")


def clean_text(text: object) -> str:
    """Return ``text`` as a ``str`` that can be encoded as UTF-8.

    Lone UTF-16 surrogates (JSON ``"\\ud800"``) are replaced by U+FFFD, the only change ever made to message
    text: they cannot be stored in SQLite or written to a report. NUL bytes and everything else are kept.
    ``None`` becomes ``""``; other non-strings are ``str()``-ed.
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def parse_iso(value: str) -> datetime:
    """Parse an ISO-8601 time (``Z`` or offset; any number of fraction digits) into aware UTC.

    A time without an offset is taken as UTC. Raises ``ValueError`` on anything else, also for a time whose UTC
    equivalent is outside years 1-9999 (``0001-01-01T00:00:00+01:00``: .NET's ``DateTime.MinValue`` with an offset).
    """
    s = value.strip()
    m = re.match(r"^(.*T\d\d:\d\d:\d\d)\.(\d+)(.*)$", s)
    if m and len(m.group(2)) > 6:  # .NET writes 7 fraction digits
        s = f"{m.group(1)}.{m.group(2)[:6]}{m.group(3)}"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"time {value.strip()[:40]!r} is out of range in UTC (years 1 to 9999)") from None


def from_unix(value: str | float | int) -> datetime:
    """Unix seconds to aware UTC; strings such as Slack ``ts`` ``"1608128074.295700"`` are read exactly
    (microseconds, no float rounding). Raises ``ValueError``, also for a time outside years 1-9999."""
    try:
        if isinstance(value, str):
            whole, _, frac = value.strip().partition(".")
            if whole.lstrip("-").isdigit() and (not frac or frac.isdigit()):
                return EPOCH + timedelta(seconds=int(whole), microseconds=int((frac + "000000")[:6]))
        return EPOCH + timedelta(seconds=float(value))
    except OverflowError:
        raise ValueError(f"time {str(value)[:40]!r} is out of range (years 1 to 9999)") from None


def snowflake_time(snowflake: str) -> datetime | None:
    """Creation time encoded in a Discord snowflake (``id >> 22`` ms after 2015-01-01), or ``None`` if not one."""
    if not snowflake.isdigit() or not 15 <= len(snowflake) <= 20:  # a snowflake is a 64-bit integer
        return None
    ms = (int(snowflake) >> 22) + DISCORD_EPOCH_MS
    return EPOCH + timedelta(milliseconds=ms)


def natural_key(path: Path) -> tuple[object, ...]:
    """Sort key that orders ``2.csv`` before ``10.csv`` (DCE partitions) and compares path parts case-blind."""
    key: list[object] = []
    for part in path.parts:
        key.append(tuple(int(t) if t.isdigit() else t.lower() for t in _DIGITS.split(part)))
    return tuple(key)


def decode_bytes(data: bytes, where: str) -> str:
    """Decode UTF-8 (BOM dropped); invalid bytes become U+FFFD with a logged warning."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        log.warning("%s: invalid UTF-8 at byte %d, replaced", where, exc.start)
        return data.decode("utf-8-sig", errors="replace")


def json_error_position(exc: json.JSONDecodeError) -> str:
    """``"offset 1234 (line 40, column 3)"`` for a decode error (offset in characters of the decoded text)."""
    return f"offset {exc.pos} (line {exc.lineno}, column {exc.colno})"


#: :class:`json.JSONDecodeError` messages said in plain words (the key is the start of ``exc.msg``).
_JSON_PROBLEMS = (
    ("Expecting value", "a JSON value was expected"),
    ("Extra data", "more text follows the complete JSON value"),
    ("Expecting property name enclosed in double quotes", "a key in double quotes was expected"),
    ("Expecting ',' delimiter", "a ',' was expected between two items"),
    ("Expecting ':' delimiter", "a ':' was expected after a key"),
    ("Invalid \\uXXXX escape", "a \\u escape needs four hex digits"),
    ("Unexpected UTF-8 BOM", "a byte order mark (U+FEFF) starts the line, as when files saved with one are joined; "
     "remove it"),
    ("Invalid \\escape", "a backslash starts an escape JSON does not have (write \\\\ for a backslash)"),
)


def json_line_problem(exc: json.JSONDecodeError) -> str:
    """Why one line of JSON lines input is not JSON, in plain words, for a person to fix the line.

    Args:
        exc: the error ``json.loads`` raised for that one line (``exc.doc`` is the line, its newline included or
            not).

    Returns:
        ``"not valid JSON (...)"``: ``(the line ends inside a string; was it cut short?)`` when a string is still
        open at the line's end (json says "Invalid control character" for the newline, or "Unterminated string"
        without one); ``(the line ends before the JSON value is complete; was it cut short?)`` when nothing but
        whitespace follows where the parser stopped; otherwise the 1-based column and what is wrong there, e.g.
        ``(column 1: a JSON value was expected)``. No line number: the caller knows it.
    """
    doc, pos = exc.doc, exc.pos
    ends_here = not doc[pos:].strip()
    if exc.msg.startswith("Unterminated string") or (exc.msg.startswith("Invalid control character") and ends_here):
        return "not valid JSON (the line ends inside a string; was it cut short?)"
    if ends_here:
        return "not valid JSON (the line ends before the JSON value is complete; was it cut short?)"
    if exc.msg.startswith("Invalid control character"):
        what = (f"the control character U+{ord(doc[pos]):04X} inside a string must be escaped (e.g. \\t for a tab)"
                if pos < len(doc) else "a control character inside a string must be escaped")
        return f"not valid JSON (column {exc.colno}: {what})"
    for start, words in _JSON_PROBLEMS:
        if exc.msg.startswith(start):
            return f"not valid JSON (column {exc.colno}: {words})"
    return f"not valid JSON (column {exc.colno}: {exc.msg})"


class TooDeep:
    """An array item nested too deeply for Python's JSON parser (it raised :exc:`RecursionError`); the readers
    report it at its index and skip it. Use the :data:`TOO_DEEP` instance."""

    def __repr__(self) -> str:
        return "TOO_DEEP"


#: The one :class:`TooDeep` marker.
TOO_DEEP = TooDeep()
#: What a reader says about such an item or line.
TOO_DEEP_REASON = "JSON nested too deeply to read (past Python's recursion limit); skipped"


def skip_json_value(text: str, i: int) -> int | None:
    """Index just past the JSON value that starts at ``text[i]``, found without recursion (brackets are counted,
    strings and their escapes skipped; the value is not validated), or ``None`` when the text ends inside it."""
    n = len(text)
    depth = 0
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                return None
            i += 1
        elif ch in "[{":
            depth += 1
            i += 1
        elif ch in "]}":
            depth -= 1
            i += 1
        elif depth == 0 and ch in ", \t\r\n":
            return i
        else:
            i += 1
        if depth == 0 and ch in '"]}':
            return i
    return i if depth == 0 else None


def recover_array_items(text: str, start: int, *, keep_all: bool = False) -> Iterator[Any]:
    """Yield the complete JSON items of an array whose ``[`` is at ``text[start]``, stopping at damage.

    Used to keep what precedes the break in a truncated file, and to read an array one item at a time when one item
    is nested too deeply for the parser. Items that are not objects are skipped, and an item nested too deeply is
    passed over, unless ``keep_all``: then every item is yielded in order (one too deep as :data:`TOO_DEEP`), so
    indexes match the array's.
    """
    decoder = json.JSONDecoder()
    i = start + 1
    n = len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n or text[i] == "]":
            return
        try:
            item, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return
        except RecursionError:
            end = skip_json_value(text, i)
            if end is None:
                return
            i = end
            if keep_all:
                yield TOO_DEEP
            continue
        if keep_all or isinstance(item, dict):
            yield item


def find_array_start(text: str, key: str) -> int | None:
    """Index of the ``[`` that opens ``"key": [`` in raw JSON text, or ``None``."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:\s*\[', text)
    return m.end() - 1 if m else None


def get_str(obj: Any, *keys: str) -> str | None:
    """Nested ``obj[k1][k2]...`` as a non-empty ``str`` (numbers are converted), or ``None``."""
    cur = obj
    for k in keys:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(k)
    if cur is None or isinstance(cur, (dict, list, bool)):
        return None
    s = str(cur)
    return s if s else None


def file_words(files: Sequence[dict[str, Any]]) -> str:
    """The words of shared Slack files (a message's ``files``) judged with the message, by the live app
    (:func:`bot.adapters.slack.translate.to_core`) and by ``scan`` of a Slack export alike, one per line in file
    order: each file's title when the member typed one (Slack sets ``title`` to the file ``name`` when they did
    not), then its ``name`` (a file name is the member's words too: ``you-are-vermin.png``), each text once. Plain text, not markup: a file
    named ``<!channel>`` pings nobody. ``""`` when there are none."""
    words: list[str] = []
    for f in files:
        for value in (f.get("title"), f.get("name")):
            if isinstance(value, str) and value.strip() and value.strip() not in words:
                words.append(value.strip())
    return "\n".join(words)
