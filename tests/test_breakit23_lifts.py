"""Hostile tests of owed unbans of overturned bans (bot/workflow/sanctions.py ``lift_overturned_ban``,
``retry_lift``, ``retry_owed_lifts``): two processes on one mod log, the try cap, the case's notes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.core.models import ActionKind
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store import open_store
from bot.workflow import ModerationWorkflow, common, sanctions
from tests.fakes import FakeDesk, FakeEnforcer, FakeScorer
from tests.test_workflow import MOD, SCORES, SERVER, make_world


class _Process:
    """One bot process: its own connection to the shared mod log, its own workflow, the shared platform."""

    def __init__(self, store, service, workflow) -> None:
        self.store, self.service, self.workflow = store, service, workflow

    @classmethod
    async def open(cls, database: str, servers: Path, enforcer: FakeEnforcer, desk: FakeDesk) -> _Process:
        store = await open_store(database)
        registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers)
        service = ModerationService(scorer=FakeScorer(SCORES), store=store, policies=registry, max_delay_s=0)
        await service.start()
        workflow = ModerationWorkflow(platform="discord", store=store, enforcer=enforcer, desk=desk,
                                      policies=registry, ledger=service.ledger, raid_control=service)
        return cls(store, service, workflow)

    async def close(self) -> None:
        await self.workflow.close()
        await self.service.close()
        await self.store.close()


async def _ban_overturned_refused(workflow: ModerationWorkflow, enforcer: FakeEnforcer, store) -> int:
    """Ban alice, let her appeal and overturn it while the platform refuses the unban; the case number."""
    ban = await workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    assert ban.case_number is not None
    appeal_id = await store.open_appeal("discord", SERVER, ban.case_number, "alice", "sorry")
    enforcer.refuse["unban"] = "Missing Permissions (50013)"
    decided = await workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert not decided.ok and "try 1 of 5" in decided.text
    return ban.case_number


async def _two_processes_start_at_once(database: str, tmp_path: Path, *, refuse: bool) -> tuple[FakeEnforcer, int,
                                                                                              _Process]:
    """Overturn a ban in one process (unban refused, owed), stop it, then start two processes on the same mod log
    at once (the platform answering slowly, as a real one does); the platform, the case and one open process."""
    w = await make_world(tmp_path)  # writes the server's policy file; its own store is not used
    enforcer, desk = w.enforcer, w.desk
    await w.workflow.close()
    await w.service.close()
    await w.store.close()
    first = await _Process.open(database, w.servers, enforcer, desk)
    number = await _ban_overturned_refused(first.workflow, enforcer, first.store)
    await first.close()
    if not refuse:
        del enforcer.refuse["unban"]
    enforcer.delay_s = 0.05
    a = await _Process.open(database, w.servers, enforcer, desk)
    b = await _Process.open(database, w.servers, enforcer, desk)
    try:
        await asyncio.gather(a.workflow.recover(), b.workflow.recover())
    finally:
        await b.close()
    return enforcer, number, a


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "modlog.db")
    return request.getfixturevalue("pg_url")


async def test_two_processes_starting_at_once_unban_an_owed_lift_once(database, tmp_path):
    """Two processes on one mod log both start (Discord shards, or a restart overlapping the old process): the owed unban is tried by one of them, not by both (a second unban call is a second audit-log
    entry and, after a moderator's re-ban in between, a wrong unban)."""
    enforcer, number, a = await _two_processes_start_at_once(database, tmp_path, refuse=False)
    try:
        assert len(enforcer.called("unban")) == 2  # the refused one at the overturn, then exactly one retry
        case = await a.store.get_case("discord", SERVER, number)
        assert case is not None and case.failure is not None
        assert case.failure.count("ban lifted (tried again)") == 1
    finally:
        await a.close()


async def test_two_processes_starting_at_once_count_one_refused_try_each(database, tmp_path):
    """Both processes start while the platform still refuses: each try is one unban call and one count, so the
    cap of LIFT_TRIES bounds the calls made to the platform (not half of them)."""
    enforcer, number, a = await _two_processes_start_at_once(database, tmp_path, refuse=True)
    try:
        calls = len(enforcer.called("unban"))
        case = await a.store.get_case("discord", SERVER, number)
        assert case is not None and case.failure is not None
        # "try N of 5" notes on the case match the calls made: no try counted twice, none skipped
        notes = [f"try {i} of {common.LIFT_TRIES}" in case.failure for i in range(1, calls + 1)]
        assert calls == 2 and notes == [True, True]
        assert f"try 3 of {common.LIFT_TRIES}" not in case.failure
    finally:
        await a.close()


async def _appeal_overturned(w, number: int):
    """Alice appeals case ``number`` and a moderator overturns it; the workflow's result."""
    appeal_id = await w.store.open_appeal("discord", SERVER, number, "alice", "sorry")
    return await w.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)


async def test_overturning_an_earlier_ban_does_not_unban_a_member_banned_again_since(world):  # noqa: F811
    """Case #1 bans alice, case #2 bans her again (a new offence); overturning #1 on appeal must not unban her:
    case #2 still stands (the retry path checks for a later ban; the first try did not)."""
    first = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "spam")
    again = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "threats")
    assert first.ok and again.ok and first.case_number is not None
    decided = await _appeal_overturned(world, first.case_number)
    assert world.enforcer.called("unban") == []
    assert f"case #{again.case_number}" in decided.text
    assert await world.workflow.retry_owed_lifts() == []
    assert world.enforcer.called("unban") == []


async def test_an_overturn_after_a_moderator_s_unban_owes_no_unban(world):  # noqa: F811
    """A moderator unbans alice (``/unban``), then her appeal of the ban is overturned: she is not banned any
    more, so nothing is owed (Discord answers 404 Unknown Ban to a second unban: retried 5 times, then "unban the
    member by hand")."""
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    assert ban.ok and ban.case_number is not None
    assert (await world.workflow.unban(MOD, SERVER, "alice", "second chance")).ok
    decided = await _appeal_overturned(world, ban.case_number)
    assert decided.ok
    assert len(world.enforcer.called("unban")) == 1  # the moderator's only
    assert await world.store.owed_lifts("discord", common.LIFT_TRIES) == []


async def test_an_overturn_after_a_temporary_ban_ended_says_nothing_odd(world):  # noqa: F811
    """A temporary ban that ended (unbanned at its end) is overturned on appeal: nothing to lift, and the card does
    not claim another process is at it."""
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
    assert ban.ok and ban.case_number is not None
    world.workflow.cancel_unban(SERVER, ban.case_number)
    await world.store.mark_lifted("discord", SERVER, ban.case_number)  # its end came: unbanned
    decided = await _appeal_overturned(world, ban.case_number)
    assert decided.ok and "another process" not in decided.text
    assert world.enforcer.called("unban") == []


async def test_overturning_a_later_ban_does_not_unban_a_member_an_earlier_ban_still_bans(world):  # noqa: F811
    """Case #1 bans alice for good (upheld, standing), case #2 bans her again; overturning #2 must leave her banned:
    case #1 still bans her (and nothing is owed: a retry would unban her too)."""
    first = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "spam")
    again = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "threats")
    assert first.ok and again.ok and again.case_number is not None
    decided = await _appeal_overturned(world, again.case_number)
    assert world.enforcer.called("unban") == []
    assert f"case #{first.case_number}" in decided.text
    assert await world.workflow.retry_owed_lifts() == []
    assert world.enforcer.called("unban") == []


async def test_a_process_starting_while_another_holds_the_next_try_leaves_it_to_the_hold(database, tmp_path,
                                                                                        monkeypatch):
    """Process A was refused and holds the next try (its timer, UNBAN_RETRY_S); process B starts meanwhile: B does
    not call the platform at its start, and when the hold ends exactly one of the two timers unbans, once."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.6)
    w = await make_world(tmp_path)
    enforcer, desk = w.enforcer, w.desk
    await w.workflow.close()
    await w.service.close()
    await w.store.close()
    a = await _Process.open(database, w.servers, enforcer, desk)
    b: _Process | None = None
    try:
        number = await _ban_overturned_refused(a.workflow, enforcer, a.store)
        del enforcer.refuse["unban"]
        b = await _Process.open(database, w.servers, enforcer, desk)
        assert await b.workflow.recover() == []
        assert len(enforcer.called("unban")) == 1  # only the refused one
        await asyncio.sleep(1.5)
        assert len(enforcer.called("unban")) == 2
        case = await a.store.get_case("discord", SERVER, number)
        assert case is not None and case.lifted_at is not None and case.failure is not None
        assert case.failure.count("ban lifted (tried again)") == 1
        # the process that lost the claim may still look again when the winner's hold ends: nothing is owed then
        assert await b.workflow.retry_lift(case) == "" and await a.workflow.retry_lift(case) == ""
        assert len(enforcer.called("unban")) == 2
    finally:
        await a.close()
        if b is not None:
            await b.close()


async def test_a_clean_stop_hands_the_next_try_back_to_the_next_start(tmp_path):
    """A refused try holds the next one for this process's timer; a clean stop hands it back, so the next start
    tries at once (and a process that died without stopping leaves a hold that ends by itself)."""
    w = await make_world(tmp_path)
    try:
        number = await _ban_overturned_refused(w.workflow, w.enforcer, w.store)
        held = w.rows("SELECT lift_held_until IS NOT NULL FROM cases WHERE number = ?", (number,))
        assert held == [(1,)]
        await w.workflow.close()
        assert w.rows("SELECT lift_held_until FROM cases WHERE number = ?", (number,)) == [(None,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_a_clean_stop_never_releases_a_try_another_process_holds(tmp_path):
    """This process's hold ran out and another process claimed the try (its unban under way, held until later):
    stopping this process now must not clear that other process's hold, or a third start would unban again while
    the other's call is under way."""
    w = await make_world(tmp_path)
    try:
        number = await _ban_overturned_refused(w.workflow, w.enforcer, w.store)
        import sqlite3

        other = "2999-01-01T00:00:00.000000+00:00"  # the other process's claim (raw: it is not this process)
        con = sqlite3.connect(w.store.path)
        con.execute("UPDATE cases SET lift_held_until = ?, lift_tries = lift_tries + 1 WHERE number = ?",
                    (other, number))
        con.commit()
        con.close()
        await w.workflow.close()
        assert w.rows("SELECT lift_held_until FROM cases WHERE number = ?", (number,)) == [(other,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_an_unban_that_errors_instead_of_refusing_is_still_retried(world, monkeypatch):  # noqa: F811
    """The platform call fails with an exception (a dropped connection: not a refusal the adapter turns into a
    result) when the appeal is overturned: the decision stands, the card says the ban was not lifted, and the
    owed unban is tried again by the timer, without waiting for a restart."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.2)
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    assert ban.case_number is not None
    appeal_id = await world.store.open_appeal("discord", SERVER, ban.case_number, "alice", "sorry")
    unban = world.enforcer.unban

    async def dropped(server_id: str, member_id: str, reason: str):
        world.enforcer.unban = unban  # the next call gets through
        raise ConnectionResetError("connection reset by peer")

    world.enforcer.unban = dropped
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert "ban not lifted" in decided.text and "connection reset" in decided.text
    await asyncio.sleep(0.5)
    assert world.enforcer.called("unban") == [("alice",)]
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (ban.case_number,)) == [(1,)]


async def test_a_process_dying_mid_try_neither_uses_up_a_try_nor_silences_the_last(tmp_path):
    """Four tries were refused; a process claims the fifth and dies before the platform answers. After its hold
    the next start makes that fifth try (and, refused, says "unban the member by hand"): a try that never got an
    answer is not counted as refused (else the cap is reached with no note at all)."""
    w = await make_world(tmp_path)
    try:
        number = await _ban_overturned_refused(w.workflow, w.enforcer, w.store)
        await w.workflow.close()
        for _ in range(3):  # tries 2-4, refused at three starts
            again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                                       policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
            assert len(await again.recover()) == 1
            await again.close()
        case = await w.store.get_case("discord", SERVER, number)
        assert case is not None and "try 4 of 5" in (case.failure or "")
        claim = await w.store.claim_lift("discord", SERVER, number, common.LIFT_TRIES, hold_s=0.1)
        assert claim.tries == 5  # ... and the process that claimed it is gone
        await asyncio.sleep(0.2)
        last = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                                  policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
        lines = await last.recover()
        await last.close()
        assert len(lines) == 1 and "try 5 of 5" in lines[0] and "unban the member by hand" in lines[0]
        assert len(w.enforcer.called("unban")) == 5
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_long_refusals_keep_the_case_s_own_note_and_the_latest_whole(world, monkeypatch):  # noqa: F811
    """Every try refused with a long reason (a proxy's error page as the HTTP error's text): the notes field stays
    within its 1,000 characters, keeps the case's own first note (here: the ban's DM that was not delivered) and
    the latest note whole, and shortens the platform's reason in each note."""
    monkeypatch.setattr(sanctions, "UNBAN_RETRY_S", 0.05)
    world.enforcer.dms_closed.add("alice")
    page = "<html><body>" + "upstream connect error or disconnect/reset before headers. " * 30 + "</body></html>"
    ban = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    assert ban.case_number is not None
    appeal_id = await world.store.open_appeal("discord", SERVER, ban.case_number, "alice", "sorry")
    world.enforcer.refuse["unban"] = f"502 Bad Gateway: {page}"
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert len(decided.text) < 600
    await asyncio.sleep(0.2 * common.LIFT_TRIES + 0.3)
    assert len(world.enforcer.called("unban")) == common.LIFT_TRIES
    case = await world.store.get_case("discord", SERVER, ban.case_number)
    assert case is not None and case.failure is not None
    assert len(case.failure) <= 1000
    assert case.failure.startswith("dm: not delivered")
    assert case.failure.endswith("(try 5 of 5; not tried again, unban the member by hand)")
    latest = case.failure[case.failure.rindex("ban not lifted: 502 Bad Gateway"):]
    assert len(latest) < 400  # the reason shortened, the note whole
