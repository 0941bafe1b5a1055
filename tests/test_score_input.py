"""The ``score`` job's input as bytes arrive: where lines end (``\\n`` only; a CRLF ending is one ending, a ``\\r``
inside a line is not) and which encoding a byte order mark at the start names (UTF-8, UTF-16 or UTF-32)."""

from __future__ import annotations

import io
import json
import sys

from bot.cli import main


def _cli(monkeypatch, capsys, tmp_path, url: str, raw: bytes) -> tuple[int, list[dict], str]:
    """``python -m bot score`` with ``raw`` on a standard input that translates newlines as a Windows Python's
    does (a text wrapper with universal newlines), scored through the session's fake scoring service."""
    monkeypatch.setenv("MODBOT_SCORER_URL", url)
    monkeypatch.setenv("MODBOT_DB", str(tmp_path / "unused.db"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    rc = main(["score"])
    captured = capsys.readouterr()
    return rc, [json.loads(ln) for ln in captured.out.splitlines()], captured.err


def test_a_carriage_return_inside_a_line_does_not_split_it(tmp_path, monkeypatch, capsys, fake_scorer_url):
    """Lines end at ``\\n`` only. A raw ``\\r`` between two JSON tokens is JSON whitespace: the line is judged whole.
    A raw ``\\r`` inside a string is one error line with its own line number (not two error lines, each with a
    wrong number); the lines after it keep their numbers. CRLF endings are one ending each."""
    raw = (b'{"id": "a",\r"text": "hello"}\r\n'
           b'{"id": "b", "text": "one\rtwo"}\r\n'
           b'{"text": "no id"}\r\n'
           b'{"id": "d", "text": "bye"}\r\n')
    rc, out, err = _cli(monkeypatch, capsys, tmp_path, fake_scorer_url, raw)
    assert [o["id"] for o in out] == ["a", "line:2", "line:3", "d"]
    assert "scores" in out[0] and "scores" in out[2] and "scores" in out[3]
    assert out[1] == {"id": "line:2", "error": "line 2: not valid JSON (column 25: the control character U+000D "
                                                "inside a string must be escaped (e.g. \\t for a tab))"}
    assert rc == 1 and err.startswith("error: 1 input line(s) could not be judged")


def test_crlf_endings_and_a_last_line_without_an_ending_are_judged(tmp_path, monkeypatch, capsys, fake_scorer_url):
    """A file written with CRLF endings (and its last line with no ending at all) is judged line by line, with a
    blank CRLF line skipped but counted."""
    raw = b'{"id": 1, "text": "hi"}\r\n\r\n{"text": "there"}\r\n{"id": 3, "text": "bye"}'
    rc, out, err = _cli(monkeypatch, capsys, tmp_path, fake_scorer_url, raw)
    assert rc == 0 and err == ""
    assert [o["id"] for o in out] == [1, "line:3", 3]
