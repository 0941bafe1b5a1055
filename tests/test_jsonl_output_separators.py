"""U+2028 (line separator) and U+2029 (paragraph separator) in the JSON lines ``score`` and ``scan --out`` write:
escaped (``\\u2028``, ``\\u2029``), so every record is one line for every reader (JavaScript before ES2019, Python's
``str.splitlines``, editors), and ``json.loads`` reads the value back unchanged. Real subprocesses, scored through
the session's fake scoring service."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEPARATORS = (b"\xe2\x80\xa8", b"\xe2\x80\xa9")  # U+2028, U+2029 in UTF-8


def _env(scorer_url: str, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MODBOT_SCORER_URL": scorer_url, "MODBOT_DB": str(tmp_path / "unused.db"),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_score_output_escapes_line_and_paragraph_separators(tmp_path, fake_scorer_url):
    """An id holding U+2028 and U+2029 (and a text holding them) comes back escaped: no raw separator in the
    output bytes, one record per ``splitlines`` line, the id read back as given."""
    ids = ["a\u2028b", {"k\u2029": "v\u2028"}]
    stdin = "".join(json.dumps({"id": i, "text": "one\u2028two\u2029three"}, ensure_ascii=False) + "\n"
                    for i in ids).encode("utf-8")
    proc = subprocess.run([sys.executable, "-m", "bot", "score"], input=stdin, capture_output=True,
                          env=_env(fake_scorer_url, tmp_path), cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert not any(sep in proc.stdout for sep in SEPARATORS)
    assert b"\\u2028" in proc.stdout and b"\\u2029" in proc.stdout
    out = [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines()]
    assert [o["id"] for o in out] == ids and all("scores" in o for o in out)


def test_scan_out_escapes_line_and_paragraph_separators(tmp_path, fake_scorer_url):
    """``scan --out``: a message id, channel name and author name holding U+2028 / U+2029 are written escaped:
    one row per ``splitlines`` line, each value read back unchanged."""
    src = tmp_path / "chat.jsonl"
    src.write_text(json.dumps({"id": "m\u20281", "text": "hi\u2029there", "channel": {"id": "c", "name": "gen\u2028"},
                               "author": {"id": "u", "name": "x\u2029y"}, "created_at": "2026-01-01T00:00:00Z"},
                              ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([sys.executable, "-m", "bot", "scan", str(src), "--db", str(tmp_path / "mod.db"),
                           "--out", str(out), "--no-progress"], capture_output=True, text=True,
                          env=_env(fake_scorer_url, tmp_path), cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    raw = out.read_bytes()
    assert not any(sep in raw for sep in SEPARATORS)
    rows = [json.loads(ln) for ln in raw.decode("utf-8").splitlines()]
    assert [(r["id"], r["channel"], r["author"]) for r in rows] == [("m\u20281", "gen\u2028", "x\u2029y")]
