"""Reader for DiscordChatExporter JSON exports (one file per channel or thread).

Format: ``docs/platform-protocols.md`` section 1.1 (DCE ``JsonMessageWriter.cs``). Only ``id``, ``timestamp``,
``content`` and ``author.id`` are relied on; every other key is optional (older exports lack many).

Mapping:
    * server: ``ServerRef("export", guild.id or the file's folder name, guild.name)``;
    * channel: thread kinds (``GuildPublicThread``, ``GuildPrivateThread``, ``GuildNewsThread``) become
      ``ChannelRef(is_thread=True, parent_id=channel.categoryId)`` (DCE writes the parent channel as category);
      other channels keep ``categoryId`` as ``category_id``. Without a ``channel`` object, the file stem is the id;
    * author: ``nickname`` or ``name``, ``isBot``, role ids, ``created_at`` from the snowflake, and
      ``joined_at`` from the **non-standard** optional key ``author.joinedAt`` (ISO time; written by our examples,
      never by DCE) or from a ``GuildMemberJoin`` system message of that member in the same file;
    * ``reference.messageId`` -> ``reply_to``; ``timestampEdited`` -> ``edited_at``;
    * ``mentions`` -> :class:`Mention` (``is_bot`` from the user's ``isBot``); a mention is the reply's implicit
      ping (``is_reply_ping``) when the mentioned user wrote the referenced message (found in the same file) and
      the content does not name them (``<@id>``, ``<@!id>``, ``@name`` or ``@nickname``);
    * ``@everyone`` / ``@here`` in the content -> ``mentions_everyone``.

System messages (:data:`SYSTEM_KINDS`) are not returned. A truncated or malformed file is reported as one
:class:`IngestError` at the decoder's position; with ``on_error="skip"`` every complete message before the break
is kept (the ``guild``/``channel`` header is recovered too when it precedes the break).

Streaming (issue 25 item 9): the file (or ``.gz``, inflated through a capped stream) is read in 1 MiB pieces and
the ``messages`` array one item at a time (:class:`bot.ingest.bounded.JsonArrayReader`), twice: a first pass
collects join times, the second converts. Memory per file is one piece plus the authors of the last
:data:`REPLY_WINDOW` messages (for reply pings), whatever the file's size.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.core.models import Attachment, ChannelRef, MemberRef, Mention, Message, ServerRef
from bot.ingest.bounded import (
    MAX_HEADER_CHARS,
    JsonArrayReader,
    JsonBreak,
    TextChunks,
    TooLarge,
    inner_name,
    open_binary,
)
from bot.ingest.common import (
    TOO_DEEP,
    TOO_DEEP_REASON,
    clean_text,
    find_array_start,
    get_str,
    json_error_position,
    parse_iso,
    recover_array_items,
    snowflake_time,
)
from bot.ingest.errors import ErrorSink, IngestError

log = logging.getLogger(__name__)

#: DCE ``MessageKind`` values that are platform notices, not member speech; they are skipped.
#: Messages back in a file whose authors are remembered, to tell a reply's implicit ping from a real mention (a
#: reply to an older message in the same channel file is read as a plain mention); bounds memory per file.
REPLY_WINDOW = 5_000
SYSTEM_KINDS = frozenset(
    {
        "RecipientAdd",
        "RecipientRemove",
        "Call",
        "ChannelNameChange",
        "ChannelIconChange",
        "ChannelPinnedMessage",
        "GuildMemberJoin",
        "ThreadCreated",
    }
)
_THREAD_KINDS = frozenset({"GuildPublicThread", "GuildPrivateThread", "GuildNewsThread"})


def sniff_discord_json(head: str) -> bool:
    """True when the first characters of a file look like a DCE JSON export (an object with ``guild``/``messages``)."""
    h = head.lstrip("\ufeff \t\r\n")
    return h.startswith("{") and ('"guild"' in h or '"messages"' in h)


def _recover(text: str, *, keep_all: bool = False) -> dict[str, Any]:
    """Best-effort parse of a damaged export: header objects and complete messages before the break (with
    ``keep_all``, every message item in order, one nested too deeply as :data:`TOO_DEEP`)."""
    decoder = json.JSONDecoder()
    doc: dict[str, Any] = {}
    for key in ("guild", "channel"):
        idx = text.find(f'"{key}"')
        if idx >= 0:
            brace = text.find("{", idx)
            try:
                doc[key], _ = decoder.raw_decode(text, brace)
            except (json.JSONDecodeError, ValueError, RecursionError):
                pass
    start = find_array_start(text, "messages")
    doc["messages"] = list(recover_array_items(text, start, keep_all=keep_all)) if start is not None else []
    return doc


def _load(path: Path, sink: ErrorSink, text: str) -> dict[str, Any] | None:
    """The whole-text reading of a small file with no ``"messages": [`` (the streamed path found none)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        sink.report(IngestError(path, json_error_position(exc), f"malformed or truncated JSON: {exc.msg}"))
        doc = _recover(text)
    except RecursionError:  # some value nested too deeply: read the messages one by one (each deep one reported)
        doc = _recover(text, keep_all=True)
        if not any(m is TOO_DEEP for m in doc["messages"]):
            sink.report(IngestError(path, "", TOO_DEEP_REASON.replace("skipped", "read what could be")))
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        sink.report(IngestError(path, "", "not a DiscordChatExporter JSON export (no 'messages' array)"))
        return None
    return doc


def _header(path: Path, sink: ErrorSink, prefix: str) -> dict[str, Any]:
    """``guild`` and ``channel`` from the text before ``"messages": [`` (DCE writes them first)."""
    try:
        doc = json.loads(prefix + '"messages": []}')
    except json.JSONDecodeError as exc:
        sink.report(IngestError(path, json_error_position(exc), f"malformed JSON before the messages: {exc.msg}"))
        doc = _recover(prefix)
    except RecursionError:
        sink.report(IngestError(path, "", TOO_DEEP_REASON.replace("skipped", "read what could be")))
        doc = _recover(prefix)
    return doc if isinstance(doc, dict) else {}


def _items(path: Path, sink: ErrorSink | None, data: bytes | None, header: dict[str, Any]) -> Iterator[tuple[int, Any]]:
    """Stream ``(index, raw message)`` of the file's ``messages`` array (``header`` receives ``guild`` and
    ``channel``); damage, a ``.gz`` bomb or an unreadable file is reported to ``sink`` (``None``: silently
    stops) after the items before it."""
    sink = sink if sink is not None else _Silent()
    report = sink.report
    try:
        with open_binary(path, data) as fh:
            chunks = TextChunks(fh, str(path))
            rd = JsonArrayReader(chunks)

            def damaged() -> bool:  # a damaged .gz: its damage is the one error, after the items before it
                if chunks.damage is not None:
                    report(IngestError(path, "", f"unreadable: {chunks.damage}"))
                    return True
                return False

            if not rd.find("messages"):
                if damaged():
                    return
                if len(rd.prefix) > MAX_HEADER_CHARS:
                    report(IngestError(path, "", "not a DiscordChatExporter JSON export (no 'messages' array in "
                                       f"its first {MAX_HEADER_CHARS:,} characters)"))
                    return
                doc = _load(path, sink, rd.prefix)
                if doc is None:
                    return
                header.update(doc)
                yield from enumerate(doc["messages"])
                return
            header.update(_header(path, sink, rd.prefix))
            try:
                yield from rd.items()
            except JsonBreak as exc:
                if not damaged():
                    report(IngestError(path, exc.position, exc.reason))
                return
            tail = rd.rest()
            if damaged():
                return
            if tail is not None and (t := tail.strip()) not in ("}", ""):
                try:
                    json.loads("{" + t[1:] if t.startswith(",") else t)
                except (json.JSONDecodeError, RecursionError) as exc:
                    report(IngestError(path, rd.where(rd.pos), f"malformed JSON after the messages: {exc}"))
    except TooLarge as exc:
        report(IngestError(path, "", str(exc)))
    except (OSError, EOFError) as exc:
        report(IngestError(path, "", f"unreadable: {exc}"))


class _Silent(ErrorSink):
    """A sink that drops every error (a first pass whose errors the second reports)."""

    def report(self, error: IngestError) -> None:
        return None


def _member(author: dict[str, Any], author_id: str, joins: dict[str, datetime]) -> MemberRef:
    roles = tuple(str(r["id"]) for r in author.get("roles") or () if isinstance(r, dict) and r.get("id") is not None)
    return MemberRef(
        id=author_id,
        name=clean_text(author.get("nickname") or author.get("name") or ""),
        joined_at=joins.get(author_id),
        created_at=snowflake_time(author_id),
        roles=roles,
        is_bot=bool(author.get("isBot", False)),
    )


def _names_in(content: str, user: dict[str, Any], uid: str) -> bool:
    if f"<@{uid}>" in content or f"<@!{uid}>" in content:
        return True
    return any(isinstance(n, str) and n and f"@{n}" in content for n in (user.get("name"), user.get("nickname")))


def _scan_joins(raw: Iterable[tuple[int, Any]], path: Path) -> dict[str, datetime]:
    """Join times per author id: ``author.joinedAt`` (non-standard) or ``GuildMemberJoin`` messages."""
    joins: dict[str, datetime] = {}
    for _i, m in raw:
        if not isinstance(m, dict):
            continue
        uid = get_str(m, "author", "id")
        if uid is None:
            continue
        stamp = get_str(m, "author", "joinedAt")
        if stamp is None and m.get("type") == "GuildMemberJoin":
            stamp = get_str(m, "timestamp")
        if stamp is None:
            continue
        try:
            t = parse_iso(stamp)
        except ValueError:
            log.warning("%s: message %s has a bad join time %r", path, m.get("id"), stamp)
            continue
        if uid not in joins or t < joins[uid]:
            joins[uid] = t
    return joins


def iter_discord_json(path: Path, *, sink: ErrorSink | None = None, data: bytes | None = None) -> Iterator[Message]:
    """Yield the messages of one DCE JSON file, in file order.

    Args:
        path: The ``.json`` file (also used to name errors and as fallback server/channel id).
        sink: Error policy (default: skip and log).
        data: The file's bytes, if already read (otherwise ``path`` is read).

    Yields:
        :class:`Message` per non-system message with ``id``, ``timestamp`` and ``author.id``.

    Raises:
        IngestError: Only with a ``"stop"`` sink: malformed JSON, no messages array, or a message lacking a
            required key or with an unparseable time (position ``"message <index>"``).
    """
    sink = sink or ErrorSink()
    joins = _scan_joins(_items(path, None, data, {}), path)  # first pass: join times only, nothing reported
    doc: dict[str, Any] = {}
    items = _items(path, sink, data, doc)
    first = next(items, None)  # reads the header into doc
    guild = found if isinstance(found := doc.get("guild"), dict) else {}
    chan = found if isinstance(found := doc.get("channel"), dict) else {}
    server = ServerRef("export", get_str(guild, "id") or path.parent.name or "export", clean_text(guild.get("name")))
    chan_id = get_str(chan, "id") or inner_name(path).stem
    if isinstance(kind := chan.get("type"), str) and kind in _THREAD_KINDS:
        channel = ChannelRef(
            chan_id, clean_text(chan.get("name")), parent_id=get_str(chan, "categoryId"), is_thread=True
        )
    else:
        channel = ChannelRef(chan_id, clean_text(chan.get("name")), category_id=get_str(chan, "categoryId"))
    author_of: OrderedDict[str, str | None] = OrderedDict()  # the last REPLY_WINDOW messages' authors
    if first is None:
        return
    for i, m in itertools.chain((first,), items):
        try:
            msg = _convert(m, i, path, sink, server, channel, joins, author_of)
        except (TypeError, AttributeError) as exc:  # a field of the wrong type ("mentions": 5, "type": [])
            sink.report(IngestError(path, f"message {i}", f"malformed message (a field of the wrong type: {exc})"))
            msg = None
        if isinstance(m, dict):
            author_of[str(m.get("id"))] = get_str(m, "author", "id")
            if len(author_of) > REPLY_WINDOW:
                author_of.popitem(last=False)
        if msg is not None:
            yield msg


def _convert(
    m: Any,
    i: int,
    path: Path,
    sink: ErrorSink,
    server: ServerRef,
    channel: ChannelRef,
    joins: dict[str, datetime],
    author_of: Mapping[str, str | None],
) -> Message | None:
    if m is TOO_DEEP:
        sink.report(IngestError(path, f"message {i}", TOO_DEEP_REASON))
        return None
    if not isinstance(m, dict):
        sink.report(IngestError(path, f"message {i}", "message is not a JSON object"))
        return None
    mid, stamp, uid = get_str(m, "id"), get_str(m, "timestamp"), get_str(m, "author", "id")
    missing = [k for k, v in (("id", mid), ("timestamp", stamp), ("author.id", uid)) if v is None]
    if missing or mid is None or stamp is None or uid is None:
        sink.report(IngestError(path, f"message {i}", f"missing required key(s): {', '.join(missing)}"))
        return None
    if m.get("type") in SYSTEM_KINDS:
        return None
    try:
        created = parse_iso(stamp)
        edited = parse_iso(m["timestampEdited"]) if isinstance(m.get("timestampEdited"), str) else None
    except ValueError as exc:
        sink.report(IngestError(path, f"message {i}", f"bad timestamp: {exc}"))
        return None
    content = clean_text(m.get("content"))
    reply_to = get_str(m, "reference", "messageId")
    replied_author = author_of.get(reply_to) if reply_to else None
    mentions: list[Mention] = []
    for u in m.get("mentions") or ():
        muid = get_str(u, "id")
        if muid is None:
            continue
        ping = muid == replied_author and not _names_in(content, u, muid)
        mentions.append(Mention(muid, is_bot=bool(u.get("isBot", False)), is_reply_ping=ping))
    attachments = tuple(
        Attachment(str(a.get("url") or ""), clean_text(a.get("fileName") or ""))
        for a in m.get("attachments") or ()
        if isinstance(a, dict)
    )
    return Message(
        server=server,
        channel=channel,
        author=_member(m["author"], uid, joins),
        id=mid,
        text=content,
        created_at=created,
        edited_at=edited,
        reply_to=reply_to,
        attachments=attachments,
        mentions=tuple(mentions),
        mentions_everyone="@everyone" in content or "@here" in content,
    )
