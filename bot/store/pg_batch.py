"""Set-based verdict writes for :meth:`bot.store.postgres.PostgresStore.record_batch`.

Why: the shared ``record_batch`` of :mod:`bot.store.sqlite` runs 4-8 statements per record, each an in-process call
for SQLite but a network round trip for PostgreSQL (about 13x slower per message, docs/scaling.md). Here a batch's
messages, verdicts and first-seen times are written with a few statements over arrays (``INSERT ... SELECT FROM
unnest($1::text[], ...)``), whatever the batch's size; only the flagged records' cases, review items, strikes and
raids then run one by one (:meth:`bot.store.sqlite.SqliteStore._record_flagged`), in record order, in the same
transaction.

Same outcome as the one-by-one path, record for record:

* a key seen before (stored, or earlier in this batch) is written again only as an edit (newer ``edited_at``);
  copies of one key inside a batch are handled in *rounds* (round ``n`` holds each key's ``n``-th copy and looks
  up the state rounds ``< n`` left), so a copy sees what the copy before it wrote;
* one verdict per message across writers: the verdict insert is ``ON CONFLICT DO NOTHING RETURNING`` the keys it
  wrote; a key another writer inserted first is a duplicate (``inserted=False``), never a failed batch;
* rows are written in key order, so two writers inserting overlapping batches take the unique-index waits in one
  order (no deadlock between them).
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from bot.core.ports import VerdictRecord
from bot.core.records import MessageKey
from bot.store.schema import opt_db_time
from bot.store.sqlite import VerdictFields, verdict_fields

#: Existing verdicts' edit times for a set of keys (``$1..$3``: platform, server_id, message_id arrays).
_LOOKUP = (
    "SELECT v.platform, v.server_id, v.message_id, v.edited_at FROM verdicts v "
    "JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(platform, server_id, message_id) "
    "ON v.platform = k.platform AND v.server_id = k.server_id AND v.message_id = k.message_id"
)
_INSERT_MESSAGES = (
    "INSERT INTO messages (platform, server_id, message_id, channel_id, author_id, created_at, edited_at, excerpt) "
    "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], "
    "$8::text[]) "
    "ON CONFLICT (platform, server_id, message_id) DO UPDATE SET "
    "edited_at = excluded.edited_at, excerpt = excluded.excerpt, purged_at = NULL"
)
_VERDICT_COLUMNS = (
    "platform, server_id, message_id, member_id, channel_id, edited_at, scores, rule_hits, labels, flagged, action, "
    "strike_points, exempt, model_name, model_version, policy_version, latency_ms, shadow, judged_at, score_status, "
    "language"
)
#: Array types of :data:`_VERDICT_COLUMNS`, in order.
_VERDICT_TYPES = ("text",) * 9 + ("int4", "text", "int4", "text", "text", "text", "text", "float8", "int4", "text",
                                   "text", "text")
_INSERT_VERDICTS = (
    f"INSERT INTO verdicts ({_VERDICT_COLUMNS}) SELECT * FROM unnest("
    + ", ".join(f"${n}::{t}[]" for n, t in enumerate(_VERDICT_TYPES, start=1))
    + ") ON CONFLICT DO NOTHING RETURNING platform, server_id, message_id"
)
#: Earliest message time per member; the caller folds a batch's rows to one per member (an upsert may touch a row
#: once per statement).
_FIRST_SEEN = (
    "INSERT INTO member_first_seen (platform, server_id, member_id, first_message_at) "
    "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) "
    "ON CONFLICT (platform, server_id, member_id) DO UPDATE SET first_message_at = "
    "LEAST(excluded.first_message_at, member_first_seen.first_message_at)"
)
_UPDATE_MESSAGE = (
    "UPDATE messages SET channel_id = $1, edited_at = $2, excerpt = $3, purged_at = NULL "
    "WHERE platform = $4 AND server_id = $5 AND message_id = $6"
)
_UPDATE_VERDICT = (
    "UPDATE verdicts SET channel_id = $1, edited_at = $2, scores = $3, rule_hits = $4, labels = $5, flagged = $6, "
    "action = $7, strike_points = $8, exempt = $9, model_name = $10, model_version = $11, policy_version = $12, "
    "latency_ms = $13, shadow = $14, judged_at = $15, score_status = $16, language = $17, revision = revision + 1 "
    "WHERE platform = $18 AND server_id = $19 AND message_id = $20"
)


def copy_rounds(records: Sequence[VerdictRecord]) -> list[list[int]]:
    """Indices of ``records`` by copy: round 0 holds each key's first record, round 1 each key's second, ...;
    each round in record order and without two records of one key."""
    seen: dict[MessageKey, int] = {}
    rounds: list[list[int]] = []
    for i, record in enumerate(records):
        n = seen.get(record.verdict.message.key, 0)
        seen[record.verdict.message.key] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(i)
    return rounds


def _columns(rows: Sequence[Sequence[object]], width: int) -> list[list[object]]:
    """Rows turned into ``width`` column lists (the arrays ``unnest`` takes)."""
    return [[row[c] for row in rows] for c in range(width)]


async def write_verdicts(conn: asyncpg.Connection, records: Sequence[VerdictRecord], judged_at: str,
                         model_version: str | None) -> list[bool]:
    """Inside the caller's transaction: write the messages and verdicts of ``records`` (new keys inserted, newer
    edits updated with ``revision + 1``, replays and stale edits left alone) and the members' first-seen times.
    Returns, per record in order, whether its verdict was written (``RecordResult.inserted``).

    Statements: per round of copies (:func:`copy_rounds`; one round without copies) one lookup, then at most one
    insert each into ``messages``, ``verdicts`` and ``member_first_seen``, and the edits as one pipelined
    ``executemany`` per table.

    Raises:
        ValueError: a naive ``created_at`` / ``edited_at`` (before anything is written by this call).
    """
    fields: list[VerdictFields] = [verdict_fields(r.verdict, judged_at, model_version) for r in records]
    created = [opt_db_time(r.verdict.message.created_at) for r in records]
    written = [False] * len(records)
    for indices in copy_rounds(records):
        keys = [records[i].verdict.message.key for i in indices]
        stored: dict[MessageKey, str | None] = {
            (row[0], row[1], row[2]): row[3]
            for row in await conn.fetch(_LOOKUP, *_columns(keys, 3))
        }
        new: list[int] = []
        edits: list[int] = []
        for i, key in zip(indices, keys, strict=True):
            if key not in stored:
                new.append(i)
                continue
            edited, before = opt_db_time(records[i].verdict.message.edited_at), stored[key]
            if edited is not None and (before is None or edited > before):
                edits.append(i)

        def by_key(i: int) -> MessageKey:
            return records[i].verdict.message.key

        new.sort(key=by_key)
        edits.sort(key=by_key)
        if new:
            msgs = [records[i].verdict.message for i in new]
            await conn.execute(_INSERT_MESSAGES, *_columns(
                [(*m.key, m.channel.id, m.author.id, created[i], fields[i][1], records[i].excerpt)
                 for i, m in zip(new, msgs, strict=True)], 8))
            won = {(row[0], row[1], row[2]) for row in await conn.fetch(_INSERT_VERDICTS, *_columns(
                [(*m.key, m.author.id, *fields[i]) for i, m in zip(new, msgs, strict=True)], len(_VERDICT_TYPES)))}
            first: dict[tuple[str, str, str], str] = {}
            for i, m in zip(new, msgs, strict=True):
                if m.key not in won:
                    continue
                written[i] = True
                at = created[i]
                if at is None:  # an untimed message says nothing of when the member was first seen
                    continue
                member = (m.key[0], m.key[1], m.author.id)
                first[member] = min(first.get(member, at), at)
            if first:
                await conn.execute(_FIRST_SEEN, *_columns([(*member, at) for member, at in sorted(first.items())], 4))
        if edits:
            await conn.executemany(_UPDATE_MESSAGE, [
                (records[i].verdict.message.channel.id, fields[i][1], records[i].excerpt, *by_key(i)) for i in edits])
            await conn.executemany(_UPDATE_VERDICT, [(*fields[i], *by_key(i)) for i in edits])
            for i in edits:
                written[i] = True
    return written


__all__ = ["copy_rounds", "write_verdicts"]
