"""PostgreSQL backend of the mod log: the same SQL as SQLite (:class:`bot.store.sqlite.SqliteStore` and its
mixins) run through a small asyncpg connection wrapper, for several bot processes on one database.

Why this shape: the store's ~35 operations are written once, in portable SQL with ``?`` placeholders; the
wrapper (:class:`PgConnection`) gives them the slice of aiosqlite's API they use and rewrites the few dialect
differences (:func:`translate`: ``?`` -> ``$n``, ``BEGIN IMMEDIATE`` -> ``BEGIN``, ``RETURNING id`` for
``lastrowid``, ``json_each`` -> ``jsonb_array_elements_text``). asyncpg is the driver (the fastest maintained
asyncio PostgreSQL client, and what Red-DiscordBot's PostgreSQL driver uses); migrations are numbered plain-SQL
files in ``bot/store/pg_migrations`` applied each in one transaction with the ``schema_version`` bump, under a
transaction-level advisory lock so two processes starting at once migrate once.

One operation has its own PostgreSQL code, for speed: :meth:`PostgresStore.record_batch` writes a batch's messages
and verdicts set-based (:mod:`bot.store.pg_batch`: a few statements per batch instead of 4-8 round trips per
record) and only the written records' cases, review items, strikes and raids one by one, in one transaction, with
the same results as SQLite's (docs/scaling.md, "Measured").

Concurrency across processes (PostgreSQL's default READ COMMITTED): per-server case numbers come from
``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` on ``case_counters`` (the row lock serialises writers and the
number is rolled back with a failed batch: gap-free); a verdict is one per message key (``ON CONFLICT DO NOTHING``,
the loser is a duplicate); a raid is one per burst (unique index ``raids_burst``); an appeal is one open per case
(unique index ``appeals_one_open``: the loser is ``AppealAlreadyOpen``) and a report one per reporter and message
(``reports_once_per_reporter``: the loser gets the winner's review item); one reporter's reports about a member
(no message) share one open review item (a transaction-level advisory lock on reporter and member,
:meth:`PostgresStore._hold_key`: the second waits for the first's commit and reads its item).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Coroutine, Generator, Iterable, Sequence
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

import asyncpg

from bot.core.errors import StoreBusy, StoreError, StoreRefused, UnstorableValue
from bot.core.ports import RecordResult, VerdictRecord
from bot.store.pg_batch import write_verdicts
from bot.store.schema import Migration, to_db_time, utcnow
from bot.store.sqlite import SqliteStore

log = logging.getLogger(__name__)

#: Seconds to wait for the server when connecting.
CONNECT_TIMEOUT_S = 10.0
#: Key of the advisory lock taken by every migration transaction (any fixed 64-bit number; "modb" in ASCII).
MIGRATION_LOCK = 0x6D6F6462
#: First half of the two-key advisory locks :meth:`PostgresStore._hold_key` takes ("modr" in ASCII; PostgreSQL's
#: two-key locks never collide with the one-key :data:`MIGRATION_LOCK`).
KEY_LOCK_CLASS = 0x6D6F6472
#: Tables with an identity ``id`` column: an INSERT into them gets ``RETURNING id`` (the cursor's ``lastrowid``).
ID_TABLES = frozenset({"verdicts", "cases", "strikes", "review_items", "reports", "appeals", "policy_changes",
                       "raids"})

#: Tables ``record_batch`` writes and looks up by key (analyzed once when the planner has no statistics).
BATCH_TABLES = ("messages", "verdicts", "cases", "case_counters", "strikes", "review_items", "raids",
                "member_first_seen")

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_JSON_EACH = re.compile(r"json_each\((\w+(?:\.\w+)?)\)\s+(\w+)")


def key_digest(key: Iterable[str]) -> int:
    """A signed 32-bit digest of ``key``'s parts (the same in every process, unlike ``hash``); two keys sharing
    one only wait for each other needlessly."""
    digest = hashlib.blake2b("\x1f".join(key).encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> tuple[str, bool]:
    """The PostgreSQL text of one store statement, and whether it ends in an added ``RETURNING id``.

    ``?`` outside quotes becomes ``$1``, ``$2``...; ``BEGIN IMMEDIATE`` becomes ``BEGIN``;
    ``json_each(x) j`` becomes ``jsonb_array_elements_text(x::jsonb) AS j(value)``; an INSERT into one of
    :data:`ID_TABLES` without ``RETURNING`` gets ``RETURNING id``.
    """
    if sql.strip().upper() == "BEGIN IMMEDIATE":
        return "BEGIN", False
    out: list[str] = []
    n = 0
    quoted = False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if ch == "?" and not quoted:
            n += 1
            out.append(f"${n}")
        else:
            out.append(ch)
    text = _JSON_EACH.sub(r"jsonb_array_elements_text(\1::jsonb) AS \2(value)", "".join(out))
    match = _INSERT_INTO.match(text)
    returning = bool(match and match.group(1).lower() in ID_TABLES and "RETURNING" not in text.upper())
    if returning:
        text = f"{text.rstrip().rstrip(';')} RETURNING id"
    return text, returning


class PgCursor:
    """What a statement gave back: rows (``asyncpg.Record``: by name and by position), ``rowcount`` and, for an
    INSERT into an id table, ``lastrowid`` (``None`` when ``ON CONFLICT DO NOTHING`` inserted nothing)."""

    def __init__(self, rows: list[asyncpg.Record], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    async def fetchone(self) -> asyncpg.Record | None:
        """The first row, or ``None``."""
        return self._rows[0] if self._rows else None

    async def fetchall(self) -> list[asyncpg.Record]:
        """Every row."""
        return list(self._rows)

    async def close(self) -> None:
        """Nothing to release (rows are already fetched)."""


class _Statement:
    """``await conn.execute(...)`` or ``async with conn.execute(...) as cur``, as aiosqlite allows."""

    def __init__(self, run: Coroutine[Any, Any, PgCursor]) -> None:
        self._run = run

    def __await__(self) -> Generator[Any, None, PgCursor]:
        return self._run.__await__()

    async def __aenter__(self) -> PgCursor:
        return await self._run

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        return None


def _status_count(status: str) -> int:
    """Rows touched, from a command status (``"UPDATE 3"``, ``"INSERT 0 1"``, ``"DELETE 0"``); 0 otherwise."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


class PgConnection:
    """One asyncpg connection with the slice of aiosqlite's API the store's SQL uses."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on the connection."""
        return self.conn.is_in_transaction()

    def execute(self, sql: str, params: Iterable[Any] = ()) -> _Statement:
        """Run one statement (``?`` placeholders); awaitable, or an async context manager, giving a
        :class:`PgCursor`."""
        return _Statement(self._run(sql, tuple(params)))

    async def _run(self, sql: str, params: tuple[Any, ...]) -> PgCursor:
        text, returning = translate(sql)
        upper = text.lstrip().upper()
        if upper.startswith(("SELECT", "WITH")) or " RETURNING " in upper:
            rows = await self.conn.fetch(text, *params)
            return PgCursor(rows, len(rows), rows[0]["id"] if returning and rows else None)
        status = await (self.conn.execute(text, *params) if params else self.conn.execute(text))
        return PgCursor([], _status_count(status), None)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        text, _ = translate(sql)
        await self.conn.executemany(text, [tuple(r) for r in rows])

    async def close(self) -> None:
        """Close the connection."""
        await self.conn.close()


def load_pg_migrations() -> tuple[Migration, ...]:
    """``bot/store/pg_migrations/NNNN_*.sql`` in version order (each file one script, run as a whole).

    Raises:
        StoreError: versions are not exactly 1, 2, 3, ...
    """
    folder = resources.files("bot.store") / "pg_migrations"
    found = [Migration(int(m.group(1)), entry.name, (entry.read_text("utf-8"),))
             for entry in folder.iterdir() if (m := _MIGRATION_NAME.match(entry.name))]
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise StoreError(f"PostgreSQL migration versions must be 1..N without gaps, found {[m.version for m in found]}")
    return tuple(found)


PG_MIGRATIONS: tuple[Migration, ...] = load_pg_migrations()
#: The PostgreSQL schema version this code writes.
PG_LATEST_VERSION: int = PG_MIGRATIONS[-1].version

#: SQLSTATE classes/codes that may pass when tried again: connection exceptions (08), serialization failure,
#: deadlock, lock not available, admin/crash shutdown, cannot connect now, too many connections.
TRANSIENT_STATES = ("08", "40001", "40P01", "55P03", "57P01", "57P02", "57P03", "53300")
#: SQLSTATEs retrying cannot fix: disk full, out of memory... (53100 etc.), read-only transaction, insufficient
#: privilege, invalid password / authorization, unknown database.
REFUSED_STATES = ("53100", "25006", "42501", "28", "3D000")
#: SQLSTATEs of a value the database cannot hold, this write only: character not in repertoire (a NUL in text),
#: untranslatable character.
UNSTORABLE_STATES = ("22021", "22P05")


def map_pg_error(where: str, exc: BaseException) -> StoreError | None:
    """The store error for an asyncpg failure on ``where`` (URL, password hidden): :class:`StoreBusy` for a lost
    connection, serialization failure or deadlock, :class:`StoreRefused` for a full disk, read-only server,
    missing privilege or refused login, :class:`UnstorableValue` for a text the server cannot hold (a NUL);
    ``None`` otherwise (re-raised as is)."""
    if isinstance(exc, asyncpg.PostgresError):
        state = getattr(exc, "sqlstate", "") or ""
        if state in UNSTORABLE_STATES:
            return UnstorableValue(where, f"a value cannot be stored ({type(exc).__name__}: {exc}); only this "
                                          "write fails")
        if state.startswith(TRANSIENT_STATES):
            return StoreBusy(where, f"{type(exc).__name__}: {exc}")
        if state.startswith(REFUSED_STATES):
            return StoreRefused(where, f"{type(exc).__name__}: {exc}")
        return None
    if isinstance(exc, asyncpg.InterfaceError | ConnectionError | OSError | TimeoutError):
        return StoreBusy(where, f"connection lost: {exc}")
    return None


def url_port_problem(url: str) -> str | None:
    """What is wrong with a PostgreSQL URL's port(s), in words (``port '99999' is not a number from 1 to 65535``),
    or ``None`` when every port given is one (or none is given). asyncpg would otherwise answer ``invalid literal
    for int()``, or connect to the port modulo 65536. Hosts may be a comma-separated list, each with its port."""
    from urllib.parse import urlsplit

    try:
        netloc = urlsplit(url).netloc.rpartition("@")[2]
    except ValueError:  # "[oops": asyncpg names what is wrong
        return None
    for host in netloc.split(","):
        if host.startswith("["):  # [::1]:5432
            host = host.partition("]")[2]
        _, colon, port = host.rpartition(":") if not host.startswith(":") else ("", ":", host[1:])
        if colon and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            return f"port {port!r} is not a number from 1 to 65535"
    return None


class PostgresStore(SqliteStore):
    """The mod log on a PostgreSQL database. Open with :meth:`open_url`; the operations are
    :class:`SqliteStore`'s (the port :class:`bot.core.store_port.ModStore`), over :class:`PgConnection`.

    Attributes:
        location: The URL with its password hidden (printed at start, named in errors).
        backend: ``"postgresql"``.
    """

    backend = "postgresql"

    def __init__(self, db: PgConnection, where: str, url: str) -> None:  # noqa: D107
        self._db = db  # type: ignore[assignment]
        self._where = where
        self._url = url  # to connect again (never printed: it may hold the password)
        import asyncio

        self._lock = asyncio.Lock()
        self.path = Path()
        self.location = where
        self._closed = False
        self._stats_checked = False

    @classmethod
    async def open_url(cls, url: str, where: str) -> PostgresStore:
        """Connect to ``url`` and migrate to the latest schema.

        Raises:
            StoreRefused: a malformed URL, an unreachable server, a refused login, an unknown database, a database
                holding another application's tables, a schema newer than this code (``database`` = ``where``).
            StoreBusy: the server refused for now (starting up, too many connections).
        """
        bad_port = url_port_problem(url)
        if bad_port:
            raise StoreRefused(where, f"malformed PostgreSQL URL: {bad_port}")
        try:
            conn = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT_S)
        except (ValueError, asyncpg.ClientConfigurationError) as exc:
            raise StoreRefused(where, f"malformed PostgreSQL URL: {exc}") from None
        except asyncpg.PostgresError as exc:
            mapped = map_pg_error(where, exc)
            if isinstance(mapped, StoreBusy):
                raise mapped from None
            raise StoreRefused(where, f"{type(exc).__name__}: {exc}") from None
        except (OSError, TimeoutError) as exc:
            raise StoreRefused(where, f"cannot reach the server: {exc or type(exc).__name__}") from None
        try:
            await pg_migrate(conn, where)
        except BaseException:
            await conn.close()
            raise
        return cls(PgConnection(conn), where, url)

    async def _hold_key(self, *key: str) -> None:
        """``pg_advisory_xact_lock`` on ``key`` (class :data:`KEY_LOCK_CLASS`, the key's 32-bit digest),
        released at the transaction's commit or rollback; see :meth:`StoreBase._hold_key`."""
        await self._db.execute("SELECT pg_advisory_xact_lock(?, ?)", (KEY_LOCK_CLASS, key_digest(key)))

    async def _connected(self) -> None:
        """Open a new connection when the server dropped the store's one (a restart, a failover, a proxy's idle
        timeout): the operation that met the lost connection failed with :class:`StoreBusy` ("retrying may
        succeed"), and the retry runs on the new connection. Nothing is done for a store closed on purpose.

        Raises:
            StoreBusy: the server cannot be reached yet (or refuses connections for now).
            StoreRefused: the server refuses this login for good (password changed, database dropped).
        """
        conn: asyncpg.Connection = self._db.conn  # type: ignore[attr-defined]
        if self._closed or not conn.is_closed():
            return
        try:
            fresh = await asyncpg.connect(self._url, timeout=CONNECT_TIMEOUT_S)
        except asyncpg.PostgresError as exc:
            mapped = map_pg_error(self._where, exc)
            raise (mapped or StoreRefused(self._where, f"{type(exc).__name__}: {exc}")) from None
        except (OSError, TimeoutError) as exc:
            raise StoreBusy(self._where, f"connection lost, cannot reach the server again: "
                                         f"{exc or type(exc).__name__}") from None
        self._db.conn = fresh  # type: ignore[attr-defined]
        log.warning("mod log %s: the connection to the server was lost; connected again", self._where)

    def _map_error(self, exc: Exception) -> StoreError | None:
        if isinstance(exc, StoreError):  # raised by the store itself (_connected): as it is
            return None
        mapped = map_pg_error(self._where, exc)
        if mapped is None and self._db.conn.is_closed():  # type: ignore[attr-defined]
            # the server went away in the middle of the operation (asyncpg may say so with an internal error)
            return StoreBusy(self._where, f"connection lost: {type(exc).__name__}: {exc}")
        return mapped

    async def record_batch(
        self, records: Sequence[VerdictRecord], *, model_version: str | None = None
    ) -> list[RecordResult]:
        """:meth:`SqliteStore.record_batch` (same results, same rules, ONE transaction) with the batch's messages
        and verdicts written set-based (:func:`bot.store.pg_batch.write_verdicts`: a few statements per batch, not
        4-8 per record), then the written records' cases, review items, strikes and raids one by one in record
        order (:meth:`SqliteStore._record_flagged`).

        Raises:
            ValueError: a strike's ``server_id`` differs from its message's server, or a naive datetime; the whole
                batch is rolled back on any error.
        """
        judged_at = to_db_time(utcnow())
        async with self._tx():
            written = await write_verdicts(self._db.conn, records, judged_at, model_version)  # type: ignore[attr-defined]
            results = [await self._record_flagged(record) if ok else RecordResult(inserted=False)
                       for record, ok in zip(records, written, strict=True)]
        if not self._stats_checked and any(written):
            await self._analyze_if_no_statistics()
        return results

    async def _analyze_if_no_statistics(self) -> None:
        """Once per process, after the first batch that wrote a verdict: ``ANALYZE`` the tables of
        :data:`BATCH_TABLES` when ``verdicts`` has no planner statistics yet (a new mod log, before autovacuum's
        first round, by default a minute or more). Without statistics the planner may answer a lookup by full key
        through another index and filter thousands of rows per key (measured: 335 ms instead of 0.5 ms for 128
        keys at 20,000 verdicts). A failure is logged, never raised: the batch is already committed."""
        self._stats_checked = True
        conn: asyncpg.Connection = self._db.conn  # type: ignore[attr-defined]
        try:
            async with self._lock:
                if await conn.fetchval("SELECT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = current_schema() "
                                       "AND tablename = 'verdicts')"):
                    return
                await conn.execute(f"ANALYZE {', '.join(BATCH_TABLES)}")
                log.info("analyzed the new mod log's tables (no planner statistics yet)")
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            log.warning("could not analyze the mod log's tables: %s", exc)

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._closed:
            return
        async with self._lock:
            self._closed = True
            await self._db.close()

    async def schema_version(self) -> int:
        """The version in ``schema_version``."""
        async with self._guard():
            return int(await self._db.conn.fetchval("SELECT version FROM schema_version"))  # type: ignore[attr-defined]

    async def integrity_check(self) -> list[str]:
        """PostgreSQL enforces keys and checks itself; this checks the connection answers (``[]`` when it does)."""
        async with self._guard():
            ok = await self._db.conn.fetchval("SELECT 1")  # type: ignore[attr-defined]
        return [] if ok == 1 else ["the server did not answer SELECT 1"]

    async def backup(self, out: str | None = None) -> str:
        """Not done by the bot for PostgreSQL: the server's own tools are the right ones.

        Raises:
            StoreRefused: always, naming the command to use (``pg_dump --format=custom``).
        """
        raise StoreRefused(self._where, "back up a PostgreSQL mod log with the server's tools: "
                                        f"pg_dump --format=custom --file={out or 'modlog.dump'} <url>")


async def pg_migrate(conn: asyncpg.Connection, where: str) -> int:
    """Apply pending PostgreSQL migrations, each in one transaction with the ``schema_version`` bump and under
    ``pg_advisory_xact_lock`` (a second process waits, then sees the new version and skips). Returns the version.

    Raises:
        StoreRefused: tables of another application with no ``schema_version``; a schema newer than this code.
    """
    tables = {r[0] for r in await conn.fetch(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
    if tables and "schema_version" not in tables:
        raise StoreRefused(where, f"holds tables of another application ({', '.join(sorted(tables)[:5])}), "
                                  "not a mod log")
    version = 0
    for migration in PG_MIGRATIONS:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            version = int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_version"))
            if version > PG_LATEST_VERSION:
                raise StoreRefused(where, f"schema version {version} is newer than this code supports "
                                          f"({PG_LATEST_VERSION}); upgrade the bot")
            if version >= migration.version:
                continue
            await conn.execute(migration.statements[0])
            await conn.execute("DELETE FROM schema_version")
            await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", migration.version)
            log.info("applied PostgreSQL store migration %s", migration.name)
            version = migration.version
    if not PG_MIGRATIONS:
        return 0
    if version == 0:
        version = int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_version"))
    if version > PG_LATEST_VERSION:
        raise StoreRefused(where, f"schema version {version} is newer than this code supports "
                                  f"({PG_LATEST_VERSION}); upgrade the bot")
    return version


__all__ = ["PG_LATEST_VERSION", "PgConnection", "PostgresStore", "map_pg_error", "pg_migrate", "translate"]
