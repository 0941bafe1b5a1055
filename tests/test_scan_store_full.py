"""A scan whose mod log fails for good (the disk fills up) stops with one line, keeps what it recorded, and a later
run resumes. The full disk is real: the scan runs in a child process whose files may not grow past a limit
(``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored, so writes fail as on a full disk), against a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHILD = """
import asyncio, resource, signal, sys
from argparse import Namespace
from pathlib import Path
limit = int(sys.argv[3])
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
from bot.jobs.scan import run_scan
from bot.settings import Settings
from tests.fakes import FakeScorer
args = Namespace(paths=[Path(sys.argv[1])], policy=[], out=None, report=None, format="auto", on_error="skip",
                 batch_size=32, no_progress=True)
sys.exit(asyncio.run(run_scan(args, Settings(db_path=Path(sys.argv[2])), scorer=FakeScorer())))
"""


def _scan(src: Path, db: Path, limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, str(src), str(db), str(limit)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow  # three scan processes over 3,000 messages
def test_scan_on_a_full_disk_stops_with_one_line_and_resumes_later(tmp_path):
    """The mod log's files cannot grow 300 KB past their size: exit 2, one error line naming the database, no traceback, the
    recorded verdicts intact; the same scan without the limit records every message exactly once."""
    src = tmp_path / "chat.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(3000):
            fh.write(json.dumps({"id": f"m{i}", "text": f"message {i} " + "words of ordinary chat " * 12,
                                 "author": f"u{i % 40}", "created_at": f"2024-01-01T{i // 3600:02d}:"
                                 f"{i // 60 % 60:02d}:{i % 60:02d}Z"}) + "\n")
    db = tmp_path / "mod.db"
    seed = tmp_path / "seed.jsonl"
    seed.write_text(src.read_text(encoding="utf-8").split("\n", 1)[0] + "\n", encoding="utf-8")
    assert _scan(seed, db, 0).returncode == 0  # the mod log exists, migrated, with one message
    grown = max(p.stat().st_size for p in tmp_path.glob("mod.db*"))
    first = _scan(src, db, grown + 300_000)
    assert first.returncode == 2, first.stderr
    assert "Traceback" not in first.stderr
    errors = [ln for ln in first.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and str(db) in errors[0] and "scan stopped after" in errors[0]
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = con.execute("SELECT COUNT(*) FROM verdicts WHERE server_id = 'chat'").fetchone()[0]
    finally:
        con.close()
    assert 0 < kept < 3000
    second = _scan(src, db, 0)
    assert second.returncode == 0, second.stderr
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT COUNT(*), COUNT(DISTINCT message_id) FROM verdicts WHERE server_id = ?", ("chat",))
        assert row.fetchone() == (3000, 3000)
    finally:
        con.close()
