"""Break-it round on the workflow's use of the mod log: a write that fails between two of the workflow's separate
store transactions (``StoreBusy``: SQLite locked past its busy timeout, a PostgreSQL connection dropped; a kill at
that point leaves the same state) must leave the mod log consistent and lose no strike."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.core.errors import StoreBusy
from bot.core.models import ActionKind
from bot.workflow import Refused, common
from tests.test_workflow import MOD, SERVER, World

# ``world``: tests/conftest.py (the world of make_world, closed after the test)


async def _dismiss_with_the_removal_dropped(world: World) -> tuple[Any, list[int]]:
    """An automatic timeout (case #1) dismissed while the platform's timeout removal drops once (a network error
    after the overturn's commit): the removal stays owed. Returns the judged outcome and the removal's calls."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    real = world.enforcer.remove_timeout
    calls: list[int] = []

    async def dropped(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError("connection lost (test)")
        return await real(*args, **kwargs)

    world.enforcer.remove_timeout = dropped  # type: ignore[method-assign]
    with pytest.raises(ConnectionResetError):
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
    return outcome, calls


def _fail_once(store, name: str, times: int = 1) -> list[int]:
    """Make ``store.<name>`` raise StoreBusy on its first ``times`` calls (nothing written), then work again."""
    real = getattr(store, name)
    calls: list[int] = []

    async def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) <= times:
            raise StoreBusy(store.location, "locked by another process for more than 5 s (test)")
        return await real(*args, **kwargs)

    setattr(store, name, flaky)
    return calls


async def test_a_dismiss_whose_overturn_write_fails_can_be_done_again(world):
    """Dismiss claims the review item (``decide_review`` commits ``dismissed``), then pardons the strike and marks
    the case overturned in later, separate transactions. When the pardon's write fails, the item stays
    ``dismissed`` while the case stays ``applied`` with an active strike and the automatic timeout on: the
    moderator's retry is refused ("already decided") and recovery never looks at it, so the false positive keeps
    counting towards the member's escalation ladder for good."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    assert world.enforcer.called("timeout") == [("alice", 3600)]
    # the pardon's write, inside the one transaction Dismiss now is (after the item's claim in it): store.pardon is
    # no longer called by Dismiss, so the failure is put where that write now happens
    _fail_once(world.store, "_pardon_case")
    with pytest.raises(StoreBusy):
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
    try:  # the moderator clicks Dismiss again
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
    except Refused:
        pass
    await world.workflow.recover()
    decision = world.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))
    case = world.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,))
    strikes = world.rows("SELECT pardoned_at IS NOT NULL FROM strikes")
    assert (decision, case, strikes) == ([("dismissed",)], [("overturned",)], [(1,)]), \
        f"review {decision}, case {case}, strike pardoned {strikes}"


@pytest.fixture
def outcome_retries_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workflow tries a busy outcome write again at once (``OUTCOME_RETRY_S`` 0): for the tests of a write that
    stays busy past every try (``OUTCOME_TRIES``), which would only wait the retries out."""
    monkeypatch.setattr("bot.workflow.common.OUTCOME_RETRY_S", 0)


async def test_a_warning_whose_strike_write_fails_keeps_its_strike(outcome_retries_at_once, world):
    """A moderator's warn: ``open_case`` (pending), the DM, ``set_case_status`` (applied), then ``add_strike`` in a
    transaction of its own. When the strike's write fails, the case is recorded as applied with no strike; recovery
    only looks at pending cases, so the warning never counts (and the in-memory ledger, which counted it, disagrees
    with the mod log until it reloads). (A write busy for a moment is tried again: here it stays busy past every
    try.)"""
    _fail_once(world.store, "add_strike", times=common.OUTCOME_TRIES)
    with pytest.raises(StoreBusy):
        await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "be nice")
    await world.workflow.recover()
    cases = world.rows("SELECT number, status FROM cases")
    strikes = world.rows("SELECT case_number, points FROM strikes")
    assert cases == [(1, "applied")]
    assert strikes == [(1, 1)], f"case #1 applied but its strikes are {strikes}"


async def test_a_dismiss_cut_off_before_the_timeout_removal_lifts_it_at_the_next_start(world):
    """Dismiss commits the decision and the overturn, then asks the platform to remove the automatic timeout. A stop
    (here: the platform call raising) between the commit and the answer leaves the removal owed in the mod log: the
    next start removes it once, and a later start does nothing again."""
    outcome, calls = await _dismiss_with_the_removal_dropped(world)
    assert world.rows("SELECT status, lifted_at IS NULL FROM cases") == [("overturned", 1)]
    lines = await world.workflow.recover()
    assert lines == [f"case #{outcome.case_number}: timeout lifted (after a restart)"]
    assert world.enforcer.called("remove_timeout") == [("alice",)]
    assert world.rows("SELECT status, lifted_at IS NOT NULL FROM cases") == [("overturned", 1)]
    assert await world.workflow.recover() == []
    assert len(calls) == 2


async def test_a_card_ban_whose_raised_strike_fails_is_carried_out_again_with_it(outcome_retries_at_once, world):
    """Ban decided on the card of a message automod already struck: the ban's points replace the automatic strike's
    (``raise_strike``) in the write that records the case applied. When that write fails, the ban's case stays
    pending (never applied with the timeout's 2 points) and the in-memory ledger forgets the raise; recovery carries
    the case out again and records it applied with the ban's 5 points."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    assert world.rows("SELECT points FROM strikes") == [(2,)]
    _fail_once(world.store, "raise_strike", times=common.OUTCOME_TRIES)  # busy past every try
    with pytest.raises(StoreBusy):
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "ban", reason="threats, again and again")
    assert world.rows("SELECT action, status FROM cases ORDER BY number") == [("timeout", "applied"),
                                                                               ("ban", "pending")]
    active = await world.workflow.ledger.active("discord", SERVER, "alice", datetime.now(UTC))
    assert [s.points for s in active] == [2]
    await world.workflow.recover()
    assert world.rows("SELECT action, status FROM cases ORDER BY number") == [("timeout", "applied"),
                                                                               ("ban", "applied")]
    assert world.rows("SELECT points FROM strikes") == [(5,)]
    active = await world.workflow.ledger.active("discord", SERVER, "alice", datetime.now(UTC))
    assert [s.points for s in active] == [5]


async def test_a_refused_unban_is_a_failed_case_in_the_mod_log(world):
    """The workflow records a refused unban on any platform with bans (the adapters only pass the answer on): a
    failed ``log`` case with the platform's reason and a mod-log entry; the member's ban cases stay as they were."""
    await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "spam")
    world.enforcer.refuse["unban"] = "Missing Permissions (50013)"
    result = await world.workflow.unban(MOD, SERVER, "alice", "served the time")
    assert (result.ok, result.case_number, result.failure) == (False, 2, "Missing Permissions (50013)")
    assert result.text.startswith("Unban failed: Missing Permissions (50013)")
    assert world.rows("SELECT number, action, status, lifted_at IS NULL FROM cases") == [
        (1, "ban", "applied", 1), (2, "log", "failed", 1)]
    assert world.rows("SELECT failure FROM cases WHERE number = 2") == [("Missing Permissions (50013)",)]
    entry = world.desk.log[-1]
    assert (entry.case_number, entry.failed, entry.title) == (2, True, "Case #2: unban (FAILED)")


async def test_an_owed_timeout_removal_does_not_lift_a_later_moderators_timeout(world):
    """Dismiss overturns an automatic timeout and owes its removal; the platform call drops (a network error), so
    the removal stays owed. Later a moderator times the member out for 7 days (case #2, applied). At the next
    start retry_owed_timeouts removes "the" timeout of overturned case #1: on Discord a member has one timeout, so
    that lifts the moderator's standing one (bans have superseding_ban for this; timeouts have no such check)."""
    await _dismiss_with_the_removal_dropped(world)
    later = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "spamming again",
                                          duration_s=7 * 86400)
    assert later.ok
    await world.workflow.recover()
    assert world.enforcer.called("remove_timeout") == [], "the moderator's 7-day timeout was removed at the start"


async def test_dismissing_an_earlier_timeout_does_not_lift_a_later_moderators_timeout(world):
    """The same without a restart: an automatic timeout (case #1), then a moderator's 7-day timeout of the same
    member (case #2); Dismiss on case #1's card overturns it but must not call the platform's timeout removal (the
    member has one timeout: case #2's), and the card says why."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    later = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "spamming again",
                                          duration_s=7 * 86400)
    assert later.ok
    result = await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
    assert world.enforcer.called("remove_timeout") == []
    assert f"timeout not removed: case #{later.case_number} timed them out since" in result.text
