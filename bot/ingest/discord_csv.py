"""Reader for DiscordChatExporter CSV exports (2019 ``;`` style and current ``,`` style).

Format: ``docs/platform-protocols.md`` section 1.1 and ``data/chats/komodo-discord-dce-csv/README.md``.

* Delimiter: sniffed from the header line (``AuthorID;Author;Date;Content;Attachments;Reactions;`` with a
  trailing ``;`` in 2019 exports, ``AuthorID,Author,...`` now). A UTF-8 BOM is dropped. Fields may hold newlines.
* Broken quoting (a stray or unterminated quote, a line past :data:`MAX_LINE_BYTES`): that row is reported with
  its row and line and why, and reading goes on at the line after the one it started on, so the lines an open
  quote swallowed are read again as rows (each row that is still no row is reported too): no readable row is lost.
  An open quote that a later row's trailing quote closes (``a 12";``: valid CSV, the rows between merged into one
  field) is broken quoting too: a row whose later line reads as a whole row of its own (:func:`_row_inside`).
* Dates: ``dd-MMM-yy hh:mm tt`` (2019, e.g. ``05-Dec-19 04:27 AM``), ISO-8601, or a few .NET short formats
  (:data:`DATE_FORMATS`). DCE writes the exporter's **local** time without a zone; we cannot know it, so a time
  without an offset is **taken as UTC** (an error of up to +-14 h; minute resolution). Slash dates with a 24-hour
  time are ``dd/MM/yyyy HH:mm`` (.NET en-GB) or ``M/d/yyyy H:mm`` (Excel's US form, written back when the file is
  saved in Excel): the day/month order is read once per file from its dates (:func:`_day_first`: a number over 12,
  else the order that keeps the file in time order), and a row whose date the file cannot settle is reported.
* Ids: CSV has no message ids. Each row gets ``"csv-" + sha1(channel id, file stem, author id, raw date, content,
  ordinal)[:20]``, where ordinal counts identical earlier rows in the same file (among the rows of the last
  :data:`SEEN_DATES` distinct dates: identical rows share their date, and a file is in time order). It does not depend on where the
  folder lives or how the path was spelled, so re-runs give the same ids (resumable, idempotent scans).
* Channel: the id in a DCE file name (``... [123456789012345678].csv``) or, for partitioned exports laid out as
  ``<category>/<channel>/<N>.csv``, the channel folder, resolved to its id through an archiver ``channels.json``
  (``{category id: {"name", "channels": {channel id: name}}}``) found in up to 6 parent folders; names are
  compared on letters and digits only (``official`` matches ``official📢``). Otherwise the folder name is the id.
* Server: ``ServerRef("export", <name of the folder holding channels.json, else the given root folder, else the
  file's folder>)``.
* Authors: ``AuthorID`` and ``Author`` (``name#discriminator``, kept as written); ``created_at`` is not derived
  because exported ids may be pseudonyms. An AuthorID in scientific notation (``1.23457E+17``: a spreadsheet
  such as Excel rounded the ids and saved the file again) is reported and its row skipped, never read as a member
  that different members' rounded ids would share. Mentions cannot be resolved (CSV renders them as ``@name``);
  ``@everyone``/``@here`` set ``mentions_everyone``.
* Bots: CSV has no ``isBot`` column. A row with neither content nor attachments is an embed-only message, which
  Discord's API lets only bots, webhooks and integrations send (a member's message needs text, a file or a
  sticker; DCE's CSV has no sticker column, so a sticker-only message reads the same and is treated alike), so that
  row's author is marked ``is_bot``. In the Komodo export this is YAGPDB's 1,508 embed-only posts, which otherwise
  trip the flood rule. The author's other rows keep ``is_bot=False``.
* System messages: DCE renders a member join as the text ``Joined the server.`` and a pin as ``Pinned a
  message.`` (:data:`SYSTEM_TEXTS`, with no attachment). Such rows are not member messages: they are skipped, and a
  join sets ``joined_at`` (the earliest in the file) on that member's later rows, as the JSON reader does with
  ``GuildMemberJoin``.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import logging
import re
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from bot.core.models import Attachment, ChannelRef, MemberRef, Message, ServerRef
from bot.ingest.bounded import MAX_LINE_BYTES, Damaged, TooLarge, inner_name, iter_lines, open_binary
from bot.ingest.common import clean_text, parse_iso
from bot.ingest.encoding import StrayBytes
from bot.ingest.errors import ErrorSink, IngestError

log = logging.getLogger(__name__)

# Python's csv refuses a field over 131,072 characters (its default limit) and cannot go on after it, so one long
# Content cell lost the rest of the file; allow a field as long as the longest line read (its lines are bounded).
csv.field_size_limit(max(csv.field_size_limit(), MAX_LINE_BYTES))

#: Fallback ``strptime`` formats tried after the 2019 format and ISO-8601 (all read as UTC).
DATE_FORMATS = (
    "%d-%b-%Y %I:%M %p",
    "%m/%d/%Y %I:%M %p",
    "%m/%d/%Y %I:%M:%S %p",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y %H:%M:%S",
    "%m/%d/%Y %H:%M",  # only what day-first cannot read; a file's rows are read one way (_day_first)
    "%m/%d/%Y %H:%M:%S",
    "%d.%m.%Y %H:%M",
    "%Y-%m-%d %H:%M",
)
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_DCE2019 = re.compile(r"^(\d{1,2})-([A-Za-z]{3})-(\d{2}) (\d{1,2}):(\d{2}) ([AaPp][Mm])$")
#: A date of numbers with slashes and a 24-hour time (no AM/PM): ``dd/MM/yyyy HH:mm`` (.NET en-GB, as DCE writes it
#: there) or ``M/d/yyyy H:mm`` (Excel's US display, written back when a CSV is saved): which comes first, the day or
#: the month, is told by the file's dates (:func:`_day_first`), never guessed per row.
_SLASH_24H = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?")
_ID_IN_NAME = re.compile(r"\[(\d{15,22})\]")
_REQUIRED = ("AuthorID", "Date", "Content")
#: An AuthorID a spreadsheet turned into a number and wrote back in scientific notation (Excel: ``1.23457E+17``,
#: ``1,23457E+17`` in locales with a decimal comma): 6 significant digits of an 18-digit id, so different members
#: read as one.
_ROUNDED_ID = re.compile(r"\d+(?:[.,]\d+)?[eE][+-]?\d+")
#: Distinct raw dates whose rows are remembered to number identical rows (:func:`_row_id`'s ordinal): identical
#: rows share their date, and DCE writes a file in time order, so only the recent dates can repeat; the memory is
#: the rows of these dates, whatever the file's size.
SEEN_DATES = 64
#: How DCE's text formats render system messages (``GuildMemberJoin``, ``ChannelPinnedMessage``): not member text.
SYSTEM_TEXTS = frozenset({"Joined the server.", "Pinned a message."})


@functools.lru_cache(maxsize=65536)
def parse_dce_date(value: str) -> datetime:
    """Parse a DCE CSV date into aware UTC (zone-less times are taken as UTC). Raises ``ValueError``."""
    s = value.strip()
    m = _DCE2019.match(s)
    if m:
        day, mon, yy, hh, mm, ampm = m.groups()
        month = _MONTHS.get(mon.lower())
        if month is None:
            raise ValueError(f"unknown month in {value!r}")
        hour = int(hh) % 12 + (12 if ampm.lower() == "pm" else 0)
        return datetime(2000 + int(yy), month, int(day), hour, int(mm), tzinfo=UTC)
    try:
        return parse_iso(s)
    except ValueError:
        pass
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(s, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised date {value!r}")


def _slash_date(m: re.Match[str], day_first: bool) -> datetime:
    """The UTC time of a :data:`_SLASH_24H` match, the day first or the month first.

    Raises:
        ValueError: no such date or time that way round, naming the date and the order.
    """
    a, b, year, hour, minute, second = m.groups()
    day, month = (int(a), int(b)) if day_first else (int(b), int(a))
    try:
        return datetime(int(year), month, day, int(hour), int(minute), int(second or 0), tzinfo=UTC)
    except ValueError:
        order = "day/month/year" if day_first else "month/day/year"
        raise ValueError(f"unrecognised date {m.group(0)!r} (this file's dates read {order})") from None


def _day_first(fh: IO[bytes], delim: str, i_date: int) -> bool | None:
    """Whether the file's slash dates with a 24-hour time (:data:`_SLASH_24H`) put the day first, read from its
    Date column in one pass (constant memory): ``True`` when some date's first number is over 12
    (``13/12/2019 10:00``) and none's second is, ``False`` the other way round (``12/13/2019 7:57``); else, with
    every date reading both ways, the order in which the file's dates never go back in time (a DCE file is in time
    order); ``None`` when that does not tell either (the dates disagree, or both orders keep time, e.g. one day).
    Rows the csv module cannot read end the pass (the rows before them tell)."""
    first_over = second_over = False
    prev: dict[bool, datetime | None] = {True: None, False: None}
    in_order = {True: True, False: True}
    same = True  # every date so far reads the same both ways (its day equals its month)

    def lines() -> Iterator[str]:
        try:
            yield from (line for line in iter_lines(fh, "", MAX_LINE_BYTES) if line is not None)
        except (StrayBytes, Damaged):
            return

    reader = csv.reader(lines(), delimiter=delim)
    try:
        next(reader, None)  # the header
        for row in reader:
            m = _SLASH_24H.fullmatch(row[i_date].strip()) if len(row) > i_date else None
            if m is None:
                continue
            first_over |= int(m.group(1)) > 12
            second_over |= int(m.group(2)) > 12
            same &= int(m.group(1)) == int(m.group(2))
            for day_first in (True, False):
                if not in_order[day_first]:
                    continue
                try:
                    t = _slash_date(m, day_first)
                except ValueError:
                    in_order[day_first] = False
                    continue
                before = prev[day_first]
                in_order[day_first] = before is None or before <= t
                prev[day_first] = t
    except csv.Error:
        pass
    if first_over != second_over:
        return first_over
    if first_over:  # both: the file disagrees with itself
        return None
    if same:
        return True
    return in_order[True] if in_order[True] != in_order[False] else None


def _slug(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isascii() and ch.isalnum())


@functools.lru_cache(maxsize=64)
def _load_channel_index(path: Path) -> dict[str, list[tuple[str, str, str, str]]] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("%s: unreadable channels.json (%s); ignored", path, exc)
        return None
    if not isinstance(doc, dict):
        return None
    out: dict[str, list[tuple[str, str, str, str]]] = {}
    for cat_id, cat in doc.items():
        if not isinstance(cat, dict) or not isinstance(cat.get("channels"), dict):
            continue
        cat_slug = _slug(str(cat.get("name", "")))
        for cid, cname in cat["channels"].items():
            out.setdefault(_slug(str(cname)), []).append((str(cid), str(cname), str(cat_id), cat_slug))
    return out


def _find_channels_json(start: Path, levels: int = 6) -> Path | None:
    """Nearest ``channels.json`` in the archiver's category layout, searching ``start`` and its parents."""
    cur = start
    for _ in range(levels):
        cand = cur / "channels.json"
        if cand.is_file() and _load_channel_index(cand):
            return cand
        if cur.parent == cur:
            break
        cur = cur.parent
    return None


def csv_context(path: Path, root: Path | None = None) -> tuple[ServerRef, ChannelRef]:
    """Server and channel of one CSV file, from its name, folders and a nearby ``channels.json``.

    Args:
        path: The CSV file.
        root: The folder the user passed (names the server when no ``channels.json`` is found).
    """
    chjson = _find_channels_json(path.parent)
    if chjson is not None:
        server_id = chjson.parent.name
    elif root is not None and root.is_dir():
        server_id = root.name
    else:
        server_id = path.parent.name
    server = ServerRef("export", server_id or "export", server_id)
    stem = inner_name(path).stem
    m = _ID_IN_NAME.search(stem)
    if m:
        name = stem[: m.start()].strip().rsplit(" - ", 1)[-1].strip()
        return server, ChannelRef(m.group(1), name)
    partitioned = stem.isdigit()
    name = path.parent.name if partitioned else stem
    category = path.parent.parent.name if partitioned else path.parent.name
    index = _load_channel_index(chjson) if chjson is not None else None
    if index:
        cands = index.get(_slug(name), [])
        best = [c for c in cands if c[3] == _slug(category)] or cands
        if best:
            cid, _cname, cat_id, _ = best[0]
            return server, ChannelRef(cid, name, category_id=cat_id)
    return server, ChannelRef(name, name)


def _row_id(channel_id: str, stem: str, author: str, date: str, content: str, ordinal: int) -> str:
    key = "\x1f".join((channel_id, stem, author, date, content, str(ordinal)))
    return "csv-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def iter_discord_csv(
    path: Path,
    *,
    sink: ErrorSink | None = None,
    root: Path | None = None,
    data: bytes | None = None,
) -> Iterator[Message]:
    """Yield the messages of one DCE CSV file, in row order.

    Args:
        path: The ``.csv`` file.
        sink: Error policy (default: skip and log).
        root: The folder the user passed, for the server id (see :func:`csv_context`).
        data: The file's bytes if already read.

    Yields:
        One :class:`Message` per data row.

    Raises:
        IngestError: Only with a ``"stop"`` sink: a missing header column (``"line 1"``), a row with too few
            fields, a bad date or an AuthorID in scientific notation (``"row R (line L)"``), or broken quoting / end of file inside a quoted field (with a
            ``"skip"`` sink that row alone is skipped: reading goes on at the line after the one it started on, so
            the rows an unterminated quote swallowed are read, or reported one by one).
    """
    sink = sink or ErrorSink()
    try:
        with open_binary(path, data) as fh:
            yield from _iter_rows(path, fh, sink, root, lambda: open_binary(path, data))
    except TooLarge as exc:
        sink.report(IngestError(path, "", str(exc)))
    except (OSError, EOFError) as exc:
        sink.report(IngestError(path, "", f"unreadable: {exc}"))


class _LineTooLong(Exception):
    pass


class _Tape:
    """A CSV file's lines for :func:`csv.reader`, numbered from 1 (the header), that keep the lines of the row being
    read, so a broken row can be dropped and reading go on at the line after the one it started on: the lines an
    unterminated quote swallowed are read again as rows.

    Iterating raises :class:`_LineTooLong` for a line past :data:`MAX_LINE_BYTES` (it is consumed and dropped).
    The lines end where UTF-16 / UTF-32 text ends with a stray byte: the :class:`StrayBytes` is kept in
    :attr:`stray` for the reader to report once the rows are read.
    """

    def __init__(self, lines: Iterator[str | None]) -> None:
        self._src = lines
        self._again: deque[tuple[int, str]] = deque()
        self._read = 0
        #: ``(line number, text)`` of the lines of the row being read.
        self.row: list[tuple[int, str]] = []
        #: Number of the last line taken, for an error before any line of a row (a line too long).
        self.line = 0
        self.stray: StrayBytes | None = None

    def __iter__(self) -> _Tape:
        return self

    def __next__(self) -> str:
        if self._again:
            n, line = self._again.popleft()
        else:
            try:
                got = next(self._src)
            except StrayBytes as exc:
                self.stray = exc
                raise StopIteration from None
            self._read += 1
            n = self._read
            if got is None:
                self.line = n
                raise _LineTooLong
            line = got
        self.line = n
        self.row.append((n, line))
        return line

    def start_row(self) -> None:
        """The next line taken starts a row."""
        self.row = []

    def first_line(self) -> int:
        """The number of the line the current row started on (the last line taken when it has none)."""
        return self.row[0][0] if self.row else self.line

    def resume_after_first_line(self) -> None:
        """Drop the current row's first line; its other lines are read again, as new rows."""
        self._again.extendleft(reversed(self.row[1:]))
        self.row = []


def _iter_rows(path: Path, fh: IO[bytes], sink: ErrorSink, root: Path | None,
               reopen: Callable[[], AbstractContextManager[IO[bytes]]]) -> Iterator[Message]:
    tape = _Tape(iter_lines(fh, str(path), MAX_LINE_BYTES))
    yield from _rows(path, tape, sink, root, reopen)
    if tape.stray is not None:  # UTF-16 / UTF-32 text that ends with a stray byte: said after every row
        sink.report(IngestError(path, f"byte {tape.stray.offset}", tape.stray.reason))


def _rows(path: Path, tape: _Tape, sink: ErrorSink, root: Path | None,
          reopen: Callable[[], AbstractContextManager[IO[bytes]]]) -> Iterator[Message]:
    try:
        first = next(tape, "")
    except _LineTooLong:
        sink.report(IngestError(path, "line 1", f"header line longer than {MAX_LINE_BYTES:,} bytes"))
        return
    delim = ";" if first.count(";") > first.count(",") else ","
    try:
        header = next(csv.reader([first], delimiter=delim, strict=True)) if first else None
    except (csv.Error, StopIteration) as exc:
        sink.report(IngestError(path, "line 1", f"unreadable CSV header: {exc}"))
        return
    if header is None:
        sink.report(IngestError(path, "line 1", "empty file (no CSV header)"))
        return
    col = {name.strip(): i for i, name in enumerate(header) if name.strip()}
    absent = [c for c in _REQUIRED if c not in col]
    if absent:
        sink.report(IngestError(path, "line 1", f"not a DCE CSV header (missing {', '.join(absent)})"))
        return
    server, channel = csv_context(path, root)
    i_aid, i_date, i_text = col["AuthorID"], col["Date"], col["Content"]
    i_name, i_att = col.get("Author"), col.get("Attachments")
    need = max(i_aid, i_date, i_text) + 1
    # ordinals of identical rows, per raw date, for the last SEEN_DATES dates only: keyed by every row's content
    # for the whole file, this held the text of the export in memory
    seen: OrderedDict[str, dict[tuple[str, str], int]] = OrderedDict()
    members: dict[tuple[str, str, bool, datetime | None], MemberRef] = {}
    joins: dict[str, datetime] = {}
    row_no = 0
    run: list[Message] = []
    day_first: bool | None | str = "unread"  # the file's slash-date order (_day_first), read when first needed
    reader = csv.reader(tape, delimiter=delim, strict=True)
    while True:
        tape.start_row()
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # a stray or unterminated quote: that row is unreadable, the lines after its first are not lost
            row_no += 1
            start = tape.first_line()
            sink.report(IngestError(path, f"row {row_no} (line {start})",
                                    f"bad CSV: {exc}; this row is skipped and reading goes on at line {start + 1}"))
            tape.resume_after_first_line()
            reader = csv.reader(tape, delimiter=delim, strict=True)
            continue
        except _LineTooLong:
            row_no += 1
            start = tape.first_line()
            where = f"row {row_no} (line {start})" if tape.row else f"line {tape.line}"
            sink.report(IngestError(path, where, f"line {tape.line} is longer than {MAX_LINE_BYTES:,} bytes; "
                                                 f"{'this row' if tape.row else 'it'} is skipped"))
            tape.resume_after_first_line()
            reader = csv.reader(tape, delimiter=delim, strict=True)
            continue
        row_no += 1
        if not row or row == [""]:
            continue
        inner = _row_inside(tape.row, delim, need, i_aid, i_date)
        if inner is not None:
            # an unterminated quote closed by a quote at the end of a field of a later row (``a 12";``): csv reads
            # one row, the neighbours merged into one field; report it and read the swallowed lines again as rows
            start = tape.first_line()
            sink.report(IngestError(path, f"row {row_no} (line {start})",
                                    f"bad CSV: a quote opened on line {start} is still open on line {inner}, "
                                    "which reads as a row of its own (an unterminated quote?); "
                                    f"this row is skipped and reading goes on at line {start + 1}"))
            tape.resume_after_first_line()
            reader = csv.reader(tape, delimiter=delim, strict=True)
            continue
        where = f"row {row_no} (line {tape.row[-1][0] if tape.row else tape.line})"
        if len(row) < need:
            sink.report(IngestError(path, where, f"expected at least {need} fields, got {len(row)} (truncated?)"))
            continue
        aid, date_raw, content = row[i_aid], row[i_date], clean_text(row[i_text])
        slash = _SLASH_24H.fullmatch(date_raw.strip())
        if slash is not None and day_first == "unread":
            with reopen() as again:
                day_first = _day_first(again, delim, i_date)
        try:
            if slash is None:
                created = parse_dce_date(date_raw)
            elif isinstance(day_first, bool):
                created = _slash_date(slash, day_first)
            elif max(int(slash.group(1)), int(slash.group(2))) > 12 or int(slash.group(1)) == int(slash.group(2)):
                created = _slash_date(slash, int(slash.group(1)) > 12)  # reads one way only
            else:
                raise ValueError(f"date {date_raw!r} reads as day/month and as month/day, and this file's dates do "
                                 "not tell which (some put a number over 12 first, some second, or all are one "
                                 "day); this row is skipped: use the file DiscordChatExporter wrote, or an "
                                 "ISO-8601 date")
        except ValueError as exc:
            sink.report(IngestError(path, where, str(exc)))
            continue
        if not aid:
            sink.report(IngestError(path, where, "empty AuthorID"))
            continue
        if _ROUNDED_ID.fullmatch(aid.strip()):
            # one id for many members: their messages would be one member's (flood, strikes, the ladder)
            sink.report(IngestError(path, where, f"AuthorID {aid!r} is a number in scientific notation: a "
                                                 "spreadsheet rounded the member ids (their last digits are lost, "
                                                 "so different members would read as one); this row is skipped: "
                                                 "use the file DiscordChatExporter wrote, or import the AuthorID "
                                                 "column as text"))
            continue
        name = clean_text(row[i_name]) if i_name is not None and i_name < len(row) else ""
        same_date = seen.get(date_raw)
        if same_date is None:
            same_date = seen[date_raw] = {}
            if len(seen) > SEEN_DATES:
                seen.popitem(last=False)
        else:
            seen.move_to_end(date_raw)
        ordinal = same_date.get((aid, content), 0)
        same_date[(aid, content)] = ordinal + 1
        atts: tuple[Attachment, ...] = ()
        if i_att is not None and i_att < len(row) and row[i_att].strip():
            urls = [u.strip() for u in row[i_att].split(",") if u.strip()]
            atts = tuple(Attachment(u, u.rsplit("/", 1)[-1].split("?", 1)[0]) for u in urls)
        if not atts and content in SYSTEM_TEXTS:
            if content == "Joined the server.":
                joins.setdefault(aid, created)
            continue
        embed_only = not content.strip() and not atts
        key = (aid, name, embed_only, joins.get(aid))
        member = members.get(key)
        if member is None:
            member = members[key] = MemberRef(aid, name, joined_at=joins.get(aid), is_bot=embed_only)
        msg = Message(
            server=server,
            channel=channel,
            author=member,
            id=_row_id(channel.id, inner_name(path).stem, aid, date_raw, content, ordinal),
            text=content,
            created_at=created,
            attachments=atts,
            mentions_everyone="@everyone" in content or "@here" in content,
        )
        if run and run[0].created_at != created:
            yield from _spread_minute(run)
            run = []
        run.append(msg)
    yield from _spread_minute(run)


def _row_inside(lines: list[tuple[int, str]], delim: str, need: int, i_aid: int, i_date: int) -> int | None:
    """The number of a later line of a row read over several lines that is itself a whole row, or ``None``.

    By the csv module's rules a quoted field runs until a quote followed by the delimiter or the line's end; a quote
    left open in one row (``"hello``) is therefore closed by a later row's field that ends in a quote (``a 12";``,
    valid there unquoted), and the rows between merge silently into one field. A line counts as a row of its own
    when, read alone (strict), it has at least ``need`` fields, an AuthorID and a date :func:`parse_dce_date`
    reads, and it starts the way the row's first line does (both with a quote, as DCE writes every field, or
    neither): a row pasted into a quoted message has its quotes doubled, so it does not start a row there.
    """
    if len(lines) < 2:
        return None
    quoted = lines[0][1].startswith('"')
    for n, line in lines[1:]:
        if line.startswith('"') != quoted:
            continue
        try:
            alone = next(csv.reader([line], delimiter=delim, strict=True), None)
        except csv.Error:
            continue
        if alone is None or len(alone) < need or not alone[i_aid].strip():
            continue
        try:
            parse_dce_date(alone[i_date])
        except ValueError:
            continue
        return n
    return None


def _spread_minute(run: list[Message]) -> list[Message]:
    """Spread a run of consecutive rows stamped with the same whole minute evenly over that minute.

    2019 DCE CSV dates have minute precision (``05-Dec-19 04:27 AM``); without this, ten messages of one minute
    would look simultaneous and trip the flood and raid windows (which need real timing). Row order is kept.
    Runs whose time has seconds are returned unchanged.
    """
    t = run[0].created_at if run else None
    if len(run) < 2 or t is None or t.second or t.microsecond:
        return run
    step = 60.0 / len(run)
    return [replace(m, created_at=t + timedelta(seconds=i * step)) for i, m in enumerate(run)]
