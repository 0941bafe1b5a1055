"""Break-it round on the mod log as the workflow writes it, on both backends (the ``database`` fixture of
tests/conftest.py: a SQLite file, then a fresh PostgreSQL database): what a person typed is stored the same on
both, a crash or a failed write between two of the workflow's writes leaves the mod log consistent, and two bot
processes on one mod log do nothing twice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.models import ActionKind
from bot.workflow import cases as case_commands
from tests.fakes import FakeDesk, FakeEnforcer
from tests.test_breakit23_lifts import _Process
from tests.test_workflow import MOD, SERVER, make_world


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

