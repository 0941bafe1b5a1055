"""Breaker round 35 on the chat-export readers: each test is one defect found and fixed."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from bot.ingest import IngestError, read_messages

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
