"""The ``score`` job's input as bytes arrive: where lines end (``\\n`` only; a CRLF ending is one ending, a ``\\r``
inside a line is not) and which encoding a byte order mark at the start names (UTF-8, UTF-16 or UTF-32)."""

from __future__ import annotations

import codecs
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main

ROOT = Path(__file__).resolve().parents[1]


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


#: Lines as a Windows shell writes them (CRLF endings), with an id that is not ASCII so a wrong decoding shows.
LINES = '{"id": "café-🏳️‍⚧️", "text": "good morning"}\r\n{"text": "see you"}\r\n'


@pytest.mark.parametrize(("encoding", "bom"), [
    ("utf-16-le", codecs.BOM_UTF16_LE),  # Windows PowerShell 5.1's `>` and Out-File
    ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE),
    ("utf-32-be", codecs.BOM_UTF32_BE),
    ("utf-8", codecs.BOM_UTF8),
])
def test_input_behind_a_byte_order_mark_is_read_in_its_encoding(tmp_path, monkeypatch, capsys, fake_scorer_url,
                                                                 encoding, bom):
    """Input that starts with the byte order mark of UTF-16 or UTF-32 (either byte order) or UTF-8 is read in that
    encoding: every line is judged, the non-ASCII id comes back as written, nothing on stderr, exit status 0."""
    rc, out, err = _cli(monkeypatch, capsys, tmp_path, fake_scorer_url, bom + LINES.encode(encoding))
    assert [o["id"] for o in out] == ["café-🏳️‍⚧️", "line:2"]
    assert all("scores" in o for o in out)
    assert rc == 0 and err == ""


def test_utf16_input_with_a_broken_code_unit_is_still_read(tmp_path, monkeypatch, capsys, fake_scorer_url):
    """A lone surrogate code unit in UTF-16 input (a text cut inside an emoji) is U+FFFD in its text, as a lone
    surrogate escape in JSON is: the line is still judged, and so is the next one."""
    raw = (codecs.BOM_UTF16_LE + '{"id": 1, "text": "cut '.encode("utf-16-le") + b"\x3d\xd8"
           + '"}\n{"id": 2, "text": "fine"}\n'.encode("utf-16-le"))
    rc, out, _err = _cli(monkeypatch, capsys, tmp_path, fake_scorer_url, raw)
    assert rc == 0 and [o["id"] for o in out] == [1, 2]


def test_score_reads_powershell_output_from_a_real_pipe(tmp_path, fake_scorer_url):
    """``python -m bot score`` in its own process, fed on its real standard input the bytes Windows PowerShell's
    ``>`` writes (a UTF-16LE byte order mark, then UTF-16LE with CRLF endings), judges every line."""
    env = {**os.environ, "MODBOT_SCORER_URL": fake_scorer_url, "MODBOT_DB": str(tmp_path / "unused.db")}
    proc = subprocess.run([sys.executable, "-m", "bot", "score"], input=codecs.BOM_UTF16_LE
                          + LINES.encode("utf-16-le"), capture_output=True, env=env, cwd=ROOT, timeout=120)
    out = [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines()]
    assert [o["id"] for o in out] == ["café-🏳️‍⚧️", "line:2"], proc.stderr.decode()
    assert proc.returncode == 0 and all("scores" in o for o in out)


class _Trickle(io.RawIOBase):
    """A pipe that hands over ``step`` bytes per read: a byte order mark, a UTF-16 code unit, a UTF-8 character
    and a CRLF ending all arrive cut in pieces."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._step = data, step

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        out, self._data = self._data[:min(n, self._step)], self._data[min(n, self._step):]
        return out


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-32-be", "utf-8"])
@pytest.mark.parametrize("step", [1, 3, 7])
def test_input_lines_are_the_same_however_the_bytes_arrive(encoding, step):
    """:func:`input_lines` gives the same lines from a pipe that trickles bytes as from the whole input."""
    from bot.jobs.score import input_lines

    text = LINES + '{"id": 3, "text": "a\rb ✨"}\r\n\r\nlast line, no ending'
    raw = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-32-be": codecs.BOM_UTF32_BE, "utf-8": b""}[encoding]
    raw += text.encode(encoding)
    want = ['{"id": "café-🏳️‍⚧️", "text": "good morning"}', '{"text": "see you"}', '{"id": 3, "text": "a\rb ✨"}',
            "", "last line, no ending"]
    assert list(input_lines(_Trickle(raw, step))) == want  # type: ignore[arg-type]
    assert list(input_lines(io.BytesIO(raw))) == want


def test_score_help_says_which_encodings_it_reads(capsys, monkeypatch):
    """``score --help`` says the input may be UTF-16 or UTF-32 behind a byte order mark."""
    monkeypatch.setenv("COLUMNS", "400")
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Input is UTF-8, or UTF-16 / UTF-32 behind a byte order mark" in text


@pytest.mark.parametrize(("closed", "name"), [(0, "standard input"), (1, "standard output")])
def test_score_with_a_closed_standard_stream_says_so_in_one_line(tmp_path, fake_scorer_url, closed, name):
    """``python -m bot score <&-`` (or ``>&-``): the process has no standard input (output) at all, so Python
    gives ``None`` for it; the run is refused in one line on stderr with exit status 2 (bad input), not a
    traceback with status 1 (which says some lines could not be judged)."""
    env = {**os.environ, "MODBOT_SCORER_URL": fake_scorer_url, "MODBOT_DB": str(tmp_path / "unused.db")}
    proc = subprocess.run([sys.executable, "-m", "bot", "score"], capture_output=True, env=env, cwd=ROOT,
                          timeout=120, preexec_fn=lambda: os.close(closed), input=b'{"id": 1, "text": "hi"}\n')
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.startswith(f"error: score: the {name} is closed") and "Traceback" not in err
    assert err.count("\n") == 1


def test_score_writes_utf8_whatever_the_locales_encoding(tmp_path, fake_scorer_url):
    """Output is UTF-8 JSON lines even where the locale's encoding is not UTF-8 (a Windows Python writing to a pipe
    or a file uses the ANSI code page; here ``PYTHONIOENCODING=ascii`` stands for it): a non-ASCII id comes back as
    written, not a UnicodeEncodeError ending the run."""
    env = {**os.environ, "MODBOT_SCORER_URL": fake_scorer_url, "MODBOT_DB": str(tmp_path / "unused.db"),
           "PYTHONIOENCODING": "ascii"}
    proc = subprocess.run([sys.executable, "-m", "bot", "score"], input=LINES.encode("utf-8"), capture_output=True,
                          env=env, cwd=ROOT, timeout=120)
    out = [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines()]
    assert [o["id"] for o in out] == ["café-🏳️‍⚧️", "line:2"], proc.stderr.decode()
    assert proc.returncode == 0 and all("scores" in o for o in out)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_score_onto_a_full_disk_says_the_output_is_incomplete_in_one_line(tmp_path, fake_scorer_url):
    """Standard output that cannot be written (a full disk: ``> /dev/full``) ends the run with one error line on
    stderr saying the output is incomplete, exit status 1 (the job failed), not a traceback."""
    env = {**os.environ, "MODBOT_SCORER_URL": fake_scorer_url, "MODBOT_DB": str(tmp_path / "unused.db")}
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "bot", "score"], input=LINES.encode("utf-8"), stdout=full,
                              stderr=subprocess.PIPE, env=env, cwd=ROOT, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert err.startswith("error: score: standard output could not be written") and "Traceback" not in err
    assert "No space left on device" in err and err.count("\n") == 1, err


def test_a_scoring_service_that_is_away_makes_score_exit_1(tmp_path, monkeypatch, capsys):
    """``MODBOT_SCORER_URL`` naming a port nobody listens on: every line is still answered (the policy's
    ``on_scorer_error`` verdict, null scores, ``score_status`` ``"scorer_error"``), but the exit code was 0, so a
    script computing metrics took a run of nulls for scores. It is 1, and stderr says how many lines."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    raw = b'{"id": "a", "text": "hello there"}\n{"id": "b", "text": "you absolute idiot"}\n'
    monkeypatch.setenv("MODBOT_SCORER_TIMEOUT_S", "1")  # retries stop within it
    rc, out, err = _cli(monkeypatch, capsys, tmp_path, f"http://127.0.0.1:{port}", raw)
    assert [(o["id"], o["score_status"], set(o["scores"].values())) for o in out] == [
        ("a", "scorer_error", {None}), ("b", "scorer_error", {None})]
    assert rc == 1
    assert err.splitlines()[-1].startswith('error: 2 input line(s) were judged without model scores (score_status '
                                           '"scorer_error"')
