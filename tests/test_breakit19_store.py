"""Deciding an appeal on PostgreSQL while another process decides it (nineteenth session's break-it pass). Under
PostgreSQL's READ COMMITTED, the store read the appeal's status and then updated it unconditionally: a second
decision that read "open" before the first committed waited for its row lock and then overwrote it (overturned, then
"upheld" by the second moderator: both acted). The update is now conditional, so the second decision is refused.
A real PostgreSQL server started by the tests (tests/pg_server.py); the other process is a raw asyncpg connection
holding the first decision uncommitted."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from bot.core.errors import AppealAlreadyDecided
from bot.core.models import ActionKind
from bot.store import open_store

pytestmark = pytest.mark.postgres


async def test_a_decision_racing_another_process_s_decision_is_refused_not_written_over_it(pg_url):
    store = await open_store(pg_url)
    other = await asyncpg.connect(pg_url)
    try:
        case = await store.open_case("discord", "g1", "alice", ActionKind.WARN, "rude", moderator_id="mod0")
        appeal_id = await store.open_appeal("discord", "g1", case.number, "alice", "I was quoting someone")
        tx = other.transaction()
        await tx.start()  # the other process: its decision is written, not yet committed
        await other.execute("UPDATE appeals SET status = 'overturned', moderator_id = 'modA' WHERE id = $1",
                            appeal_id)
        second = asyncio.create_task(store.decide_appeal(appeal_id, True, "modB"))
        for _ in range(200):  # until the second decision waits for the row lock the first one holds
            waiting = await other.fetchval("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                           "AND datname = current_database()")
            if waiting or second.done():
                break
            await asyncio.sleep(0.01)
        await tx.commit()
        with pytest.raises(AppealAlreadyDecided, match="already decided: overturned"):
            await asyncio.wait_for(second, 10)
        decided = await store.get_appeal(appeal_id)
        assert decided is not None and (decided.status, decided.moderator_id) == ("overturned", "modA")
    finally:
        await other.close()
        await store.close()
