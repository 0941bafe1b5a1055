"""Hostile tests of the member-facing flows (appeals, /mystatus, /mydata) over the platform-neutral workflow: the
real workflow, the fake enforcer and desk, a real SQLite mod log (tests/test_workflow.py's world)."""

from __future__ import annotations

import pytest

from bot.core.models import ActionKind
from bot.workflow import Refused
from tests.test_workflow import MOD, SERVER, World

# ``world``: tests/conftest.py (the world of make_world, closed after the test)


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


async def test_mystatus_after_forget_lists_the_members_open_appeal(world: World) -> None:
    """/mystatus lists the member's active strikes and open appeals. After /mydata forget it still lists the
    strikes (stored under the pseudonym, by design: they still count), but an appeal the member filed of their
    case, before or after forgetting, is stored under that pseudonym too and was left out: "Open appeals: none"
    while the appeal waits for a moderator (and a second appeal of the case is refused as already open)."""
    first = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "rude")
    second = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "rude again")
    assert first.case_number is not None and second.case_number is not None
    await world.workflow.appeal("alice", SERVER, first.case_number, "sorry")
    await world.workflow.forget_member(SERVER, "alice")
    await world.workflow.appeal("alice", SERVER, second.case_number, "sorry again")
    strikes, appeals = await world.workflow.member_status(SERVER, "alice")
    assert len(strikes) == 2
    assert [a.case_number for a in appeals] == [first.case_number, second.case_number]
    _, others = await world.workflow.member_status(SERVER, "bob")
    assert others == []


async def test_an_appeal_whose_card_could_not_be_posted_can_be_sent_again(world: World) -> None:
    """An appeal is decided only with its card's Uphold / Overturn. Filed while the review channel cannot be
    reached, it was recorded with no card, the member told "A moderator will look at it", and appealing again
    (the channel back) was refused as "already has an open appeal": no moderator could ever decide it, and the
    member could not file it again. Now the member is told the card was not sent, and appealing again sends it."""
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.WARN, "rude")
    assert res.case_number is not None
    world.desk.reachable = False
    first = await world.workflow.appeal("alice", SERVER, res.case_number, "it was a quote")
    assert "cannot be reached" in first.text and "will look at it" not in first.text
    assert world.desk.reviews == []
    world.desk.reachable = True
    again = await world.workflow.appeal("alice", SERVER, res.case_number, "it was a quote, really")
    assert again.ok and "sent to the moderators" in again.text
    [card] = world.desk.reviews
    assert card.appeal_id == 1 and card.case_number == res.case_number and card.evidence.text == "it was a quote"
    assert world.rows("SELECT COUNT(*) FROM appeals") == [(1,)]
    # once sent, a further appeal of the case is refused as before
    with pytest.raises(Refused, match="already has an open appeal"):
        await world.workflow.appeal("alice", SERVER, res.case_number, "and again")
    assert len(world.desk.reviews) == 1
