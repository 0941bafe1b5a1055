"""Entry points of the offline ``scan`` job: read chat exports of any supported format into core messages."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

from bot.core.models import Message
from bot.core.storable import storable, unstorable_id
from bot.ingest.bounded import damage_of, inner_name, read_head
from bot.ingest.common import natural_key
from bot.ingest.discord_csv import iter_discord_csv
from bot.ingest.discord_json import iter_discord_json, sniff_discord_json
from bot.ingest.encoding import input_encoding
from bot.ingest.errors import ErrorSink, IngestError
from bot.ingest.jsonl import iter_jsonl
from bot.ingest.slack_export import SlackExport, iter_slack_export, sniff_slack_export

log = logging.getLogger(__name__)

#: Accepted values of ``fmt``.
FORMATS = ("auto", "discord-json", "discord-csv", "slack-export", "jsonl")
_EXT = {"discord-json": (".json",), "discord-csv": (".csv",), "jsonl": (".jsonl", ".ndjson")}


def detect_file_format(path: Path) -> str | None:
    """Format of one file from its extension and first 4 KiB, or ``None`` when it is not a chat export.

    ``.csv`` -> ``discord-csv``; ``.jsonl``/``.ndjson`` -> ``jsonl``; ``.zip`` with ``users.json`` or
    ``channels.json`` -> ``slack-export``; ``.json`` starting with an object holding ``"guild"``/``"messages"`` ->
    ``discord-json`` (UTF-8 only), or whose first line is an object with ``id`` and ``text`` -> ``jsonl`` (also
    behind a UTF-16 / UTF-32 byte order mark, :func:`bot.ingest.encoding.input_encoding`). A ``.gz`` file is
    judged by the name and text it has inflated (``chat.jsonl.gz``; read through a size-capped stream).
    """
    name = inner_name(path)
    suffix = name.suffix.lower()
    if suffix == ".csv":
        return "discord-csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".zip" and name == path:
        return "slack-export" if sniff_slack_export(path) else None
    if suffix == ".json":
        raw = read_head(path)
        codec, mark, _errors = input_encoding(raw)  # JSON lines behind a UTF-16 / UTF-32 mark, as iter_jsonl reads
        head = raw[mark:].decode(codec, errors="replace")
        if sniff_discord_json(head):
            # the DiscordChatExporter JSON reader reads UTF-8 only: another encoding is not detected
            return "discord-json" if codec == "utf-8" else None
        first = head.lstrip().split("\n", 1)[0]
        try:
            obj = json.loads(first)
        except (json.JSONDecodeError, RecursionError):
            return None
        if isinstance(obj, dict) and "id" in obj and "text" in obj:
            return "jsonl"
    return None


def detect_format(path: Path) -> str | None:
    """Format of a path: ``slack-export`` for a Slack export folder/zip, a file's format, or ``None``
    (a folder of mixed files, read file by file)."""
    if path.is_dir():
        return "slack-export" if sniff_slack_export(path) else None
    return detect_file_format(path)


#: A re-openable part of the input: each call yields its messages from the start, in file order.
Source = Callable[[], Iterator[Message]]


def _storable(source: Source, where: Path, sink: ErrorSink, part: str = "") -> Source:
    """``source`` without the messages the mod log cannot store: one whose id holds a lone UTF-16 surrogate or a
    NUL (:func:`bot.core.storable.unstorable_id`) is reported to ``sink`` at ``where`` (``"<part>message <id>"``, the
    id ASCII-escaped) and skipped; either in a text or name is replaced by U+FFFD (:func:`bot.core.storable.storable`)."""

    def run() -> Iterator[Message]:
        for m in source():
            bad = unstorable_id(m)
            if bad is None:
                yield storable(m)
                continue
            shown = ascii(m.id)[1:-1]
            sink.report(IngestError(where, f"{part}message {shown[:80]}",
                                    f"its {bad}, which the mod log cannot store "
                                    "(a broken or doctored export); this message is skipped"))

    return run


def _iter_file(path: Path, fmt: str, sink: ErrorSink, root: Path | None) -> Iterator[Message]:
    if fmt == "discord-json":
        yield from iter_discord_json(path, sink=sink)
    elif fmt == "discord-csv":
        yield from iter_discord_csv(path, sink=sink, root=root)
    elif fmt == "jsonl":
        yield from iter_jsonl(path, sink=sink)
    elif fmt == "slack-export":
        yield from iter_slack_export(path, sink=sink)


def iter_sources(path: Path, fmt: str, sink: ErrorSink, stack: ExitStack) -> Iterator[Source]:
    """The parts of one input path, in the order :func:`iter_messages` reads them: one per export file, one per
    channel folder of a Slack export (opened once, closed by ``stack``). See :func:`iter_messages` for ``fmt``
    and the errors reported to ``sink``."""
    if not path.exists():
        sink.report(IngestError(path, "", "no such file or directory"))
        return
    if fmt == "slack-export" or (fmt == "auto" and detect_format(path) == "slack-export"):
        yield from _slack_sources(path, sink, stack)
        return
    if path.is_file():
        file_fmt = fmt if fmt != "auto" else detect_file_format(path)
        if file_fmt is None:
            damage = damage_of(path)
            sink.report(IngestError(path, "", f"unreadable: {damage}" if damage is not None
                                    else "cannot detect the export format (give --format)"))
            return
        yield _storable(functools.partial(_iter_file, path, file_fmt, sink, None), path, sink)
        return
    for child in _walk(path, fmt):
        if child.is_dir():  # a Slack export (folder) inside the folder: read as one, not file by file
            yield from _slack_sources(child, sink, stack)
            continue
        if fmt == "auto" and detect_file_format(child) == "slack-export":
            yield from _slack_sources(child, sink, stack)  # a Slack export zip inside the folder
            continue
        if fmt == "auto":
            child_fmt = detect_file_format(child)
        elif inner_name(child).suffix.lower() in _EXT[fmt]:
            child_fmt = fmt
            if fmt == "discord-json" and detect_file_format(child) != "discord-json":
                child_fmt = None
        else:
            child_fmt = None
        if child_fmt is None and (damage := damage_of(child)) is not None:
            sink.report(IngestError(child, "", f"unreadable: {damage}"))  # a damaged .gz is not "not an export"
            continue
        if child_fmt is None or child_fmt == "slack-export":
            log.debug("skipping %s (not a %s export)", child, fmt)
            continue
        yield _storable(functools.partial(_iter_file, child, child_fmt, sink, path), child, sink)


def _slack_sources(path: Path, sink: ErrorSink, stack: ExitStack) -> Iterator[Source]:
    """One source per channel folder of the Slack export (folder or zip) at ``path``, opened once, closed by
    ``stack``."""
    export = SlackExport(path, sink=sink)
    stack.callback(export.close)
    for folder in export.folders:
        yield _storable(functools.partial(export.iter_channel, folder), path, sink, f"channel {folder}, ")


def _walk(folder: Path, fmt: str) -> Iterator[Path]:
    """The files under ``folder`` in natural order (:func:`bot.ingest.common.natural_key`), except that a folder
    holding a Slack export (:func:`bot.ingest.slack_export.sniff_slack_export`; with ``fmt`` ``auto``) is yielded
    itself, in the place of its files: its day files are no export on their own, so the
    walk used to skip them one by one and the whole workspace was silently left out (``scan examples``)."""
    for child in sorted(folder.iterdir(), key=natural_key):
        if child.is_symlink() and child.is_dir():
            continue  # not followed, as Path.rglob does not (a link to a folder above would loop)
        if child.is_dir():
            if fmt == "auto" and sniff_slack_export(child):
                yield child
            else:
                yield from _walk(child, fmt)
        elif child.is_file():
            yield child


def iter_messages(path: Path, fmt: str = "auto", *, sink: ErrorSink | None = None) -> Iterator[Message]:
    """Yield the messages of one input path in file order (not sorted by time).

    Args:
        path: A file (``.gz`` ones inflated through a size-capped stream), a Slack export folder or zip, or a
            folder of export files (walked recursively in natural order, so ``2.csv`` comes before ``10.csv``;
            files that are not exports are skipped with a debug log; with ``fmt="auto"`` a Slack export folder or
            zip inside it is read as a Slack export; links to folders are not followed).
        fmt: One of :data:`FORMATS`. An explicit format on a folder reads the folder's files of that format
            (``slack-export``: the folder itself).
        sink: Error policy (default: skip and log).

    Raises:
        ValueError: Unknown ``fmt``.
        IngestError: Only with a ``"stop"`` sink (see the per-format iterators); also for a missing path or a
            file whose format cannot be detected.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (allowed: {', '.join(FORMATS)})")
    sink = sink or ErrorSink()
    with ExitStack() as stack:
        for source in iter_sources(path, fmt, sink, stack):
            yield from source()

