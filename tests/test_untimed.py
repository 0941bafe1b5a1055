"""Messages without a time, and messages at the Unix epoch: the core types say "no time" with ``None``, never with
1970-01-01. A JSON line genuinely timed ``1970-01-01T00:00:00Z`` was taken for "no time" (switching the rate rules
off for the whole scan), and a line without a time was recorded, reported and purged as posted in 1970.

Real parts: the real ``run_scan`` job and moderation service, real SQLite files on ``tmp_path``; the scorer is the
suite's keyword FakeScorer.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from argparse import Namespace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.normalize import normalize
from bot.core.rules.settings import SpamSettings
from bot.core.rules.spam import SpamTracker
from bot.settings import Settings
from tests.fakes import FakeScorer

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _args(paths: list[Path], **kw: object) -> Namespace:
    base: dict[str, object] = {"paths": paths, "policy": [], "out": None, "report": None, "format": "auto",
                               "on_error": "skip", "batch_size": 32, "no_progress": True}
    base.update(kw)
    return Namespace(**base)


def _scan(tmp: Path, lines: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]], Path]:
    """Scan ``lines`` as one JSONL file: ``(exit code, --out rows, mod log)``."""
    from bot.jobs.scan import run_scan

    src = tmp / "chat.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out, db = tmp / "out.jsonl", tmp / "m.db"
    rc = asyncio.run(run_scan(_args([src], out=out), Settings(db_path=db), scorer=FakeScorer()))
    return rc, [json.loads(r) for r in out.open(encoding="utf-8")], db


def test_a_flood_posted_at_the_unix_epoch_is_timed_and_caught(tmp_path, capsys):
    """Twelve messages in twelve seconds from one member, starting at exactly 1970-01-01T00:00:00Z: every line has
    an author and a time, so the scan has its rate rules on (no "no author or no time" warning) and the flood is
    caught from the seventh message, as it would be on any other day."""
    lines = [{"id": f"m{i}", "text": f"message number {i}", "author": "u1", "server": "s",
              "created_at": (EPOCH + timedelta(seconds=i)).isoformat()} for i in range(12)]
    rc, rows, db = _scan(tmp_path, lines)
    err = capsys.readouterr().err
    assert rc == 0 and "no author or no time" not in err, err
    flooded = [r["id"] for r in rows if any(h["rule"] == "flood" for h in r["rule_hits"])]
    assert flooded == [f"m{i}" for i in range(6, 12)]
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT created_at FROM messages WHERE message_id = 'm0'").fetchone() == (
            "1970-01-01T00:00:00.000000+00:00",)


def test_a_line_without_a_time_is_recorded_reported_and_kept_without_one(tmp_path, capsys):
    """A line without ``created_at`` has no time: the scan warns (rate rules off), the mod log stores NULL, not
    1970, the report row's time is empty, and 30-day retention keeps its text (it was stored just now) instead of
    erasing it as 56 years old."""
    from bot.report import message_fields
    from bot.store import open_store

    lines = [{"id": "timed", "text": "hello", "author": "u1", "server": "s", "created_at": "2026-05-01T10:00:00Z"},
             {"id": "untimed", "text": "no time here", "author": "u2", "server": "s"}]
    rc, rows, db = _scan(tmp_path, lines)
    err = capsys.readouterr().err
    assert rc == 0 and "1 of 2 messages have no author or no time" in err, err
    assert sorted(r["id"] for r in rows) == ["timed", "untimed"]
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT message_id, created_at FROM messages ORDER BY message_id").fetchall() == [
            ("timed", "2026-05-01T10:00:00.000000+00:00"), ("untimed", None)]
        assert raw.execute("SELECT COUNT(*) FROM member_first_seen WHERE member_id = 'u2'").fetchone() == (0,)

    async def purge() -> int:
        store = await open_store(db)
        try:
            return await store.purge_expired_text(datetime.now(UTC) - timedelta(days=30))
        finally:
            await store.close()

    assert asyncio.run(purge()) == 1  # the May message, not the untimed one stored just now
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT excerpt FROM messages WHERE message_id = 'untimed'").fetchone() == ("no time here",)
    untimed = Message(server=ServerRef("export", "s"), channel=ChannelRef("c"), author=MemberRef("u2"), id="untimed",
                      text="no time here", created_at=None)
    assert message_fields(untimed)["time"] is None


def test_the_spam_windows_skip_a_message_without_a_time():
    """The core's spam tracker cannot place an untimed message in a window: it gets no hit and does not count
    toward the timed messages' flood (six timed plus any number untimed is no flood of seven)."""
    tracker = SpamTracker(SpamSettings())
    at = datetime(2026, 5, 1, tzinfo=UTC)

    def msg(i: int, when: datetime | None) -> Message:
        return Message(server=ServerRef("discord", "g"), channel=ChannelRef("c"), author=MemberRef("u1"),
                       id=f"m{i}", text=f"line {i}", created_at=when)

    hits = []
    for i in range(20):
        m = msg(i, None)
        hits += tracker.observe(m, normalize(m.text))
    for i in range(6):
        m = msg(100 + i, at + timedelta(seconds=i))
        hits += tracker.observe(m, normalize(m.text))
    assert hits == []
    m = msg(200, at + timedelta(seconds=6))
    assert [h.rule for h in tracker.observe(m, normalize(m.text))] == ["flood"]  # the seventh timed one
