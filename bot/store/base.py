"""Shared plumbing of :class:`bot.store.sqlite.SqliteStore`: the transaction helpers, row converters and the
insert helpers used by several mixins (case allocation, strikes, review items).

One connection serves the process. Every operation, read or write, holds ``self._lock`` (through
:meth:`StoreBase._guard`, which maps SQLite failures to ``StoreBusy`` / ``StoreRefused``) so a read never sees
another coroutine's uncommitted batch and writes are serialised (this is what makes per-server case numbers
correct under concurrency within one process; across processes ``BEGIN IMMEDIATE`` plus ``busy_timeout`` do).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import aiosqlite

from bot.core.errors import CaseNotFound, StoreError
from bot.core.models import MAX_CASE_NUMBER, ActionKind, Case, CaseStatus, ReviewDecision, ReviewItem, Strike
from bot.core.records import StepCase, StepReview
from bot.store.schema import dump_json, from_db_time, load_json, map_error, opt_db_time, req_db_time, to_db_time

log = logging.getLogger(__name__)

Row = aiosqlite.Row

REVIEW_SOURCES = frozenset({"automod", "report", "appeal"})
#: Message ids per ``IN (...)`` query in key lookups (SQLite's classic limit of bound parameters is 999).
KEY_CHUNK = 500


def is_case_number(number: int) -> bool:
    """Whether ``number`` can name a case (1 to :data:`~bot.core.models.MAX_CASE_NUMBER`). A lookup by any other
    number finds no case without asking the database, so both backends answer it the same: PostgreSQL's INTEGER
    columns refuse a parameter past 2^31 - 1 (a raw ``DataError``), SQLite's past 2^63 - 1 (``OverflowError``)."""
    return 1 <= number <= MAX_CASE_NUMBER


class StoreBase:
    """Connection, lock and helpers; not used on its own."""

    _db: aiosqlite.Connection
    _lock: asyncio.Lock

    def __init__(self, db: aiosqlite.Connection, where: str) -> None:
        self._db = db
        self._where = where
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def _guard(self) -> AsyncIterator[None]:
        """Hold the lock; a SQLite failure comes out as :class:`StoreBusy` (locked past the busy timeout) or
        :class:`StoreRefused` (full disk, read-only, not a database), naming the file (:func:`map_error`)."""
        async with self._lock:
            try:
                await self._connected()
                yield
            except Exception as exc:
                mapped = self._map_error(exc)
                if mapped is None:
                    raise
                raise mapped from exc

    async def _connected(self) -> None:
        """Under the lock, before each operation: make the connection usable. SQLite: nothing to do (a file);
        PostgreSQL opens a new connection when the server dropped the last one."""

    def _map_error(self, exc: Exception) -> StoreError | None:
        """The store error for a driver failure (``None``: re-raise as is). SQLite: :func:`map_error`; another
        backend overrides this for its driver's exceptions."""
        return map_error(self._where, exc) if isinstance(exc, sqlite3.Error) else None

    # -- transactions -------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` under the lock; ``ROLLBACK`` and re-raise on any error (SQLite
        failures mapped as in :meth:`_guard`: nothing of the transaction stays)."""
        async with self._guard():
            if self._db.in_transaction:  # left over by a cancelled commit; never keep half a batch
                log.warning("rolling back a transaction left open by a cancelled operation")
                await self._db.execute("ROLLBACK")
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                await self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    await self._db.execute("ROLLBACK")
                raise

    async def _hold_key(self, *key: str) -> None:
        """Inside :meth:`_tx`: keep every other transaction holding the same ``key`` waiting until this one ends,
        so a read-then-insert rule no unique index can state (one reporter's open report about a member) sees
        the other's committed rows. SQLite: nothing to do, ``BEGIN IMMEDIATE`` already holds the database's one
        write lock from the transaction's start; PostgreSQL overrides this with a transaction-level advisory
        lock."""

    async def _all(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Fetch all rows; the caller holds the lock (inside ``_tx``) or uses :meth:`_read_all`."""
        async with self._db.execute(sql, tuple(params)) as cur:
            return list(await cur.fetchall())

    async def _one(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        """Fetch one row or ``None``; the caller holds the lock."""
        async with self._db.execute(sql, tuple(params)) as cur:
            return await cur.fetchone()

    async def _read_all(self, sql: str, params: Iterable[Any] = ()) -> list[Row]:
        """Fetch all rows under the lock."""
        async with self._guard():
            return await self._all(sql, params)

    async def _read_one(self, sql: str, params: Iterable[Any] = ()) -> Row | None:
        """Fetch one row under the lock."""
        async with self._guard():
            return await self._one(sql, params)

    async def _rows_by_keys(self, table: str, columns: str, keys: Iterable[tuple[str, str, str]], where: str = "",
                            params: tuple[Any, ...] = ()) -> list[tuple[tuple[str, str, str], Row]]:
        """Rows of ``table`` (``message_id`` plus ``columns``) for message keys ``(platform, server_id,
        message_id)``, queried per server in chunks of :data:`KEY_CHUNK` ids (SQLite's classic limit of bound
        parameters is 999); ``where``/``params`` add conditions. Unknown keys are absent."""
        by_server: dict[tuple[str, str], list[str]] = {}
        for platform, server_id, message_id in dict.fromkeys(keys):
            by_server.setdefault((platform, server_id), []).append(message_id)
        out: list[tuple[tuple[str, str, str], Row]] = []
        async with self._guard():
            for (platform, server_id), ids in by_server.items():
                for start in range(0, len(ids), KEY_CHUNK):
                    chunk = ids[start : start + KEY_CHUNK]
                    rows = await self._all(
                        f"SELECT message_id, {columns} FROM {table} WHERE platform = ? AND server_id = ? "
                        f"AND message_id IN ({','.join('?' * len(chunk))}){where}",
                        (platform, server_id, *chunk, *params),
                    )
                    out.extend(((platform, server_id, row["message_id"]), row) for row in rows)
        return out

    # -- inserts shared by record_batch and the moderator API ---------------------------------------------------

    async def _insert_case(
        self,
        platform: str,
        server_id: str,
        member_id: str,
        action: ActionKind,
        reason: str,
        status: CaseStatus,
        created_at: datetime,
        moderator_id: str | None = None,
        message_id: str | None = None,
        expires_at: datetime | None = None,
        escalated_from: int | None = None,
        failure: str | None = None,
    ) -> Case:
        """Allocate the server's next case number and insert the case (inside a transaction); ``failure``: the
        platform's refusal recorded on it."""
        row = await self._one(
            "INSERT INTO case_counters (platform, server_id, last_number) VALUES (?, ?, 1) "
            "ON CONFLICT (platform, server_id) DO UPDATE SET last_number = case_counters.last_number + 1 RETURNING last_number",
            (platform, server_id),
        )
        assert row is not None
        number = int(row[0])
        created = to_db_time(created_at)
        await self._db.execute(
            "INSERT INTO cases (platform, server_id, number, member_id, action, reason, status, moderator_id, "
            "message_id, created_at, expires_at, updated_at, escalated_from, failure) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                platform,
                server_id,
                number,
                member_id,
                action.label,
                reason,
                status.value,
                moderator_id,
                message_id,
                created,
                opt_db_time(expires_at),
                created,
                escalated_from,
                failure,
            ),
        )
        return Case(
            server_id=server_id,
            number=number,
            member_id=member_id,
            action=action,
            reason=reason,
            status=status,
            created_at=req_db_time(created),
            moderator_id=moderator_id,
            message_id=message_id,
            expires_at=from_db_time(opt_db_time(expires_at)),
            platform=platform,
            escalated_from=escalated_from,
            failure=failure,
        )

    async def _insert_step(self, platform: str, server_id: str, step: StepCase | StepReview,
                           case_number: int | None) -> Case | ReviewItem:
        """Inside the transaction that adds or raises the strike of case ``case_number``: open the ladder step's
        case it crossed, ``pending`` until the platform answers (a stop before that leaves it to the next start),
        or, for a step the moderator may not take (:class:`StepReview`), its open review item."""
        if isinstance(step, StepReview):
            return await self._insert_review(platform, server_id, step.member_id, "automod", step.reason,
                                             step.created_at)
        return await self._insert_case(platform, server_id, step.member_id, step.action, step.reason,
                                       CaseStatus.PENDING, step.created_at, expires_at=step.expires_at,
                                       escalated_from=case_number)

    async def _insert_strike(self, platform: str, strike: Strike) -> bool:
        """Insert a strike unless its message already has one; returns whether a row was added."""
        cur = await self._db.execute(
            "INSERT INTO strikes (platform, server_id, member_id, points, reason, message_id, case_number, "
            "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                platform,
                strike.server_id,
                strike.member_id,
                strike.points,
                strike.reason,
                strike.message_id,
                strike.case_number,
                to_db_time(strike.created_at),
                to_db_time(strike.expires_at),
            ),
        )
        added = cur.rowcount == 1
        await cur.close()
        return added

    async def _insert_review(
        self,
        platform: str,
        server_id: str,
        member_id: str,
        source: str,
        reason: str,
        created_at: datetime,
        case_number: int | None = None,
        message_id: str | None = None,
        channel_id: str | None = None,
        scores: Mapping[str, float | None] | None = None,
    ) -> ReviewItem:
        """Insert an open review item (inside a transaction)."""
        if source not in REVIEW_SOURCES:
            raise ValueError(f"unknown review source {source!r} (allowed: {', '.join(sorted(REVIEW_SOURCES))})")
        cur = await self._db.execute(
            "INSERT INTO review_items (platform, server_id, case_number, message_id, channel_id, member_id, source, "
            "reason, scores, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                platform,
                server_id,
                case_number,
                message_id,
                channel_id,
                member_id,
                source,
                reason,
                dump_json(dict(scores or {})),
                to_db_time(created_at),
            ),
        )
        review_id = cur.lastrowid
        await cur.close()
        assert review_id is not None
        return ReviewItem(
            id=review_id,
            server_id=server_id,
            case_number=case_number,
            message_id=message_id,
            channel_id=channel_id,
            member_id=member_id,
            source=source,
            reason=reason,
            scores=dict(scores or {}),
        )

    async def _set_case_status(
        self, platform: str, server_id: str, number: int, status: CaseStatus, failure: str | None, when: str
    ) -> Row:
        """Inside a transaction: set case ``number``'s status and ``failure`` (the platform's refusal, or notes);
        returns the updated row.

        Raises:
            CaseNotFound: no such case in this server (:func:`is_case_number`).
        """
        if not is_case_number(number):
            raise CaseNotFound(f"case #{number} not found in this server")
        row = await self._one(
            "UPDATE cases SET status = ?, failure = ?, updated_at = ? "
            "WHERE platform = ? AND server_id = ? AND number = ? RETURNING *",
            (status.value, failure, when, platform, server_id, number),
        )
        if row is None:
            raise CaseNotFound(f"case #{number} not found in this server")
        return row

    async def _pardon_case(
        self, platform: str, server_id: str, number: int, moderator_id: str | None, when: str, status: str
    ) -> int:
        """Inside a transaction: pardon a case's strikes (by case number or its message) and set its status.
        ``status`` ``"pardoned"`` leaves an applied ban or timeout still in force (not lifted, not over)
        ``applied``: forgiving its points does not lift it, and its end (a temporary ban's unban, an overturn's lift)
        is looked up among applied cases (a pardoned 1-hour ban was never unbanned).

        Raises:
            CaseNotFound: no case ``number`` in this server (:func:`is_case_number`).
        """
        row = await self._one(
            "SELECT message_id FROM cases WHERE platform = ? AND server_id = ? AND number = ?",
            (platform, server_id, number),
        ) if is_case_number(number) else None
        if row is None:
            raise CaseNotFound(f"case #{number} not found in this server")
        cur = await self._db.execute(
            "UPDATE strikes SET pardoned_at = ?, pardoned_by = ? WHERE platform = ? AND server_id = ? "
            "AND pardoned_at IS NULL AND (case_number = ? OR (message_id IS NOT NULL AND message_id = ?))",
            (when, moderator_id, platform, server_id, number, row["message_id"]),
        )
        count = cur.rowcount
        await cur.close()
        await self._db.execute(
            "UPDATE cases SET status = ?, updated_at = ? WHERE platform = ? AND server_id = ? AND number = ? "
            "AND status != 'overturned' AND NOT (? = 'pardoned' AND status = 'applied' AND action IN ('ban', "
            "'timeout') AND lifted_at IS NULL AND (expires_at IS NULL OR expires_at > ?))",
            (status, when, platform, server_id, number, status, when),
        )
        return count

    async def _overturn_in_tx(
        self, platform: str, server_id: str, number: int, moderator_id: str | None, when: str
    ) -> int:
        """Inside a transaction: overturn case ``number``. What it still does on the platform is owed its lift from
        this commit on (an applied ban not lifted yet: its unban, :meth:`~bot.store.workflow.WorkflowMixin.owed_lifts`;
        an applied timeout not lifted yet: its removal, :meth:`~bot.store.workflow.WorkflowMixin.owed_timeout_lifts`;
        ``lift_tries`` 0, a value already there kept), so a stop before the platform call leaves it for the next
        start; its strikes are pardoned and its status set to ``overturned`` (:meth:`_pardon_case`). The case's
        other open decisions are settled with it, by the same moderator: its open appeal is ``overturned`` (what it
        asked for) and its undecided review items (the case's own card, the appeal's card) are ``dismissed``; so
        an Uphold pressed later on the appeal of a dismissed case, or a Delete on the card of a case overturned on
        appeal, is refused as already decided (they recorded "upheld" on an overturned case, or struck the member
        again under it). Returns the number of strikes pardoned.

        Raises:
            CaseNotFound: no such case in this server.
        """
        await self._db.execute(
            "UPDATE cases SET lift_tries = COALESCE(lift_tries, 0) WHERE platform = ? AND server_id = ? "
            "AND number = ? AND action IN ('ban', 'timeout') AND status = 'applied' AND lifted_at IS NULL",
            (platform, server_id, number),
        )
        pardoned = await self._pardon_case(platform, server_id, number, moderator_id, when, "overturned")
        await self._db.execute(
            "UPDATE appeals SET status = 'overturned', moderator_id = ?, decided_at = ? WHERE platform = ? "
            "AND server_id = ? AND case_number = ? AND status = 'open'",
            (moderator_id, when, platform, server_id, number),
        )
        await self._db.execute(
            "UPDATE review_items SET decision = 'dismissed', moderator_id = ?, decided_at = ? WHERE platform = ? "
            "AND server_id = ? AND case_number = ? AND decision IN ('open', 'investigating')",
            (moderator_id, when, platform, server_id, number),
        )
        return pardoned

    async def _overturn_steps_in_tx(
        self, platform: str, server_id: str, number: int, steps: Sequence[int], moderator_id: str | None, when: str
    ) -> None:
        """Inside the transaction that overturns case ``number``: overturn its ladder steps ``steps`` (case numbers
        naming it in ``escalated_from``) as :meth:`_overturn_in_tx` does, each one only while it is still applied and
        not lifted (another decision may have settled it since the workflow read it); any other number is left
        alone."""
        for step in steps:
            row = await self._one(
                "SELECT number FROM cases WHERE platform = ? AND server_id = ? AND number = ? AND escalated_from = ? "
                "AND status = 'applied' AND lifted_at IS NULL",
                (platform, server_id, step, number),
            ) if is_case_number(step) else None
            if row is not None:
                await self._overturn_in_tx(platform, server_id, step, moderator_id, when)


# -- row converters -----------------------------------------------------------------------------------------------


def case_from_row(row: Row) -> Case:
    """Build a :class:`Case` from a ``cases`` row."""
    return Case(
        server_id=row["server_id"],
        number=row["number"],
        member_id=row["member_id"],
        action=ActionKind.parse(row["action"]),
        reason=row["reason"],
        status=CaseStatus(row["status"]),
        created_at=req_db_time(row["created_at"]),
        moderator_id=row["moderator_id"],
        message_id=row["message_id"],
        expires_at=from_db_time(row["expires_at"]),
        failure=row["failure"],
        platform=row["platform"],
        lifted_at=from_db_time(row["lifted_at"]),
        escalated_from=row["escalated_from"],
    )


def strike_from_row(row: Row) -> Strike:
    """Build a :class:`Strike` from a ``strikes`` row."""
    return Strike(
        server_id=row["server_id"],
        member_id=row["member_id"],
        points=row["points"],
        created_at=req_db_time(row["created_at"]),
        expires_at=req_db_time(row["expires_at"]),
        reason=row["reason"],
        message_id=row["message_id"],
        case_number=row["case_number"],
        pardoned=row["pardoned_at"] is not None,
    )


def review_from_row(row: Row) -> ReviewItem:
    """Build a :class:`ReviewItem` from a ``review_items`` row."""
    return ReviewItem(
        id=row["id"],
        server_id=row["server_id"],
        case_number=row["case_number"],
        message_id=row["message_id"],
        channel_id=row["channel_id"],
        member_id=row["member_id"],
        source=row["source"],
        reason=row["reason"],
        decision=ReviewDecision(row["decision"]),
        moderator_id=row["moderator_id"],
        decided_at=from_db_time(row["decided_at"]),
        scores=load_json(row["scores"], {}),
    )
