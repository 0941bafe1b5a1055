"""What ``scan`` prints on the terminal quotes members' words (display names, a line's bad time, message texts of a
replay) as they are: never read as rich markup (``[/b]`` crashed the print; ``[link=...]`` made a hyperlink) and
without the control characters that make a terminal act (ESC starts ANSI and OSC 8 sequences). The real
``run_scan`` job on real JSON lines files and a real SQLite mod log; the scorer is the suite's FakeScorer."""

from __future__ import annotations

import asyncio
import json

from bot.settings import Settings
from tests.fakes import FakeScorer
from tests.test_scan_stream import _args
from tests.test_scan_strike_points import SCORES, _export

#: A display name that is rich markup (an unmatched closing tag, a hyperlink) and terminal escape sequences
#: (clear the screen, an OSC 8 hyperlink).
HOSTILE_NAME = "[/bold][link=https://evil.example]Mal[/link]\x1b[2J\x1b]8;;https://evil.example\x07x\x1b]8;;\x07"


def test_scan_summary_shows_a_member_name_as_written_without_markup_or_escapes(tmp_path, capsys):
    """A member whose display name is rich markup and escape sequences tops the strike-points table: the scan
    finishes (exit 0) and writes its report, and the table shows the name's characters, its control characters as
    U+FFFD, no ESC byte."""
    from bot.jobs.scan import run_scan

    one = _export(tmp_path / "one.jsonl", "111", "Alpha", 3, member=HOSTILE_NAME)
    report = tmp_path / "report.html"
    rc = asyncio.run(run_scan(_args([one], report=report), Settings(db_path=tmp_path / "m.db"),
                              scorer=FakeScorer(SCORES)))
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert report.exists()
    table = captured.out.split("members with most strike points")[1]
    assert "[/bold][link=https://evil.example]Mal[/link]\ufffd[2J\ufffd]8;;https://evil.example\ufffdx" in table, table
    assert "\x1b" not in captured.out + captured.err


def test_scan_prints_a_skipped_lines_bad_time_as_written(tmp_path, capsys):
    """A line whose ``created_at`` is markup and an escape sequence is skipped with its reason (which quotes the
    value); the scan goes on with the other lines instead of crashing on the quote."""
    from bot.jobs.scan import run_scan

    src = tmp_path / "a.jsonl"
    line = {"id": "1", "text": "hi", "author": {"id": "u1", "name": "a"}, "channel": "general",
            "server": {"platform": "discord", "id": "111"}}
    src.write_text(json.dumps({**line, "created_at": "[/x]\x1b[2J"}) + "\n"
                   + json.dumps({**line, "id": "2", "created_at": "2026-03-01T10:00:00Z"}) + "\n", encoding="utf-8")
    rc = asyncio.run(run_scan(_args([src]), Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer(SCORES)))
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    skipped = [x for x in captured.err.splitlines() if x.startswith("skipped:")]
    assert len(skipped) == 1 and "bad time" in skipped[0] and "[/x]" in skipped[0], captured.err
    assert "\x1b" not in captured.out + captured.err


def test_replay_prints_changed_messages_and_names_as_written(tmp_path, capsys):
    """A replay under a stricter policy newly flags a message whose text and author's name are markup and escape
    sequences: the replay finishes and its tables show them as written, with no ESC byte."""
    from tests.test_replay import STRICT, _policy, _scan
    from tests.test_replay import _args as replay_args

    rules = {"moron": {"insult": 0.6, "toxicity": 0.5}}
    src = tmp_path / "chat.jsonl"
    src.write_text("\n".join(json.dumps({
        "id": f"m{i}", "text": text, "created_at": f"2026-03-01T12:0{i}:00Z",
        "author": {"id": "u1", "name": "[/i]Mal\x1b[2J"}, "channel": {"id": "c1", "name": "[/u]general"}})
        for i, text in enumerate(("good morning", "what a moron [/b]\x1b]8;;https://evil.example\x07"))) + "\n",
        encoding="utf-8")
    settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers")
    assert _scan(replay_args([src]), settings, FakeScorer(rules)) == 0
    capsys.readouterr()
    strict = _policy(tmp_path, "strict.toml", STRICT)
    rc = _scan(replay_args([src], policy=[strict]), settings, FakeScorer(rules))
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "1 newly flagged" in captured.out
    assert "what a moron [/b]\ufffd]8;;https://evil.example\ufffd" in captured.out, captured.out
    assert "[/i]Mal\ufffd[2J" in captured.out and "[/u]general" in captured.out, captured.out
    assert "\x1b" not in captured.out + captured.err
