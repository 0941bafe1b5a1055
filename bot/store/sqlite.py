"""SQLite implementation of the mod log (:class:`bot.core.ports.ModStore`) and the moderator API around it.

Layer: ``bot.store`` (may use aiosqlite). One :class:`SqliteStore` owns one connection; see :mod:`bot.store.base`
for the locking model and :mod:`bot.store.schema` for time encoding and migrations. The class is split in mixins:
reviews/reports/appeals (:mod:`bot.store.reviews`), policy overrides (:mod:`bot.store.policy`), privacy
(:mod:`bot.store.privacy`), statistics (:mod:`bot.store.stats`) and replayed verdict sets (:mod:`bot.store.replays`).

Usage::

    async with await SqliteStore.open("data/modlog.db") as store:
        results = await store.record_batch(records)
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiosqlite

from bot.core.errors import StoreRefused
from bot.core.models import MAX_TIMEOUT_S, ActionKind, CaseStatus, Message, RaidAlert, Verdict
from bot.core.ports import RecordResult, VerdictRecord
from bot.core.records import MessageKey, StoredVerdict
from bot.store.base import KEY_CHUNK, StoreBase
from bot.store.case_edits import CaseEditsMixin
from bot.store.cases import CasesMixin
from bot.store.catchup import CatchupMixin
from bot.store.modlog_read import ModLogReadMixin
from bot.store.policy import PolicyMixin
from bot.store.privacy import PrivacyMixin
from bot.store.replays import ReplayMixin
from bot.store.reviews import ReviewMixin
from bot.store.schema import (
    backup_path,
    backup_to_file,
    check_ours,
    connect,
    dump_json,
    file_location,
    from_db_time,
    load_json,
    map_error,
    migrate,
    opt_db_time,
    req_db_time,
    schema_version,
    to_db_time,
    utcnow,
)
from bot.store.stats import StatsMixin
from bot.store.workflow import WorkflowMixin

log = logging.getLogger(__name__)

#: ``verdicts`` columns ``channel_id, edited_at, scores, rule_hits, labels, flagged, action, strike_points, exempt,
#: model_name, model_version, policy_version, latency_ms, shadow, judged_at, score_status, language``.
VerdictFields = tuple[str, str | None, str | None, str, str, int, str, int, str | None, str, str | None, str, float,
                      int, str, str, str | None]


def verdict_reason(verdict: Verdict) -> str:
    """Reason text for a case or review item: the strongest action's reason, else labels and rule names."""
    for action in verdict.actions:
        if action.reason:
            return action.reason
    parts = list(verdict.labels) + [hit.rule for hit in verdict.rule_hits]
    return ", ".join(dict.fromkeys(parts)) or verdict.action.label


def dated(msg: Message) -> datetime:
    """When a case, review item or timeout of ``msg`` starts: its event time (edit time for edits), or now (when it
    is recorded) for a message without a time."""
    return msg.event_time or utcnow()


def timeout_end(verdict: Verdict) -> datetime | None:
    """End of the verdict's timeout (:func:`dated` + duration, capped at 28 days) or temporary ban (a ladder step
    ``ban`` with ``duration_s`` crossed by the message: :func:`dated` + duration), or ``None`` without one."""
    for action in verdict.actions:
        if action.kind is ActionKind.TIMEOUT and action.duration_s:
            return dated(verdict.message) + timedelta(seconds=min(action.duration_s, MAX_TIMEOUT_S))
        if action.kind is ActionKind.BAN and action.duration_s:
            return dated(verdict.message) + timedelta(seconds=action.duration_s)
    return None


def verdict_fields(verdict: Verdict, judged_at: str, model_version: str | None) -> VerdictFields:
    """The ``verdicts`` columns after ``member_id`` (``channel_id`` ... ``language``, in the order of the INSERT
    and UPDATE of :meth:`SqliteStore.record_batch`): JSON text for scores, rule hits and labels, 0/1 for
    ``flagged``/``shadow``, ``latency_ms`` in milliseconds. Raises ``ValueError`` for a naive edit time."""
    return (
        verdict.message.channel.id,
        opt_db_time(verdict.message.edited_at),
        dump_json(verdict.scores.as_dict()) if verdict.scores else None,
        dump_json(
            [{"rule": h.rule, "detail": h.detail, "label": h.label, "action": h.action} for h in verdict.rule_hits]
        ),
        dump_json(list(verdict.labels)),
        int(verdict.flagged),
        verdict.action.label,
        verdict.strike_points,
        verdict.exempt,
        verdict.scores.model if verdict.scores else "",
        model_version,
        verdict.policy_version,
        float(verdict.latency_ms),
        int(verdict.shadow),
        judged_at,
        verdict.score_status,
        verdict.language,
    )


#: How long a 0-byte file is watched for another process creating the mod log in it (two shard processes or two
#: scans starting on one new file: SQLite writes the header within milliseconds of creating it), seconds.
EMPTY_FILE_WAIT_S = 2.0


async def _filled_by_another_writer(path: Path) -> bool:
    """Whether a 0-byte ``path`` gets content within :data:`EMPTY_FILE_WAIT_S` (another process is creating it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + EMPTY_FILE_WAIT_S
    while loop.time() < deadline:
        await asyncio.sleep(0.05)
        if path.stat().st_size > 0:
            return True
    return False


class SqliteStore(CasesMixin, ReviewMixin, PolicyMixin, PrivacyMixin, StatsMixin, WorkflowMixin, ReplayMixin,
                  CatchupMixin, ModLogReadMixin, CaseEditsMixin, StoreBase):
    """The mod log on one SQLite file. Open with :meth:`open`; every method is a coroutine.

    Attributes:
        path: The database file.
        location: Its absolute path (printed at start, named in errors).
        backend: ``"sqlite"``.
    """

    backend = "sqlite"

    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        super().__init__(db, str(path.expanduser().resolve()))
        self.path = path
        self.location = self._where
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | Path, *, create: bool = True) -> Self:
        """Open (creating the file and its folders when ``create``) and migrate to the latest schema, after an
        online backup of an existing mod log whose version changes (:func:`bot.store.schema.backup_path`).

        Raises:
            StoreRefused: missing with ``create=False``; a 0-byte file (never silently turned into a mod log); a
                file that is not SQLite or holds another application's tables; a schema newer than the code; a
                folder; a read-only file or folder; a full disk. ``database`` is the absolute path.
            StoreBusy: another process holds the write lock past the busy timeout while migrating.
            sqlite3.Error: any other SQLite failure (a damaged mod log whose migration fails), as SQLite raised it.
        """
        path = Path(path)
        where = file_location(path)
        if path.is_dir():
            raise StoreRefused(where, "is a folder, not a database file")
        if not path.exists():
            if not create:
                raise StoreRefused(where, "no such database (nothing was created)")
        elif path.stat().st_size == 0 and not await _filled_by_another_writer(path):
            raise StoreRefused(where, "is an empty (0-byte) file, not a mod log; remove it or name a new path")
        try:
            db = await connect(path)
        except sqlite3.Error as exc:
            mapped = map_error(where, exc)
            if mapped is None:  # not busy / full / read-only / not a database: SQLite's own error, as is
                raise
            raise mapped from exc
        try:
            await check_ours(db, where)
            await migrate(db, backup_to=path if path.exists() else None, where=where)
        except sqlite3.Error as exc:
            await db.close()
            mapped = map_error(where, exc)
            if mapped is None:
                raise
            raise mapped from exc
        except BaseException:
            await db.close()
            raise
        return cls(db, path)

    async def backup(self, out: str | None = None) -> str:
        """Online copy of the whole file with the sqlite3 backup API (consistent while other processes write);
        default ``<db>.bak-<schema version>-<UTC timestamp>``. Returns the copy's absolute path.

        Raises:
            StoreRefused: the copy cannot be written (folder missing or read-only, disk full).
        """
        async with self._lock:
            version = await schema_version(self._db)
            target = Path(out) if out is not None else backup_path(self.path, version)
            try:
                await backup_to_file(self._db, target)
            except sqlite3.Error as exc:
                raise StoreRefused(str(target.resolve()), f"backup failed: {exc}") from exc
        return str(target.resolve())

    async def close(self) -> None:
        """Close the connection (idempotent). Committed data is durable; WAL is checkpointed by SQLite."""
        if self._closed:
            return
        async with self._lock:
            self._closed = True
            await self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def schema_version(self) -> int:
        """The schema version (``PRAGMA user_version``)."""
        async with self._guard():
            return await schema_version(self._db)

    async def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` plus ``foreign_key_check`` problems; ``[]`` when the file is healthy."""
        async with self._guard():
            rows = await self._all("PRAGMA integrity_check")
            problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
            fk_rows = await self._all("PRAGMA foreign_key_check")
        problems += [f"foreign key: {tuple(r)}" for r in fk_rows]
        return problems

    # -- ModStore -----------------------------------------------------------------------------------------------

    async def known_messages(self, keys: Sequence[MessageKey]) -> dict[MessageKey, datetime | None]:
        """Return ``{key: edited_at or None}`` for the keys ``(platform, server_id, message_id)`` that have a
        verdict. Queries in chunks of :data:`KEY_CHUNK` ids per server."""
        rows = await self._verdict_rows(keys, "edited_at")
        return {key: from_db_time(row["edited_at"]) for key, row in rows}

    async def flagged_messages(self, keys: Sequence[MessageKey]) -> set[MessageKey]:
        """The keys among ``keys`` whose latest verdict is flagged (used to replay judged messages into the spam and
        raid windows when a scan resumes). Unknown keys are simply absent."""
        rows = await self._verdict_rows(keys, "flagged")
        return {key for key, row in rows if row["flagged"]}

    async def _verdict_rows(self, keys: Sequence[MessageKey], column: str) -> list[tuple[MessageKey, Any]]:
        return await self._rows_by_keys("verdicts", column, keys)

    async def record_batch(
        self, records: Sequence[VerdictRecord], *, model_version: str | None = None
    ) -> list[RecordResult]:
        """Write messages, verdicts, cases, review items and strikes of ``records`` in ONE transaction.

        Per record (key ``(platform, server_id, message_id)``):

        * new key: message row (with the excerpt) and verdict (revision 1) inserted; ``inserted=True``;
        * key known and the record's ``edited_at`` is not newer than the stored one (a replay, or a stale edit):
          nothing is written, ``inserted=False`` and no case/review/strike;
        * key known and ``edited_at`` newer (an edit): the verdict row is updated in place (``revision + 1``) and the
          message's edit time and excerpt replaced; ``inserted=True``;
        * then, when written: a case (next per-server number) if ``open_case``, an ``automod`` review item linked
          to it if ``open_review``, and the strike if given (message id and case number filled in when missing;
          ignored when the message already has one -> ``strike_added=False``), and the raid if given (its id in
          ``raid_id``; ``None`` when another writer already recorded that burst).

        Cases and review items are dated at the message's event time (edit time for edits; the time of recording
        for a message without a time). A message without a time is stored with no time (``created_at`` NULL) and
        sets no member's first-seen time.

        Args:
            records: The batch; results come back in the same order.
            model_version: Scorer version stored with the verdicts (the scorer's ``version``).

        Raises:
            ValueError: a strike's ``server_id`` differs from its message's server, or a naive datetime.
                The whole batch is rolled back on any error.
        """
        judged_at = to_db_time(utcnow())
        async with self._tx():
            return [await self._record_one(record, judged_at, model_version) for record in records]

    async def _record_one(self, record: VerdictRecord, judged_at: str, model_version: str | None) -> RecordResult:
        verdict = record.verdict
        msg = verdict.message
        platform, server_id, message_id = msg.key
        key = msg.key
        edited = opt_db_time(msg.edited_at)
        row = await self._one(
            "SELECT edited_at FROM verdicts WHERE platform = ? AND server_id = ? AND message_id = ?", key
        )
        fields = verdict_fields(verdict, judged_at, model_version)
        if row is not None:
            if edited is None or (row["edited_at"] is not None and edited <= row["edited_at"]):
                return RecordResult(inserted=False)
            await self._db.execute(
                "UPDATE messages SET channel_id = ?, edited_at = ?, excerpt = ?, purged_at = NULL "
                "WHERE platform = ? AND server_id = ? AND message_id = ?",
                (msg.channel.id, edited, record.excerpt, *key),
            )
            await self._db.execute(
                "UPDATE verdicts SET channel_id = ?, edited_at = ?, scores = ?, rule_hits = ?, labels = ?, "
                "flagged = ?, action = ?, strike_points = ?, exempt = ?, model_name = ?, model_version = ?, "
                "policy_version = ?, latency_ms = ?, shadow = ?, judged_at = ?, score_status = ?, language = ?, "
                "revision = revision + 1 "
                "WHERE platform = ? AND server_id = ? AND message_id = ?",
                (*fields, *key),
            )
        else:
            await self._db.execute(
                "INSERT INTO messages (platform, server_id, message_id, channel_id, author_id, created_at, "
                "edited_at, excerpt) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (platform, server_id, message_id) DO UPDATE SET "
                "edited_at = excluded.edited_at, excerpt = excluded.excerpt, purged_at = NULL",
                (*key, msg.channel.id, msg.author.id, opt_db_time(msg.created_at), edited, record.excerpt),
            )
            # ON CONFLICT: another process may insert this key between the SELECT above and here (PostgreSQL's
            # READ COMMITTED); the loser is a duplicate, never a failed batch.
            cur = await self._db.execute(
                "INSERT INTO verdicts (platform, server_id, message_id, member_id, channel_id, edited_at, scores, "
                "rule_hits, labels, flagged, action, strike_points, exempt, model_name, model_version, "
                "policy_version, latency_ms, shadow, judged_at, score_status, language) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (*key, msg.author.id, *fields),
            )
            won = cur.rowcount == 1
            await cur.close()
            if not won:
                return RecordResult(inserted=False)
            if msg.created_at is not None:  # an untimed message says nothing of when the member was first seen
                await self._db.execute(
                    "INSERT INTO member_first_seen (platform, server_id, member_id, first_message_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (platform, server_id, member_id) DO UPDATE SET first_message_at = "
                    "CASE WHEN excluded.first_message_at < member_first_seen.first_message_at "
                    "THEN excluded.first_message_at ELSE member_first_seen.first_message_at END",
                    (platform, server_id, msg.author.id, to_db_time(msg.created_at)),
                )
        return await self._record_flagged(record)

    async def _record_flagged(self, record: VerdictRecord) -> RecordResult:
        """Inside the batch transaction, after ``record``'s verdict was written (``inserted=True``): its case,
        review item, strike and raid as :meth:`record_batch` describes; the record's :class:`RecordResult`.

        Raises:
            ValueError: the strike's ``server_id`` differs from its message's server, or a naive datetime.
        """
        verdict = record.verdict
        msg = verdict.message
        platform, server_id, message_id = msg.key
        key = msg.key
        case_number = review_id = None
        reason = verdict_reason(verdict)
        if record.open_case:
            case = await self._insert_case(
                platform,
                server_id,
                msg.author.id,
                verdict.action,
                reason,
                # a review-only case has nothing to carry out: it is applied when its review item is queued
                CaseStatus.SHADOW if verdict.shadow else (
                    CaseStatus.PENDING if verdict.action > ActionKind.REVIEW else CaseStatus.APPLIED),
                dated(msg),
                message_id=message_id,
                expires_at=timeout_end(verdict),
            )
            case_number = case.number
        review_updated = False
        if record.open_review:
            # One open review item per message: a re-flagged edit updates the open item (and its card), never adds one.
            open_row = await self._one(
                "SELECT id FROM review_items WHERE platform = ? AND server_id = ? AND message_id = ? "
                "AND source = 'automod' AND decision IN ('open', 'investigating') ORDER BY id DESC LIMIT 1",
                key,
            )
            if open_row is not None:
                await self._db.execute(
                    "UPDATE review_items SET reason = ?, scores = ?, case_number = COALESCE(?, case_number), "
                    "channel_id = ? WHERE id = ?",
                    (reason, dump_json(verdict.scores.as_dict() if verdict.scores else {}), case_number,
                     msg.channel.id, open_row[0]),
                )
                review_id = open_row[0]
                review_updated = True
        if record.open_review and not review_updated:
            item = await self._insert_review(
                platform,
                server_id,
                msg.author.id,
                "automod",
                reason,
                dated(msg),
                case_number=case_number,
                message_id=message_id,
                channel_id=msg.channel.id,
                scores=verdict.scores.as_dict() if verdict.scores else {},
            )
            review_id = item.id
        strike_added = False
        if record.strike is not None:
            strike = record.strike
            if strike.server_id != server_id:
                raise ValueError(f"strike for server {strike.server_id!r} on a message of server {server_id!r}")
            strike = dataclasses.replace(
                strike,
                message_id=strike.message_id or message_id,
                case_number=strike.case_number if strike.case_number is not None else case_number,
            )
            strike_added = await self._insert_strike(platform, strike)
        raid_id = await self._insert_raid(platform, record.raid) if record.raid is not None else None
        return RecordResult(inserted=True, case_number=case_number, review_id=review_id, strike_added=strike_added,
                            review_updated=review_updated, raid_id=raid_id)

    async def list_raids(self, platform: str, server_id: str) -> list[RaidAlert]:
        """Every raid alert recorded for one server, oldest first (``started_at``, then insertion order)."""
        rows = await self._read_all(
            "SELECT server_id, channel_id, started_at, members, count, reason FROM raids "
            "WHERE platform = ? AND server_id = ? ORDER BY started_at, id",
            (platform, server_id),
        )
        return [
            RaidAlert(server_id=r[0], channel_id=r[1], started_at=req_db_time(r[2]),
                      members=tuple(load_json(r[3], [])), count=r[4], reason=r[5])
            for r in rows
        ]

    async def record_raid(self, platform: str, alert: RaidAlert) -> int | None:
        """Store a raid alert in its own transaction; its id, or ``None`` when that burst (``platform,
        server_id, channel_id, started_at, reason``: the unique index of migration 0006) was already recorded,
        also by another process."""
        async with self._tx():
            return await self._insert_raid(platform, alert)

    async def _insert_raid(self, platform: str, alert: RaidAlert) -> int | None:
        """Inside a transaction: insert the raid unless its burst is recorded (``ON CONFLICT DO NOTHING``). A raider
        forgotten (``/mydata forget``) before the alert fired (the burst window in memory still names them) is
        stored as their pseudonym, as forget_member and a later save of the board write it."""
        members = await self._pseudonymised(platform, alert.server_id, list(alert.members))
        cur = await self._db.execute(
            "INSERT INTO raids (platform, server_id, channel_id, started_at, members, count, reason, "
            "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                platform,
                alert.server_id,
                alert.channel_id,
                to_db_time(alert.started_at),
                dump_json(members),
                alert.count,
                alert.reason,
                to_db_time(utcnow()),
            ),
        )
        raid_id = cur.lastrowid if cur.rowcount == 1 else None
        await cur.close()
        return raid_id

    # -- lookups ------------------------------------------------------------------------------------------------

    async def get_verdict(self, platform: str, server_id: str, message_id: str) -> StoredVerdict | None:
        """The stored verdict of a message, or ``None``."""
        r = await self._read_one(
            "SELECT * FROM verdicts WHERE platform = ? AND server_id = ? AND message_id = ?",
            (platform, server_id, message_id),
        )
        if r is None:
            return None
        return StoredVerdict(
            platform=r["platform"],
            server_id=r["server_id"],
            message_id=r["message_id"],
            member_id=r["member_id"],
            channel_id=r["channel_id"],
            edited_at=from_db_time(r["edited_at"]),
            scores=load_json(r["scores"], {}),
            rule_hits=tuple(load_json(r["rule_hits"], [])),
            labels=tuple(load_json(r["labels"], [])),
            flagged=bool(r["flagged"]),
            action=ActionKind.parse(r["action"]),
            model_name=r["model_name"],
            model_version=r["model_version"],
            policy_version=r["policy_version"],
            latency_ms=r["latency_ms"],
            shadow=bool(r["shadow"]),
            revision=r["revision"],
            judged_at=req_db_time(r["judged_at"]),
            score_status=r["score_status"],
            language=r["language"],
        )

    async def first_seen(self, platform: str, server_id: str, member_id: str) -> datetime | None:
        """Time of the member's first message recorded in this server, or ``None`` if none was."""
        row = await self._read_one(
            "SELECT first_message_at FROM member_first_seen WHERE platform = ? AND server_id = ? AND member_id = ?",
            (platform, server_id, member_id),
        )
        return from_db_time(row[0]) if row else None


__all__ = ["KEY_CHUNK", "SqliteStore", "VerdictFields", "timeout_end", "verdict_fields", "verdict_reason"]
