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
