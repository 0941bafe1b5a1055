"""Break-it round on the mod log as the workflow writes it, on both backends (the ``database`` fixture of
tests/conftest.py: a SQLite file, then a fresh PostgreSQL database): what a person typed is stored the same on
both, a crash or a failed write between two of the workflow's writes leaves the mod log consistent, and two bot
processes on one mod log do nothing twice."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from bot.core.errors import StoreError
from bot.core.models import ActionKind, CaseStatus, RaidAlert
from bot.workflow import cases as case_commands
from tests.fakes import FakeDesk, FakeEnforcer
from tests.test_breakit23_lifts import _Process
from tests.test_workflow import HELPER, MOD, SERVER, make_world

ROOT = Path(__file__).resolve().parents[1]


class _Bot:
    """One bot process on the mod log at ``database`` (its own connection, workflow and service) and the platform
    it acts on (shared by the processes a test opens with :meth:`another`)."""

    def __init__(self, database: str, servers: Path, enforcer: FakeEnforcer, desk: FakeDesk) -> None:
        self.database, self.servers, self.enforcer, self.desk = database, servers, enforcer, desk
        self.processes: list[_Process] = []

    async def another(self) -> _Process:
        proc = await _Process.open(self.database, self.servers, self.enforcer, self.desk)
        self.processes.append(proc)
        return proc

    async def close(self) -> None:
        for proc in reversed(self.processes):
            await proc.close()


@pytest.fixture
async def bot(database: str, tmp_path: Path) -> AsyncIterator[_Bot]:
    w = await make_world(tmp_path)  # writes the server's policy file and builds the platform; its store is unused
    await w.workflow.close()
    await w.service.close()
    await w.store.close()
    b = _Bot(database, w.servers, w.enforcer, w.desk)
    yield b
    await b.close()


# ------------------------------------------------------------------ typed text holding a NUL


async def test_a_nul_in_typed_text_is_stored_as_a_replacement_character_on_both_backends(bot):
    """A NUL (U+0000) in what a moderator or member typed (a sanction's reason, a note, a changed reason, a report,
    an appeal) is stored as U+FFFD, as a NUL in message text is (bot.core.storable): SQLite stored the NUL while
    PostgreSQL's TEXT refused it, so on PostgreSQL the warn was answered "could not record this just now ... try
    again" (it never could), and a note raised UnstorableValue out of the workflow."""
    p = await bot.another()
    warned = await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "spam\x00here")
    assert warned.ok and warned.case_number is not None
    noted = await p.workflow.note(MOD, SERVER, "bob", "watch\x00this")
    assert noted.case_number is not None
    await case_commands.change_reason(p.store, "discord", MOD, SERVER, noted.case_number, "new\x00reason")
    reported = await p.workflow.report("carol", SERVER, "bob", "rude\x00words")
    assert reported.ok
    appealed = await p.workflow.appeal("alice", SERVER, warned.case_number, "sorry\x00really")
    assert appealed.ok
    warn = await p.store.get_case("discord", SERVER, warned.case_number)
    note = await p.store.get_case("discord", SERVER, noted.case_number)
    assert warn is not None and note is not None
    assert (warn.reason, note.reason) == ("spam\ufffdhere", "new\ufffdreason")
    [appeal] = await p.store.open_appeals("discord", SERVER, "alice")
    assert appeal.text == "sorry\ufffdreally"
    reviews = await p.store.open_reviews("discord", SERVER)
    assert "rude\ufffdwords" in [r.reason for r in reviews]
    # the member's notice says what the case says
    [notice] = [c.args[1] for c in bot.enforcer.calls if c.method == "notify"]
    assert notice.reason == "spam\ufffdhere"


# ------------------------------------------------------------------ a failed write between two of the workflow's


async def _sql(database: str, *statements: str) -> None:
    """Run ``statements`` on the mod log at ``database`` with the database's own client (not through the store)."""
    if database.startswith("postgresql"):
        conn = await asyncpg.connect(database)
        try:
            for sql in statements:
                await conn.execute(sql)
        finally:
            await conn.close()
        return
    con = sqlite3.connect(database)
    try:
        for sql in statements:
            con.execute(sql)
        con.commit()
    finally:
        con.close()


async def _refuse(database: str, name: str, event: str, when: str, *, sqlstate: str = "40001",
                  message: str = "could not serialize access (test)") -> None:
    """From now on the database refuses the writes ``event`` (``"BEFORE INSERT ON cases"``) for which ``when``
    holds, with a trigger ``name``: a real failing write (PostgreSQL: ``message`` with ``sqlstate``, a serialization
    failure by default; SQLite: an aborted statement)."""
    if database.startswith("postgresql"):
        await _sql(database,
                   f"CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION '{message}' "
                   f"USING ERRCODE = '{sqlstate}'; END $$ LANGUAGE plpgsql",
                   f"CREATE TRIGGER {name} {event} FOR EACH ROW WHEN ({when}) EXECUTE FUNCTION {name}()")
    else:
        await _sql(database,
                   f"CREATE TRIGGER {name} {event} WHEN {when} BEGIN SELECT RAISE(ABORT, 'disk I/O error (test)'); END")


async def _allow(database: str, name: str, table: str) -> None:
    """Drop the refusing trigger ``name`` of :func:`_refuse` on ``table``."""
    await _sql(database, f"DROP TRIGGER {name}" + (f" ON {table}" if database.startswith("postgresql") else ""))


async def _fail_overturning_ladder_steps(database: str) -> None:
    """From now on the database refuses every write that overturns a ladder step (a case with ``escalated_from``):
    a real failing write (PostgreSQL: a serialization failure; SQLite: an aborted statement)."""
    await _refuse(database, "refuse_step", "BEFORE UPDATE OF status ON cases",
                  "NEW.status = 'overturned' AND OLD.escalated_from IS NOT NULL")


async def test_an_overturn_whose_ladder_step_write_fails_leaves_case_and_step_together(bot, database):
    """Overturning a case on appeal also overturns the ladder step its strike crossed (the step was not earned
    without it). The appeal's transaction overturned the case, and the step was overturned in a LATER, separate
    write: when that write failed (or the bot stopped before it), the appeal stood ``overturned`` with its case
    pardoned while the step's timeout stayed applied and on the member, owed to nobody: the next start did not
    lift it and the moderator could not decide the appeal again. Now the step is overturned in the appeal's own
    transaction: a failed write leaves neither, and deciding again overturns both and lifts the step's timeout."""
    p = await bot.another()
    for reason in ("one", "two"):
        await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, reason)
    third = await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "three")  # 3 points: the 1 h step
    assert third.case_number == 3 and bot.enforcer.called("timeout") == [("alice", 3600)]
    [step] = await p.store.escalations_of("discord", SERVER, 3)
    appeal_id = await p.store.open_appeal("discord", SERVER, 3, "alice", "sorry")
    await _fail_overturning_ladder_steps(database)
    with pytest.raises((StoreError, sqlite3.Error)):
        await p.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    await p.close()
    bot.processes.remove(p)
    again = await bot.another()  # the next start
    await again.workflow.recover()
    case, after = (await again.store.get_case("discord", SERVER, 3), await again.store.get_case("discord", SERVER,
                                                                                                 step.number))
    appeal = await again.store.get_appeal(appeal_id)
    assert case is not None and after is not None and appeal is not None
    # all or nothing: the appeal still open with the case and its step standing
    assert (appeal.status, case.status, after.status) == ("open", CaseStatus.APPLIED, CaseStatus.APPLIED)
    assert bot.enforcer.called("remove_timeout") == []
    await _allow(database, "refuse_step", "cases")
    done = await again.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert done.ok, done.text
    case, after = (await again.store.get_case("discord", SERVER, 3), await again.store.get_case("discord", SERVER,
                                                                                                 step.number))
    assert case is not None and after is not None
    assert (case.status, after.status) == (CaseStatus.OVERTURNED, CaseStatus.OVERTURNED)
    assert bot.enforcer.called("remove_timeout") == [("alice",)]


# ------------------------------------------------------------------ two processes on one mod log


async def test_two_processes_starting_at_once_carry_out_a_pending_case_once(bot):
    """A stop between recording a moderator's sanction (``pending``) and the platform's answer leaves it to the
    next start. Two processes starting at once on one mod log (two started together, a restart overlapping a
    second one) both read it as pending and both carried it out: two notices and two strikes for one warning, two
    timeouts. Each pending case is now claimed in the mod log before it is carried out: once, by one of them."""
    first = await bot.another()
    # what a stop right after the sanction's first write leaves in the mod log
    warn = await first.store.open_case("discord", SERVER, "alice", ActionKind.WARN, "rude", moderator_id="mod")
    timeout = await first.store.open_case("discord", SERVER, "bob", ActionKind.TIMEOUT, "rude", moderator_id="mod")
    await first.close()
    bot.processes.remove(first)
    bot.enforcer.delay_s = 0.05  # a platform answering as slowly as a real one
    a, b = await bot.another(), await bot.another()
    lines = await asyncio.gather(a.workflow.recover(), b.workflow.recover())
    assert sorted(line for got in lines for line in got) == [
        f"case #{warn.number} (warn) carried out after a restart",
        f"case #{timeout.number} (timeout) carried out after a restart"]
    assert [c.args[0] for c in bot.enforcer.calls if c.method == "notify"] == ["alice", "bob"]
    assert bot.enforcer.called("timeout") == [("bob", 3600)]
    strikes = await a.store.active_strikes("discord", SERVER, "alice", datetime.now(UTC))
    assert [(s.points, s.case_number) for s in strikes] == [(1, warn.number)]
    for number in (warn.number, timeout.number):
        case = await a.store.get_case("discord", SERVER, number)
        assert case is not None and case.status is CaseStatus.APPLIED


async def test_a_pending_case_claimed_by_a_process_that_stopped_is_carried_out_when_its_hold_ends(bot):
    """A process that claimed a pending case at its start and stopped before carrying it out holds it only until
    its hold ends: a process started meanwhile leaves it then, and carries it out once the hold is over."""
    first = await bot.another()
    warn = await first.store.open_case("discord", SERVER, "alice", ActionKind.WARN, "rude", moderator_id="mod")
    claimed, _ = await first.store.claim_pending("discord", SERVER, warn.number, hold_s=0.5)
    assert claimed
    await first.close()  # stopped before carrying it out
    bot.processes.remove(first)
    second = await bot.another()
    assert await second.workflow.recover() == []  # held by the process that stopped
    assert bot.enforcer.called("notify") == []

    async def carried_out() -> CaseStatus:
        while True:
            case = await second.store.get_case("discord", SERVER, warn.number)
            assert case is not None
            if case.status is not CaseStatus.PENDING:
                return case.status
            await asyncio.sleep(0.05)

    assert await asyncio.wait_for(carried_out(), 30) is CaseStatus.APPLIED
    assert [c.args[0] for c in bot.enforcer.calls if c.method == "notify"] == ["alice"]


# ------------------------------------------------------------------ /mydata forget


async def test_forgetting_a_member_erases_their_flagged_name_from_its_case_card_and_decision(bot):
    """A flagged display name opens a case and a review item whose reason quotes the name ("nickname 'Alice Smith
    vermin': identity_attack ..."), and a moderator's decision on that card copies it ("review #N: nickname ...").
    /mydata forget pseudonymised the member in all of them but left the name they chose (often their real name)
    in those reasons; it is now erased there, as the text of their messages is."""
    p = await bot.another()
    verdict = await p.workflow.names.name_seen(SERVER, "alice", "Alice Smith vermin", kind="nickname")
    assert verdict is not None and verdict.case_number is not None and verdict.review_id is not None
    decided = await p.workflow.decide_review(MOD, SERVER, verdict.review_id, "warn")
    assert decided.ok, decided.text
    await p.workflow.forget_member(SERVER, "alice")
    cases = await p.store.list_cases("discord", SERVER, limit=10)
    item = await p.store.get_review(verdict.review_id, "discord", SERVER)
    assert item is not None
    reasons = [c.reason for c in cases] + [item.reason]
    assert reasons and not [r for r in reasons if "Alice Smith" in r], reasons
    name_case = next(c for c in cases if c.number == verdict.case_number)
    assert name_case.reason == item.reason == "nickname [text erased]"
    assert f"review #{verdict.review_id}: [text erased]" in [c.reason for c in cases]


async def test_two_processes_starting_at_once_remove_an_owed_timeout_once(bot):
    """An overturn commits the timeout's removal as owed; a stop before the platform's answer leaves it to the next
    start. Two processes starting at once both removed it and both posted it in the mod log (and, where the
    platform refused, both counted and noted a refusal). The removal is now claimed first, as an owed unban's try
    is: one process removes it and posts it once."""
    first = await bot.another()
    timed = await first.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "rude", duration_s=86400)
    assert timed.ok and timed.case_number is not None
    # what a stop right after the overturn's commit leaves: the case overturned, its removal owed
    await first.store.overturn_case("discord", SERVER, timed.case_number, moderator_id="mod")
    await first.close()
    bot.processes.remove(first)
    bot.enforcer.delay_s = 0.05
    a, b = await bot.another(), await bot.another()
    lines = await asyncio.gather(a.workflow.recover(), b.workflow.recover())
    assert [line for got in lines for line in got] == [
        f"case #{timed.case_number}: timeout lifted (after a restart)"]
    assert bot.enforcer.called("remove_timeout") == [("alice",)]
    posted = [e.title for e in bot.desk.log if e.title == f"Case #{timed.case_number}: overturned timeout"]
    assert len(posted) == 1
    case = await a.store.get_case("discord", SERVER, timed.case_number)
    assert case is not None and case.lifted_at is not None


async def test_a_ladder_step_is_not_lost_when_the_write_after_its_strike_fails(bot, database):
    """A moderator's third warning crosses the 3-point ladder step (a 1 h timeout). The warning's case and strike
    were committed first and the step's case opened in a LATER write: when that write failed (or the bot stopped
    between the two), the member kept the three points without the timeout they had earned, and nothing at the
    next start carried it out (the ladder steps only when points cross it). The step's case is now recorded in
    the strike's own transaction (pending until the platform answers): a failed write leaves the warning pending,
    carried out again at the next start, step and all."""
    p = await bot.another()
    for reason in ("one", "two"):
        await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, reason)
    await _refuse(database, "refuse_step", "BEFORE INSERT ON cases", "NEW.escalated_from IS NOT NULL")
    with pytest.raises((StoreError, sqlite3.Error)):
        await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "three")
    await _allow(database, "refuse_step", "cases")
    await p.close()
    bot.processes.remove(p)
    again = await bot.another()  # the next start
    await again.workflow.recover()
    # the member's third strike stands with what it earned: the step carried out, or (the moderator who decided
    # it is not there to ask at a start) a review card asking a moderator who may to decide it
    strikes = await again.store.active_strikes("discord", SERVER, "alice", datetime.now(UTC))
    assert sum(s.points for s in strikes) == 3
    steps = [c for c in await again.store.list_cases("discord", SERVER, "alice") if c.escalated_from is not None]
    withheld = [r for r in await again.store.open_reviews("discord", SERVER) if r.reason.startswith(
        "ladder step withheld: timeout")]
    assert (len(steps), len(withheld)) in ((1, 0), (0, 1)), (steps, withheld)
    if steps:
        assert steps[0].status is CaseStatus.APPLIED and bot.enforcer.called("timeout") == [("alice", 3600)]


# ------------------------------------------------------------------ a pardoned sanction


async def test_a_pardoned_temporary_ban_still_ends(bot):
    """Pardoning a case forgives its strikes. It also set the case's status to ``pardoned``, and the end of a
    temporary ban is looked up among ``applied`` bans: a pardoned 1-hour ban was never lifted (its timer found it
    no longer due, and no start rescheduled it), so forgiving the member's points made their ban permanent. A
    pardoned ban or timeout that still stands keeps its status: it ends as it would have."""
    p = await bot.another()
    ban = await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "spam", duration_s=3600)
    assert ban.ok and ban.case_number is not None
    pardoned = await p.workflow.pardon(MOD, SERVER, ban.case_number)
    assert pardoned.ok
    strikes = await p.store.active_strikes("discord", SERVER, "alice", datetime.now(UTC))
    assert strikes == []
    await p.close()
    bot.processes.remove(p)
    later = await bot.another()  # a start after the ban's end
    later.workflow.clock = lambda: datetime.now(UTC) + timedelta(hours=2)
    await later.workflow.recover()

    async def unbanned() -> None:
        while not bot.enforcer.called("unban"):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(unbanned(), 10)
    assert bot.enforcer.called("unban") == [("alice",)]


# ------------------------------------------------------------------ a write refused for now after the platform acted


async def test_a_sanction_whose_outcome_write_is_refused_for_now_is_recorded_once_the_mod_log_takes_it(
        short_busy_timeout, bot, database):
    """The platform carried out a moderator's timeout; the write recording it (``applied`` with its strike) was
    refused for now (SQLite locked by another process past its busy timeout; PostgreSQL: a serialization failure).
    That raised out of the workflow and left the case ``pending`` although the member was timed out: the next start
    timed them out and notified them again (or, an hour later, marked it failed as "not done" with no strike). The
    outcome write is now tried again while the mod log answers "busy": the case is applied with its strike, once."""
    p = await bot.another()
    unlock: list[asyncio.TimerHandle] = []
    if database.startswith("postgresql"):
        await _sql(database,
                   "CREATE SEQUENCE refuse_once",
                   "CREATE FUNCTION refuse_once() RETURNS trigger AS $$ BEGIN IF nextval('refuse_once') = 1 THEN "
                   "RAISE EXCEPTION 'could not serialize access (test)' USING ERRCODE = '40001'; END IF; "
                   "RETURN NEW; END $$ LANGUAGE plpgsql",
                   "CREATE TRIGGER refuse_once BEFORE UPDATE OF status ON cases FOR EACH ROW WHEN "
                   "(OLD.status = 'pending' AND NEW.status = 'applied') EXECUTE FUNCTION refuse_once()")
    else:
        real_timeout = bot.enforcer.timeout

        async def timeout_then_lock(server_id: str, member_id: str, seconds: int, reason: str):
            # another process takes the mod log's write lock as the platform answers, for 4 busy timeouts
            other = sqlite3.connect(database, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")

            def release() -> None:
                other.execute("ROLLBACK")
                other.close()

            unlock.append(asyncio.get_running_loop().call_later(4 * short_busy_timeout, release))
            return await real_timeout(server_id, member_id, seconds, reason)

        bot.enforcer.timeout = timeout_then_lock
    done = await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "rude", duration_s=600)
    assert done.ok and done.case_number is not None
    case = await p.store.get_case("discord", SERVER, done.case_number)
    assert case is not None and case.status is CaseStatus.APPLIED
    strikes = await p.store.active_strikes("discord", SERVER, "alice", datetime.now(UTC))
    assert [(s.points, s.case_number) for s in strikes] == [(2, done.case_number)]
    await p.close()
    bot.processes.remove(p)
    again = await bot.another()
    assert await again.workflow.recover() == []
    assert bot.enforcer.called("timeout") == [("alice", 600)]
    assert len([c for c in bot.enforcer.calls if c.method == "notify"]) == 1


# ------------------------------------------------------------------ a kill between the workflow's writes

#: A bot process (SQLite mod log ``argv[1]``, its policy files under ``argv[2]``): automod flags a message for
#: review, then a moderator decides Warn on its card while the platform takes for ever to say who the member is
#: (it prints ``waiting`` then); the test kills it there, with SIGKILL.
_DECIDER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from tests.test_workflow import HELPER, MOD, SERVER, make_world

    async def main(db, folder):
        w = await make_world(Path(folder), db=Path(db))
        outcome = await w.judge(w.message("alice", "borderline words"))
        print("review", outcome.review_id, flush=True)
        real, calls = w.enforcer.member, []

        async def member(server_id, member_id):
            calls.append(member_id)
            if len(calls) > 1:  # the sanction's own look-up, after the card's decision was claimed
                print("waiting", flush=True)
                await asyncio.sleep(3600)
            return await real(server_id, member_id)

        w.enforcer.member = member
        await w.workflow.decide_review(MOD, SERVER, outcome.review_id, "warn")

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
async def test_a_card_decision_killed_before_its_case_is_carried_out_at_the_next_start(tmp_path):
    """A moderator's Warn on a review card claims the card (``warned``) in one write and opened the warning's case
    in a later one, after asking the platform about the member. A kill between the two left the card decided with
    no case and nothing done: the moderator's retry was refused as already decided and the next start had nothing
    to carry out. The case is now opened (``pending``) in the claim's own transaction, so the next start carries
    the warning out."""
    db = tmp_path / "modlog.db"
    proc = subprocess.Popen([sys.executable, "-c", _DECIDER, str(db), str(tmp_path), str(ROOT)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    try:
        review_id = int(proc.stdout.readline().split()[1])
        assert proc.stdout.readline().strip() == "waiting"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    w = await make_world(tmp_path, db=db)  # the next start
    try:
        await w.workflow.recover()
        decision = w.rows("SELECT decision FROM review_items WHERE id = ?", (review_id,))
        warns = w.rows("SELECT status FROM cases WHERE action = 'warn' AND moderator_id = ?", (MOD.id,))
        # the decision and its warning together: carried out at the start, or neither (the card open again)
        assert (decision, warns) in (([("warned",)], [("applied",)]), ([("open",)], [])), (decision, warns)
        if warns:
            assert [c.args[0] for c in w.enforcer.calls if c.method == "notify"] == ["alice"]
            assert w.rows("SELECT points FROM strikes WHERE member_id = 'alice'") == [(1,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


# ------------------------------------------------------------------ raid mode ended by two processes


async def _saved_raid(p: _Process, until: datetime) -> int:
    """A flagged-burst raid in channel ``c1`` whose raid mode (slowmode 30 s) is saved until ``until``, as a
    process that stopped during it leaves it; the raid's id."""
    alert = RaidAlert(server_id=SERVER, channel_id="c1", started_at=datetime.now(UTC) - timedelta(hours=1),
                      members=("r1", "r2"), count=8, reason="flagged_burst")
    raid_id = await p.store.record_raid("discord", alert)
    assert raid_id is not None
    await p.store.save_raid_mode("discord", SERVER, "c1", until, 30, raid_id)
    return raid_id


async def test_two_processes_starting_at_once_end_an_overdue_raid_mode_once(bot):
    """Raid mode that ended while the bot was stopped is ended at the next start (slowmode lifted, "Raid mode off"
    posted). Two processes starting at once on one mod log (two shards, a restart overlapping the old process)
    both ended it: the slowmode lifted twice and "Raid mode off" posted twice. The end is now claimed in the mod
    log first: one of them ends it."""
    first = await bot.another()
    raid_id = await _saved_raid(first, datetime.now(UTC) - timedelta(minutes=5))
    await first.close()
    bot.processes.remove(first)
    bot.enforcer.delay_s = 0.05
    a, b = await bot.another(), await bot.another()
    lines = await asyncio.gather(a.workflow.recover(), b.workflow.recover())
    assert [line for got in lines for line in got] == [
        "raid mode in c1 ended while the bot was stopped; slowmode lifted"]
    assert bot.enforcer.called("set_slowmode") == [("c1", 0)]
    assert [e.title for e in bot.desk.log if e.title == "Raid mode off"] == ["Raid mode off"]
    assert await a.store.raid_modes("discord") == []
    raid = await a.store.get_raid("discord", SERVER, raid_id)
    assert raid is not None and raid.closed_at is not None


async def test_two_processes_holding_one_raid_mode_end_it_once_when_it_is_due(bot):
    """Raid mode still due at a start goes back on in every process that owns the server, each with its own timer:
    at its end both lifted the slowmode and both posted "Raid mode off". The first to claim the end ends it; the
    other only drops its copy (its stricter tiers off too)."""
    a, b = await bot.another(), await bot.another()
    # what a process that stopped during the raid leaves (saved just before both start, so still due then)
    raid_id = await _saved_raid(a, datetime.now(UTC) + timedelta(seconds=2))
    lines = await asyncio.gather(a.workflow.recover(), b.workflow.recover())
    assert len([line for got in lines for line in got if line.startswith("raid mode in c1 restored")]) == 2
    boards = [p.workflow.raid_board(SERVER, raid_id) for p in (a, b)]
    assert all(board is not None for board in boards)

    async def ended() -> None:
        while not (all(board is not None and board.closed for board in boards)
                   and "Raid mode off" in [e.title for e in bot.desk.log]):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(ended(), 30)
    for p in (a, b):  # whatever either still had under way finishes (or stops) here
        await p.workflow.close()
    assert bot.enforcer.called("set_slowmode") == [("c1", 0)]
    assert [e.title for e in bot.desk.log if e.title == "Raid mode off"] == ["Raid mode off"]
    assert await a.store.raid_modes("discord") == []
    now = datetime.now(UTC)
    assert [p.service.raid_mode("discord", SERVER, "c1", now) for p in (a, b)] == [False, False]


async def test_a_raid_mode_end_claimed_by_a_process_that_stopped_is_carried_out_when_its_hold_ends(bot):
    """A process that claimed the end of raid mode and stopped before lifting the slowmode holds the end only until
    its hold is over: a process started meanwhile leaves it then and ends it (slowmode lifted, posted) after."""
    first = await bot.another()
    raid_id = await _saved_raid(first, datetime.now(UTC) - timedelta(minutes=5))
    claimed, _ = await first.store.claim_raid_end("discord", SERVER, raid_id, ["c1"], hold_s=0.5)
    assert claimed
    await first.close()  # stopped before lifting the slowmode
    bot.processes.remove(first)
    second = await bot.another()
    assert await second.workflow.recover() == []  # held by the process that stopped
    assert bot.enforcer.called("set_slowmode") == []

    async def ended() -> None:
        while "Raid mode off" not in [e.title for e in bot.desk.log]:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(ended(), 30)
    assert bot.enforcer.called("set_slowmode") == [("c1", 0)]
    assert await second.store.raid_modes("discord") == []


# ------------------------------------------------------------------ a withheld ladder step's review item


async def test_a_withheld_ladder_step_keeps_its_review_item_when_the_write_after_its_strike_fails(bot, database):
    """A helper (Manage Messages, no Moderate Members) gives a third warning that crosses the 3-point ladder step
    (a 1 h timeout) they may not take: the step goes to a review item for a moderator who may. The warning's
    strike was committed first and the review item opened in a LATER write: when that write failed (or the bot
    stopped between the two), the member kept the three points and nobody was ever asked to decide the step (the
    ladder steps only when points cross it). The review item is now opened in the strike's own transaction: a
    failed write leaves the warning pending, carried out at the next start with its step on a review card."""
    p = await bot.another()
    for reason in ("one", "two"):
        await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, reason)
    await _refuse(database, "refuse_item", "BEFORE INSERT ON review_items", "NEW.reason LIKE 'ladder step withheld%'")
    with pytest.raises((StoreError, sqlite3.Error)):
        await p.workflow.sanction(HELPER, SERVER, "alice", ActionKind.WARN, "three")
    await _allow(database, "refuse_item", "review_items")
    await p.close()
    bot.processes.remove(p)
    again = await bot.another()  # the next start
    await again.workflow.recover()
    strikes = await again.store.active_strikes("discord", SERVER, "alice", datetime.now(UTC))
    assert sum(s.points for s in strikes) == 3
    withheld = [r for r in await again.store.open_reviews("discord", SERVER)
                if r.reason.startswith("ladder step withheld: timeout")]
    assert len(withheld) == 1 and withheld[0].member_id == "alice"
    assert withheld[0].id in [c.review_id for c in bot.desk.reviews]  # its card posted for a moderator who may
    assert bot.enforcer.called("timeout") == []


# ------------------------------------------------------------------ a pending case the platform carried out


async def _refuse_recording_applied(database: str) -> None:
    """From now on the database refuses every write recording a case ``applied`` (a real failing write): the
    platform's answer to a sanction is never recorded, so its case stays ``pending``."""
    await _refuse(database, "refuse_applied", "BEFORE UPDATE OF status ON cases", "NEW.status = 'applied'",
                  sqlstate="53100", message="disk full (test)")


async def _restart_two_hours_later(bot: _Bot, p: _Process, database: str) -> tuple[_Process, list[str]]:
    """Drop the refusing trigger, stop ``p`` and start again two hours later (past RECOVER_WITHIN_S)."""
    await _allow(database, "refuse_applied", "cases")
    await p.close()
    bot.processes.remove(p)
    again = await bot.another()
    again.workflow.clock = lambda: datetime.now(UTC) + timedelta(hours=2)
    return again, await again.workflow.recover()


async def test_a_late_pending_timeout_the_platform_shows_is_recorded_applied_not_failed(bot, database):
    """A moderator's timeout was carried out on the platform but the write recording it failed, so its case stayed
    ``pending``. A start more than an hour later marked it failed ("not done late") while the member sat timed out
    for a day: the mod log said the opposite of what happened, and the timeout's strike was never counted. The
    start now asks the platform: the member's timeout ends at the case's end, so it is recorded applied, with its
    strike, and nothing is sent again."""
    p = await bot.another()
    await _refuse_recording_applied(database)
    with pytest.raises((StoreError, sqlite3.Error)):
        await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "rude", duration_s=86400)
    assert bot.enforcer.called("timeout") == [("alice", 86400)]
    [case] = await p.store.pending_cases("discord")
    again, lines = await _restart_two_hours_later(bot, p, database)
    after = await again.store.get_case("discord", SERVER, case.number)
    assert after is not None and after.status is CaseStatus.APPLIED
    assert after.failure is not None and "the platform shows it carried out" in after.failure
    assert bot.enforcer.called("timeout") == [("alice", 86400)]  # not sent again
    strikes = await again.store.active_strikes("discord", SERVER, "alice", datetime.now(UTC))
    assert [s.case_number for s in strikes] == [case.number]
    assert not [line for line in lines if "marked failed" in line], lines


async def test_a_late_pending_ban_whose_outcome_cannot_be_seen_is_recorded_as_unknown(bot, database):
    """The same for a ban: the enforcer cannot say whether a member no longer in the server was banned (or left),
    so "not done late" claimed a ban the platform had carried out was not done. The case now says its outcome is
    unknown, and the mod log asks a moderator to check the member; nothing is done again late."""
    p = await bot.another()
    await _refuse_recording_applied(database)
    with pytest.raises((StoreError, sqlite3.Error)):
        await p.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "raid")
    [case] = await p.store.pending_cases("discord")
    again, lines = await _restart_two_hours_later(bot, p, database)
    after = await again.store.get_case("discord", SERVER, case.number)
    assert after is not None and after.status is CaseStatus.FAILED
    assert after.failure is not None and after.failure.startswith("outcome unknown:")
    assert "not done late" not in after.failure
    assert bot.enforcer.called("ban") == [("alice",)]
    [line] = lines
    assert "outcome unknown" in line and "a moderator should check the member" in line
    [entry] = [e for e in bot.desk.log if e.title == "Recovered after a restart"]
    assert entry.failed and entry.lines == (line,)


# ------------------------------------------------------------------ /mydata forget and the moderators' record


async def test_forgetting_a_member_keeps_moderators_notes_and_says_so(bot):
    """/mydata forget pseudonymises the member's records and erases what they wrote; a moderator's note about them
    and the ids moderators' reasons quote are the mod log's record of decisions (README, "Members' data") and
    stay as written. The answer told the member only "your records now read <pseudonym>", as if nothing they
    could recognise stayed; it now says moderators' notes and reasons stay as written."""
    p = await bot.another()
    noted = await p.workflow.note(MOD, SERVER, "alice", "asked to calm down in voice")
    assert noted.case_number is not None
    done = await p.workflow.forget_member(SERVER, "alice")
    assert "moderators' notes and reasons stay as they wrote them" in done.text
    note = await p.store.get_case("discord", SERVER, noted.case_number)
    assert note is not None and note.reason == "asked to calm down in voice"
    assert note.member_id.startswith("forgotten-") and note.moderator_id == "mod"
