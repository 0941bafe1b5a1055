"""Crash safety: a writer killed with SIGKILL mid-run leaves a consistent database that resumes exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.store.sqlite import SqliteStore
from tests.store_factories import make_record

ROOT = Path(__file__).resolve().parents[1]
BATCH = 20
SERVERS = ("g1", "g2")

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, sys.argv[3])
    from bot.store.sqlite import SqliteStore
    from tests.test_store_crash import batch_records

    async def main(path, batches):
        store = await SqliteStore.open(path)
        for b in range(batches):
            await store.record_batch(batch_records(b))
            print(b, flush=True)

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def batch_records(b: int) -> list:
    """Batch ``b`` of the writer: BATCH messages over two servers; every third opens a case, review and strike."""
    out = []
    for i in range(b * BATCH, (b + 1) * BATCH):
        flagged = i % 3 == 0
        out.append(
            make_record(
                f"m{i:06d}",
                server=SERVERS[i % 2],
                author=f"u{i % 7}",
                open_case=flagged,
                open_review=flagged,
                strike_points=1 if flagged else 0,
            )
        )
    return out


def _check_consistent(path: Path) -> int:
    """Assert integrity and invariants with plain sqlite3; returns the number of verdicts."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        orphans = conn.execute(
            "SELECT COUNT(*) FROM verdicts v LEFT JOIN messages m USING (platform, server_id, message_id) "
            "WHERE m.message_id IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        for server, count, top, counter in conn.execute(
            "SELECT c.server_id, COUNT(*), MAX(c.number), k.last_number FROM cases c JOIN case_counters k "
            "USING (platform, server_id) GROUP BY c.platform, c.server_id"
        ):
            assert count == top == counter, f"case numbers of {server} are not 1..n"
        dup = (
            "SELECT COUNT(*) FROM (SELECT 1 FROM strikes GROUP BY platform, server_id, message_id HAVING COUNT(*) > 1)"
        )
        assert conn.execute(dup).fetchone()[0] == 0
        verdicts = conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
        cases = conn.execute("SELECT COUNT(*) FROM cases").fetchone()[0]
        strikes = conn.execute("SELECT COUNT(*) FROM strikes").fetchone()[0]
        assert cases == strikes == sum(1 for i in range(verdicts) if i % 3 == 0)
        return verdicts
    finally:
        conn.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
async def test_sigkill_mid_run_leaves_consistent_db(tmp_path):
    """SIGKILL during writes loses only whole batches; re-recording inserts exactly the missing messages once."""
    path = tmp_path / "modlog.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), "100000", str(ROOT)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    try:
        for _ in range(8):  # let eight batches commit, then kill while the next ones are being written
            line = proc.stdout.readline()
            assert line, "writer exited early"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    committed = _check_consistent(path)
    assert committed >= 8 * BATCH and committed % BATCH == 0  # batches are all-or-nothing
    total_batches = committed // BATCH + 3
    async with await SqliteStore.open(path) as store:
        assert await store.integrity_check() == []
        results = [r for b in range(total_batches) for r in await store.record_batch(batch_records(b))]
        inserted = [i for i, r in enumerate(results) if r.inserted]
        assert inserted == list(range(committed, total_batches * BATCH))
        assert sum(r.strike_added for r in results) == sum(1 for i in inserted if i % 3 == 0)
        again = [r for b in range(total_batches) for r in await store.record_batch(batch_records(b))]
        assert not any(r.inserted for r in again)
    assert _check_consistent(path) == total_batches * BATCH
