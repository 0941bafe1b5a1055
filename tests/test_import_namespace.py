"""A JSONL history whose server object claims a live platform (``"platform": "discord"``) is scanned into the
offline ``export`` namespace: the live guild's cases, verdicts and messages stay as they were. Real ``run_scan``
over a file in ``tmp_path``, a real SQLite mod log (holding a live case first) and the test scorer."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from argparse import Namespace
from pathlib import Path

import pytest

from bot.core.models import ActionKind, CaseStatus
from bot.ingest.errors import ErrorSink
from bot.ingest.jsonl import iter_jsonl
from bot.jobs.scan import run_scan
from bot.settings import Settings
from bot.store import open_store
from tests.fakes import FakeScorer

SPAM = "buy cheap followers at example dot com now"


async def _live_case(db: Path, platform: str, server_id: str = "111") -> None:
    """One live warning (case #1) of member m1 in ``platform``/``server_id``."""
    store = await open_store(db)
    try:
        await store.open_case(platform, server_id, "m1", ActionKind.WARN, "live warning", moderator_id="mod",
                              status=CaseStatus.APPLIED)
    finally:
        await store.close()


@pytest.mark.parametrize("claim", ["discord", "slack"])
def test_a_history_claiming_a_live_platform_is_scanned_into_the_export_namespace(tmp_path: Path, claim: str):
    db = tmp_path / "m.db"
    asyncio.run(_live_case(db, claim))
    src = tmp_path / "history.jsonl"
    server = {"platform": claim, "id": "111", "name": "Real Guild"}
    rows = [{"id": str(i), "text": SPAM, "author": "spammer", "server": server,
             "created_at": f"2024-01-01T00:00:{i:02d}Z"} for i in range(12)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = Namespace(paths=[src], policy=[], out=tmp_path / "out.jsonl", report=None, format="auto",
                     on_error="skip", batch_size=16, no_progress=True)
    assert asyncio.run(run_scan(args, Settings(db_path=db), scorer=FakeScorer())) == 0
    con = sqlite3.connect(db)
    try:
        live = {t: con.execute(f"SELECT count(*) FROM {t} WHERE platform = ?", (claim,)).fetchone()[0]
                for t in ("cases", "verdicts", "messages", "strikes")}
        assert live == {"cases": 1, "verdicts": 0, "messages": 0, "strikes": 0}
        assert con.execute("SELECT number, reason FROM cases WHERE platform = ?", (claim,)).fetchall() == [
            (1, "live warning")]
        assert con.execute("SELECT count(*) FROM messages WHERE platform = 'export' AND server_id = '111'"
                           ).fetchone()[0] == 12
        assert con.execute("SELECT count(*) FROM cases WHERE platform = 'export'").fetchone()[0] > 0  # judged
    finally:
        con.close()


def test_the_reader_keeps_the_server_id_and_name_in_the_export_namespace(tmp_path: Path):
    p = tmp_path / "h.jsonl"
    p.write_text(json.dumps({"id": "1", "text": "hi", "server": {"platform": "discord", "id": 42, "name": "G"}})
                 + "\n", encoding="utf-8")
    (m,) = list(iter_jsonl(p, sink=ErrorSink("skip", [])))
    assert (m.server.platform, m.server.id, m.server.name) == ("export", "42", "G")


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_slack_export_with_a_team_id_does_not_write_into_the_live_workspace(tmp_path: Path):
    """The bundled Slack export names its workspace (T0HARBOR01): scanned next to the live mod log of that same
    workspace (one case #1), the live cases, case numbers, strikes and verdicts are untouched and the export's
    messages are recorded under ``export``."""
    db = tmp_path / "m.db"
    asyncio.run(_live_case(db, "slack", "T0HARBOR01"))
    args = Namespace(paths=[EXAMPLES / "slack"], policy=[], out=tmp_path / "out.jsonl", report=None,
                     format="auto", on_error="skip", batch_size=16, no_progress=True)
    assert asyncio.run(run_scan(args, Settings(db_path=db), scorer=FakeScorer())) == 0
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT number, reason FROM cases WHERE platform = 'slack'").fetchall() == [
            (1, "live warning")]
        assert [con.execute(f"SELECT count(*) FROM {t} WHERE platform = 'slack'").fetchone()[0]
                for t in ("verdicts", "messages", "strikes", "raids")] == [0, 0, 0, 0]
        assert con.execute("SELECT count(*) FROM messages WHERE platform = 'export' AND server_id = 'T0HARBOR01'"
                           ).fetchone()[0] > 0
    finally:
        con.close()


def test_a_slack_export_is_judged_by_its_workspaces_policy_file(tmp_path: Path):
    """``slack-<team id>.toml`` judges the export recorded as ``export/<team id>`` (an ``export-`` file wins)."""
    from bot.core.policy_registry import PolicyRegistry

    d = tmp_path / "servers"
    d.mkdir()
    for name in ("slack-T0HARBOR01", "slack-T0OTHER01", "export-T0OTHER01", "slack-chat"):
        (d / f"{name}.toml").write_text("", encoding="utf-8")
    reg = PolicyRegistry(servers_dir=d)
    assert reg.server_file("export", "T0HARBOR01") == d / "slack-T0HARBOR01.toml"
    assert reg.server_file("export", "T0OTHER01") == d / "export-T0OTHER01.toml"
    assert reg.server_file("export", "chat") is None  # a JSON lines file stem is not a team id


def test_an_enterprise_grid_export_is_judged_by_its_organization_s_policy_file(tmp_path: Path):
    """An Enterprise Grid organization's export is recorded under its ``E…`` id: ``slack-<E id>.toml`` judges it
    like a workspace's ``T…`` one (an ``export-`` file still wins)."""
    from bot.core.policy_registry import PolicyRegistry

    d = tmp_path / "servers"
    d.mkdir()
    for name in ("slack-E0GRID001", "slack-E0OTHER01", "export-E0OTHER01"):
        (d / f"{name}.toml").write_text("", encoding="utf-8")
    reg = PolicyRegistry(servers_dir=d)
    assert reg.server_file("export", "E0GRID001") == d / "slack-E0GRID001.toml"
    assert reg.server_file("export", "E0OTHER01") == d / "export-E0OTHER01.toml"
    assert reg.server_file("export", "E0NOFILE1") is None
