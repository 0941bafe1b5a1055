"""The inputs of ``scan`` as one time-ordered stream of messages, read without holding them (issue 25 item 9).

Two passes over the inputs, each holding one piece of each open file:

1. :meth:`MessageStream.survey` reads every part (an export file, or one channel folder of a Slack export) once
   and keeps, per part, its message count, first time and whether it is in time order; for the whole input the
   servers, each author's name and how many messages lack an author or a time (what ``scan`` must know before the
   model loads). Every malformed input is reported here (the :class:`bot.ingest.ErrorSink` reports it once, so
   the second pass does not repeat it; with ``on_error="stop"`` nothing has been judged yet).
2. Iterating the stream merges the parts by ``created_at`` (a message without a time keeps the place of the one
   before it in its file: :func:`placed`; stable: ties keep input order, exactly as a stable
   sort of everything would), opening a part only when the merge reaches its first time, so only the parts that
   overlap in time are open at once. A part found out of time order in the survey is sorted in memory on its own
   (its size is bounded by the readers' size caps); exports are written in time order, so this is rare.

One key is one message: copies of it (the same file given twice, overlapping exports, or two exports of one channel
whose times differ, such as a DCE CSV's minute times spread over the minute next to the JSON's exact ones) are
yielded once, the first in time order; the survey counts the copies (:attr:`Survey.duplicates`) for ``scan``'s
warning. The keys seen are kept in a private temporary SQLite database (:class:`SeenKeys`: on disk past a small page
cache), not in Python memory. Each author's first message per ``(platform, server)`` gets ``is_first_message``
(the set of authors seen is kept, one entry per author). Memory: the authors, the servers, one record per part, and
one piece of each open part, whatever N.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from bot.core.models import Message
from bot.ingest.errors import ErrorSink, IngestError
from bot.ingest.jsonl import lacks_author_or_time
from bot.ingest.reader import FORMATS, Source, iter_sources

log = logging.getLogger(__name__)


class SeenKeys:
    """A set of message keys ``(platform, server id, message id)`` kept in a private temporary SQLite database
    (SQLite's ``""`` file: deleted on close, on disk once its page cache of about 2 MiB is full), so remembering
    every key of a million-message input costs no Python memory. Use as a context manager."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("", isolation_level=None)
        self._db.execute("PRAGMA journal_mode = OFF")  # a scratch set: nothing to recover
        self._db.execute("CREATE TABLE seen (platform TEXT, server TEXT, id TEXT, "
                         "PRIMARY KEY (platform, server, id)) WITHOUT ROWID")
        self._db.execute("BEGIN")  # one transaction, never committed: no sync per key

    def add(self, key: tuple[str, str, str]) -> bool:
        """Remember ``key``; True when it was new, False for a key seen before."""
        return self._db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?, ?)", key).rowcount == 1

    def close(self) -> None:
        """Drop the set (the temporary file goes with it)."""
        self._db.close()

    def __enter__(self) -> SeenKeys:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


@dataclass
class PartInfo:
    """What the survey learnt of one part of the input."""

    count: int = 0
    first: datetime | None = None
    ordered: bool = True


@dataclass
class Survey:
    """The whole input, as the survey pass saw it.

    Attributes:
        messages: Messages read (copies across inputs counted each time; the stream yields each once).
        duplicates: Of those, copies of a key read before (the stream drops them: ``messages - duplicates`` are
            yielded).
        incomplete: Messages without an author or a time (:func:`bot.ingest.jsonl.lacks_author_or_time`).
        servers: ``(platform, server id)`` of every message.
        names: Author id -> display name (the last non-empty one read).
        parts: One :class:`PartInfo` per part, in input order.
    """

    messages: int = 0
    duplicates: int = 0
    incomplete: int = 0
    servers: set[tuple[str, str]] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)
    parts: list[PartInfo] = field(default_factory=list)


class MessageStream:
    """Re-iterable, time-ordered, de-duplicated messages of ``paths`` (see the module docstring).

    Args:
        paths: Files or folders (see :func:`bot.ingest.iter_messages`).
        fmt: One of :data:`bot.ingest.FORMATS`.
        on_error: ``"skip"`` or ``"stop"``; ``errors`` receives the skipped :class:`IngestError` records.
        mark_first_messages: Set ``is_first_message`` where the reader did not.

    Use as a context manager (it closes the Slack exports it opened); call :meth:`survey` before iterating.

    Raises:
        ValueError: Unknown ``fmt`` or ``on_error``.
        IngestError: With ``on_error="stop"``, from :meth:`survey`: the first malformed input.
    """

    def __init__(self, paths: Sequence[Path | str], fmt: str = "auto", on_error: str = "skip",
                 errors: list[IngestError] | None = None, *, mark_first_messages: bool = True) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r} (allowed: {', '.join(FORMATS)})")
        self.paths = [Path(p) for p in paths]
        self.fmt = fmt
        self.sink = ErrorSink(on_error, errors)
        self.mark_first_messages = mark_first_messages
        self._stack = ExitStack()
        self._parts: list[Source] | None = None
        self._survey: Survey | None = None

    def __enter__(self) -> MessageStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close what the parts opened (Slack export zips)."""
        self._stack.close()

    def _open(self) -> list[Source]:
        if self._parts is None:
            self._parts = [src for p in self.paths for src in iter_sources(p, self.fmt, self.sink, self._stack)]
        return self._parts

    def survey(self) -> Survey:
        """Read every part once (see the module docstring); the result is kept (a second call returns it)."""
        if self._survey is not None:
            return self._survey
        out = Survey()
        with SeenKeys() as seen:
            for part in self._open():
                out.parts.append(self._survey_part(part, out, seen))
        self._survey = out
        return out

    @staticmethod
    def _survey_part(part: Source, out: Survey, seen: SeenKeys) -> PartInfo:
        info = PartInfo()
        last: datetime | None = None
        for t, m in placed(part()):
            info.count += 1
            out.messages += 1
            if not seen.add(m.key):
                out.duplicates += 1
            if info.first is None or t < info.first:
                info.first = t
            if last is not None and t < last:
                info.ordered = False
            last = t
            out.servers.add((m.server.platform, m.server.id))
            if m.author.name:
                out.names[m.author.id] = m.author.name
            if lacks_author_or_time(m):
                out.incomplete += 1
        return info

    def __iter__(self) -> Iterator[Message]:
        survey = self.survey()
        merged = _merge(self._open(), survey.parts)
        spoke: set[tuple[str, str, str]] = set()
        with SeenKeys() as seen:  # closed when the iteration ends or is abandoned (the generator is closed)
            for msg in merged:
                if not seen.add(msg.key):  # a copy of a message yielded before (same key, any time)
                    continue
                if self.mark_first_messages:
                    who = (msg.server.platform, msg.server.id, msg.author.id)
                    first = who not in spoke
                    spoke.add(who)
                    if msg.is_first_message is None:
                        msg = dataclasses.replace(msg, is_first_message=first)
                yield msg


#: Where a message without a time goes when nothing before it in its part has one: before every timed message.
BEFORE_ALL = datetime.min.replace(tzinfo=UTC)


def placed(messages: Iterable[Message]) -> Iterator[tuple[datetime, Message]]:
    """Each message with its place in time: its ``created_at``, or for a message without a time (``None``) the place
    of the message before it in the same part (:data:`BEFORE_ALL` before any), so a stable merge keeps it where
    its file has it. The message itself keeps ``created_at=None``."""
    at = BEFORE_ALL
    for m in messages:
        if m.created_at is not None:
            at = m.created_at
        yield at, m


def _merge(parts: Sequence[Source], infos: Sequence[PartInfo]) -> Iterator[Message]:
    """Merge the parts by time (:func:`placed`), stably (ties: lower part index first, then file order), opening each
    part when the merge reaches its first time. A part read out of order now (changed since the survey) is logged
    and yielded as it comes."""
    pending = sorted((i for i, info in enumerate(infos) if info.count and info.first is not None),
                     key=lambda i: (infos[i].first, i))
    heap: list[tuple[datetime, int, int, Message, Iterator[tuple[datetime, Message]]]] = []
    seq = itertools.count()

    def push(i: int, it: Iterator[tuple[datetime, Message]]) -> None:
        got = next(it, None)
        if got is not None:
            heapq.heappush(heap, (got[0], i, next(seq), got[1], it))

    nxt = 0
    while True:
        while nxt < len(pending) and (not heap or infos[pending[nxt]].first <= heap[0][0]):  # type: ignore[operator]
            i = pending[nxt]
            nxt += 1
            it = placed(parts[i]())
            if not infos[i].ordered:
                log.info("part %d of the input is not in time order: sorting its %d messages", i, infos[i].count)
                it = iter(sorted(it, key=lambda p: p[0]))
            push(i, it)
        if not heap:
            return
        t, i, _, msg, it = heapq.heappop(heap)
        push(i, it)
        if heap and heap[0][1] == i and heap[0][0] < t:
            log.warning("part %d of the input changed since it was read: a message went back in time", i)
        yield msg


def read_messages(
    paths: Sequence[Path],
    fmt: str = "auto",
    on_error: str = "skip",
    errors: list[IngestError] | None = None,
    *,
    mark_first_messages: bool = True,
) -> list[Message]:
    """Read every input and return its messages sorted by ``created_at`` (stable: ties keep input order).

    A list of every message: for tests and small inputs. ``scan`` streams the same order without holding it
    (:class:`MessageStream`).

    Messages with the same :attr:`Message.key` (the same file given twice, overlapping exports) are kept once
    (the first in time order). With ``mark_first_messages`` each message whose reader did not say gets
    ``is_first_message``: True for the author's earliest message per ``(platform, server)`` in the whole input,
    False for later ones (a first message *in the export*, the best an offline scan can know).

    Args:
        paths: Files or folders (see :func:`bot.ingest.reader.iter_messages`).
        fmt: One of :data:`FORMATS`; applies to every path.
        on_error: ``"skip"`` (log, append to ``errors``, continue) or ``"stop"`` (raise the first error).
        errors: Receives the skipped :class:`IngestError` records.
        mark_first_messages: Set ``is_first_message`` as described.

    Returns:
        Messages sorted by time.

    Raises:
        ValueError: Unknown ``fmt`` or ``on_error``.
        IngestError: With ``on_error="stop"``, the first malformed input (file and position).
    """
    with MessageStream(paths, fmt, on_error, errors, mark_first_messages=mark_first_messages) as stream:
        stream.survey()
        out = list(stream)  # the stream yields each key once
        problems = stream.sink.count
    if problems:
        log.warning("read %d messages; skipped %d problem(s)", len(out), problems)
    return out
