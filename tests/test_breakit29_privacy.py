"""Break-it (session 29): regex quotes erased on retention / forget_member."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.store import open_store
from tests.fakes import ABUSE, FakeScorer
from tests.store_factories import T0
from tests.test_breakit29_store import _QUOTED, _rows, database  # noqa: F401 - the fixture, both backends

SECRET = "12 Elm Street"


async def _quoted_after(database: str, tmp_path: Path, text: str, then) -> list[str]:  # noqa: F811
    policy = tmp_path / "regex.toml"
    # a doxxing rule: "my address is" and what follows (the hit quotes its first 80 characters)
    policy.write_text('[[rules.regex]]\nname = "address"\npattern = "(?i)my address is .*"\naction = "delete"\n',
                      encoding="utf-8")
    store = await open_store(database)
    service = ModerationService(scorer=FakeScorer(ABUSE), store=store,
                                policies=PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy,)), max_delay_s=0)
    await service.start()
    author = MemberRef("u1", "u1", joined_at=T0 - timedelta(days=400), created_at=T0 - timedelta(days=400))
    try:
        out = await service.handle(Message(
            server=ServerRef("discord", "g1"), channel=ChannelRef("c1", name="general"), author=author, id="m1",
            text=text, created_at=T0))
        assert out.case_number is not None and out.review_id is not None
        assert await store.record_replay([replace(out.verdict, policy_version="p2")], model_version=None) == 1
        await then(store)
        return [t for t, sql in _QUOTED if any(SECRET in str(r[0]) for r in await _rows(store, sql))]
    finally:
        await service.close()
        await store.close()


# the match is cut at 80 characters (DETAIL_CHARS) and the 80th is a space: the detail ends in " ", the case's and
# the review item's reason are f"{rule}: {detail}".strip(": ") (bot/core/judge.py), so REPLACE(reason, detail, ...)
# no longer finds the detail in them and the quote stays
TEXT = "my address is " + SECRET + ", come " + "x" * 45 + " and more words after the cut"


async def test_forget_member_erases_a_regex_quote_that_ends_in_a_space(database, tmp_path):  # noqa: F811
    assert len("my address is " + SECRET + ", come " + "x" * 45 + " ") == 80
    async def forget(store) -> None:
        await store.forget_member("discord", "g1", "u1")
    assert await _quoted_after(database, tmp_path, TEXT, forget) == []


async def test_retention_erases_a_regex_quote_that_ends_in_a_space(database, tmp_path):  # noqa: F811
    async def purge(store) -> None:
        assert await store.purge_expired_text(T0 + timedelta(days=1), now=T0 + timedelta(days=40)) == 1
    assert await _quoted_after(database, tmp_path, TEXT, purge) == []


async def test_a_replay_of_a_forgotten_members_unrecorded_message_does_not_store_their_words(database):  # noqa: F811
    """After /mydata forget, a replayed message of that member the mod log never recorded is stored under their
    pseudonym (a523dfb), but its regex hit's quote of their text is written as is: the forgotten member's words
    are stored again, next to the pseudonym (a recorded message's quote is erased, 1c4c6a9)."""
    from bot.core.models import RuleHit
    from tests.store_factories import make_record
    store = await open_store(database)
    try:
        await store.record_batch([make_record("m1", author="u1")])
        pseudonym = await store.forget_member("discord", "g1", "u1")
        hit = RuleHit("regex", f"address: my address is {SECRET}", label=None, action="delete")
        other = replace(make_record("m2", author="u1").verdict, rule_hits=(hit,))
        assert await store.record_replay([other], model_version=None) == 1
        rows = await _rows(store, "SELECT member_id, rule_hits FROM replay_verdicts")
        assert rows[0][0] == pseudonym
        assert SECRET not in rows[0][1], rows
    finally:
        await store.close()
