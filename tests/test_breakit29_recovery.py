"""Break-it (session 29): owed timeout removals after a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.models import ActionKind
from tests.test_workflow import MOD, SERVER, World, make_world


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    w = await make_world(tmp_path)
    yield w
    await w.workflow.close()
    await w.service.close()
    await w.store.close()


async def test_an_owed_timeout_removal_does_not_lift_a_later_moderators_timeout(world):
    """Dismiss overturns an automatic timeout and owes its removal; the platform call drops (a network error), so
    the removal stays owed. Later a moderator times the member out for 7 days (case #2, applied). At the next
    start retry_owed_timeouts removes "the" timeout of overturned case #1: on Discord a member has one timeout, so
    that lifts the moderator's standing one (bans have superseding_ban for this; timeouts have no such check)."""
    outcome = await world.judge(world.message("alice", "threatword now"))
    real = world.enforcer.remove_timeout
    calls: list[int] = []

    async def dropped(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError("connection lost (test)")
        return await real(*args, **kwargs)

    world.enforcer.remove_timeout = dropped
    with pytest.raises(ConnectionResetError):
        await world.workflow.decide_review(MOD, SERVER, outcome.review_id, "dismiss")
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
