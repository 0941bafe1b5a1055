"""JSON lines with times of the wrong type (eighteenth session's break-it pass): ``"created_at": 1704067200`` (Unix
seconds, as many tools write) was read as "no time", silently: the line lost its time, was ordered before every
timed line and left out of the flood and raid rules. It is now a bad time, reported with file and line like an
unparseable time string. Real files in ``tmp_path`` read by the real reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.ingest.jsonl import iter_jsonl
from tests.ingest_sinks import CollectingSink


@pytest.mark.parametrize(("line", "got"), [
    ({"created_at": 1704067200}, "created_at: expected an ISO-8601 time as a string (\"2024-01-01T12:00:00Z\"), "
                                 "got a number (1704067200)"),
    ({"created_at": 1704067200.5}, "got a number (1704067200.5)"),
    ({"edited_at": True}, "edited_at: expected an ISO-8601 time as a string (\"2024-01-01T12:00:00Z\"), "
                          "got a boolean (true)"),
    ({"created_at": ["2024-01-01T00:00:00Z"]}, "got a list"),
    ({"author": {"id": "b", "joined_at": 1704067200}}, "joined_at: expected an ISO-8601 time"),
])
def test_a_time_that_is_not_a_string_is_reported_with_file_and_line(tmp_path: Path, line: dict, got: str):
    p = tmp_path / "chat.jsonl"
    rows = [{"id": "1", "text": "hi", "author": "a", **line},
            {"id": "2", "text": "ok", "author": "c", "created_at": "2024-01-01T00:00:01Z"}]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sink = CollectingSink()
    assert [m.id for m in iter_jsonl(p, sink=sink)] == ["2"]
    assert len(sink.errors) == 1
    assert str(sink.errors[0]).startswith(f"{p}:line 1: bad time: "), sink.errors[0]
    assert got in str(sink.errors[0])


@pytest.mark.parametrize("value", [None, ""])
def test_null_or_empty_time_is_no_time(tmp_path: Path, value: object):
    """``null`` and ``""`` still mean the line has no time (judged without the rate rules), not an error."""
    p = tmp_path / "chat.jsonl"
    p.write_text(json.dumps({"id": "1", "text": "hi", "author": "a", "created_at": value}) + "\n", encoding="utf-8")
    sink = CollectingSink()
    msgs = list(iter_jsonl(p, sink=sink))
    assert sink.errors == [] and [(m.id, m.created_at) for m in msgs] == [("1", None)]
