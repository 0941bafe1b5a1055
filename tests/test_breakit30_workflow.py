"""The workflow between the platform and the mod log (thirtieth session's break-it pass): a review decision whose
case the mod log could not record (the store's StoreBusy: locked past the busy timeout, a lost PostgreSQL
connection, "nothing was written, retrying may succeed"), and a stop between a raid's slowmode and its record. Real
SQLite mod log and the strict fake enforcer (``tests/test_workflow.py``'s world)."""

from __future__ import annotations

import pytest

from bot.core.errors import StoreBusy
from bot.workflow import Refused
from tests.test_workflow import MOD, SERVER, make_world


@pytest.mark.parametrize(("decision", "write"), [("warn", "decide_review_opening"), ("delete", "open_case")])
async def test_a_decision_whose_case_could_not_be_recorded_leaves_the_card_open(tmp_path, monkeypatch, decision,
                                                                                 write):
    """A moderator's Warn (or Delete) on a report's card claims the item first, then opens the case. When that write
    failed (StoreBusy: nothing written), the error went up and the item stayed claimed "warned" by the moderator with
    no case and nothing done: the member was never warned, and clicking again answered "already decided". Now the
    moderator is told nothing was done, the item is open again, and the next click warns once. (A Warn's case is
    now opened in the claim's own write, ``decide_review_opening``: that is the write that fails here.)"""
    w = await make_world(tmp_path)
    try:
        msg = w.message("alice", "nothing the model flags")
        await w.judge(msg)
        await w.workflow.report("bob", SERVER, "alice", "rude", message_id=msg.id, channel_id="c1")
        (review_id,) = w.rows("SELECT id FROM review_items")[0]
        real = getattr(w.store, write)

        async def busy(*args, **kwargs):
            raise StoreBusy("modlog.db", "locked by another process for more than 5 s")

        monkeypatch.setattr(w.store, write, busy)
        with pytest.raises(Refused, match="nothing was done"):
            await w.workflow.decide_review(MOD, SERVER, review_id, decision)
        assert w.rows("SELECT decision, moderator_id FROM review_items") == [("open", None)]
        assert w.rows("SELECT count(*) FROM cases") == [(0,)]
        monkeypatch.setattr(w.store, write, real)
        assert (await w.workflow.decide_review(MOD, SERVER, review_id, decision)).ok
        assert w.rows("SELECT action, status FROM cases") == [(decision, "applied")]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


class _Stop(BaseException):
    """The process stopping (a kill): not an error any handler catches."""


async def test_a_stop_right_after_raid_slowmode_was_set_still_lifts_it(tmp_path):
    """A raid puts slowmode on its channel and saves raid mode (with its end) so a restart restores it or lifts the
    slowmode. The slowmode was set on the platform first and recorded after: a stop (or a failed write) between the
    two left the channel slowed with no raid mode on record, and no start ever lifted it. Raid mode is recorded
    before the platform is asked; the next start finds it and, past its end, lifts the slowmode."""
    import sqlite3
    from datetime import UTC, datetime, timedelta

    from bot.workflow import ModerationWorkflow

    w = await make_world(tmp_path)
    real = w.enforcer.set_slowmode

    async def slow_then_stop(server_id: str, channel_id: str, seconds: int):
        await real(server_id, channel_id, seconds)
        raise _Stop

    w.enforcer.set_slowmode = slow_then_stop  # type: ignore[method-assign]
    t0 = datetime.now(UTC)
    try:
        for i in range(5):
            await w.judge(w.message(f"r{i}", "you vermin", at=t0 + timedelta(seconds=i)))
    except _Stop:
        pass
    assert w.enforcer.slowmode == {"c1": 30}
    w.enforcer.set_slowmode = real  # type: ignore[method-assign]
    con = sqlite3.connect(w.store.path)  # the raid mode's end passed while the bot was stopped
    con.execute("UPDATE raid_modes SET until = '2000-01-01T00:00:00.000000+00:00'")
    con.commit()
    con.close()
    again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                               policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
    try:
        lines = await again.recover()
        assert any("slowmode lifted" in line for line in lines), lines
        assert w.enforcer.slowmode == {"c1": 0}
    finally:
        await again.close()
        await w.service.close()
        await w.store.close()


async def test_a_timeout_recovered_after_a_stop_says_why_it_was_not_sent(tmp_path):
    """A pending automatic timeout carried out at the next start, while the member is timed out longer already: it
    is not sent (it would cut the longer one short), and the case says why, as a timeout carried out live does; the
    recovery recorded it applied with no word."""
    from dataclasses import replace
    from datetime import timedelta

    from bot.core.models import ActionKind

    w = await make_world(tmp_path)
    try:
        info = w.enforcer.members.get("alice") or w.enforcer.add("alice")
        w.enforcer.members["alice"] = replace(info, timed_out_until=w.workflow.clock() + timedelta(days=7))
        case = await w.store.open_case("discord", SERVER, "alice", ActionKind.TIMEOUT, "flood",
                                       expires_at=w.workflow.clock() + timedelta(hours=1))
        await w.workflow.recover()
        assert w.enforcer.called("timeout") == []
        [(status, failure)] = w.rows("SELECT status, failure FROM cases WHERE number = ?", (case.number,))
        assert status == "applied" and failure is not None and failure.startswith("timeout not sent")
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()
