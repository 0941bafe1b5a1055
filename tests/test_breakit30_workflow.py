"""A review decision whose case the mod log could not record (thirtieth session's break-it pass). Real SQLite mod
log and the strict fake enforcer (``tests/test_workflow.py``'s world); the failed write is the store's StoreBusy
(locked past the busy timeout, a lost PostgreSQL connection: "nothing was written, retrying may succeed")."""

from __future__ import annotations

import pytest

from bot.core.errors import StoreBusy
from bot.workflow import Refused
from tests.test_workflow import MOD, SERVER, make_world


@pytest.mark.parametrize("decision", ["warn", "delete"])
async def test_a_decision_whose_case_could_not_be_recorded_leaves_the_card_open(tmp_path, monkeypatch, decision):
    """A moderator's Warn (or Delete) on a report's card claims the item first, then opens the case. When that write
    failed (StoreBusy: nothing written), the error went up and the item stayed claimed "warned" by the moderator with
    no case and nothing done: the member was never warned, and clicking again answered "already decided". Now the
    moderator is told nothing was done, the item is open again, and the next click warns once."""
    w = await make_world(tmp_path)
    try:
        msg = w.message("alice", "nothing the model flags")
        await w.judge(msg)
        await w.workflow.report("bob", SERVER, "alice", "rude", message_id=msg.id, channel_id="c1")
        (review_id,) = w.rows("SELECT id FROM review_items")[0]
        real = w.store.open_case

        async def busy(*args, **kwargs):
            raise StoreBusy("modlog.db", "locked by another process for more than 5 s")

        monkeypatch.setattr(w.store, "open_case", busy)
        with pytest.raises(Refused, match="nothing was done"):
            await w.workflow.decide_review(MOD, SERVER, review_id, decision)
        assert w.rows("SELECT decision, moderator_id FROM review_items") == [("open", None)]
        assert w.rows("SELECT count(*) FROM cases") == [(0,)]
        monkeypatch.setattr(w.store, "open_case", real)
        assert (await w.workflow.decide_review(MOD, SERVER, review_id, decision)).ok
        assert w.rows("SELECT action, status FROM cases") == [(decision, "applied")]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()
