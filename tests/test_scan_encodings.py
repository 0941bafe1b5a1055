"""``scan``'s JSON-lines reader and the encodings a byte order mark names: UTF-16 / UTF-32 (either byte order, as
Windows PowerShell 5.1's ``>`` writes UTF-16LE) and UTF-8, read as ``score`` reads its input
(:mod:`bot.ingest.encoding`)."""

from __future__ import annotations

import codecs
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.ingest.jsonl import iter_jsonl
from tests.ingest_sinks import CollectingSink

ROOT = Path(__file__).resolve().parents[1]

#: Two messages as a Windows shell writes them (CRLF endings), with text that is not ASCII so a wrong decoding shows,
#: and a character past U+FFFF (a UTF-16 surrogate pair) and U+0A0A (bytes 0x0A 0x0A in UTF-16: not line ends).
LINES = ('{"id": "café-1", "text": "good morning 🏳️‍⚧️", "author": "u1", "created_at": "2026-01-01T00:00:00Z"}\r\n'
         '{"id": "m2", "text": "see you \u0a0a\u010a", "author": "u2", "created_at": "2026-01-01T00:00:05Z"}\r\n')

BOMS = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE, "utf-32-le": codecs.BOM_UTF32_LE,
        "utf-32-be": codecs.BOM_UTF32_BE, "utf-8": codecs.BOM_UTF8}


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("encoding", list(BOMS))
def test_jsonl_behind_a_byte_order_mark_is_read_in_its_encoding(tmp_path, encoding, gz):
    """A ``.jsonl`` file (or ``.jsonl.gz``) that starts with a byte order mark is read in the encoding it names:
    the same messages, text and ids as the UTF-8 file, and no error."""
    raw = BOMS[encoding] + LINES.encode(encoding)
    path = tmp_path / ("chat.jsonl.gz" if gz else "chat.jsonl")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    sink = CollectingSink()
    got = list(iter_jsonl(path, sink=sink))
    assert sink.errors == []
    assert [(m.id, m.text, m.author.id) for m in got] == [("café-1", "good morning 🏳️‍⚧️", "u1"),
                                                         ("m2", "see you \u0a0a\u010a", "u2")]


def _env(scorer_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MODBOT_DB",)}
    return {**env, "MODBOT_SCORER_URL": scorer_url, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.mark.parametrize("fmt", [None, "jsonl"])
def test_scan_reads_a_powershell_written_jsonl_file(tmp_path, fake_scorer_url, fmt):
    """``python -m bot scan chat.jsonl`` (format detected, or ``--format jsonl``) on the bytes PowerShell's ``>``
    writes (a UTF-16LE byte order mark, UTF-16LE, CRLF endings) judges every message: exit 0, one ``--out`` row
    per message with its id as written, no skipped line."""
    src = tmp_path / "chat.jsonl"
    src.write_bytes(codecs.BOM_UTF16_LE + LINES.encode("utf-16-le"))
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "bot", "scan", str(src), "--db", str(tmp_path / "mod.db"), "--out", str(out),
           "--no-progress", *(["--format", fmt] if fmt else [])]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(fake_scorer_url), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "skipped" not in proc.stderr, proc.stderr
    rows = [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["café-1", "m2"]


#: Two whole UTF-16LE lines, the last without an ending (its byte offset of the end: 2 + 2 * len(ODD_TEXT)).
ODD_TEXT = '{"id": "a", "text": "hello"}\r\n{"id": "b", "text": "bye"}'


@pytest.mark.parametrize(("encoding", "tail"), [("utf-16-le", "x"), ("utf-16-be", "\n"), ("utf-32-le", "ab")])
def test_a_stray_byte_at_the_end_of_utf16_jsonl_is_one_error_naming_its_offset(tmp_path, encoding, tail):
    """A UTF-16 (UTF-32) ``.jsonl`` file whose byte count is not whole code units (a stray byte at the end, with or
    without a line ending before it) gives every message before it and one error: the file, ``byte N`` (0-based,
    the byte order mark counted), the encoding and how many bytes are left over."""
    text = ODD_TEXT + ("\n" if tail == "\n" else "")
    body = BOMS[encoding] + text.encode(encoding)
    stray = (tail if tail != "\n" else "z").encode("ascii")
    path = tmp_path / "chat.jsonl"
    path.write_bytes(body + stray)
    sink = CollectingSink()
    got = list(iter_jsonl(path, sink=sink))
    assert [(m.id, m.text) for m in got] == [("a", "hello"), ("b", "bye")]
    name = encoding.upper().replace("-LE", "LE").replace("-BE", "BE")
    n = len(stray)
    assert [(e.position, e.reason) for e in sink.errors] == [
        (f"byte {len(body)}", f"the {name} text ends with {n} stray byte{'s' if n > 1 else ''}, not a whole "
                              f"{4 if '32' in encoding else 2}-byte code unit (cut short?); not read")]


def test_score_with_a_stray_byte_after_utf16_input_judges_every_line_and_says_where(tmp_path, fake_scorer_url):
    """``python -m bot score`` fed UTF-16LE whose last byte is a stray one judges both lines (no extra, confusing
    error line) and says in one stderr line that standard input ends with a stray byte at byte N; exit 1."""
    body = codecs.BOM_UTF16_LE + (ODD_TEXT + "\r\n").encode("utf-16-le")
    env = {**os.environ, "MODBOT_SCORER_URL": fake_scorer_url, "MODBOT_DB": str(tmp_path / "unused.db")}
    proc = subprocess.run([sys.executable, "-m", "bot", "score"], input=body + b"\x00", capture_output=True, env=env,
                          cwd=ROOT, timeout=120)
    out = [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines()]
    assert [o["id"] for o in out] == ["a", "b"] and all("scores" in o for o in out), proc.stderr.decode()
    assert proc.stderr.decode("utf-8").splitlines() == [
        f"error: stdin: byte {len(body)}: the UTF-16LE text ends with 1 stray byte, not a whole 2-byte code unit "
        "(cut short?); not read"]
    assert proc.returncode == 1


def test_a_utf16_discord_csv_with_a_stray_byte_keeps_every_row_and_says_where(tmp_path):
    """The Discord CSV reader shares the line reader: a UTF-16LE export is read as such, its last rows (held back
    while their minute is spread) are all given, and the stray byte after them is one error naming ``byte N``."""
    text = ("AuthorID;Author;Date;Content;Attachments;Reactions;\r\n"
            "1000;u0;2026-01-01T10:00:00;café ☕;;;\r\n1001;u1;2026-01-01T10:00:00;second;;;\r\n")
    body = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    path = tmp_path / "chan [1].csv"
    path.write_bytes(body + b"\x00")
    sink = CollectingSink()
    from bot.ingest.discord_csv import iter_discord_csv

    got = [(m.author.id, m.text) for m in iter_discord_csv(path, sink=sink)]
    assert got == [("1000", "café ☕"), ("1001", "second")]
    assert [str(e) for e in sink.errors] == [
        f"{path}:byte {len(body)}: the UTF-16LE text ends with 1 stray byte, not a whole 2-byte code unit "
        "(cut short?); not read"]
