"""The store on a REAL PostgreSQL server that these tests start themselves (tests/pg_server.py: initdb + pg_ctl as
the ``postgres`` user in a temporary folder, on a free port), a fresh database per test.

Every store test of tests/test_store.py, tests/test_store_moderation.py and tests/test_store_privacy.py that takes
the ``store`` fixture runs here again against PostgreSQL (same assertions, one SQL implementation), plus what only
several processes on one server can show: two writers racing for case numbers, verdicts, raids and appeals, two
processes migrating at once, two scans of one export at once, and the refusals (wrong password, unreachable server,
malformed URL, another application's database, a newer schema). Without PostgreSQL binaries the tests skip with
the reason, except under ``CI`` where they fail.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

import tests.test_store as _store_tests
import tests.test_store_catchup as _catchup_tests
import tests.test_store_moderation as _moderation_tests
import tests.test_store_privacy as _privacy_tests
from bot.core.errors import StoreRefused
from bot.core.models import ActionKind, RaidAlert
from bot.store import open_store
from bot.store.postgres import PG_LATEST_VERSION
from tests.store_factories import T0, make_record

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[1]
#: Store tests that check a SQLite-only detail (the exception type of a foreign key violation).
SQLITE_ONLY = {"test_foreign_keys_enforced"}


@pytest.fixture
async def store(pg_url: str):
    """A PostgreSQL mod log (the ``store`` fixture the imported store tests use)."""
    s = await open_store(pg_url)
    yield s
    await s.close()


def _import_store_tests() -> None:
    """Bring every test taking ``store`` from the SQLite store test files into this module (run on PostgreSQL)."""
    for module in (_store_tests, _moderation_tests, _privacy_tests, _catchup_tests):
        for name, fn in vars(module).items():
            if name.startswith("test_") and name not in SQLITE_ONLY and callable(fn) \
                    and "store" in inspect.signature(fn).parameters:
                globals()[f"{name}__{module.__name__.rsplit('.', 1)[-1]}"] = fn


_import_store_tests()

BURST = RaidAlert("g1", "c1", T0, ("u1", "u2", "u3"), 12, "flagged_burst")


async def test_store_is_postgres(store):
    """open_store on a postgresql:// URL gives the PostgreSQL backend, its location with the password hidden."""
    assert store.backend == "postgresql"
    assert "***" in store.location and "contract-suite" not in store.location
    assert await store.schema_version() == PG_LATEST_VERSION


async def test_two_writers_record_one_raid(pg_url):
    """Two connections raising the same burst at once record one raid; only one gets its id."""
    a, b = await asyncio.gather(open_store(pg_url), open_store(pg_url))
    try:
        results = await asyncio.gather(a.record_batch([dataclasses.replace(make_record("ma"), raid=BURST)]),
                                       b.record_batch([dataclasses.replace(make_record("mb"), raid=BURST)]))
        assert sorted(r.raid_id is None for [r] in results) == [False, True]
        assert len(await a.list_raids("discord", "g1")) == 1
    finally:
        await a.close()
        await b.close()


async def test_two_writers_one_verdict_per_message_gap_free_cases(pg_url):
    """Two connections recording the same 40 flagged messages at once: each once, case numbers 1..40."""
    a, b = await asyncio.gather(open_store(pg_url), open_store(pg_url))
    records = [make_record(f"m{i:03d}", open_case=True) for i in range(40)]
    try:
        results = await asyncio.gather(*(s.record_batch(records[i:i + 5]) for s in (a, b) for i in range(0, 40, 5)))
        inserted = [r for batch in results for r in batch if r.inserted]
        assert len(inserted) == 40
        assert sorted(r.case_number or 0 for r in inserted) == list(range(1, 41))
    finally:
        await a.close()
        await b.close()


async def test_two_writers_open_cases_gap_free(pg_url):
    """Moderator cases opened from two connections at once get unique, gap-free numbers."""
    a, b = await asyncio.gather(open_store(pg_url), open_store(pg_url))
    try:
        cases = await asyncio.gather(*(s.open_case("discord", "g1", f"u{i}", ActionKind.WARN, "r")
                                       for i in range(25) for s in (a, b)))
        assert sorted(c.number for c in cases) == list(range(1, 51))
    finally:
        await a.close()
        await b.close()


async def test_failed_batch_leaves_neither_verdicts_nor_raid(store):
    """A failure inside the batch transaction rolls back the verdicts and the raid together."""
    from bot.core.models import Strike
    from tests.store_factories import STRIKE_TTL

    bad = dataclasses.replace(make_record("m2"), strike=Strike("other", "u1", 1, T0, T0 + STRIKE_TTL, "auto"))
    with pytest.raises(ValueError, match="strike for server"):
        await store.record_batch([dataclasses.replace(make_record("m1"), raid=BURST), bad])
    assert await store.known_messages([("discord", "g1", "m1")]) == {}
    assert await store.list_raids("discord", "g1") == []


async def test_concurrent_migration_runs_once(pg_url):
    """Four processes' worth of connections opening a new database at once migrate it once, to the latest."""
    stores = await asyncio.gather(*(open_store(pg_url) for _ in range(4)))
    try:
        assert {await s.schema_version() for s in stores} == {PG_LATEST_VERSION}
        conn = await asyncpg.connect(pg_url)
        assert await conn.fetchval("SELECT COUNT(*) FROM schema_version") == 1
        await conn.close()
    finally:
        for s in stores:
            await s.close()


async def test_newer_schema_is_refused(pg_url):
    """A database migrated by a newer bot is refused with the version, naming the database (password hidden)."""
    await (await open_store(pg_url)).close()
    conn = await asyncpg.connect(pg_url)
    await conn.execute("UPDATE schema_version SET version = $1", PG_LATEST_VERSION + 1)
    await conn.close()
    with pytest.raises(StoreRefused, match="newer than this code") as caught:
        await open_store(pg_url)
    assert "contract-suite" not in str(caught.value) and "***" in caught.value.database


async def test_foreign_database_is_refused(pg_url):
    """A database holding another application's tables is refused and left untouched."""
    conn = await asyncpg.connect(pg_url)
    await conn.execute("CREATE TABLE invoices (id integer)")
    await conn.close()
    with pytest.raises(StoreRefused, match="another application"):
        await open_store(pg_url)
    conn = await asyncpg.connect(pg_url)
    tables = [r[0] for r in await conn.fetch("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'public'")]
    await conn.close()
    assert tables == ["invoices"]


async def test_wrong_password_is_refused(pg_server):
    """A refused login is StoreRefused naming the URL without the password."""
    with pytest.raises(StoreRefused, match="password authentication failed") as caught:
        await open_store(pg_server.url(password="not-it"))
    assert "not-it" not in str(caught.value)


async def test_unreachable_server_and_malformed_url_are_refused():
    """An unreachable server and a malformed URL are StoreRefused, one line each, password hidden."""
    with pytest.raises(StoreRefused, match="cannot reach the server") as caught:
        await open_store("postgresql://u:secret@127.0.0.1:1/db")
    assert "secret" not in str(caught.value)
    with pytest.raises(StoreRefused, match="malformed") as caught:
        await open_store("postgresql://u:secret@[oops/db")
    assert "secret" not in str(caught.value)


def test_cli_purge_wrong_password_is_one_line(pg_server, capsys):
    """``purge --db <url with a wrong password>``: exit 2, one line, the password hidden."""
    from bot.cli import main

    assert main(["purge", "--db", pg_server.url(password="not-it"), "--days", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not-it" not in err[0] and "modbot:***@127.0.0.1" in err[0]


def test_a_password_in_the_url_query_is_hidden_as_well(pg_server, capsys):
    """libpq and asyncpg also take the password as a query parameter (``?password=``, and ``?sslpassword=`` for the
    client key): it is hidden wherever the mod log's location is shown (here purge's result line and its one-line
    error; the ready line, ``/modbot status`` and the start's "mod log:" line say the same), as the password
    before the ``@`` is. It was printed in clear."""
    from bot.cli import main
    from tests.pg_server import PASSWORD

    base = f"postgresql://modbot@127.0.0.1:{pg_server.port}/postgres"
    assert main(["purge", "--db", f"{base}?password={PASSWORD}&sslpassword=key-s3cret", "--days", "30"]) == 0
    out = capsys.readouterr().out
    assert PASSWORD not in out and "key-s3cret" not in out
    assert f"from {base}?password=***&sslpassword=***" in out
    assert main(["purge", "--db", f"{base}?sslmode=disable&password=not-it", "--days", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not-it" not in err[0] and f"{base}?sslmode=disable&password=***" in err[0]


@pytest.mark.slow
async def test_two_scans_of_one_export_at_once_record_each_message_once(pg_url, fake_scorer_url):
    """Two ``scan`` processes of the same export into one PostgreSQL: every message once, one raid, cases 1..n.
    Scored by the session's fake scoring service (the keyword scores flag the export's abuse, so its raid is seen)."""
    export = ROOT / "examples" / "discord"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MODBOT_SCORER_URL": fake_scorer_url}
    cmd = [sys.executable, "-m", "bot", "scan", str(export), "--db", pg_url, "--no-progress"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert all(err.count("mod log: postgresql://modbot:***@") == 1 for _, err in outs)
    conn = await asyncpg.connect(pg_url)
    counts = await conn.fetchrow("SELECT COUNT(*), COUNT(DISTINCT (platform, server_id, message_id)) FROM verdicts")
    assert counts is not None
    total, distinct = counts
    numbers = [r[0] for r in await conn.fetch("SELECT number FROM cases ORDER BY number")]
    raids = await conn.fetchval("SELECT COUNT(*) FROM raids")
    await conn.close()
    assert total == distinct > 0
    assert numbers == list(range(1, len(numbers) + 1))
    assert raids == 1  # the example export holds one burst (tests/test_scan.py)


async def test_latest_messages_on_postgres(store):
    """latest_messages (catch-up after a restart) gives each channel's latest recorded message on PostgreSQL too."""
    from datetime import timedelta

    await store.record_batch([make_record("999", created=T0), make_record("1000", created=T0 + timedelta(minutes=2)),
                              make_record("7", created=T0, server="g2")])
    assert await store.latest_messages("discord", "g1") == {"c1": ("1000", T0 + timedelta(minutes=2))}
    assert await store.latest_messages("slack", "g1") == {}


async def test_modlog_reads_and_case_reason_on_postgres(store):
    """The live mod-log report's reads (servers, cases with labels, raids with every raider) and an audited case
    reason change work on PostgreSQL."""
    from datetime import timedelta

    raid = RaidAlert("g1", "c1", T0, ("u1",), 3, "flagged_burst")
    await store.record_batch([dataclasses.replace(make_record("m1", open_case=True), raid=raid)])
    await store.record_batch([make_record("m2", author="u9", open_case=True, created=T0 + timedelta(seconds=5))])
    assert await store.modlog_servers() == [("discord", "g1")]
    cases = await store.modlog_cases("discord", "g1")
    assert [c.case.number for c in cases] == [1, 2] and cases[0].labels == ("insult",)
    [(_, alert, raiders)] = await store.modlog_raids("discord", "g1")
    assert alert.reason == "flagged_burst" and raiders == ("u1", "u9")
    updated, note = await store.set_case_reason("discord", "g1", 1, "slur in #general", "mod1")
    assert updated.reason == "slur in #general" and note.number == 3 and note.action is ActionKind.LOG


async def _copies_scenario(store) -> tuple[list, list, dict]:
    """Two batches with copies of recorded messages (batch 2 repeats m1, m2) and copies inside a batch (m3 twice,
    m4 then its edit); the results and what the store kept."""
    edit = T0 + timedelta(minutes=1)
    first = await store.record_batch([
        make_record("m1", open_case=True, open_review=True, strike_points=1),
        make_record("m2"),
    ])
    second = await store.record_batch([
        make_record("m1", open_case=True, open_review=True, strike_points=1),  # replay: nothing
        make_record("m2"),  # replay: nothing
        make_record("m3", author="u2", open_case=True, strike_points=1),
        make_record("m3", author="u2", open_case=True, strike_points=1),  # copy in the batch: nothing
        make_record("m4", author="u3", open_review=True),
        make_record("m4", author="u3", edited=edit, open_review=True),  # its edit in the same batch
        make_record("m1", edited=edit, open_case=True, strike_points=1),  # edit of a recorded message
        make_record("m4", author="u3", edited=edit, open_review=True),  # copy of that edit: nothing
    ])
    kept = {
        "known": await store.known_messages([("discord", "g1", f"m{i}") for i in range(1, 5)]),
        "revisions": {m: (await store.get_verdict("discord", "g1", m)).revision for m in ("m1", "m2", "m3", "m4")},
        "first_seen": await store.first_seen("discord", "g1", "u3"),
    }
    return first, second, kept


async def test_batch_with_copies_records_each_once_like_sqlite(pg_url, tmp_path):
    """Copies of recorded messages and copies inside one batch are recorded once; an edit (even of a message the
    same batch inserted) updates the verdict; PostgreSQL's set-based batch gives SQLite's RecordResults."""
    from bot.core.ports import RecordResult

    results = {}
    for name, database in (("sqlite", str(tmp_path / "modlog.db")), ("postgresql", pg_url)):
        s = await open_store(database)
        try:
            assert s.backend == name
            results[name] = await _copies_scenario(s)
        finally:
            await s.close()
    first, second, kept = results["postgresql"]
    assert first == [RecordResult(inserted=True, case_number=1, review_id=1, strike_added=True),
                     RecordResult(inserted=True)]
    assert second == [
        RecordResult(inserted=False),
        RecordResult(inserted=False),
        RecordResult(inserted=True, case_number=2, strike_added=True),
        RecordResult(inserted=False),
        RecordResult(inserted=True, review_id=2),
        RecordResult(inserted=True, review_id=2, review_updated=True),
        RecordResult(inserted=True, case_number=3, strike_added=False),
        RecordResult(inserted=False),
    ]
    assert kept["revisions"] == {"m1": 2, "m2": 1, "m3": 1, "m4": 2}
    assert kept["first_seen"] == T0
    assert results["postgresql"] == results["sqlite"]


async def test_first_batch_gives_a_new_mod_log_planner_statistics(pg_url):
    """A new mod log has no planner statistics until autovacuum's first round; the first written batch analyzes
    its tables, so a lookup by full message key goes through the unique index (not another index and a filter)."""
    store = await open_store(pg_url)
    try:
        conn = await asyncpg.connect(pg_url)
        try:
            has_stats = "SELECT count(*) FROM pg_stats WHERE tablename = 'verdicts'"
            assert await conn.fetchval(has_stats) == 0
            await store.record_batch([make_record(f"m{i}", author=f"u{i % 3}") for i in range(2000)])
            assert await conn.fetchval(has_stats) > 0
            plan = "\n".join(r[0] for r in await conn.fetch(
                "EXPLAIN SELECT edited_at FROM verdicts WHERE platform = 'discord' AND server_id = 'g1' "
                "AND message_id = 'm7'"))
            assert "verdicts_platform_server_id_message_id_key" in plan
        finally:
            await conn.close()
    finally:
        await store.close()


async def _appeals_of_case_one(database: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``(status, text)`` of every appeal of case #1 in g1, and the sources of its review items."""
    if database.startswith("postgresql://"):
        conn = await asyncpg.connect(database)
        try:
            appeals = [tuple(r) for r in await conn.fetch(
                "SELECT status, text FROM appeals WHERE case_number = 1 ORDER BY id")]
            reviews = [r[0] for r in await conn.fetch(
                "SELECT source FROM review_items WHERE case_number = 1 ORDER BY id")]
        finally:
            await conn.close()
        return appeals, reviews
    import sqlite3

    with sqlite3.connect(database) as db:
        appeals = [tuple(r) for r in db.execute("SELECT status, text FROM appeals WHERE case_number = 1 ORDER BY id")]
        reviews = [r[0] for r in db.execute("SELECT source FROM review_items WHERE case_number = 1 ORDER BY id")]
    return appeals, reviews


async def _concurrently(database: str, table: str, a_call, b_call) -> list[object]:
    """Run ``a_call()`` and ``b_call()`` (each one store operation on its own connection) at the same moment; the
    results (value or exception). On PostgreSQL both are let past the operation's reads before either inserts
    into ``table``: a third connection holds it in SHARE mode (reads pass, inserts wait) until both wait, at the
    insert or, where the operation takes an advisory lock before its reads, one of them at that lock."""
    if not database.startswith("postgresql://"):
        return list(await asyncio.gather(a_call(), b_call(), return_exceptions=True))
    blocker = await asyncpg.connect(database)
    try:
        tx = blocker.transaction()
        await tx.start()
        await blocker.execute(f"LOCK TABLE {table} IN SHARE MODE")
        running = asyncio.gather(a_call(), b_call(), return_exceptions=True)
        waiting = (f"SELECT count(*) FROM pg_locks WHERE (relation = '{table}'::regclass OR locktype = 'advisory') "
                   "AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")
        for _ in range(500):
            if await blocker.fetchval(waiting) == 2:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError(f"the two operations never both reached their insert into {table} (or a lock)")
        await tx.commit()
        return list(await running)
    finally:
        await blocker.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_two_connections_appeal_one_case_at_once(backend, pg_url, tmp_path):
    """Two connections (two bot processes) filing an appeal of the same case at the same moment: one is filed, the
    other gets the store's "already an open appeal" answer (AppealAlreadyOpen), never a driver error; one appeal
    and one appeal review item are kept (the loser's review item is rolled back with it)."""
    from bot.core.errors import AppealAlreadyOpen

    database = pg_url if backend == "postgresql" else str(tmp_path / "modlog.db")
    a = await open_store(database)
    b = await open_store(database)
    try:
        await a.open_case("discord", "g1", "u1", ActionKind.WARN, "insult")
        assert a.backend == b.backend == backend
        results = await _concurrently(database, "appeals",
                                      lambda: a.open_appeal("discord", "g1", 1, "u1", "from a"),
                                      lambda: b.open_appeal("discord", "g1", 1, "u1", "from b"))
        filed = [r for r in results if isinstance(r, int)]
        refused = [r for r in results if not isinstance(r, int)]
        assert len(filed) == 1 and len(refused) == 1, results
        assert isinstance(refused[0], AppealAlreadyOpen), repr(refused[0])
        assert [appeal.id for appeal in await a.open_appeals("discord", "g1")] == filed
    finally:
        await a.close()
        await b.close()
    appeals, reviews = await _appeals_of_case_one(database)
    assert len(appeals) == 1 and appeals[0][0] == "open"
    assert reviews == ["appeal"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_database_itself_keeps_one_open_appeal_per_case(backend, pg_url, tmp_path):
    """The one-open-appeal rule is the database's (unique partial index appeals_one_open), not only the store's
    check: a second open appeal of a case written past the store is refused, a decided one beside it is not."""
    import sqlite3

    database = pg_url if backend == "postgresql" else str(tmp_path / "modlog.db")
    store = await open_store(database)
    try:
        await store.open_case("discord", "g1", "u1", ActionKind.WARN, "insult")
        await store.open_appeal("discord", "g1", 1, "u1", "first")
    finally:
        await store.close()
    insert = ("INSERT INTO appeals (platform, server_id, case_number, member_id, status, created_at) "
              "VALUES ('discord', 'g1', 1, 'u1', '{status}', '2026-01-01T00:00:00.000000+00:00')")
    if backend == "postgresql":
        conn = await asyncpg.connect(database)
        try:
            with pytest.raises(asyncpg.UniqueViolationError, match="appeals_one_open"):
                await conn.execute(insert.format(status="open"))
            await conn.execute(insert.format(status="upheld"))
            assert await conn.fetchval("SELECT count(*) FROM appeals") == 2
        finally:
            await conn.close()
    else:
        with sqlite3.connect(database) as db:
            with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
                db.execute(insert.format(status="open"))
            db.execute(insert.format(status="upheld"))
            assert db.execute("SELECT count(*) FROM appeals").fetchone() == (2,)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_two_connections_report_one_message_at_once(backend, pg_url, tmp_path):
    """One reporter's report of one message arriving on two connections at the same moment (an interaction
    delivered twice, to two bot processes): both answers are the same review item, never a driver error; one report
    and one review item are kept, as for a report repeated later."""
    from bot.core.models import ReviewItem

    database = pg_url if backend == "postgresql" else str(tmp_path / "modlog.db")
    a = await open_store(database)
    b = await open_store(database)
    try:
        results = await _concurrently(
            database, "reports",
            lambda: a.add_report("discord", "g1", "r1", "u1", "slur", message_id="m1", channel_id="c1"),
            lambda: b.add_report("discord", "g1", "r1", "u1", "slur", message_id="m1", channel_id="c1"))
        items = [r for r in results if isinstance(r, ReviewItem)]
        assert len(items) == 2, results
        assert len({item.id for item in items}) == 1
        assert [item.id for item in await a.open_reviews("discord", "g1")] == [items[0].id]
    finally:
        await a.close()
        await b.close()
    if backend == "postgresql":
        conn = await asyncpg.connect(database)
        try:
            counts = (await conn.fetchval("SELECT count(*) FROM reports"),
                      await conn.fetchval("SELECT count(*) FROM review_items"))
        finally:
            await conn.close()
    else:
        import sqlite3

        with sqlite3.connect(database) as db:
            counts = (db.execute("SELECT count(*) FROM reports").fetchone()[0],
                      db.execute("SELECT count(*) FROM review_items").fetchone()[0])
    assert counts == (1, 1)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_two_connections_report_one_member_at_once(backend, pg_url, tmp_path):
    """One reporter's report about a member, with no message (/report on a member), arriving on two connections at
    the same moment: as when the second comes later, both reports are recorded and both share ONE open review item
    (one reporter's repeated reports about a member share their open item), never two items for one member."""
    from bot.core.models import ReviewItem

    database = pg_url if backend == "postgresql" else str(tmp_path / "modlog.db")
    a = await open_store(database)
    b = await open_store(database)
    try:
        results = await _concurrently(
            database, "review_items",
            lambda: a.add_report("discord", "g1", "r1", "u1", "spamming DMs"),
            lambda: b.add_report("discord", "g1", "r1", "u1", "spamming DMs again"))
        items = [r for r in results if isinstance(r, ReviewItem)]
        assert len(items) == 2, results
        assert len({item.id for item in items}) == 1, items
        assert [item.id for item in await a.open_reviews("discord", "g1")] == [items[0].id]
        # another reporter's report about the same member is theirs (its own item), as it is one at a time
        other = await a.add_report("discord", "g1", "r2", "u1", "me too")
        assert other.id != items[0].id
    finally:
        await a.close()
        await b.close()
    if backend == "postgresql":
        conn = await asyncpg.connect(database)
        try:
            reports = [tuple(r) for r in await conn.fetch("SELECT reporter_id, review_id FROM reports ORDER BY id")]
        finally:
            await conn.close()
    else:
        import sqlite3

        with sqlite3.connect(database) as db:
            reports = [tuple(r) for r in db.execute("SELECT reporter_id, review_id FROM reports ORDER BY id")]
    assert reports == [("r1", items[0].id), ("r1", items[0].id), ("r2", other.id)]
