"""Store schema: migrations from empty and from version 1, idempotent re-open, refusal to downgrade."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

import pytest

from bot.core.errors import MigrationError, StoreRefused
from bot.store.schema import LATEST_VERSION, MIGRATIONS, connect, migrate, split_statements
from bot.store.sqlite import SqliteStore
from tests.store_factories import T0, make_record

TABLES = {
    "messages", "verdicts", "case_counters", "cases", "strikes", "review_items", "reports", "appeals",
    "policy_overrides", "policy_changes", "raids", "member_first_seen", "member_pseudonyms", "store_meta",
}  # fmt: skip


@contextlib.contextmanager
def _raw(path) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection that commits and closes on exit."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def test_migration_files_are_numbered_without_gaps():
    """Migration versions are exactly 1..N and the latest is what the code writes."""
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST_VERSION + 1))
    assert LATEST_VERSION >= 2


async def test_migrate_from_empty(tmp_path):
    """A new file is migrated to the latest version with every table and the strike uniqueness index."""
    path = tmp_path / "modlog.db"
    async with await SqliteStore.open(path) as store:
        assert await store.schema_version() == LATEST_VERSION
    with _raw(path) as raw:
        names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        indexes = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert TABLES <= names
    assert {"strikes_one_per_message", "appeals_one_open", "verdicts_judged", "review_queue"} <= indexes


async def test_reopen_is_idempotent(tmp_path):
    """Re-opening a current database changes neither the version nor the data."""
    path = tmp_path / "modlog.db"
    async with await SqliteStore.open(path) as store:
        await store.record_batch([make_record("m1", open_case=True)])
    for _ in range(2):
        async with await SqliteStore.open(path) as store:
            assert await store.schema_version() == LATEST_VERSION
            assert len(await store.known_messages([("discord", "g1", "m1")])) == 1
            assert [c.number for c in await store.list_cases("discord", "g1")] == [1]


async def test_migrate_from_version_1(tmp_path):
    """A version-1 file is upgraded in place; 0002 backfills first-seen times from existing messages."""
    path = tmp_path / "modlog.db"
    db = await connect(path)
    assert await migrate(db, target=1) == 1
    await db.close()
    with _raw(path) as raw:
        raw.executemany(
            "INSERT INTO messages (platform, server_id, message_id, channel_id, author_id, created_at) "
            "VALUES ('discord', 'g1', ?, 'c1', 'u1', ?)",
            [("old1", "2024-01-02T00:00:00.000000+00:00"), ("old2", "2024-01-01T00:00:00.000000+00:00")],
        )
        assert "member_first_seen" not in {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    async with await SqliteStore.open(path) as store:
        assert await store.schema_version() == LATEST_VERSION
        first = await store.first_seen("discord", "g1", "u1")
        [res] = await store.record_batch([make_record("m1", author="u1", created=T0)])
        assert res.inserted
        assert await store.first_seen("discord", "g1", "u1") == first
    assert first is not None and first.isoformat() == "2024-01-01T00:00:00+00:00"


async def test_newer_database_is_refused(tmp_path):
    """A file written by a newer version of the bot is not opened (no silent downgrade)."""
    path = tmp_path / "modlog.db"
    async with await SqliteStore.open(path):
        pass
    with _raw(path) as raw:
        raw.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    with pytest.raises(StoreRefused, match=f"{path}: schema version {LATEST_VERSION + 1} is newer"):
        await SqliteStore.open(path)


async def test_a_migration_failing_with_an_unmapped_error_raises_that_error(tmp_path):
    """A damaged version-1 mod log (its ``messages`` table gone) fails migration 0002 with SQLite's own error,
    re-raised as is (``map_error`` maps only busy / full / read-only / not-a-database), never a ``TypeError`` from
    raising ``None``; the file keeps version 1 (the failed migration was rolled back)."""
    path = tmp_path / "modlog.db"
    db = await connect(path)
    assert await migrate(db, target=1) == 1
    await db.close()
    with _raw(path) as raw:
        raw.execute("DROP TABLE messages")
    with pytest.raises(sqlite3.OperationalError, match="no such table: messages"):
        await SqliteStore.open(path)
    with _raw(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE TABLE a (x);\n-- comment\nCREATE TABLE b (y);\n", 2),
        ("CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  INSERT INTO b VALUES (1);\n  SELECT 1;\nEND;\n", 1),
        ("-- only a comment\n", 0),
    ],
)
def test_split_statements(sql, expected):
    """Migration scripts split into whole statements; trigger bodies stay in one piece."""
    assert len(split_statements(sql)) == expected


def test_split_statements_rejects_unterminated():
    """A statement without its final semicolon is an error, not silently dropped."""
    with pytest.raises(MigrationError, match="incomplete"):
        split_statements("CREATE TABLE a (x);\nCREATE TABLE b (y)\n")


async def test_migration_7_lets_a_message_have_no_time_and_keeps_every_row_and_reference(tmp_path):
    """A version-6 mod log (``messages.created_at NOT NULL``, so a JSON line without a time was stored as
    1970-01-01) is rebuilt by 0007 with the column nullable: its messages, their verdicts' and cases' references
    and the indexes stay; foreign keys are on again after it on the connection that ran it; a message without a time is then stored as NULL."""
    from bot.core.models import ChannelRef, MemberRef, Message, ServerRef, Verdict
    from bot.core.ports import VerdictRecord

    path = tmp_path / "modlog.db"
    db = await connect(path)
    assert await migrate(db, target=6) == 6
    await db.close()
    with _raw(path) as raw:
        raw.execute("INSERT INTO messages (platform, server_id, message_id, channel_id, author_id, created_at, excerpt) "
                    "VALUES ('discord', 'g1', 'old', 'c1', 'u1', '2024-01-02T00:00:00.000000+00:00', 'old text')")
        raw.execute("INSERT INTO verdicts (platform, server_id, message_id, member_id, channel_id, judged_at) VALUES "
                    "('discord', 'g1', 'old', 'u1', 'c1', '2024-01-02T00:00:01.000000+00:00')")
        with pytest.raises(sqlite3.IntegrityError):  # version 6: no message without a time
            raw.execute("INSERT INTO messages (platform, server_id, message_id, channel_id, author_id) "
                        "VALUES ('discord', 'g1', 'x', 'c1', 'u1')")
    async with await SqliteStore.open(path) as store:
        assert await store.schema_version() == LATEST_VERSION
        async with store._db.execute("PRAGMA foreign_keys") as cur:  # the connection that migrated: on again
            row = await cur.fetchone()
        assert row is not None and row[0] == 1
        assert (await store.message_excerpt("discord", "g1", "old")) == ("c1", "old text")
        assert await store.get_verdict("discord", "g1", "old") is not None
        untimed = Message(server=ServerRef("discord", "g1"), channel=ChannelRef("c1"), author=MemberRef("u2"),
                          id="untimed", text="no time", created_at=None)
        [res] = await store.record_batch([VerdictRecord(verdict=Verdict(message=untimed, scores=None),
                                                        excerpt="no time")])
        assert res.inserted
        assert await store.first_seen("discord", "g1", "u2") is None  # an untimed message dates nobody
    with _raw(path) as raw:
        assert raw.execute("SELECT created_at FROM messages WHERE message_id = 'untimed'").fetchone() == (None,)
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
        indexes = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'messages'")}
        assert {"messages_author", "messages_with_text"} <= indexes
        refs = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'verdicts'").fetchone()[0]
        assert "REFERENCES messages " in refs and "messages_0007" not in refs
