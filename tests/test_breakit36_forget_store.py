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
