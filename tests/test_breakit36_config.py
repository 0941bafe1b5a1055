"""Configuration, server policy files and chat-export importers (thirty-sixth session's break-it pass, area
"config"): what an admin gets wrong in a file, and a spreadsheet does to an export, is said with the file, the key
or row and the reason, never read as something else. Real files in ``tmp_path`` read by the real readers and
loaders."""

from __future__ import annotations

from pathlib import Path

from bot.ingest.discord_csv import iter_discord_csv
from tests.ingest_sinks import CollectingSink


def test_csv_author_ids_rounded_by_a_spreadsheet_are_reported_not_merged_into_one_member(tmp_path: Path):
    """A DCE CSV opened in Excel and saved again has its AuthorID column turned into numbers written as
    ``1.23457E+17`` (6 significant digits of 18): two members' rows read as one member's, so one member's flood and
    strikes took the other's messages. Each such row is now reported with its file, row and the reason, and the rows
    whose ids are intact are read as usual."""
    p = tmp_path / "general [123456789012345678].csv"
    p.write_bytes(b"\xef\xbb\xbfAuthorID;Author;Date;Content;Attachments;Reactions\r\n"
                  b"1.23457E+17;alice;01.02.2024 10:00;hello there;;\r\n"
                  b"1,23457E+17;bob;01.02.2024 10:01;you are an idiot;;\r\n"
                  b"123456789012345678;carol;01.02.2024 10:02;\"two\nlines\";;\r\n")
    sink = CollectingSink()
    msgs = [(m.author.id, m.author.name, m.text) for m in iter_discord_csv(p, sink=sink)]
    assert msgs == [("123456789012345678", "carol", "two\nlines")]
    assert [(e.position, e.reason.split(":")[0]) for e in sink.errors] == [
        ("row 1 (line 2)", "AuthorID '1.23457E+17' is a number in scientific notation"),
        ("row 2 (line 3)", "AuthorID '1,23457E+17' is a number in scientific notation"),
    ]
    assert "import the AuthorID column as text" in sink.errors[0].reason
