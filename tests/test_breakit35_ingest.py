"""Breaker round 35 on the chat-export readers: each test is one defect found and fixed."""

from __future__ import annotations

import csv
import json
import shutil
import tracemalloc
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.ingest import IngestError, iter_discord_csv, read_messages

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SLACK = Path(__file__).parent / "fixtures" / "slack"


def test_a_folder_holding_a_slack_export_folder_and_zip_reads_both_as_slack_exports(tmp_path):
    """``scan examples`` (a folder holding ``discord/`` and the Slack export ``slack/``) read the Discord file and
    silently skipped every Slack day file one by one (each is no export on its own): 31 of 59 messages were lost
    without a word. A Slack export zip inside the folder was skipped the same way."""
    whole = read_messages([EXAMPLES])
    parts = read_messages([EXAMPLES / "discord", EXAMPLES / "slack"])
    assert len(parts) == 59
    assert sorted(m.key for m in whole) == sorted(m.key for m in parts)

    root = tmp_path / "exports"
    shutil.copytree(EXAMPLES / "discord", root / "discord")
    with zipfile.ZipFile(root / "workspace.zip", "w") as zf:
        for f in sorted(SLACK.rglob("*.json")):
            zf.write(f, f.relative_to(SLACK).as_posix())
    errors: list[IngestError] = []
    got = read_messages([root], errors=errors)
    want = read_messages([EXAMPLES / "discord", SLACK])
    assert errors == []
    assert sorted(m.key for m in got) == sorted(m.key for m in want)
    assert any(m.server.platform == "export" and m.id.startswith("C") for m in got)  # the Slack messages are in


def test_a_link_to_a_folder_above_does_not_loop(tmp_path):
    """Links to folders are not followed in a folder walk (as before), so a link back up cannot loop."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "up").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "a" / "chat.jsonl").write_text(json.dumps({"id": "1", "text": "hi"}) + "\n", encoding="utf-8")
    assert [m.id for m in read_messages([tmp_path])] == ["1"]


def _csv_export(path: Path, n: int) -> Path:
    """A DCE CSV of ``n`` distinct rows by 40 members, 20 a minute (minute dates, as DCE 2019 writes them)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["AuthorID", "Author", "Date", "Content", "Attachments", "Reactions"])
        for i in range(n):
            date = (datetime(2024, 3, 1, tzinfo=UTC) + timedelta(minutes=i // 20)).strftime("%Y-%m-%d %H:%M")
            w.writerow([str(900 + i % 40), f"m{i % 40}", date, f"message {i} " + "x" * 200, "", ""])
    return path


def _csv_peak(path: Path) -> tuple[int, int]:
    tracemalloc.start()
    try:
        n = sum(1 for _ in iter_discord_csv(path))
        return n, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_a_dce_csv_holds_no_row_text_per_row(tmp_path):
    """The CSV reader kept every row's content (to number identical rows) for the whole file: 4x the rows peaked
    at about 4x the memory (2.4 MiB at 5,000 rows, 9.2 MiB at 20,000), so a large CSV export grew the scan with
    its size. Identical rows share their date, so only the recent dates are remembered now."""
    small_n, small = _csv_peak(_csv_export(tmp_path / "small.csv", 5_000))
    large_n, large = _csv_peak(_csv_export(tmp_path / "large.csv", 20_000))
    assert (small_n, large_n) == (5_000, 20_000)
    assert large / small < 1.5, f"peak {small / 2**20:.1f} MiB -> {large / 2**20:.1f} MiB"


def test_identical_csv_rows_still_get_distinct_stable_ids(tmp_path):
    """Identical rows (same author, minute and text) are still numbered apart, and ids do not change across reads."""
    path = tmp_path / "chat.csv"
    rows = [["1", "a", "2024-03-01 10:00", "hi"]] * 3 + [["1", "a", "2024-03-01 10:01", "hi"]] * 2
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["AuthorID", "Author", "Date", "Content"])
        w.writerows(rows)
    ids = [m.id for m in iter_discord_csv(path)]
    assert len(set(ids)) == 5
    assert ids == [m.id for m in iter_discord_csv(path)]


def test_a_slack_zip_with_backslash_separators_reads_like_the_folder(tmp_path):
    """A Slack export zipped on Windows by a tool that writes ``general\\2026-01-01.json`` (Windows PowerShell 5.1's
    ``Compress-Archive``) read as no day file at all, and no error: zero messages, the workspace silently lost (with
    a top folder, ``export\\users.json``, it was not even recognised as a Slack export)."""
    want = sorted(m.key[2] for m in read_messages([SLACK]))
    for top in ("", "export\\"):
        zpath = tmp_path / f"windows{len(top)}.zip"
        with zipfile.ZipFile(zpath, "w") as zf:
            for f in sorted(SLACK.rglob("*.json")):
                zf.write(f, top + str(f.relative_to(SLACK)).replace("/", "\\"))
        errors: list[IngestError] = []
        assert sorted(m.key[2] for m in read_messages([zpath], errors=errors)) == want
        assert errors == []


def test_a_slack_zip_holding_a_day_file_twice_says_so_naming_the_member(tmp_path):
    """A zip that holds one name twice (a zip appended to) silently read only the last member of that name: the
    first one's messages were lost without a word. It is now one error naming the member; with ``stop`` it stops."""
    zpath = tmp_path / "appended.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for f in sorted(SLACK.rglob("*.json")):
            zf.write(f, f.relative_to(SLACK).as_posix())
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("general/2026-01-01.json", json.dumps([{"ts": "1767225999.000000", "user": "U1",
                                                                 "text": "a later copy"}]))
    errors: list[IngestError] = []
    got = read_messages([zpath], errors=errors)
    assert "a later copy" in [m.text for m in got]
    assert [(e.path, e.position) for e in errors] == [(zpath / "general" / "2026-01-01.json", "")]
    assert "2 members of this name" in errors[0].reason
    with pytest.raises(IngestError, match="2026-01-01.json: the zip holds 2 members"):
        read_messages([zpath], on_error="stop")
