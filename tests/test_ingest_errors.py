"""Tests of malformed, truncated and unusual inputs: errors name file and position; skip/stop semantics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.ingest import IngestError, read_messages

FIX = Path(__file__).parent / "fixtures"


def _truncated_dce(tmp_path: Path) -> tuple[Path, int]:
    """The full fixture cut inside its 4th message; returns the file and the cut offset."""
    text = (FIX / "dce_full.json").read_text(encoding="utf-8")
    cut = text.index('"id": "5004"')  # inside the 4th message object
    p = tmp_path / "cut.json"
    p.write_text(text[:cut], encoding="utf-8")
    return p, cut


def test_truncated_dce_json_skip_recovers_complete_messages(tmp_path):
    """A truncated DCE JSON records one error at the decoder position and keeps the complete messages."""
    p, _ = _truncated_dce(tmp_path)
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [m.id for m in msgs] == ["5002", "5003"]
    assert msgs[0].server.id == "42" and msgs[0].channel.is_thread
    assert len(errors) == 1 and errors[0].path == p
    assert (
        errors[0].position.startswith("offset ")
        and ", column " in errors[0].position
        and "truncated" in errors[0].reason
    )


def test_truncated_dce_json_stop_raises(tmp_path):
    """on_error='stop' raises IngestError naming the file and JSON position."""
    p, _ = _truncated_dce(tmp_path)
    with pytest.raises(IngestError) as info:
        read_messages([p], on_error="stop")
    assert info.value.path == p and info.value.position.startswith("offset ")
    assert str(p) in str(info.value)


def test_skip_continues_with_other_files(tmp_path):
    """A broken file does not stop the other inputs under on_error='skip'."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"guild": {"id": "1"}, "messages": [ {"id": ', encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([bad, FIX / "dce_minimal.json"], errors=errors)
    assert [m.id for m in msgs] == ["1", "2"] and [e.path for e in errors] == [bad]


@pytest.mark.parametrize(
    ("line", "position"),
    [
        ('{"id": "x", "text": "ok"}\nnot json\n', "line 2"),
        ('{"id": "x", "text": "ok"}\n\n{"text": "no id"}\n', "line 3"),
        ('{"id": "x", "text": "ok", "created_at": "yesterday"}\n', "line 1"),
        ("[1, 2]\n", "line 1"),
    ],
)
def test_jsonl_bad_line_position(tmp_path, line, position):
    """A bad JSONL line is reported with its 1-based line number; good lines are kept."""
    p = tmp_path / "x.jsonl"
    p.write_text(line, encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [(e.path, e.position) for e in errors] == [(p, position)]
    assert len(msgs) == line.count('"text": "ok"') - (1 if "yesterday" in line else 0)


@pytest.mark.parametrize(
    ("body", "position", "kept", "problems"),
    [
        ('"1";"a";"05-Dec-19 04:27 AM";"ok";"";"";\n"2";"b";"not a date";"x";"";"";\n', "row 2 (line 3)", 1, 1),
        ('"1";"a";"05-Dec-19 04:27 AM";"ok";"";"";\n"2";"b"\n', "row 2 (line 3)", 1, 1),
        # the row is skipped, the line the open quote swallowed is read again (and is no row either)
        ('"1";"a";"05-Dec-19 04:27 AM";"ok";"";"";\n"2";"b";"05-Dec-19 04:28 AM";"unterminated\nquote', "row 2 (line 3)",
         1, 2),
    ],
)
def test_csv_bad_rows(tmp_path, body, position, kept, problems):
    """Bad CSV rows (bad date, too few fields, EOF inside quotes) are named by row and line."""
    p = tmp_path / "1.csv"
    p.write_text("AuthorID;Author;Date;Content;Attachments;Reactions;\n" + body, encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert len(msgs) == kept and len(errors) == problems
    assert errors[0].path == p and errors[0].position.startswith(position)
    with pytest.raises(IngestError):
        read_messages([p], on_error="stop")


def test_csv_wrong_header(tmp_path):
    """A CSV that is not a DCE export is one error at line 1."""
    p = tmp_path / "other.csv"
    p.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    errors: list[IngestError] = []
    assert read_messages([p], errors=errors) == []
    assert [(e.position, "AuthorID" in e.reason) for e in errors] == [("line 1", True)]


def test_slack_truncated_day_file(tmp_path):
    """A truncated Slack day file is named with its position; earlier complete messages survive."""
    root = tmp_path / "export"
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text("[]", encoding="utf-8")
    msgs = [{"type": "message", "user": "U1", "ts": f"17000000{i}.000100", "text": f"m{i}"} for i in range(3)]
    text = json.dumps(msgs, indent=4)
    (root / "general" / "2023-11-14.json").write_text(text[: text.index('"m2"')], encoding="utf-8")
    errors: list[IngestError] = []
    got = read_messages([root], errors=errors)
    assert [m.text for m in got] == ["m0", "m1"]
    assert errors[0].path == root / "general" / "2023-11-14.json" and errors[0].position.startswith("offset ")


@pytest.mark.parametrize(
    ("path_name", "reason"),
    [("missing.json", "no such file"), ("notes.txt", "cannot detect")],
)
def test_unreadable_inputs(tmp_path, path_name, reason):
    """A missing path or an unknown file is an error record, not a crash."""
    p = tmp_path / path_name
    if path_name.endswith(".txt"):
        p.write_text("hello", encoding="utf-8")
    errors: list[IngestError] = []
    assert read_messages([p], errors=errors) == []
    assert errors[0].path == p and reason in errors[0].reason


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("x" * 100_000, "x" * 100_000),
        ("🏳️‍⚧️🎂💜", "🏳️‍⚧️🎂💜"),
        ("", ""),
        ("a\x00b", "a\ufffdb"),
        ("\ud800lone", "\ufffdlone"),
        ("\ud83d\ude00 pair", "😀 pair"),
    ],
)
def test_robust_text_in_every_json_format(tmp_path, content, expected):
    """Huge, emoji-only, empty, NUL and surrogate text survive DCE JSON and JSONL (NUL, lone surrogates -> U+FFFD)."""
    dce = {"messages": [{"id": "1", "timestamp": "2026-01-01T00:00:00Z", "content": content, "author": {"id": "9"}}]}
    (tmp_path / "a.json").write_text(json.dumps(dce), encoding="utf-8")  # ensure_ascii: surrogates as \\u escapes
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "2", "text": content}) + "\n", encoding="utf-8")
    msgs = read_messages([tmp_path / "a.json", tmp_path / "b.jsonl"], on_error="stop")
    assert [m.text for m in msgs] == [expected, expected]
    for m in msgs:
        m.text.encode("utf-8")


def test_csv_nul_and_invalid_utf8(tmp_path):
    """CSV with a NUL byte and an invalid UTF-8 byte still parses (each -> U+FFFD, as the mod log stores it)."""
    p = tmp_path / "n.csv"
    p.write_bytes(
        b'AuthorID,Author,Date,Content,Attachments,Reactions\n"1","a","2026-01-01T00:00:00Z","x\x00y\xffz","",""\n'
    )
    assert [m.text for m in read_messages([p], on_error="stop")] == ["x\ufffdy\ufffdz"]


@pytest.mark.parametrize(("kw", "value"), [("fmt", "xml"), ("on_error", "ignore")])
def test_bad_arguments(kw, value):
    """Unknown fmt / on_error values raise ValueError."""
    with pytest.raises(ValueError):
        read_messages([FIX / "dce_minimal.json"], **{kw: value})


def test_dce_message_missing_required_key(tmp_path):
    """A DCE message without author.id is reported as 'message <index>' and skipped."""
    doc = {
        "messages": [
            {"id": "1", "timestamp": "2026-01-01T00:00:00Z", "content": "a", "author": {}},
            {"id": "2", "timestamp": "2026-01-01T00:00:01Z", "content": "b", "author": {"id": "5"}},
        ]
    }
    p = tmp_path / "m.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    errors: list[IngestError] = []
    assert [m.id for m in read_messages([p], errors=errors)] == ["2"]
    assert [(e.position, "author.id" in e.reason) for e in errors] == [("message 0", True)]


def _dce_rows(n: int, broken: dict[int, str]) -> str:
    """A current-style DCE CSV (every field quoted) of ``n`` rows; ``broken`` replaces row i's line."""
    lines = ["AuthorID,Author,Date,Content,Attachments,Reactions"]
    for i in range(n):
        lines.append(broken.get(i, f'"{100 + i}","user{i}","2024-03-01T10:{i:02d}:00","message {i}","",""'))
    return "\n".join(lines) + "\n"


def test_a_broken_csv_quote_skips_that_row_only_and_names_file_line_and_reason(tmp_path):
    """An unterminated quote in row 4 of 10 (a hand-edited export) used to end the file there: six rows lost. The
    row is reported with the file, its row and line and why, and every other row is read; ``--on-error stop``
    refuses the file at that row."""
    p = tmp_path / "general [121212121212121212].csv"
    p.write_text(_dce_rows(10, {3: '"103","user3","2024-03-01T10:03:00","an open quote,"",""'}), encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [m.text for m in msgs] == [f"message {i}" for i in range(10) if i != 3]
    assert [(e.path, e.position) for e in errors] == [(p, "row 4 (line 5)")]
    assert errors[0].reason.startswith("bad CSV: ") and "reading goes on at line 6" in errors[0].reason
    with pytest.raises(IngestError, match=r"row 4 \(line 5\)"):
        read_messages([p], on_error="stop")


def test_an_unterminated_quote_that_swallows_the_rest_of_a_csv_loses_no_row_after_it(tmp_path):
    """A file quoted only where needed (a spreadsheet's save): a quote left open in row 2 swallows every later
    line up to the end of the file ("unexpected end of data"). The swallowed lines are read again after the broken
    row, so rows 3 to 6 are kept; the one error names row 2 and its line."""
    p = tmp_path / "general [121212121212121212].csv"
    lines = ["AuthorID,Author,Date,Content,Attachments,Reactions"]
    lines += [f"{100 + i},user{i},2024-03-01T10:{i:02d}:00,message {i},," for i in range(6)]
    lines[2] = '101,user1,2024-03-01T10:01:00,"an open quote,,'
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [m.text for m in msgs] == ["message 0", "message 2", "message 3", "message 4", "message 5"]
    assert [e.position for e in errors] == ["row 2 (line 3)"] and "unexpected end of data" in errors[0].reason


def test_a_csv_line_too_long_skips_that_row_only(tmp_path, monkeypatch):
    """A line past the reader's line cap is one error naming its line; the rows after it are read."""
    import bot.ingest.discord_csv as discord_csv

    monkeypatch.setattr(discord_csv, "MAX_LINE_BYTES", 1_000)
    p = tmp_path / "general [121212121212121212].csv"
    p.write_text(_dce_rows(5, {2: '"102","user2","2024-03-01T10:02:00","' + "x" * 5_000 + '","",""'}),
                 encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [m.text for m in msgs] == ["message 0", "message 1", "message 3", "message 4"]
    assert [e.position for e in errors] == ["line 4"] and "longer than 1,000 bytes" in errors[0].reason


def test_scan_names_a_malformed_json_line_in_plain_words(tmp_path, capsys, fake_scorer_url, monkeypatch):
    """``scan --format jsonl`` says what is wrong with a line that is not JSON as ``score`` does
    (:func:`bot.ingest.common.json_line_problem`): the file, the line number and plain words, not the json module's
    "Invalid control character at" or "Expecting value"; the good lines are still scanned. With ``--on-error stop``
    the scan stops with the same words."""
    from bot.cli import main

    p = tmp_path / "chat.jsonl"
    p.write_text('{"id": "1", "text": "hi"}\n{"id": "2", "text": "cut short\nnot json\n'
                 '{"id": "4", "text": "bye"}\n', encoding="utf-8")
    monkeypatch.setenv("MODBOT_SCORER_URL", fake_scorer_url)
    args = ["scan", str(p), "--format", "jsonl", "--db", str(tmp_path / "m.db"), "--no-progress"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"skipped: {p}:line 2: not valid JSON (the line ends inside a string; was it cut short?)" in err
    assert f"skipped: {p}:line 3: not valid JSON (column 1: a JSON value was expected)" in err
    assert "Invalid control character" not in err and "Expecting value" not in err
    assert "read 2 messages" in err
    assert main([*args, "--on-error", "stop", "--db", str(tmp_path / "m2.db")]) == 2
    assert (f"error: {p}:line 2: not valid JSON (the line ends inside a string; was it cut short?)"
            in capsys.readouterr().err)
