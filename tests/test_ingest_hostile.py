"""Hostile inputs to ``scan``'s readers: absurdly nested JSON, decompression bombs, huge exports."""

from __future__ import annotations

import asyncio
import json
import zipfile
from argparse import Namespace
from pathlib import Path

import pytest

from bot.ingest import IngestError, read_messages
from bot.settings import Settings
from tests.fakes import FakeScorer

DEEP = "[" * 5000 + "]" * 5000


def _line(i: int, text: str = "hello") -> str:
    return json.dumps({"id": f"m{i}", "text": text, "author": "u1", "created_at": f"2024-01-01T00:00:{i:02d}Z"})


def test_jsonl_line_nested_5000_deep_is_reported_and_skipped(tmp_path):
    """A JSON line nested 5,000 levels deep is one error at its line; the lines around it are read."""
    p = tmp_path / "deep.jsonl"
    p.write_text(_line(1) + "\n" + '{"id": "x", "text": "t", "x": ' + DEEP + "}\n" + _line(3) + "\n",
                 encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [m.id for m in msgs] == ["m1", "m3"]
    assert [(e.position, "nested" in e.reason) for e in errors] == [("line 2", True)]


def test_jsonl_nested_line_with_stop_raises_ingest_error(tmp_path):
    """With on_error='stop' the deep line is an IngestError naming its line, not a RecursionError."""
    p = tmp_path / "deep.jsonl"
    p.write_text(_line(1) + "\n" + DEEP + "\n", encoding="utf-8")
    with pytest.raises(IngestError) as info:
        read_messages([p], on_error="stop")
    assert info.value.position == "line 2"


def test_dce_message_nested_5000_deep_is_skipped_and_the_others_kept(tmp_path):
    """One DCE message holding a 5,000-deep value is reported; the messages before and after it are read."""
    def msg(i: str) -> str:
        return json.dumps({"id": i, "timestamp": "2024-01-01T00:00:00Z", "content": f"c{i}", "author": {"id": "9"}})
    text = ('{"guild": {"id": "1", "name": "g"}, "channel": {"id": "2", "name": "c"}, "messages": ['
            + msg("10") + ', {"id": "11", "content": ' + DEEP + "}, " + msg("12") + "]}")
    p = tmp_path / "deep.json"
    p.write_text(text, encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([p], fmt="discord-json", errors=errors)
    assert [m.id for m in msgs] == ["10", "12"]
    assert len(errors) == 1 and "nested" in errors[0].reason and errors[0].position == "message 1"


def test_slack_day_file_nested_5000_deep_is_reported_and_other_days_read(tmp_path):
    """A Slack day file nested too deeply is one error; the other day files are read."""
    root = tmp_path / "export"
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text("[]", encoding="utf-8")
    (root / "general" / "2024-01-01.json").write_text(DEEP, encoding="utf-8")
    (root / "general" / "2024-01-02.json").write_text(
        json.dumps([{"type": "message", "user": "U1", "ts": "1704153600.000100", "text": "ok"}]), encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([root], errors=errors)
    assert [m.text for m in msgs] == ["ok"]
    assert [e.path.name for e in errors] == ["2024-01-01.json"] and "nested" in errors[0].reason


def test_scan_with_a_5000_deep_line_reports_it_and_judges_the_rest(tmp_path, capsys):
    """scan does not abort on a 5,000-deep JSON line: it prints it as skipped and records the other lines."""
    from bot.jobs.scan import run_scan
    from bot.store.sqlite import SqliteStore

    p = tmp_path / "deep.jsonl"
    p.write_text(_line(1) + "\n" + DEEP + "\n" + _line(3) + "\n", encoding="utf-8")
    args = Namespace(paths=[p], policy=[], out=None, report=None, format="auto", on_error="skip", batch_size=16,
                     no_progress=True)
    db = tmp_path / "m.db"
    assert asyncio.run(run_scan(args, Settings(db_path=db), scorer=FakeScorer())) == 0
    assert "skipped:" in capsys.readouterr().err

    async def count() -> int:
        store = await SqliteStore.open(db)
        try:
            return len(await store.recorded_verdicts([("export", "deep", "m1"), ("export", "deep", "m3")]))
        finally:
            await store.close()
    assert asyncio.run(count()) == 2


def _slack_zip(path: Path, day: bytes) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("users.json", "[]")
        zf.writestr("channels.json", json.dumps([{"id": "C1", "name": "general"}]))
        zf.writestr("general/2024-01-01.json", day)
        zf.writestr("general/2024-01-02.json", json.dumps(
            [{"type": "message", "user": "U1", "ts": "1704153600.000100", "text": "ok"}]))
    return path


def test_zip_bomb_member_is_refused_while_inflating_and_the_rest_is_read(tmp_path):
    """A 64 MiB day file of spaces packed into a tiny zip member is refused by the ratio bound while inflating
    (named with its sizes); the export's other day file is still read."""
    from bot.ingest.slack_export import MAX_RATIO

    bomb = b"[" + b" " * (64 << 20) + b"]"
    p = _slack_zip(tmp_path / "bomb.zip", bomb)
    with zipfile.ZipFile(p) as zf:
        assert zf.getinfo("general/2024-01-01.json").compress_size * MAX_RATIO < len(bomb)
    errors: list[IngestError] = []
    msgs = read_messages([p], errors=errors)
    assert [m.text for m in msgs] == ["ok"]
    assert len(errors) == 1 and errors[0].path.name == "2024-01-01.json"
    assert "inflates past" in errors[0].reason


def test_zip_member_past_the_absolute_bound_is_refused(tmp_path):
    """A member whose declared size exceeds MAX_MEMBER_BYTES is refused before inflating (absolute bound)."""
    from bot.ingest import slack_export

    day = json.dumps([{"type": "message", "user": "U1", "ts": "1704067200.000100", "text": "x" * 100}]).encode()
    p = _slack_zip(tmp_path / "big.zip", day)
    errors: list[IngestError] = []
    tree = slack_export._Tree(p, max_member_bytes=len(day) - 1)
    try:
        with pytest.raises(slack_export.TooLarge):
            tree.read("general/2024-01-01.json")
    finally:
        tree.close()
    assert errors == []


def test_a_slack_export_judges_a_file_share_on_its_title_and_name_as_the_live_app_does(tmp_path):
    """The live Slack app judges a file share on the message text, the title the member typed and the file's name
    (``bot.adapters.slack.translate.to_core``); ``scan`` of a Slack export read the text alone, so an abusive file
    name shared without a word passed the replay that admins run before switching a policy on, and a scan and the
    bot judged the same message differently."""
    from bot.adapters.slack.translate import message_fields, to_core
    from bot.core.models import MemberRef

    day = [{"type": "message", "user": "U1", "ts": "1704153600.000100", "text": "look",
            "files": [{"name": "you-are-vermin.png", "title": "you-are-vermin.png"}]},
           {"type": "message", "user": "U1", "ts": "1704153601.000100", "text": "",
            "files": [{"name": "a.png", "title": "go back where you came from"}, "not a file"]}]
    root = tmp_path / "export"
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text("[]", encoding="utf-8")
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]), encoding="utf-8")
    (root / "general" / "2024-01-01.json").write_text(json.dumps(day), encoding="utf-8")
    errors: list[IngestError] = []
    msgs = read_messages([root], errors=errors)
    assert [m.text for m in msgs] == ["look\nyou-are-vermin.png", "go back where you came from\na.png"]
    assert not errors
    live = []
    for raw in day:
        event = {**raw, "channel": "C1"}
        fields = message_fields(event)
        assert fields is not None
        live.append(to_core("T1", event, fields, author=MemberRef(id="U1", name="u1")).text)
    assert live == [m.text for m in msgs]
