"""The mod log under faults: raids committed with their batch, two writers on one file, refused and busy databases,
backups before migrations, and the CLI's one-line errors (SQLite; the same behaviour on PostgreSQL is the contract
suite's job)."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.errors import StoreBusy, StoreRefused
from bot.core.models import ActionKind, RaidAlert, Strike
from bot.store import describe, open_store
from bot.store.schema import LATEST_VERSION, connect, migrate
from bot.store.sqlite import SqliteStore
from tests.store_factories import STRIKE_TTL, T0, make_record

BURST = RaidAlert("g1", "c1", T0, ("u1", "u2", "u3"), 12, "flagged_burst")


def _with_raid(message_id: str, raid: RaidAlert = BURST, **kw):
    return dataclasses.replace(make_record(message_id, **kw), raid=raid)


async def test_raid_is_committed_with_its_batch(tmp_path):
    """A record's raid is written by record_batch itself: its id comes back and the raid is listed."""
    async with await SqliteStore.open(tmp_path / "m.db") as store:
        [plain, raised] = await store.record_batch([make_record("m1"), _with_raid("m2")])
        assert plain.raid_id is None and raised.raid_id is not None
        assert await store.list_raids("discord", "g1") == [BURST]
        stored = await store.get_raid("discord", "g1", raised.raid_id)
        assert stored is not None and stored.count == 12


async def test_failed_batch_leaves_neither_verdicts_nor_raid(tmp_path):
    """A failure inside the batch transaction rolls back the verdicts and the raid together."""
    bad = dataclasses.replace(
        make_record("m2"), strike=Strike("other-server", "u1", 1, T0, T0 + STRIKE_TTL, "auto"))
    async with await SqliteStore.open(tmp_path / "m.db") as store:
        with pytest.raises(ValueError, match="strike for server"):
            await store.record_batch([_with_raid("m1"), bad])
        assert await store.known_messages([("discord", "g1", "m1"), ("discord", "g1", "m2")]) == {}
        assert await store.list_raids("discord", "g1") == []
        [res] = await store.record_batch([_with_raid("m1")])  # the retry records both
        assert res.inserted and res.raid_id is not None
        assert len(await store.list_raids("discord", "g1")) == 1


async def test_two_writers_record_one_raid(tmp_path):
    """Two connections raising the same burst at once (each with its own message) record one raid between them."""
    path = tmp_path / "m.db"
    a, b = await SqliteStore.open(path), await SqliteStore.open(path)
    try:
        results = await asyncio.gather(a.record_batch([_with_raid("ma")]), b.record_batch([_with_raid("mb")]))
        ids = [r.raid_id for [r] in results]
        assert sorted(i is None for i in ids) == [False, True]
        assert all(r.inserted for [r] in results)
        assert len(await a.list_raids("discord", "g1")) == 1
    finally:
        await a.close()
        await b.close()


async def test_two_writers_one_verdict_per_message_and_gap_free_cases(tmp_path):
    """Two connections recording the same 40 flagged messages at once: each message once, cases 1..40."""
    path = tmp_path / "m.db"
    a, b = await SqliteStore.open(path), await SqliteStore.open(path)
    records = [make_record(f"m{i:03d}", open_case=True) for i in range(40)]
    try:
        results = await asyncio.gather(*(s.record_batch(records[i:i + 5]) for s in (a, b)
                                         for i in range(0, 40, 5)))
        inserted = [r for batch in results for r in batch if r.inserted]
        assert len(inserted) == 40
        assert sorted(r.case_number or 0 for r in inserted) == list(range(1, 41))
    finally:
        await a.close()
        await b.close()


async def test_two_writers_open_cases_gap_free(tmp_path):
    """Moderator cases opened from two connections at once get unique, gap-free numbers."""
    path = tmp_path / "m.db"
    a, b = await SqliteStore.open(path), await SqliteStore.open(path)
    try:
        cases = await asyncio.gather(*(s.open_case("discord", "g1", f"u{i}", ActionKind.WARN, "r")
                                       for i in range(25) for s in (a, b)))
        assert sorted(c.number for c in cases) == list(range(1, 51))
    finally:
        await a.close()
        await b.close()


async def test_migration_folds_duplicate_raids(tmp_path):
    """Migration 0006 keeps the first of raids recorded twice (the old bug) and points raid mode at it."""
    path = tmp_path / "m.db"
    db = await connect(path)
    await migrate(db, target=5)
    for _ in range(2):
        await db.execute("INSERT INTO raids (platform, server_id, channel_id, started_at, members, count, reason, "
                         "recorded_at) VALUES ('discord', 'g1', 'c1', '2024-05-01T12:00:00.000000+00:00', '[]', 9, "
                         "'flagged_burst', '2024-05-01T12:00:00.000000+00:00')")
    await db.execute("INSERT INTO raid_modes (platform, server_id, channel_id, until, slowmode_s, raid_id, started_at) "
                     "VALUES ('discord', 'g1', 'c1', NULL, 30, 2, '2024-05-01T12:00:00.000000+00:00')")
    await db.close()
    async with await SqliteStore.open(path) as store:
        assert len(await store.list_raids("discord", "g1")) == 1
        [mode] = await store.raid_modes("discord")
        assert mode.raid_id == 1


async def test_write_locked_past_busy_timeout_is_store_busy(tmp_path, short_busy_timeout):
    """A write lock held by another process past busy_timeout raises StoreBusy and writes nothing (the timeout is
    the short one of the fixture: what is checked is what happens past it)."""
    path = tmp_path / "m.db"
    async with await SqliteStore.open(path) as store:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreBusy, match=str(path.resolve())):
                await store.record_batch([make_record("m1")])
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert await store.known_messages([("discord", "g1", "m1")]) == {}
        [res] = await store.record_batch([make_record("m1")])
        assert res.inserted


@pytest.fixture
def short_empty_file_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 0-byte mod log is watched 0.2 s for another process filling it instead of ``EMPTY_FILE_WAIT_S`` (2 s):
    for the tests of a file that stays empty, which would only wait the watch out. Every other test keeps the
    2 s (two bots starting on one new file, ``tests/discord/test_shards_wire.py``, may meet the watch)."""
    monkeypatch.setattr("bot.store.sqlite.EMPTY_FILE_WAIT_S", 0.2)


async def test_empty_file_is_refused_and_left_alone(tmp_path, short_empty_file_wait):
    """A 0-byte file is never turned into a mod log: StoreRefused naming it, and it stays 0 bytes."""
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with pytest.raises(StoreRefused, match="0-byte"):
        await open_store(path)
    assert path.stat().st_size == 0


async def test_foreign_sqlite_file_is_refused(tmp_path):
    """A SQLite file holding another application's tables is refused and not migrated."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    with pytest.raises(StoreRefused, match="another application"):
        await open_store(path)
    with sqlite3.connect(path) as raw:
        assert [r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["invoices"]


async def test_not_a_database_is_refused(tmp_path):
    """A file that is not SQLite at all is refused with StoreRefused naming the file."""
    path = tmp_path / "notes.db"
    path.write_text("just some notes\n" * 100)
    with pytest.raises(StoreRefused, match=str(path.resolve())):
        await open_store(path)


async def test_missing_file_is_refused_without_create(tmp_path):
    """open_store(create=False) refuses a missing file and creates nothing."""
    path = tmp_path / "typo.db"
    with pytest.raises(StoreRefused, match="no such database"):
        await open_store(path, create=False)
    assert not path.exists()


async def test_backup_before_migration(tmp_path):
    """Opening a version-5 mod log backs it up (at version 5, with its records) before migrating it."""
    path = tmp_path / "m.db"
    db = await connect(path)
    await migrate(db, target=5)
    await db.execute("INSERT INTO messages (platform, server_id, message_id, channel_id, author_id, created_at) "
                     "VALUES ('discord', 'g1', 'old', 'c1', 'u1', '2024-01-01T00:00:00.000000+00:00')")
    await db.close()
    async with await SqliteStore.open(path) as store:
        assert await store.schema_version() == LATEST_VERSION
    [copy] = list(tmp_path.glob("m.db.bak-5-*"))
    raw = sqlite3.connect(copy)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 5
        assert raw.execute("SELECT message_id FROM messages").fetchall() == [("old",)]
    finally:
        raw.close()
    async with await SqliteStore.open(path):  # already current: no second backup
        pass
    assert len(list(tmp_path.glob("m.db.bak-*"))) == 1


def test_cli_backup_copies_the_mod_log(tmp_path, capsys):
    """``python -m bot backup --db X --out Y`` writes a copy holding the same verdicts."""
    path, out = tmp_path / "m.db", tmp_path / "copy.db"

    async def fill() -> None:
        async with await SqliteStore.open(path) as store:
            await store.record_batch([make_record("m1"), make_record("m2")])

    asyncio.run(fill())
    assert main(["backup", "--db", str(path), "--out", str(out)]) == 0
    assert str(out.resolve()) in capsys.readouterr().out
    with sqlite3.connect(out) as raw:
        assert raw.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 2


def test_cli_backup_is_owner_only_and_never_overwrites_or_blames_the_mod_log(tmp_path, capsys):
    """The copy holds members' message text: it is created mode 0600. A second backup to the same name, or one into
    a folder that does not exist, exits 2 with one line naming the backup (not "cannot be used as the mod-log
    database"), and the existing copy and the mod log are untouched."""
    path, out = tmp_path / "m.db", tmp_path / "copy.db"

    async def fill() -> None:
        async with await SqliteStore.open(path) as store:
            await store.record_batch([make_record("m1")])

    asyncio.run(fill())
    assert main(["backup", "--db", str(path), "--out", str(out)]) == 0
    capsys.readouterr()
    assert out.stat().st_mode & 0o777 == 0o600
    before = out.read_bytes()
    assert main(["backup", "--db", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: backup of {path.resolve()} to {out.resolve()} failed: {out.resolve()} already exists; "
                   "not overwritten (choose another name)"]  # said once: no "failed: backup failed:"
    assert "mod-log database" not in err[0] and out.read_bytes() == before
    missing = tmp_path / "no-such-folder" / "copy.db"
    assert main(["backup", "--db", str(path), "--out", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0] and str(missing.parent) in err[0]
    assert not missing.parent.exists()


def test_a_backup_that_fails_half_way_leaves_no_file_behind(tmp_path):
    """A backup that cannot be written whole (a full disk; here the process's file-size limit, ``ulimit -f``, which
    fails the write as a full disk does) exits 2 and leaves nothing at --out. It left the file it had created (0
    bytes or torn) under the backup's name: a daily backup's name held an empty "mod log" that opens as a valid
    empty database (a restore from it starts the bot with no cases, strikes or review queue), and the rerun that
    day was refused as "already exists"."""
    import os
    import resource
    import signal
    import subprocess
    import sys

    path, out = tmp_path / "m.db", tmp_path / "modlog-2026-12-01.db"

    async def fill() -> None:
        async with await SqliteStore.open(path) as store:
            await store.record_batch([make_record(f"m{i}", text="words " * 200) for i in range(300)])

    asyncio.run(fill())
    assert path.stat().st_size > 400_000

    def limit_file_size() -> None:  # in the child: a write past 200 kB fails with EFBIG instead of a signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    run = subprocess.run([sys.executable, "-m", "bot", "backup", "--db", str(path), "--out", str(out)],
                         preexec_fn=limit_file_size, capture_output=True, text=True, check=False,
                         cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"error: backup of {path.resolve()} to {out.resolve()} failed: ")
    assert not out.exists()
    assert main(["backup", "--db", str(path), "--out", str(out)]) == 0  # the same name, once there is room
    with sqlite3.connect(out) as raw:
        assert raw.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 300


@pytest.mark.parametrize("command", [["purge", "--days", "30"], ["backup"]])
def test_cli_refuses_empty_file_in_one_line(tmp_path, capsys, command, short_empty_file_wait):
    """purge and backup on a 0-byte file: exit 2, one line naming the file, the file untouched."""
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    assert main([command[0], "--db", str(path), *command[1:]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path.resolve()) in err[0] and "0-byte" in err[0]
    assert path.stat().st_size == 0


def test_cli_refuses_newer_schema_in_one_line(tmp_path, capsys):
    """A mod log from a newer version: ``purge`` says so in one line and exits 2 (no traceback)."""
    path = tmp_path / "m.db"
    asyncio.run(_create(path))
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    assert main(["purge", "--db", str(path), "--days", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "newer than this code" in err[0] and str(path.resolve()) in err[0]


def test_cli_postgres_url_hides_password(capsys):
    """A PostgreSQL URL named in an error never shows its password."""
    assert main(["purge", "--db", "postgresql://mod:s3cret@127.0.0.1:1/modlog", "--days", "30"]) == 2
    err = capsys.readouterr().err
    assert "s3cret" not in err and "postgresql://mod:***@127.0.0.1:1/modlog" in err


def test_describe_hides_password_and_resolves_paths(tmp_path):
    """describe: absolute paths for files, ``***`` for a URL's password."""
    assert describe("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert describe("postgresql://h/db") == "postgresql://h/db"
    assert describe(Path("rel.db")) == str(Path("rel.db").resolve())


async def _create(path: Path) -> None:
    async with await SqliteStore.open(path):
        pass




def test_scan_prints_the_absolute_database_location(tmp_path, capsys, monkeypatch):
    """scan prints ``mod log: <absolute path>`` once on stderr when the store opens (a relative --db resolved),
    before the model loads (here it cannot: exit 2)."""
    from tests.test_cli import NO_MODEL

    export = tmp_path / "chat.jsonl"
    export.write_text('{"id": "1", "text": "hello", "author": "a", "created_at": "2024-01-01T00:00:00Z"}\n')
    monkeypatch.chdir(tmp_path)
    assert main([*NO_MODEL, "scan", str(export), "--db", "rel.db", "--no-progress"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines.count(f"mod log: {tmp_path.resolve() / 'rel.db'}") == 1
    assert any("could not be loaded" in ln for ln in lines)


async def test_full_disk_is_refused_and_keeps_what_was_recorded(tmp_path):
    """A write past the disk's end (SQLITE_FULL, here a page limit) raises StoreRefused; earlier records stay."""
    async with await SqliteStore.open(tmp_path / "m.db") as store:
        await store.record_batch([make_record("kept")])
        db = store._db  # noqa: SLF001 - the page limit is per connection: this one plays the full disk
        async with db.execute("PRAGMA page_count") as cur:
            row = await cur.fetchone()
        assert row is not None
        [pages] = row
        await db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreRefused, match="full"):
            await store.record_batch([make_record(f"m{i}", text="x" * 4000) for i in range(50)])
        found = await store.known_messages([("discord", "g1", "kept"), ("discord", "g1", "m0")])
        assert list(found) == [("discord", "g1", "kept")]


@pytest.mark.postgres
def test_backup_of_a_postgresql_mod_log_names_the_database_once_and_pg_dump(pg_url, capsys):
    """``backup --db postgresql://...`` is refused with the command to use; the line said "backup of URL to URL
    failed", as if a copy had been begun onto the database itself."""
    async def create() -> str:
        store = await open_store(pg_url)
        try:
            return store.location
        finally:
            await store.close()

    location = asyncio.run(create())
    assert main(["backup", "--db", pg_url]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: backup of {location} failed: ") and " to " not in line.split(" failed: ")[0]
    assert "pg_dump --format=custom" in line
