"""``scan --out``: the verdicts file holds members' message text, so it is written as the report page and the
backup are: owner-only when new, and whole or not at all. Real exports on ``tmp_path``, the real ``run_scan`` job
with a real SQLite mod log; the scorer is the suite's keyword FakeScorer."""

from __future__ import annotations

import os

from tests.fakes import FakeScorer
from tests.test_replay import RULES, _args, _export, _rows, _scan, settings  # noqa: F401 - the fixture


def test_scan_out_is_created_owner_only_under_a_permissive_umask(tmp_path, settings):  # noqa: F811
    """A new ``--out`` is mode 0600 whatever the umask (022 here, the usual one): it quotes every member's message
    text (the first 1,000 characters), as the report page does. It was created 0644, readable by every local user."""
    src, out = _export(tmp_path), tmp_path / "runs" / "verdicts.jsonl"
    old = os.umask(0o022)
    try:
        assert _scan(_args([src], out=out), settings, FakeScorer(RULES)) == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o600
    assert _rows(out)["m2"]["text"] == "you are an idiot"
    assert [p.name for p in out.parent.iterdir()] == ["verdicts.jsonl"]  # no temporary file left beside it


def test_scan_out_that_exists_keeps_its_mode_when_rewritten(tmp_path, settings):  # noqa: F811
    """An ``--out`` an admin opened to a group (0640) keeps that mode when a later scan rewrites it."""
    src, out = _export(tmp_path), tmp_path / "verdicts.jsonl"
    out.write_text("", encoding="utf-8")
    out.chmod(0o640)
    assert _scan(_args([src], out=out), settings, FakeScorer(RULES)) == 0
    assert out.stat().st_mode & 0o777 == 0o640
    assert len(_rows(out)) == 6


def test_a_scan_that_stops_with_an_error_leaves_the_previous_out_whole(tmp_path, settings):  # noqa: F811
    """A scan that stops (its scorer fails on a message: exit 2) leaves the previous ``--out`` as it was, and no
    temporary file. It truncated ``--out`` at start and stopped half-way, so the earlier run's verdicts were lost
    and the file under the final name held only the rows written before the failure (none here), which read as
    a complete scan."""
    src, out = _export(tmp_path), tmp_path / "verdicts.jsonl"
    assert _scan(_args([src], out=out), settings, FakeScorer(RULES)) == 0
    before = out.read_bytes()
    assert len(_rows(out)) == 6
    (tmp_path / "mod.db").unlink()  # judge everything again: the second scan calls the scorer, which fails
    for extra in ("mod.db-wal", "mod.db-shm"):
        (tmp_path / extra).unlink(missing_ok=True)
    assert _scan(_args([src], out=out), settings, FakeScorer(RULES, fail_on="moron")) == 2
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_failed_first_scan_leaves_no_out_file(tmp_path, settings):  # noqa: F811
    """A first scan that stops with an error leaves no ``--out`` at all: no partial file under the final name."""
    src, out = _export(tmp_path), tmp_path / "verdicts.jsonl"
    assert _scan(_args([src], out=out), settings, FakeScorer(RULES, fail_on="moron")) == 2
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
