"""Break-it round on the mod log store (thirtieth session): a PostgreSQL connection lost while the bot runs, two
moderators changing one policy override at once, and what ``/mydata forget`` leaves of a member in the mod log.
The tests run on both backends unless they name one (the PostgreSQL server is the session's throwaway cluster of
tests/conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import asyncpg
import pytest

from bot.core.errors import StoreBusy
from bot.core.ports import RecordResult
from bot.store import open_store
from tests.store_factories import T0, make_record

# ``database`` and ``store`` (both backends): tests/conftest.py


# -- a lost PostgreSQL connection -------------------------------------------------------------------------------------


async def _drop_connections(url: str) -> int:
    """Close every other connection to the database at ``url`` from the server's side (what a server restart, a
    failover or an idle-connection timeout of a proxy does to the bot's connection); returns how many."""
    admin = await asyncpg.connect(url)
    try:
        return int(await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"))
    finally:
        await admin.close()


async def test_a_lost_postgresql_connection_is_opened_again_on_the_next_try(pg_url):
    """The store holds one connection for the process's life. When the server dropped it (a restart, a failover),
    every later operation raised StoreBusy ("connection lost: connection is closed"), which the port documents as
    "retrying may succeed", and the moderation service retried the batch every 5 s for ever: the bot recorded and
    acted on nothing again until it was restarted. The try that meets the lost connection may fail (StoreBusy,
    nothing written); a later one opens a new connection and succeeds, and case numbers go on without a gap."""
    store = await open_store(pg_url)
    try:
        [first] = await store.record_batch([make_record("m1", open_case=True)])
        assert first.case_number == 1
        assert await _drop_connections(pg_url) == 1
        results: list[list[RecordResult] | None] = []
        for i in range(2, 5):
            try:
                results.append(await store.record_batch([make_record(f"m{i}", open_case=True)]))
            except StoreBusy:  # the try that finds the connection gone: nothing written, told to retry
                results.append(None)
        assert results[0] is None or results[0][0].case_number == 2
        assert results[-1] is not None, results
        numbers = [c.number for c in await store.list_cases("discord", "g1")]
        assert numbers == list(range(len(numbers), 0, -1)) and len(numbers) >= 3
    finally:
        await store.close()


# -- two moderators changing one policy override ----------------------------------------------------------------------

KEY = "labels.insult.review"


@pytest.mark.parametrize("existing", [True, False], ids=["overridden", "not-overridden"])
async def test_two_changes_of_one_override_at_once_audit_the_value_each_replaced(database, existing):
    """Every ``/policy set`` writes an audit row "old -> new". Two moderators (two bot processes on one PostgreSQL)
    setting one key at the same moment: on SQLite the second waits for the first (``BEGIN IMMEDIATE``) and its row
    names the first one's value as the old one; on PostgreSQL both read the value before either wrote (READ
    COMMITTED), so both rows named the value before them (or "no override") and the trail never showed the first
    change being replaced: the audit no longer explained the value in force."""
    from tests.test_store_postgres import _concurrently

    a, b = await open_store(database), await open_store(database)
    try:
        if existing:
            await a.set_policy_override("discord", "g1", "server", KEY, 0.5, "mod0")
        await _concurrently(database, "policy_overrides",
                            lambda: a.set_policy_override("discord", "g1", "server", KEY, 0.6, "mod-a"),
                            lambda: b.set_policy_override("discord", "g1", "server", KEY, 0.7, "mod-b"))
        trail = [(c.old, c.new) for c in reversed(await a.policy_changes("discord", "g1"))][-2:]
        in_force = await a.get_policy_override("discord", "g1", "server", KEY)
        first = 0.7 if in_force == 0.6 else 0.6
        assert sorted(trail, key=str) == sorted([(0.5 if existing else None, first), (first, in_force)], key=str)
    finally:
        await a.close()
        await b.close()


async def test_a_reset_between_a_changes_read_and_its_write_is_audited(database, monkeypatch):
    """A ``/policy reset`` of a key committed while a ``/policy set`` of it is under way (after the set read the
    value it replaces, before it wrote): on PostgreSQL the set's audit row named the value the reset had already
    removed (0.5 -> 0.6 after "0.5 -> none"), so the trail showed 0.5 replaced twice. The set must see what the
    reset left (no override), or keep the reset waiting until it is done (SQLite: ``BEGIN IMMEDIATE``)."""
    a, b = await open_store(database), await open_store(database)
    reset_done = asyncio.Event()
    read_once = a._one  # type: ignore[attr-defined]  # noqa: SLF001 - the set pauses after its read, as a slow process

    async def read_then_wait(sql: str, params: Iterable[Any] = ()) -> Any:
        row = await read_once(sql, params)
        if sql.startswith("SELECT value FROM policy_overrides"):
            with contextlib.suppress(TimeoutError):  # SQLite: the reset waits for this transaction, never done
                await asyncio.wait_for(reset_done.wait(), 1.0)
        return row

    async def reset() -> None:
        await asyncio.sleep(0.2)  # the set is in its transaction, past its read
        try:
            await b.reset_policy_override("discord", "g1", "server", KEY, "mod-b")
        finally:
            reset_done.set()

    try:
        await a.set_policy_override("discord", "g1", "server", KEY, 0.5, "mod0")
        monkeypatch.setattr(a, "_one", read_then_wait)
        await asyncio.gather(a.set_policy_override("discord", "g1", "server", KEY, 0.6, "mod-a"), reset())
        trail = [(c.action, c.old, c.new) for c in reversed(await a.policy_changes("discord", "g1"))][1:]
        if await a.get_policy_override("discord", "g1", "server", KEY) is None:  # the set first, then the reset
            assert trail == [("set", 0.5, 0.6), ("reset", 0.6, None)]
        else:  # the reset first, then the set on no override
            assert trail == [("reset", 0.5, None), ("set", None, 0.6)]
    finally:
        await a.close()
        await b.close()


# -- what /mydata forget leaves of a reporter's words ------------------------------------------------------------------

REPORT = "he DMs me at 555-867-5309 every night"


async def _tables_quoting(store, text: str) -> list[str]:
    """The ``table.column`` of the mod log still holding ``text``."""
    found = []
    for table, column in (("cases", "reason"), ("strikes", "reason"), ("review_items", "reason"),
                          ("reports", "reason"), ("appeals", "text")):
        async with store._guard():  # noqa: SLF001 - test reads the tables the port does not expose
            rows = await store._all(f"SELECT {column} FROM {table}")  # noqa: SLF001
        if any(text in str(r[0]) for r in rows):
            found.append(f"{table}.{column}")
    return found


async def test_forget_member_erases_a_reporters_words_a_decision_copied_into_cases_and_strikes(tmp_path):
    """A moderator deciding a report's card (Delete, Warn...) without typing a reason opens a case, and adds a
    strike, whose reason is "review #N: <the report's text>". ``/mydata forget`` of the reporter erased the text from
    the report and its review item but left it in that case's and strike's reasons (the mod log, ``/case``, the
    reported member's ``/mydata export``). The copies read "review #N: [text erased]"; the case stays."""
    from tests.test_workflow import MOD, SERVER, make_world

    w = await make_world(tmp_path)
    try:
        for decision in ("delete", "warn"):
            msg = w.message("alice", f"nothing the model flags ({decision})")
            await w.judge(msg)
            await w.workflow.report("bob", SERVER, "alice", REPORT, message_id=msg.id, channel_id="c1")
            (review_id,) = w.rows("SELECT MAX(id) FROM review_items WHERE source = 'report'")[0]
            assert (await w.workflow.decide_review(MOD, SERVER, review_id, decision)).ok
        assert await _tables_quoting(w.store, REPORT) == ["cases.reason", "strikes.reason", "review_items.reason",
                                                          "reports.reason"]
        await w.workflow.forget_member(SERVER, "bob")
        assert await _tables_quoting(w.store, "555-867-5309") == []
        assert sorted(w.rows("SELECT action, reason FROM cases WHERE moderator_id = 'mod'")) == [
            ("delete", "review #1: [text erased]"), ("warn", "review #2: [text erased]")]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_forget_member_erases_a_reporters_words_cut_or_prefilled_into_a_reason(store):
    """The copies are the report's text cut to the case's or strike's room ("review #N: <first 400 characters>"),
    or the prefilled reason of a kick or ban the moderator left as it was (cut with "…"): each is erased on both
    backends; a reason a moderator typed, and the case of another review item, are left alone."""
    from bot.core.models import ActionKind, review_reason

    text = REPORT + " " + "x" * 600
    item = await store.add_report("discord", "g1", "bob", "alice", text, message_id="m1", channel_id="c1")
    other = await store.add_report("discord", "g1", "carol", "alice", "spam", message_id="m2", channel_id="c1")
    copies = [review_reason(item.id, text)[:400], review_reason(item.id, text)[:499].strip() + "\u2026",
              review_reason(item.id, text)[:1000]]
    for reason in [*copies, "typed by the moderator", review_reason(other.id, "spam")]:
        case = await store.open_case("discord", "g1", "alice", ActionKind.WARN, reason, moderator_id="mod")
        await store.add_strike("discord", "g1", "alice", 1, T0 + timedelta(days=30), reason=reason,
                               case_number=case.number, now=T0)
    await store.forget_member("discord", "g1", "bob")
    assert await _tables_quoting(store, "555-867-5309") == []
    erased = review_reason(item.id, "[text erased]")
    expected = [erased] * 3 + ["typed by the moderator", review_reason(other.id, "spam")]
    assert [c.reason for c in reversed(await store.list_cases("discord", "g1"))] == expected
    async with store._guard():  # noqa: SLF001
        strikes = [r[0] for r in await store._all("SELECT reason FROM strikes ORDER BY id")]  # noqa: SLF001
    assert strikes == expected


# -- a raid recorded after a raider was forgotten ---------------------------------------------------------------------


async def test_a_raid_recorded_after_one_of_its_raiders_was_forgotten_keeps_their_pseudonym(store):
    """The raid detector's burst window lives in memory: a raider who ran /mydata forget before the burst's alert
    fired is still in the alert's members, and recording the raid (``record_raid``, or with its batch) wrote their
    real id into the mod log, which forget_member had replaced everywhere (and a later save of the board keeps the
    pseudonym: ``set_raid_state``). The mod log keeps the pseudonym here too; the others stay as they are."""
    from bot.core.models import RaidAlert

    pseudonym = await store.forget_member("discord", "g1", "u1")
    await store.record_raid("discord", RaidAlert("g1", "c1", T0, ("u2", "u1"), 12, "flagged_burst"))
    record = replace(make_record("m9", author="u3", open_case=True),
                     raid=RaidAlert("g1", "c2", T0, ("u1", "u3"), 9, "flagged_burst"))
    [res] = await store.record_batch([record])
    assert res.raid_id is not None
    assert [r.members for r in await store.list_raids("discord", "g1")] == [("u2", pseudonym), (pseudonym, "u3")]


async def test_forget_member_leaves_others_words_on_a_review_item_their_report_joined(store):
    """Reports of a message share its open review item (automod's, or the first reporter's). Forgetting a reporter
    whose report JOINED such an item erased the item's reason, which is not their words: automod's reason on the
    reported member's card ("delete for insult"), or the first reporter's report, gone from the mod log because a
    third member asked to be forgotten. Only an item whose reason is the forgotten reporter's own report is erased."""
    [flagged] = await store.record_batch([make_record("m1", author="alice", open_case=True, open_review=True)])
    joined = await store.add_report("discord", "g1", "bob", "alice", "bob's words", message_id="m1", channel_id="c1")
    first = await store.add_report("discord", "g1", "carol", "dave", "carol's words", message_id="m2", channel_id="c1")
    assert (await store.add_report("discord", "g1", "erin", "dave", "erin's words", message_id="m2")).id == first.id
    assert joined.id == flagged.review_id
    await store.forget_member("discord", "g1", "bob")
    await store.forget_member("discord", "g1", "erin")
    assert [(i.id, i.reason) for i in await store.modlog_reviews("discord", "g1")] == [
        (joined.id, "delete for insult"), (first.id, "carol's words")]
    assert await _tables_quoting(store, "bob's words") == await _tables_quoting(store, "erin's words") == []
    await store.forget_member("discord", "g1", "carol")  # the item's own reporter: her words go
    item = await store.get_review(first.id)
    assert item is not None and item.reason == ""


# -- two processes upgrading one SQLite mod log ------------------------------------------------------------------------


async def test_two_processes_opening_an_older_sqlite_mod_log_at_once_both_start(tmp_path, monkeypatch):
    """Two shard processes (or a bot and a scan) started together after an upgrade both open the same older mod
    log. Each backs it up before migrating, to ``<db>.bak-<version>-<UTC second>``; in the same second both chose
    the same name, and the second's backup found the first's file ("already exists; not overwritten"), so it refused
    the mod log (StoreRefused) and that process did not start. Both start now; the mod log is migrated once and
    every backup left beside it holds the old version."""
    import sqlite3

    from bot.store.schema import LATEST_VERSION, connect, migrate
    from bot.store.sqlite import SqliteStore

    path = tmp_path / "modlog.db"
    db = await connect(path)
    assert await migrate(db, target=LATEST_VERSION - 1) == LATEST_VERSION - 1
    await db.close()
    monkeypatch.setattr("bot.store.schema.utcnow", lambda: T0)  # both in the same second
    opened = await asyncio.gather(SqliteStore.open(path), SqliteStore.open(path), return_exceptions=True)
    try:
        assert all(isinstance(s, SqliteStore) for s in opened), opened
    finally:
        for s in opened:
            if isinstance(s, SqliteStore):
                await s.close()
    copies = sorted(tmp_path.glob("modlog.db.bak-*"))
    assert copies
    for copy in copies:
        raw = sqlite3.connect(copy)
        try:
            assert raw.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION - 1, copy.name
        finally:
            raw.close()
