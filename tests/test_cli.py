"""Command-line behaviour that needs no model: policy check, bad input, retention purge."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.cli import main
from bot.core.models import ChannelRef, MemberRef, Message, ServerRef, Verdict
from bot.core.ports import VerdictRecord
from bot.store.sqlite import SqliteStore


def test_policy_check_prints_effective_policy(capsys, tmp_path):
    """policy check FILE prints the merged policy (the file's value wins) and its version."""
    f = tmp_path / "srv.toml"
    f.write_text("[thresholds]\nthreat = { review = 0.4 }\n", encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["policy"]["thresholds"]["threat"]["review"] == 0.4
    assert doc["policy"]["thresholds"]["toxicity"]["review"] is not None
    assert len(doc["version"]) == 12


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[label_actions]\nthreat = { action = \"timeout\", duration_s = 3456000 }\n", "label_actions.threat.duration_s"),
        ("[thresholds]\ninsult = { review = 1.5 }\n", "thresholds.insult.review"),
        ("[sever]\nreview_channel = \"1\"\n", "sever: unknown key"),
    ],
)
def test_policy_check_refuses_bad_file_naming_key(capsys, tmp_path, text, needle):
    """A bad policy exits 2 with a message naming the file and the key."""
    f = tmp_path / "bad.toml"
    f.write_text(text, encoding="utf-8")
    assert main(["policy", "check", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and needle in err


def test_scan_with_bad_policy_fails_before_loading_anything(capsys, tmp_path):
    """scan refuses an invalid --policy with exit code 2 and records nothing."""
    f = tmp_path / "bad.toml"
    f.write_text("shadow_mode = \"sometimes\"\n", encoding="utf-8")
    db = tmp_path / "mod.db"
    assert main(["scan", str(tmp_path), "--policy", str(f), "--db", str(db), "--no-progress"]) == 2
    assert "shadow_mode" in capsys.readouterr().err
    assert not db.exists()


def test_purge_erases_old_text_but_keeps_verdicts(tmp_path, capsys):
    """purge --days N erases message text older than N days; the verdict stays."""
    db = tmp_path / "mod.db"
    old = datetime.now(UTC) - timedelta(days=40)
    new = datetime.now(UTC) - timedelta(days=1)

    async def seed() -> None:
        async with await SqliteStore.open(db) as store:
            recs = []
            for mid, at in (("old", old), ("new", new)):
                m = Message(server=ServerRef("discord", "g"), channel=ChannelRef(id="c"), author=MemberRef(id="u"),
                            id=mid, text=f"{mid} text", created_at=at)
                recs.append(VerdictRecord(verdict=Verdict(message=m, scores=None), excerpt=m.text))
            await store.record_batch(recs)

    async def check() -> tuple[object, object]:
        async with await SqliteStore.open(db) as store:
            return (await store.get_verdict("discord", "g", "old"), await store.member_record("discord", "g", "u"))

    asyncio.run(seed())
    assert main(["purge", "--db", str(db), "--days", "30"]) == 0
    assert "purged the text of 1 messages" in capsys.readouterr().out
    verdict, record = asyncio.run(check())
    assert verdict is not None
    texts = json.dumps(record)
    assert "old text" not in texts and "new text" in texts


@pytest.mark.parametrize("kind", ["not a database", "a folder"])
def test_unusable_db_is_a_clear_error_not_a_traceback(tmp_path, capsys, kind):
    """--db pointing at a non-SQLite file or at a folder exits with status 2 and names the path; the file is left
    as it was."""
    if kind == "a folder":
        db = tmp_path / "dbdir"
        db.mkdir()
    else:
        db = tmp_path / "notes.db"
        db.write_text("these are my notes, not a database\n" * 20, encoding="utf-8")
    before = db.read_bytes() if db.is_file() else None
    assert main(["purge", "--db", str(db), "--days", "30"]) == 2
    err = capsys.readouterr().err
    assert str(db) in err and "cannot be used as the mod-log database" in err
    if before is not None:
        assert db.read_bytes() == before


@pytest.mark.parametrize("days", ["0", "99999999999"])
def test_purge_refuses_days_out_of_range(tmp_path, capsys, days):
    """purge --days outside 1..3650 (the policy's retention range) exits 2 with a reason, not an OverflowError."""
    assert main(["purge", "--db", str(tmp_path / "mod.db"), "--days", days]) == 2
    assert "between 1 and 3650" in capsys.readouterr().err
