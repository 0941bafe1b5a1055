"""Connection setup, versioned migrations and value encoding of the SQLite mod log.

Schema versions live in ``PRAGMA user_version``. Migration files ``migrations/NNNN_name.sql`` are applied in
order, each in its own ``BEGIN IMMEDIATE`` transaction together with the ``user_version`` bump, so a crash during
a migration leaves the previous version intact.

Times are stored as ISO-8601 UTC text with microseconds and a ``+00:00`` offset
(``2024-05-01T12:00:00.000000+00:00``): fixed width, so SQL text comparison is time order. They are read back as
timezone-aware UTC datetimes. JSON columns hold compact JSON text.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import aiosqlite

from bot.core.errors import MigrationError, StoreBusy, StoreError, StoreRefused

log = logging.getLogger(__name__)

#: Milliseconds a connection waits on a lock held by another process before ``database is locked``.
BUSY_TIMEOUT_MS = 5000

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema migration: ``version`` (1-based, from the file name) and its SQL statements."""

    version: int
    name: str
    statements: tuple[str, ...]
    #: The file's first line is ``-- modbot: foreign_keys off``: it rebuilds a table other tables reference
    #: (SQLite's way to change a column's constraint), so it runs with foreign keys off and is checked with
    #: ``PRAGMA foreign_key_check`` before it commits.
    foreign_keys_off: bool = False


#: ``user:password@`` after a ``scheme:/`` or ``scheme://`` in a path that is really a mistyped URL.
_CREDENTIALS = re.compile(r"(?<=:/)(/?[^/:@]*):[^/@]*@")


def file_location(path: Path) -> str:
    """A SQLite file's location for people: its absolute path; a mistyped URL (``mysql://``,
    ``postgres+psycopg://``) read as a path keeps no ``user:password@`` (a Path folds ``//`` to ``/``)."""
    return _CREDENTIALS.sub(r"\1:***@", str(path.expanduser().resolve()))


def to_db_time(value: datetime) -> str:
    """Encode an aware datetime as fixed-width ISO-8601 UTC text. Raises ``ValueError`` for naive datetimes."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive datetime {value!r}: the store only accepts timezone-aware UTC datetimes")
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def opt_db_time(value: datetime | None) -> str | None:
    """:func:`to_db_time` that passes ``None`` through."""
    return None if value is None else to_db_time(value)


def from_db_time(value: str | None) -> datetime | None:
    """Decode a stored time into an aware UTC datetime (``None`` stays ``None``)."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def req_db_time(value: str) -> datetime:
    """:func:`from_db_time` for NOT NULL columns."""
    parsed = from_db_time(value)
    assert parsed is not None
    return parsed


def utcnow() -> datetime:
    """The current time, aware UTC."""
    return datetime.now(UTC)


def dump_json(value: Any) -> str:
    """Compact, key-sorted JSON text."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def load_json(value: str | None, default: Any = None) -> Any:
    """Parse JSON text (``default`` for ``NULL``)."""
    return default if value is None else json.loads(value)


def split_statements(sql: str) -> list[str]:
    """Split a migration script into complete statements (trigger bodies stay whole)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    rest = "\n".join(ln for ln in buffer.splitlines() if not ln.strip().startswith("--")).strip()
    if rest:
        raise MigrationError(f"incomplete SQL statement at end of migration: {rest[:80]!r}")
    return statements


#: First line of a migration that must run with foreign keys off (:attr:`Migration.foreign_keys_off`).
FOREIGN_KEYS_OFF = "-- modbot: foreign_keys off"


def load_migrations() -> tuple[Migration, ...]:
    """Read ``bot/store/migrations/NNNN_*.sql`` in version order.

    Raises:
        MigrationError: versions are not exactly 1, 2, 3, ... (a gap or duplicate).
    """
    folder = resources.files("bot.store") / "migrations"
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            text = entry.read_text("utf-8")
            found.append(Migration(int(match.group(1)), entry.name, tuple(split_statements(text)),
                                   foreign_keys_off=text.startswith(FOREIGN_KEYS_OFF)))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise MigrationError(f"migration versions must be 1..N without gaps, found {versions}")
    return tuple(found)


MIGRATIONS: tuple[Migration, ...] = load_migrations()
#: The schema version this code writes.
LATEST_VERSION: int = MIGRATIONS[-1].version


async def schema_version(db: aiosqlite.Connection) -> int:
    """The database's ``PRAGMA user_version`` (0 for a new file)."""
    async with db.execute("PRAGMA user_version") as cur:
        row = await cur.fetchone()
    return int(row[0]) if row else 0


class BackupExists(sqlite3.OperationalError):
    """The backup's file already exists (never overwritten)."""


async def backup_to_file(db: aiosqlite.Connection, target: Path) -> None:
    """Online copy of ``db`` into the file ``target`` with the sqlite3 backup API (page by page; other processes
    may keep writing, the copy is a consistent snapshot). The copy is created owner-only (mode 0600: it holds
    members' message text), never over an existing file; a copy that fails half-way is removed (nothing is left at
    ``target``).

    Raises:
        sqlite3.Error: the copy cannot be written; the message says why in words (folder missing, file exists).
    """
    if not target.parent.is_dir():
        raise sqlite3.OperationalError(f"the folder {target.parent} does not exist; create it first")
    try:  # O_EXCL: never overwrite, even when another backup races this one to the same name
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        raise BackupExists(f"{target} already exists; not overwritten (choose another name)") from None
    except OSError as exc:
        raise sqlite3.OperationalError(f"cannot create {target}: {exc.strerror}") from None
    try:
        dest = await aiosqlite.connect(target)
        try:
            await db.backup(dest)
            await dest.execute("PRAGMA journal_mode = DELETE")  # the copy is one self-contained file
        finally:
            await dest.close()
    except BaseException:
        # a copy that failed half-way (a full disk) is empty or torn: it must not lie there under the backup's
        # name, where it opens as a valid mod log (an empty one) and blocks the rerun ("already exists"); the file
        # was created above by this call (O_EXCL), so it is ours to remove, with its journal
        for leftover in (target, *(target.with_name(target.name + s) for s in ("-journal", "-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        raise


def backup_path(path: Path, version: int, now: datetime | None = None) -> Path:
    """Where the automatic backup before a migration goes: ``<db>.bak-<old version>-<UTC YYYYmmddTHHMMSSZ>``
    beside the database (e.g. ``modbot.db.bak-5-20261201T221500Z``)."""
    stamp = (now or utcnow()).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return path.with_name(f"{path.name}.bak-{version}-{stamp}")


#: SQLite result codes (``sqlite3.Error.sqlite_errorname``) that may pass when tried again.
TRANSIENT_CODES = frozenset({"SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY", "SQLITE_LOCKED",
                             "SQLITE_LOCKED_SHAREDCACHE", "SQLITE_BUSY_TIMEOUT"})
#: Result codes (by prefix) that retrying cannot fix: full disk, read-only, not a database, cannot open, corrupt.
REFUSED_PREFIXES = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_NOTADB", "SQLITE_CANTOPEN", "SQLITE_CORRUPT",
                    "SQLITE_IOERR", "SQLITE_PERM", "SQLITE_AUTH")


def map_error(where: str, exc: sqlite3.Error) -> StoreError | None:
    """The store error for a SQLite failure on ``where`` (the absolute file path): :class:`StoreBusy` for a lock
    held past ``busy_timeout``, :class:`StoreRefused` for a full disk, a read-only file, a file that is not a
    database; ``None`` for anything else (a constraint or programming error: re-raised as is)."""
    code = getattr(exc, "sqlite_errorname", None) or ""
    text = str(exc)
    if code in TRANSIENT_CODES or "database is locked" in text or "database is busy" in text:
        return StoreBusy(where, f"locked by another process for more than {BUSY_TIMEOUT_MS / 1000:g} s ({text})")
    if code.startswith(REFUSED_PREFIXES) or "readonly" in text or "disk is full" in text \
            or "not a database" in text or "unable to open" in text:
        return StoreRefused(where, text)
    return None


async def check_ours(db: aiosqlite.Connection, where: str) -> None:
    """Refuse a SQLite file that holds another application's tables: version 0 with tables, or a version whose
    ``cases`` and ``verdicts`` tables are missing.

    Raises:
        StoreRefused: not a mod log.
    """
    async with db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") as cur:
        tables = {str(r[0]) for r in await cur.fetchall()}
    version = await schema_version(db)
    if version == 0 and tables:
        raise StoreRefused(where, f"holds tables of another application ({', '.join(sorted(tables)[:5])}), "
                                  "not a mod log")
    if version > 0 and not {"cases", "verdicts"} <= tables:
        raise StoreRefused(where, f"has schema version {version} but no mod-log tables: not a mod log")


#: Copies of one version backed up in one second (two processes opening the mod log together) get ``-2``, ``-3``...
#: up to this many.
MAX_SAME_SECOND_BACKUPS = 20


async def _backup_before_migrating(db: aiosqlite.Connection, path: Path, version: int, where: str) -> None:
    """The backup of :func:`migrate`: ``<db>.bak-<version>-<UTC second>``, or ``-2``, ``-3``... after that name when
    another process opening the mod log at the same time (shards started together after an upgrade) took it in the
    same second (that name was refused, and with it the whole mod log). A copy holding another version than
    ``version`` (the other process migrated in between; its own backup, taken before, stands) is removed, so a
    backup's name never lies about its version.

    Raises:
        StoreRefused: the copy cannot be written.
    """
    first = backup_path(path, version)
    for n in range(1, MAX_SAME_SECOND_BACKUPS + 1):
        copy = first if n == 1 else first.with_name(f"{first.name}-{n}")
        try:
            await backup_to_file(db, copy)
        except BackupExists:
            if n < MAX_SAME_SECOND_BACKUPS:  # made by another process in the same second
                continue
            raise StoreRefused(where, f"backup before migrating failed ({copy}): it already exists") from None
        except sqlite3.Error as exc:
            raise StoreRefused(where, f"backup before migrating failed ({copy}): {exc}") from exc
        break
    async with aiosqlite.connect(copy) as check:
        copied = await schema_version(check)
    if copied != version:
        copy.unlink(missing_ok=True)
        log.info("another process migrated %s first (its backup stands); %s removed", where, copy)
        return
    log.warning("backed up %s (schema %d) to %s before migrating", where, version, copy)


async def migrate(db: aiosqlite.Connection, target: int = LATEST_VERSION, *, backup_to: Path | None = None,
                  where: str = "the mod log") -> int:
    """Apply pending migrations up to ``target``, each in one transaction; returns the resulting version.

    Safe to call on every open (no-op when current) and against another process migrating concurrently (the
    version is re-read under the write lock). When ``backup_to`` (the database file) is given and an existing mod
    log (version >= 1) is about to change version, an online backup goes to :func:`backup_path` first.

    Raises:
        StoreRefused: the database is newer than this code (refuses to downgrade), or the backup failed.
    """
    current = await schema_version(db)
    if current > LATEST_VERSION:
        raise StoreRefused(where, f"schema version {current} is newer than this code supports ({LATEST_VERSION}); "
                                  "upgrade the bot")
    if backup_to is not None and 1 <= current < min(target, LATEST_VERSION):
        await _backup_before_migrating(db, backup_to, current, where)
    for migration in MIGRATIONS:
        if migration.version > target:
            break
        if migration.version <= current:
            continue
        if migration.foreign_keys_off:  # only outside a transaction; back on below, whatever happens
            await db.execute("PRAGMA foreign_keys = OFF")
        await db.execute("BEGIN IMMEDIATE")
        try:
            if await schema_version(db) >= migration.version:  # another process got there first
                await db.execute("ROLLBACK")
                continue
            for statement in migration.statements:
                await db.execute(statement)
            if migration.foreign_keys_off:
                async with db.execute("PRAGMA foreign_key_check") as cur:
                    broken = list(await cur.fetchall())
                if broken:
                    raise MigrationError(f"{migration.name} left {len(broken)} foreign key violation(s), first in "
                                         f"table {broken[0][0]}; rolled back")
            await db.execute(f"PRAGMA user_version = {migration.version:d}")
            await db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                await db.execute("ROLLBACK")
            raise
        finally:
            if migration.foreign_keys_off:
                await db.execute("PRAGMA foreign_keys = ON")
        log.info("applied store migration %s", migration.name)
        current = migration.version
    return await schema_version(db)


async def connect(path: str | Path) -> aiosqlite.Connection:
    """Open (creating file and parent folders) a connection in autocommit mode with WAL, foreign keys and
    ``busy_timeout`` set. Transactions are managed explicitly with ``BEGIN IMMEDIATE``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():  # refused here: a failed aiosqlite connect leaves its worker thread behind (a traceback later)
        raise sqlite3.OperationalError(f"{path} is a folder, not a database file")
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        db.row_factory = aiosqlite.Row
        await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        async with db.execute("PRAGMA journal_mode = WAL") as cur:
            row = await cur.fetchone()
        if row is None or str(row[0]).lower() != "wal":
            log.warning("SQLite refused WAL mode for %s (journal_mode=%s)", path, row[0] if row else None)
        # NORMAL is crash-consistent in WAL mode: a killed process never corrupts, power loss may drop the
        # last commits.
        await db.execute("PRAGMA synchronous = NORMAL")
        await db.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        await db.close()
        raise
    return db
