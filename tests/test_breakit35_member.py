"""Hostile tests of the member-facing flows (appeals, /mystatus, /mydata) over the platform-neutral workflow: the
real workflow, the fake enforcer and desk, a real SQLite mod log (tests/test_workflow.py's world)."""

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


async def test_forgetting_again_erases_an_appeal_filed_after_the_first_forget(world: World) -> None:
    """After /mydata forget the member's case reads their pseudonym, and their appeal of it is filed under that
    pseudonym. Running /mydata forget again must erase that appeal's text (and its review item's copy of it) as
    it erases every other appeal text of theirs: it stayed, in full, under the pseudonym."""
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "rude")
    assert res.case_number is not None
    await world.workflow.forget_member(SERVER, "alice")
    await world.workflow.appeal("alice", SERVER, res.case_number, "call me on 555-1234, my name is Alice Smith")
    await world.workflow.forget_member(SERVER, "alice")
    assert [t for (t,) in world.rows("SELECT text FROM appeals")] == [""]
    assert [r for (r,) in world.rows("SELECT reason FROM review_items WHERE source = 'appeal'")] == [""]
