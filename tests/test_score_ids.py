"""The ``score`` job's ids: whatever an input line's id is, the output stays valid UTF-8 JSON, one line per input."""

from __future__ import annotations

import asyncio
import io
import json
from argparse import Namespace

import pytest

from bot.cli import main
from bot.jobs.score import run_score
from bot.settings import Settings
from tests.fakes import FakeScorer


def _score(tmp_path, lines: str) -> tuple[int, list[dict], str]:
    stdout_bytes = io.BytesIO()
    stdout = io.TextIOWrapper(stdout_bytes, encoding="utf-8", newline="\n")  # as a real UTF-8 stdout is
    stderr = io.StringIO()
    rc = asyncio.run(run_score(Namespace(policy=[], batch_size=8), Settings(db_path=tmp_path / "u.db"),
                               io.StringIO(lines), stdout, stderr, scorer=FakeScorer()))
    stdout.flush()
    text = stdout_bytes.getvalue().decode("utf-8")  # strict: a lone surrogate cannot have been written
    return rc, [json.loads(ln, parse_constant=_no_constant) for ln in text.splitlines()], stderr.getvalue()


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def test_score_lone_surrogate_id_is_refused_and_the_lines_after_it_are_judged(tmp_path):
    """An id holding a lone surrogate gets an error line (id "line:N") and the next lines are still judged."""
    rc, out, err = _score(tmp_path, '{"id": "a", "text": "hi"}\n{"id": "x\\ud800", "text": "hi"}\n'
                                    '{"id": "c", "text": "bye"}\n')
    assert rc == 1
    assert [o["id"] for o in out] == ["a", "line:2", "c"]
    assert "surrogate" in out[1]["error"] and "scores" in out[2]
    assert "1 input line(s)" in err


def test_score_nan_id_gives_valid_json_error_line(tmp_path):
    """A NaN or Infinity id is refused with a JSON error line (no bare NaN in the output); the rest is judged."""
    rc, out, _err = _score(tmp_path, '{"id": NaN, "text": "hi"}\n{"id": -Infinity, "text": "hi"}\n'
                                     '{"id": 3, "text": "ok"}\n')
    assert rc == 1
    assert [o["id"] for o in out] == ["line:1", "line:2", 3]
    assert "NaN" in out[0]["error"] and "Infinity" in out[1]["error"] and "scores" in out[2]


def test_score_deeply_nested_line_is_an_error_line_not_a_crash(tmp_path):
    """A line nested 5,000 levels deep gets an error line and the next line is still judged."""
    deep = '{"id": "d", "text": "hi", "x": ' + "[" * 5000 + "]" * 5000 + "}"
    rc, out, _err = _score(tmp_path, deep + '\n{"id": "e", "text": "ok"}\n')
    assert rc == 1
    assert [o["id"] for o in out] == ["line:1", "e"]
    assert "nested" in out[0]["error"]


def test_a_line_without_an_id_never_takes_the_id_of_another_line(tmp_path):
    """Line 3 has no id and line 1 has the id 3: the answers keep them apart (3 and "line:3"), for a judged line,
    an ``"id": null`` line and an error line alike; blank lines count in N; an input's own id is echoed as given."""
    lines = ('{"id": 3, "text": "first"}\n{"id": "line:9", "text": "own string id"}\n{"text": "no id here"}\n'
             '\n{"id": null, "text": "null id"}\n{"id": 7}\n{"oops": 1}\n')
    rc, out, _err = _score(tmp_path, lines)
    assert rc == 1
    ids = [o["id"] for o in out]
    assert ids == [3, "line:9", "line:3", "line:5", 7, "line:7"]
    assert len(set(map(json.dumps, ids))) == len(ids)
    assert "scores" in out[2] and "scores" in out[3] and "error" in out[4] and "error" in out[5]


def test_score_help_says_how_a_line_without_an_id_is_answered(capsys):
    """``score --help`` documents the "line:N" id."""
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert 'a line without one (or with "id": null) is answered as "line:N"' in text


def test_a_line_cut_short_is_named_in_plain_words_and_the_lines_after_it_are_judged(tmp_path):
    """A line cut short inside a string (``{"id": "a", "text": "hello`` and its newline) is answered with its line
    number and what is wrong in words, not json's "Invalid control character at ..."; like every bad line it gets
    an error line (id "line:N"), the exit status is 1 and the next lines are still judged. The same holds for a last
    line cut short without its newline, and a line whose object is never closed."""
    lines = ('{"id": 1, "text": "hi"}\n\n{"id": "a", "text": "hello\n{"id": 2, "text": "fine"}\n'
             '{"id": "b", "text": "ok"\nnot json\n{"id": "c", "text": "he\tllo"}\n{"id": "d", "text": "bye')
    rc, out, err = _score(tmp_path, lines)
    assert rc == 1
    assert [o["id"] for o in out] == [1, "line:3", 2, "line:5", "line:6", "line:7", "line:8"]
    assert out[1]["error"] == "line 3: not valid JSON (the line ends inside a string; was it cut short?)"
    assert "scores" in out[2]
    assert out[3]["error"] == ("line 5: not valid JSON (the line ends before the JSON value is complete; was it cut "
                               "short?)")
    assert out[4]["error"] == "line 6: not valid JSON (column 1: a JSON value was expected)"
    assert out[5]["error"] == ("line 7: not valid JSON (column 24: the control character U+0009 inside a string must "
                               "be escaped (e.g. \\t for a tab))")
    assert out[6]["error"] == "line 8: not valid JSON (the line ends inside a string; was it cut short?)"
    assert not any("Invalid control character" in o.get("error", "") for o in out)
    assert "5 input line(s)" in err


def test_score_cli_exits_1_for_a_line_cut_short(tmp_path, monkeypatch, capsys, fake_scorer_url):
    """Through ``python -m bot score`` (scoring through the session's fake scoring service over HTTP): the cut-short
    line's error is on stdout in words, exit status 1 (as for any line that cannot be judged), one ``error:`` line
    on stderr, and the line before it is judged."""
    import sys

    monkeypatch.setenv("MODBOT_SCORER_URL", fake_scorer_url)
    monkeypatch.setenv("MODBOT_DB", str(tmp_path / "unused.db"))
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"id": "x", "text": "fine"}\n{"id": "a", "text": "hello\n'))
    rc = main(["score"])
    captured = capsys.readouterr()
    out = [json.loads(ln) for ln in captured.out.splitlines()]
    assert rc == 1
    assert "scores" in out[0]
    assert out[1] == {"id": "line:2", "error": "line 2: not valid JSON (the line ends inside a string; was it cut "
                                                "short?)"}
    assert captured.err.startswith("error: 1 input line(s) could not be judged")


def test_score_help_says_blank_lines_are_skipped(capsys, tmp_path, monkeypatch):
    """``score --help`` promises one output line per non-blank input line and says blank lines are skipped, which
    is what the job does (four input lines, two blank: two output lines)."""
    monkeypatch.setenv("COLUMNS", "400")  # one paragraph line: argparse would wrap "non-blank" at its hyphen
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "one JSON line per input line" not in text
    assert "one JSON line per non-blank input line (blank lines are skipped)" in text
    rc, out, _err = _score(tmp_path, '{"id": 1, "text": "hi"}\n\n   \n{"id": 2, "text": "bye"}\n')
    assert rc == 0 and [o["id"] for o in out] == [1, 2]


def test_score_cli_answers_a_line_with_bytes_that_are_not_utf8_and_judges_the_rest(tmp_path, monkeypatch, capsys,
                                                                                     fake_scorer_url):
    """Standard input as a UTF-8 locale gives it (strict decoding): a line holding a byte that is not UTF-8 (a
    Latin-1 export's 0xE9) gets an error line naming the byte and its column, the lines before and after it are
    judged, and the run ends with exit status 1, not a UnicodeDecodeError that loses every answer."""
    import sys

    monkeypatch.setenv("MODBOT_SCORER_URL", fake_scorer_url)
    monkeypatch.setenv("MODBOT_DB", str(tmp_path / "unused.db"))
    raw = b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "caf\xe9"}\n{"id": "c", "text": "bye"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    rc = main(["score"])
    captured = capsys.readouterr()
    out = [json.loads(ln) for ln in captured.out.splitlines()]
    assert rc == 1
    assert [o["id"] for o in out] == ["a", "line:2", "c"]
    assert "scores" in out[0] and "scores" in out[2]
    assert out[1]["error"] == "line 2: not valid UTF-8 (column 25: the byte 0xE9)"
    assert captured.err.startswith("error: 1 input line(s) could not be judged")


def test_score_judges_a_first_line_behind_a_byte_order_mark(tmp_path):
    """A file saved with a UTF-8 byte order mark (Windows editors write one): its first line is judged like the
    others, not refused as "Unexpected UTF-8 BOM"; a BOM on a later line is no BOM but text, and refused."""
    rc, out, _err = _score(tmp_path, '\ufeff{"id": "a", "text": "hi"}\n{"id": "b", "text": "bye"}\n'
                                     '\ufeff{"id": "c", "text": "hi"}\n')
    assert [o["id"] for o in out] == ["a", "b", "line:3"]
    assert "scores" in out[0] and "scores" in out[1]
    assert out[2]["error"] == ("line 3: not valid JSON (column 1: a byte order mark (U+FEFF) starts the line, as "
                               "when files saved with one are joined; remove it)")
    assert rc == 1


def test_score_id_too_large_for_a_float_is_refused_not_echoed_as_infinity(tmp_path):
    """``1e400`` is a valid JSON number, but Python reads it as ``inf``, which would be written back as the bare
    word ``Infinity`` (not JSON): such an id gets an error line (id "line:N") and the lines after it are judged."""
    rc, out, err = _score(tmp_path, '{"id": 1e400, "text": "hi"}\n{"id": [-1e999], "text": "hi"}\n'
                                    '{"id": 1e308, "text": "ok"}\n{"id": 1e-999, "text": "hi"}\n'
                                    '{"id": 0.0e-999, "text": "zero"}\n{"id": 5e-324, "text": "tiny"}\n')
    assert rc == 1
    assert [o["id"] for o in out] == ["line:1", "line:2", 1e308, "line:4", 0.0, 5e-324]
    assert all("64-bit" in out[i]["error"] for i in (0, 1, 3))
    assert all("scores" in out[i] for i in (2, 4, 5))  # 1e-999 was echoed as 0.0; a written zero is still zero
    assert "3 input line(s)" in err
    # numbers outside the id are not echoed: a line whose other fields overflow or underflow is judged as before
    rc, out, err = _score(tmp_path, '{"id": 1, "text": "hi", "extra": 1e-400}\n'
                                    '{"id": 2, "text": "hi", "meta": {"weight": 1e400}}\n')
    assert rc == 0 and [o["id"] for o in out] == [1, 2] and all("scores" in o for o in out)


@pytest.mark.slow  # loads the real embedded model in a subprocess
def test_score_typed_at_a_terminal_answers_each_line_as_it_is_entered():
    """At a terminal (stdin a pty) ``score`` says what to type and answers each line when it is entered, not after
    Ctrl-D or a full batch (a person trying it thought it hung); Ctrl-D then ends it with exit 0."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "MODBOT_SCORER_URL"}
    proc = subprocess.Popen([sys.executable, "-m", "bot", "score"], stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=root, env=env)
    os.close(slave)
    try:
        os.write(master, b'{"id": 7, "text": "you are an idiot"}\n')
        assert proc.stdout is not None
        deadline, out = time.monotonic() + 180, b""
        while b"\n" not in out and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                out += os.read(proc.stdout.fileno(), 65536)
        assert proc.poll() is None, "score ended before its input did"
        answer = json.loads(out.splitlines()[0])
        assert answer["id"] == 7 and answer["flagged"] is True
        os.write(master, b"\x04")  # Ctrl-D: end of input
        rc = proc.wait(timeout=60)
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert rc == 0 and "end with Ctrl-D" in err


def test_score_takes_texts_as_arguments(tmp_path, capsys, monkeypatch):
    """``python -m bot score "text" "text"`` scores the arguments as lines with ids 1, 2 (it was refused with
    argparse's "unrecognized arguments")."""
    from tests import fakes

    monkeypatch.setattr("bot.runtime.load_scorer", lambda *a, **k: fakes.FakeScorer(), raising=False)
    rc = main(["score", "you idiot", "have a nice day"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rc == 0 and [x["id"] for x in lines] == [1, 2]
