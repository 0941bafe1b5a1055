"""Break-it: the ids a member's records may be stored under after ``/mydata forget`` (their keyed pseudonym), on
both backends, as ``/member info`` and ``/case list member:`` read them."""

from __future__ import annotations

from bot.core.models import ActionKind


async def test_member_ids_name_the_pseudonym_of_a_forgotten_members_cases(store):
    """Before anyone is forgotten a member's records are under their id alone; after u1 is forgotten, their ids
    are their own and the pseudonym their cases now name (another member's and another server's are their own)."""
    assert await store.member_ids("discord", "g1", "u1") == ("u1",)
    await store.open_case("discord", "g1", "u1", ActionKind.WARN, "spam")
    await store.open_case("discord", "g1", "u2", ActionKind.WARN, "rude")
    pseudonym = await store.forget_member("discord", "g1", "u1")
    assert await store.member_ids("discord", "g1", "u1") == ("u1", pseudonym)
    assert (await store.get_case("discord", "g1", 1)).member_id == pseudonym
    assert pseudonym not in await store.member_ids("discord", "g1", "u2")
    assert pseudonym not in await store.member_ids("discord", "g2", "u1")


async def test_reports_of_lists_every_reporter_of_a_shared_item_oldest_first(store):
    """Two members report one message: one item, and reports_of gives both (reporter, reason) in order; the same
    reporter reporting again adds nothing; an item nobody reported has none."""
    first = await store.add_report("discord", "g1", "r1", "u1", "slur", message_id="m1", channel_id="c1")
    second = await store.add_report("discord", "g1", "r2", "u1", "threat", message_id="m1", channel_id="c1")
    again = await store.add_report("discord", "g1", "r1", "u1", "slur again", message_id="m1", channel_id="c1")
    assert first.id == second.id == again.id
    assert await store.reports_of(first.id) == [("r1", "slur"), ("r2", "threat")]
    assert await store.reports_of(first.id + 1) == []
