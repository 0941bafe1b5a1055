"""Hostile-tester findings on ``scan`` (round 16): real ``run_scan``, real moderation service, real SQLite files
on ``tmp_path``; the scorer is the suite's keyword FakeScorer."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from argparse import Namespace
from pathlib import Path

import pytest

from bot.settings import Settings
from tests.fakes import FakeScorer


def _args(paths: list[Path], **kw: object) -> Namespace:
    base: dict[str, object] = {"paths": paths, "policy": [], "out": None, "report": None, "format": "auto",
                               "on_error": "skip", "batch_size": 32, "no_progress": True}
    base.update(kw)
    return Namespace(**base)


def _jsonl(tmp: Path) -> Path:
    p = tmp / "chat.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in [
        {"id": "good", "text": "hello", "author": "u1", "created_at": "2024-01-01T00:00:00Z"},
        {"id": "bad\ud800", "text": "hi", "author": "u1", "created_at": "2024-01-01T00:00:01Z"},
        {"id": "alsobad", "text": "hi", "author": "u\udc00", "created_at": "2024-01-01T00:00:02Z"},
    ]) + "\n", encoding="utf-8")  # json.dumps writes a lone surrogate as the escape \ud800, as a hostile file may
    return p


def _dce(tmp: Path) -> Path:
    p = tmp / "export.json"
    msg = {"timestamp": "2024-01-01T00:00:00Z", "content": "hi", "type": "Default"}
    p.write_text(json.dumps({"guild": {"id": "100", "name": "G"}, "channel": {"id": "200", "name": "c"}, "messages": [
        {**msg, "id": "1001", "author": {"id": "9", "name": "x"}},
        {**msg, "id": "1002\ud800", "author": {"id": "9", "name": "x"}},
        {**msg, "id": "1003", "author": {"id": "9\udfff", "name": "y"}},
    ]}), encoding="utf-8")
    return p


def _slack(tmp: Path) -> Path:
    root = tmp / "slack"
    (root / "general").mkdir(parents=True)
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]), encoding="utf-8")
    (root / "users.json").write_text(json.dumps([{"id": "U1", "name": "u"}, {"id": "U\ud800", "name": "v"}]),
                                     encoding="utf-8")
    (root / "general" / "2020-09-13.json").write_text(json.dumps([
        {"type": "message", "user": "U1", "text": "hello", "ts": "1600000000.000100"},
        {"type": "message", "user": "U\ud800", "text": "hi", "ts": "1600000001.000100"},
    ]), encoding="utf-8")
    return root


@pytest.mark.parametrize(("make", "bad"), [(_jsonl, 2), (_dce, 2), (_slack, 1)])
def test_an_id_holding_a_lone_surrogate_skips_that_message_named_by_file(tmp_path, capsys, make, bad):
    """A message, member, channel or server id with a lone UTF-16 surrogate (JSON ``"\\ud800"``: a doctored or
    broken export) cannot be stored as UTF-8. The scan crashed with a traceback (JSON lines, DiscordChatExporter
    JSON) or, for a Slack export, retried writing the batch for ever and never ended. That message is reported as
    malformed (file, message and why) and skipped; the rest of the export is judged and recorded."""
    from bot.jobs.scan import run_scan

    src = make(tmp_path)
    db = tmp_path / "m.db"

    result: list[int] = []

    def scan() -> None:  # in a thread: a scan that never ends fails this test instead of hanging the suite
        result.append(asyncio.run(run_scan(_args([src]), Settings(db_path=db), scorer=FakeScorer())))

    worker = threading.Thread(target=scan, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the scan did not end within 60 s"
    assert result == [0]
    err = capsys.readouterr().err
    assert "Traceback" not in err
    skipped = [line for line in err.splitlines() if line.startswith("skipped: ") and "lone UTF-16 surrogate" in line]
    assert len(skipped) == bad, err
    assert all(str(tmp_path) in line for line in skipped), skipped
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT COUNT(*) FROM verdicts").fetchone() == (1,)
