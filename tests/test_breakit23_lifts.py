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
from bot.workflow import ModerationWorkflow, common
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
