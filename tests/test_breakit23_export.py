"""Hostile tests of imported histories kept in the ``export`` namespace (bot/ingest/slack_export.py,
bot/ingest/jsonl.py): a mod log written by a scan from before that change, which recorded the same export under
the live ``slack`` namespace. Real ``run_scan`` over the bundled Slack export, a real SQLite file, the test
scorer."""

from __future__ import annotations

import asyncio
import sqlite3
from argparse import Namespace
from pathlib import Path

from bot.jobs.scan import run_scan
from bot.settings import Settings
from tests.fakes import FakeScorer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _scan(db: Path, out: Path) -> int:
    args = Namespace(paths=[EXAMPLES / "slack"], policy=[], out=out, report=None, format="auto", on_error="skip",
                     batch_size=16, no_progress=True)
    return asyncio.run(run_scan(args, Settings(db_path=db), scorer=FakeScorer()))


def _as_an_earlier_scan_wrote_it(db: Path) -> None:
    """Move every row of the scan from ``export`` to ``slack``: the mod log as a scan before the change left it."""
    con = sqlite3.connect(db)
    try:
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if any(col[1] == "platform" for col in con.execute(f"PRAGMA table_info({table})")):
                con.execute(f"UPDATE {table} SET platform = 'slack' WHERE platform = 'export'")
        con.commit()
    finally:
        con.close()


def test_a_rescan_over_an_earlier_scans_live_namespace_rows_says_so(tmp_path: Path, capsys):
    """The export was scanned before imported histories were kept apart: its verdicts, cases and review items sit
    under ``slack/T0HARBOR01``, the live workspace's mod log. Scanned again, every message is judged anew under
    ``export`` ("0 already recorded"); the scan must say that these messages are also recorded under the live
    namespace (left there, counted by the live bot's statistics and review queue), not stay silent."""
    db = tmp_path / "m.db"
    assert _scan(db, tmp_path / "first.jsonl") == 0
    _as_an_earlier_scan_wrote_it(db)
    capsys.readouterr()
    assert _scan(db, tmp_path / "second.jsonl") == 0
    cap = capsys.readouterr()
    err = cap.err
    assert "31 judged now (0 already recorded)" in cap.out
    note = next((line for line in err.splitlines() if "slack/T0HARBOR01" in line), "")
    assert "31 of these messages" in note and "export/T0HARBOR01" in note


def test_a_rescan_of_a_fresh_mod_log_says_nothing_of_a_live_namespace(tmp_path: Path, capsys):
    """No earlier rows under ``slack``: no such note (it must not fire on every scan)."""
    db = tmp_path / "m.db"
    assert _scan(db, tmp_path / "first.jsonl") == 0
    assert _scan(db, tmp_path / "second.jsonl") == 0
    assert "slack/T0HARBOR01" not in capsys.readouterr().err
