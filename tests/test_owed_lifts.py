"""An appeal that overturns a ban whose unban the platform refuses: the unban is owed, retried later (a timer and
each start), bounded, each outcome noted on the case, and never done again once it succeeded."""

from __future__ import annotations

import asyncio

import pytest

from bot.core.models import ActionKind
from bot.workflow import ModerationWorkflow, common, sanctions
from tests.test_workflow import MOD, SERVER, make_world


async def _overturn_refused(w, *, duration_s: int | None = 3600) -> int:
    """Ban alice, let her appeal, and overturn the appeal while the platform refuses the unban; the case number."""
    ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=duration_s)
    await w.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
    (appeal_id,) = w.rows("SELECT id FROM appeals")[0]
    w.enforcer.refuse["unban"] = "Missing Permissions (50013)"
    decided = await w.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert not decided.ok and "try 1 of 5" in decided.text
    return ban.case_number


def _restarted(w) -> ModerationWorkflow:
    return ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                              policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)


async def test_a_refused_unban_of_an_overturned_ban_is_retried_at_the_next_start_once(tmp_path):
    """Refused at the overturn, the unban is tried at the next start; once it succeeded, neither a later start nor
    a timer unbans again, and the case records both outcomes."""
    w = await make_world(tmp_path)
    try:
        number = await _overturn_refused(w, duration_s=None)
        await w.workflow.close()
        del w.enforcer.refuse["unban"]
        again = _restarted(w)
        lines = await again.recover()
        assert lines == [f"case #{number}: ban lifted (tried again)"]
        assert len(w.enforcer.called("unban")) == 2
        ((status, failure, lifted),) = w.rows("SELECT status, failure, lifted_at IS NOT NULL FROM cases "
                                              "WHERE number = ?", (number,))
        assert (status, lifted) == ("overturned", 1)
        assert failure.startswith("ban not lifted: Missing Permissions (50013) (try 1 of 5")
        assert failure.endswith("; ban lifted (tried again)")
        await again.close()
        third = _restarted(w)
        assert await third.recover() == []
        await asyncio.sleep(0.05)
        assert len(w.enforcer.called("unban")) == 2  # done once, never again
        await third.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_the_retry_timer_lifts_it_without_a_restart(world, monkeypatch):  # noqa: F811
    """In the running bot the refused unban is tried again after the retry delay."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.2)
    number = await _overturn_refused(world)
    del world.enforcer.refuse["unban"]
    await asyncio.sleep(0.5)
    assert len(world.enforcer.called("unban")) == 2
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (number,)) == [(1,)]
    assert world.workflow._timers == {}


async def test_the_retries_stop_after_the_bound_and_say_so(world, monkeypatch):  # noqa: F811
    """Refused every time: tried LIFT_TRIES times in all, each refusal noted, the last asks for a manual unban."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.05)
    number = await _overturn_refused(world)
    await asyncio.sleep(0.2 * common.LIFT_TRIES + 0.3)
    assert len(world.enforcer.called("unban")) == common.LIFT_TRIES
    ((failure, tries),) = world.rows("SELECT failure, lift_tries FROM cases WHERE number = ?", (number,))
    assert tries == common.LIFT_TRIES
    assert [f"try {i} of 5" in failure for i in range(1, 6)] == [True] * 5
    assert failure.endswith("not tried again, unban the member by hand)")
    assert await world.workflow.retry_owed_lifts() == []
    assert len(world.enforcer.called("unban")) == common.LIFT_TRIES


@pytest.mark.parametrize("then", ["unban", "ban"])
async def test_a_moderator_unban_or_a_new_ban_settles_the_owed_unban(world, monkeypatch, then):  # noqa: F811
    """A moderator's own unban (or a new ban of the member) after the refusal: the retry must not unban again
    (and, after a new ban, must not lift that ban)."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.2)
    number = await _overturn_refused(world)
    del world.enforcer.refuse["unban"]
    if then == "unban":
        assert (await world.workflow.unban(MOD, SERVER, "alice", "by hand")).ok
    else:
        assert (await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "again")).ok
    await asyncio.sleep(0.4)
    assert len(world.enforcer.called("unban")) == (2 if then == "unban" else 1)
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (number,)) == [(1,)]
    assert await world.workflow.retry_owed_lifts() == []


async def test_a_stop_right_after_the_overturn_leaves_the_unban_for_the_next_start(tmp_path):
    """The appeal is decided in the mod log and the bot stops before its unban call: the next start unbans."""
    w = await make_world(tmp_path)
    try:
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
        assert ban.case_number is not None
        await w.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
        (appeal_id,) = w.rows("SELECT id FROM appeals")[0]
        await w.store.decide_appeal(appeal_id, False, MOD.id)  # the commit of decide_appeal, then the stop
        await w.workflow.close()
        again = _restarted(w)
        assert await again.recover() == [f"case #{ban.case_number}: ban lifted (tried again)"]
        assert w.enforcer.called("unban") == [("alice",)]
        await again.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_an_overturned_ban_that_was_never_applied_owes_no_unban(tmp_path):
    """A ban the platform refused (case failed), then overturned on appeal: nothing to lift, at no start."""
    w = await make_world(tmp_path)
    try:
        w.enforcer.refuse["ban"] = "Missing Permissions (50013)"
        ban = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
        assert not ban.ok and ban.case_number is not None
        await w.workflow.appeal("alice", SERVER, ban.case_number, "sorry")
        (appeal_id,) = w.rows("SELECT id FROM appeals")[0]
        assert (await w.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)).ok
        await w.workflow.close()
        again = _restarted(w)
        assert await again.recover() == []
        assert w.enforcer.called("unban") == []
        await again.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()
