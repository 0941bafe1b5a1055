"""Hostile and careless exports given to ``scan`` (eighteenth session's break-it pass): one JSON line without an
author or a time switched the rate-based rules off for every message of the scan, so a flood or a raid next to it
passed. Real ``run_scan`` over files in ``tmp_path``, a real SQLite mod log and the test scorer."""

from __future__ import annotations

import asyncio
import json
from argparse import Namespace
from pathlib import Path

import pytest

from bot.jobs.scan import run_scan
from bot.settings import Settings
from tests.fakes import FakeScorer

SPAM = "buy cheap followers at example dot com now"


def _scan(tmp_path: Path, rows: list[dict]) -> list[dict]:
    src = tmp_path / "chat.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = Namespace(paths=[src], policy=[], out=out, report=None, format="auto", on_error="skip", batch_size=16,
                     no_progress=True)
    assert asyncio.run(run_scan(args, Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer())) == 0
    return [json.loads(ln) for ln in out.read_text(encoding="utf-8").splitlines()]


def _flood() -> list[dict]:
    return [{"id": str(i), "text": SPAM, "author": "spammer", "created_at": f"2024-01-01T00:00:{i:02d}Z"}
            for i in range(12)]


@pytest.mark.parametrize("odd", [
    {"id": "anon", "text": SPAM, "created_at": "2024-01-01T00:00:30Z"},  # no author
    {"id": "untimed", "text": SPAM, "author": "someone"},                 # no time
])
def test_one_line_without_author_or_time_leaves_the_flood_of_the_others_caught(tmp_path: Path, capsys, odd: dict):
    """Twelve identical lines from one author in twelve seconds trip the spam rules, and still do next to one line
    without an author (or a time): that line alone is judged without them, and one warning counts it (1 of 13)."""
    rows = _scan(tmp_path, [*_flood(), odd])
    err = capsys.readouterr().err
    by_id = {r["id"]: r for r in rows}
    flood_hits = [h["rule"] for i in range(12) for h in by_id[str(i)]["rule_hits"]]
    assert flood_hits, "the flood was not caught"
    assert by_id[odd["id"]]["rule_hits"] == [] and by_id[odd["id"]]["action"] == "none"
    assert err.count("rate-based rules") == 1, err
    assert "1 of 13 messages have no author or no time" in err and "skip those messages" in err, err


def test_anonymous_lines_are_not_one_member_flooding(tmp_path: Path, capsys):
    """Twelve identical lines without an author next to a timed member's ordinary line: the anonymous lines are
    not taken as one member ("unknown") posting a flood, and the named member's line is judged as usual."""
    anon = [{"id": f"a{i}", "text": SPAM, "created_at": f"2024-01-01T00:00:{i:02d}Z"} for i in range(12)]
    rows = _scan(tmp_path, [*anon, {"id": "ok", "text": "good morning all", "author": "amy",
                                       "created_at": "2024-01-01T00:01:00Z"}])
    err = capsys.readouterr().err
    assert all(r["rule_hits"] == [] and r["action"] == "none" for r in rows), rows
    assert "12 of 13 messages have no author or no time" in err
