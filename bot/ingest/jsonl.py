"""Reader for our plain JSONL format: one JSON object per line.

Shape per line: ``{"id": str, "text": str}`` required; optional ``"channel"`` (str id, or
``{"id","name","parent_id","category_id","is_thread"}``), ``"author"`` (str id, or ``{"id","name","joined_at",
"created_at","roles","is_bot"}``), ``"server"`` (str id, or ``{"platform","id","name"}``; default
``ServerRef("export", <file stem>)``; always in the ``"export"`` namespace: a ``platform`` of ``"discord"`` or
``"slack"`` must be a string but never puts an imported history into a live mod log), ``"created_at"`` / ``"edited_at"`` (ISO-8601; zone-less = UTC),
``"reply_to"``, ``"mentions_everyone"``.

A line without ``author`` is posted by the member :data:`NO_AUTHOR_ID`; a line without ``created_at`` has no time
(``created_at=None``, never a stand-in such as the Unix epoch: a line that says ``1970-01-01T00:00:00Z`` means it),
and the time-ordered merge of :mod:`bot.ingest.stream` keeps it after the line before it. Rate-based rules (flood, duplicates, raids, strikes and the
escalation ladder) are meaningless on such messages: :func:`lacks_author_or_time` tells ``scan`` to switch them off
(the field list and which rule needs which field are in the README, "JSON lines input"). The file is UTF-8, or
UTF-16 / UTF-32 behind its byte order mark (:func:`bot.ingest.bounded.iter_lines`). Blank lines are ignored. A bad line is an :class:`IngestError` at ``"line N"`` (1-based); so is a
field of the wrong JSON type (``"text": 5``, ``"author": true``, ``"is_bot": "false"``: see :class:`BadField`).
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
from bot.ingest.common import TOO_DEEP_REASON, clean_text, get_str, json_line_problem, parse_iso
from bot.ingest.encoding import StrayBytes
from bot.ingest.errors import ErrorSink, IngestError

log = logging.getLogger(__name__)

def lacks_author_or_time(message: Message) -> bool:
    """True when ``message`` came from a JSON line without ``author`` (:data:`NO_AUTHOR_ID`) or without a time
    (``created_at`` is ``None``): spam, raid and strike windows cannot judge it."""
    return not message.in_rate_windows


def _kind(v: Any) -> str:
    """``v``'s JSON type in words, with a short value for scalars: ``"a number (5)"``, ``"a list"``."""
    return (f"a boolean ({json.dumps(v)})" if isinstance(v, bool) else
            f"a number ({json.dumps(v)[:40]})" if isinstance(v, int | float) else
            f"a string ({json.dumps(v)[:40]})" if isinstance(v, str) else
            "a list" if isinstance(v, list) else "an object")


class BadField(ValueError):
    """A line's field has the wrong JSON type; the message says ``"<key>: expected ..., got ..."``."""


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
        raise ValueError(f"{key}: expected an ISO-8601 time as a string (\"2024-01-01T12:00:00Z\"), got {_kind(v)}")
    return parse_iso(v)


def _text(obj: dict[str, Any]) -> str:
    """``obj["text"]`` (a string; ``null`` is ``""``, a message without text such as an attachment's).

    Raises:
        BadField: a number, boolean, list or object: it used to be ``str()``-ed (``5`` scored as ``"5"``,
            ``["a"]`` as ``"['a']"``), judging words nobody posted.
    """
    v = obj.get("text")
    if v is None:
        return ""
    if not isinstance(v, str):
        raise BadField(f"text: expected a string, got {_kind(v)}")
    return clean_text(v)


def _ref_id(v: Any, key: str, what: str) -> str | None:
    """A member/channel/server reference given as a bare id: a string, or a whole number (as ``id`` may be);
    ``None`` when absent, ``null`` or ``""``.

    Raises:
        BadField: a boolean, a fractional number or a list (``"author": true`` used to become a member named
            ``"True"``; ``"channel": ["a"]`` silently the default channel).
    """
    if v is None or v == "":
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    raise BadField(f"{key}: expected {what} id (a string or whole number) or an object, got {_kind(v)}")


def _obj_id(v: dict[str, Any], key: str) -> str:
    """The ``id`` of a reference given as an object (a string or whole number).

    Raises:
        BadField: ``id`` missing, empty, or of another type: such a reference used to fall back to "no author" /
            the default channel or server without a word.
    """
    i = v.get("id")
    if isinstance(i, str) and i:
        return i
    if isinstance(i, int) and not isinstance(i, bool):
        return str(i)
    got = "none" if i is None or i == "" else _kind(i)
    raise BadField(f"{key}.id: expected an id (a non-empty string or whole number), got {got}")


def _flag(obj: dict[str, Any], key: str, where: str) -> bool:
    """``obj[key]`` as a JSON boolean; ``False`` when absent or ``null``.

    Raises:
        BadField: any other value: ``"false"`` (a string) used to be read as true (``bool("false")``), so
            ``"is_bot": "false"`` exempted a member as a bot.
    """
    v = obj.get(key)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise BadField(f"{where}: expected true or false, got {_kind(v)}")
    return v


def _server(v: Any, default: ServerRef) -> ServerRef:
    """The ``server`` field; ``default`` when absent. Raises :class:`BadField` on a value of the wrong type."""
    if isinstance(v, dict):
        platform = v.get("platform")
        if platform is not None and not isinstance(platform, str):
            raise BadField(f"server.platform: expected a string, got {_kind(platform)}")
        # always the offline namespace, whatever ``platform`` claims: a history file that says "discord" must not
        # write verdicts and cases into the live mod log of a real guild (a Discord guild's snowflake id still
        # finds its discord-<id>.toml policy: bot.core.policy_registry.PolicyRegistry.server_file)
        return ServerRef("export", _obj_id(v, "server"), clean_text(v.get("name")))
    sid = _ref_id(v, "server", "a server")
    return default if sid is None else ServerRef("export", sid, sid)


def _channel(v: Any) -> ChannelRef:
    """The ``channel`` field; channel ``default`` when absent. Raises :class:`BadField` on a wrong type."""
    if isinstance(v, dict):
        return ChannelRef(
            _obj_id(v, "channel"),
            clean_text(v.get("name")),
            parent_id=get_str(v, "parent_id"),
            category_id=get_str(v, "category_id"),
            is_thread=_flag(v, "is_thread", "channel.is_thread"),
        )
    cid = _ref_id(v, "channel", "a channel")
    return ChannelRef("default", "default") if cid is None else ChannelRef(cid, cid)


def _roles(roles: list[Any]) -> tuple[str, ...]:
    """``author.roles`` as role ids (strings or whole numbers; ``null`` and ``""`` items are left out).

    Raises:
        BadField: an item of another type: ``[{"id": "123"}]`` became the role id ``"{'id': '123'}"``, so the
            server's role exemptions silently did not apply.
    """
    out = []
    for i, r in enumerate(roles):
        if r is None or r == "":
            continue
        if isinstance(r, str) or isinstance(r, int) and not isinstance(r, bool):
            out.append(str(r))
        else:
            raise BadField(f"author.roles[{i}]: expected a role id (a string or whole number), got {_kind(r)}")
    return tuple(out)


def _author(v: Any) -> MemberRef:
    """The ``author`` field; :data:`NO_AUTHOR_ID` when absent.

    Raises:
        BadField: a value of the wrong type (``true``, ``1.5``, a list, an object without an id, ``roles`` that
            is not a list, ``is_bot`` that is not a boolean).
        ValueError: a bad ``joined_at`` / ``created_at``.
    """
    if isinstance(v, dict):
        aid = _obj_id(v, "author")
        roles = v.get("roles")
        if roles is not None and not isinstance(roles, list):
            raise BadField(f"author.roles: expected a list of role ids, got {_kind(roles)}")
        return MemberRef(
            aid,
            clean_text(v.get("name")),
            joined_at=_time(v, "joined_at"),
            created_at=_time(v, "created_at"),
            roles=_roles(roles or []),
            is_bot=_flag(v, "is_bot", "author.is_bot"),
        )
    bare = _ref_id(v, "author", "a member")
    return MemberRef(NO_AUTHOR_ID, NO_AUTHOR_ID) if bare is None else MemberRef(bare, bare)


def iter_jsonl(path: Path, *, sink: ErrorSink | None = None, data: bytes | None = None) -> Iterator[Message]:
    """Yield one :class:`Message` per non-blank line of a JSONL file, in line order.

    Args:
        path: The ``.jsonl`` file.
        sink: Error policy (default: skip and log).
        data: The file's bytes if already read.

    Raises:
        IngestError: Only with a ``"stop"`` sink: a line that is not a JSON object, lacks ``id``/``text``, or
            has an unparseable time, a field of the wrong JSON type (``"text": 5``, ``"author": true``,
            ``"is_bot": "false"``), or is nested too deeply to parse (position ``"line N"``; a line that is not JSON
            is said in words by :func:`bot.ingest.common.json_line_problem`, with the column where one helps:
            ``"not valid JSON (column 1: a JSON value was expected)"``), or UTF-16 / UTF-32 text that ends with a
            stray byte (position ``"byte N"``, after every line before it).
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
    except StrayBytes as exc:  # after every line: "byte 123: the UTF-16LE text ends with 1 stray byte, ..."
        sink.report(IngestError(path, f"byte {exc.offset}", exc.reason))
    except (OSError, EOFError) as exc:
        sink.report(IngestError(path, f"line {n + 1}", f"unreadable: {exc}"))


def _parse_line(path: Path, n: int, line: str, sink: ErrorSink, default_server: ServerRef) -> Message | None:
    """One line's :class:`Message` (``None``: blank, or reported to ``sink``)."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:  # in words, as ``score`` says it: "not valid JSON (column 1: ...)"
        sink.report(IngestError(path, f"line {n}", json_line_problem(exc)))
        return None
    except RecursionError:
        sink.report(IngestError(path, f"line {n}", TOO_DEEP_REASON))
        return None
    if not isinstance(obj, dict) or get_str(obj, "id") is None or "text" not in obj:
        sink.report(IngestError(path, f"line {n}", "expected a JSON object with 'id' and 'text'"))
        return None
    try:
        text = _text(obj)
        server = _server(obj.get("server"), default_server)
        channel = _channel(obj.get("channel"))
        author = _author(obj.get("author"))
        created = _time(obj, "created_at")
        edited = _time(obj, "edited_at")
        mentions_everyone = _flag(obj, "mentions_everyone", "mentions_everyone")
    except BadField as exc:
        sink.report(IngestError(path, f"line {n}", f"malformed line: {exc}"))
        return None
    except ValueError as exc:
        sink.report(IngestError(path, f"line {n}", f"bad time: {exc}"))
        return None
    return Message(
        server=server,
        channel=channel,
        author=author,
        id=str(obj["id"]),
        text=text,
        created_at=created,
        edited_at=edited,
        reply_to=get_str(obj, "reply_to"),
        mentions_everyone=mentions_everyone,
    )
