"""Broken quoting in DiscordChatExporter CSV (eighteenth session's break-it pass). By the csv module's rules a quoted
field ends at a quote followed by the delimiter or the line's end, so a quote left open in one row was closed by a
later row's field that ends in a quote (``a 12";``, valid unquoted) and the rows between merged silently into one
message. Real files in ``tmp_path`` read by the real reader."""

from __future__ import annotations

from pathlib import Path

from bot.ingest.discord_csv import iter_discord_csv
from tests.ingest_sinks import CollectingSink

HEADER = "AuthorID;Author;Date;Content;Attachments;Reactions;\n"


def _read(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    sink = CollectingSink()
    msgs = [(m.author.id, m.text) for m in iter_discord_csv(path, sink=sink)]
    return msgs, [str(e) for e in sink.errors]


def test_an_open_quote_closed_by_the_next_rows_trailing_quote_is_reported_not_merged(tmp_path: Path):
    """Row 1 opens a quote it never closes; row 2 is an unquoted field ending in an inch mark. The reader gave one
    message ``'open;;;\\n1001;u1;...;a 12'`` and no error; now row 1 is reported with file, row and line, and rows
    2 and 3 are read as they are."""
    p = tmp_path / "chan [1].csv"
    p.write_text(HEADER + '1000;u0;2026-01-01T10:00:00;"open;;;\n'
                 '1001;u1;2026-01-01T10:00:01;a 12";;;\n'
                 "1002;u2;2026-01-01T10:00:02;third;;;\n", encoding="utf-8")
    msgs, errors = _read(p)
    assert msgs == [("1001", 'a 12"'), ("1002", "third")]
    assert errors == [f"{p}:row 1 (line 2): bad CSV: a quote opened on line 2 is still open on line 3, which reads "
                      "as a row of its own (an unterminated quote?); this row is skipped and reading goes on at "
                      "line 3"]


def test_comma_style_open_quote_swallowing_two_rows_is_reported(tmp_path: Path):
    """The same in a current (``,``) export, the open quote swallowing a whole row before the one that closes it:
    nothing is merged, the broken row is reported and both rows after it are read."""
    p = tmp_path / "chan [2].csv"
    p.write_text("AuthorID,Author,Date,Content,Attachments,Reactions\n"
                 '9,a,2026-01-01T10:00:00,"never closed,,\n'
                 "10,b,2026-01-01T10:00:01,plain,,\n"
                 '11,c,2026-01-01T10:00:02,ends in a quote",,\n', encoding="utf-8")
    msgs, errors = _read(p)
    assert msgs == [("10", "plain"), ("11", 'ends in a quote"')]
    assert len(errors) == 1 and ":row 1 (line 2): bad CSV: a quote opened on line 2 is still open on line 3" in errors[0]


def test_a_message_quoting_an_export_line_is_one_message(tmp_path: Path):
    """A DCE message (every field quoted) whose text holds a line of a CSV export is one message: the pasted line
    has its quotes doubled, so it does not start a row, and nothing is reported."""
    p = tmp_path / "chan [3].csv"
    p.write_text(HEADER + '"1000";"u0";"2026-01-01T10:00:00";"look:\n""1001"";""u1"";""2026-01-01T10:00:01"";""x"";";"";"";\n'
                 '"1002";"u2";"2026-01-01T10:00:02";"next";"";"";\n', encoding="utf-8")
    msgs, errors = _read(p)
    assert errors == []
    assert msgs == [("1000", 'look:\n"1001";"u1";"2026-01-01T10:00:01";"x";'), ("1002", "next")]


def test_a_multi_line_message_is_still_one_message(tmp_path: Path):
    """Ordinary multi-line content (quoted, with a date-like line in it) is not taken for a merge."""
    p = tmp_path / "chan [4].csv"
    p.write_text(HEADER + '"1000";"u0";"2026-01-01T10:00:00";"first line\n2026-01-01T10:00:01 was the time\nend";"";"";\n',
                 encoding="utf-8")
    msgs, errors = _read(p)
    assert errors == [] and msgs == [("1000", "first line\n2026-01-01T10:00:01 was the time\nend")]
