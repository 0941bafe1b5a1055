"""Break-it round on the mod log store (thirtieth session): a PostgreSQL connection lost while the bot runs, two
moderators changing one policy override at once, and what ``/mydata forget`` leaves of a member in the mod log.
The tests run on both backends unless they name one (the PostgreSQL server is the session's throwaway cluster of
tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from bot.core.errors import StoreBusy
from bot.core.ports import RecordResult
from bot.store import open_store
from tests.store_factories import make_record

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
async def database(request, pg_url: str, tmp_path: Path) -> str:
    """The mod log's location: a SQLite file or a fresh PostgreSQL database."""
    return pg_url if request.param == "postgresql" else str(tmp_path / "modlog.db")


@pytest.fixture
async def store(database: str):
    s = await open_store(database)
    yield s
    await s.close()


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
