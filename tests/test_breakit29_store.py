"""Break-it round on the mod log store: SQLite / PostgreSQL parity (NUL bytes, integers past 32 bits) and what
``forget_member`` / retention leave behind. The tests run on both backends unless they name one (the PostgreSQL
server is the session's throwaway cluster of tests/conftest.py)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.errors import CaseNotFound, UnstorableValue
from bot.core.models import (
    ActionKind,
    CaseStatus,
    ChannelRef,
    MemberRef,
    Message,
    RaidAlert,
    RuleHit,
    ServerRef,
)
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.service import ModerationService
from bot.core.storable import storable, unstorable_id
from bot.store import open_store
from tests.fakes import ABUSE, FakeScorer
from tests.store_factories import T0, make_message, make_record

# ``database`` and ``store`` (both backends): tests/conftest.py


async def _rows(store, sql: str, params: tuple = ()) -> list[tuple]:
    """Raw rows through the store's own connection (``?`` placeholders on both backends)."""
    async with store._guard():  # noqa: SLF001 - test reads the tables the port does not expose
        return [tuple(r) for r in await store._all(sql, params)]  # noqa: SLF001


# -- NUL bytes ------------------------------------------------------------------------------------------------------


async def test_message_text_with_a_nul_byte_is_recorded_on_both_backends(store):
    """A message whose text holds U+0000 (a JSONL / CSV export, a platform event), made storable as the importers
    and the moderation service make every message (:func:`bot.core.storable.storable`), is recorded the same on
    both backends: verdict, case and excerpt, the NUL shown as U+FFFD. PostgreSQL's TEXT cannot hold NUL, and
    ``storable`` passed it through, so asyncpg's CharacterNotInRepertoireError failed the whole batch."""
    text = storable(make_message("m1", text="hello\x00world")).text
    [res] = await store.record_batch([make_record("m1", text=text, open_case=True)])
    assert res.inserted and res.case_number == 1
    found = await store.message_excerpt("discord", "g1", "m1")
    assert found is not None and found[1] == "hello\ufffdworld"


def test_an_id_with_a_nul_byte_is_refused_by_name():
    """An id cannot be changed without risking two messages or members becoming one: a NUL in one is named and the
    message refused (the importers skip it, the service fails it alone), as a lone surrogate is."""
    msg = make_message("m1")
    assert unstorable_id(msg) is None
    assert unstorable_id(replace(msg, author=MemberRef("u\x001"))) == "author id holds a NUL character"


async def test_a_nul_byte_a_write_still_holds_is_refused_for_that_write_only_on_postgresql(pg_url):
    """Text that does not come from a message (a moderator's typed reason) is not cleaned: PostgreSQL refuses a NUL
    in it with SQLSTATE 22021, which came out as a raw asyncpg error the moderation service retried for ever. It
    is ``UnstorableValue`` (never retried, shown to the moderator as is), and the next write goes through."""
    store = await open_store(pg_url)
    try:
        with pytest.raises(UnstorableValue, match="only this write fails"):
            await store.open_case("discord", "g1", "u1", ActionKind.WARN, "bad\x00reason")
        assert (await store.open_case("discord", "g1", "u1", ActionKind.WARN, "insult")).number == 1
    finally:
        await store.close()


async def test_a_nul_byte_in_one_message_does_not_stall_the_pipeline(database):
    """The moderation service retries a failed write "for as long as it takes" unless the store says
    ``StoreRefused``. On PostgreSQL a message with a NUL byte fails its batch with a raw asyncpg error for ever: the
    message never resolves, and no later message is ever judged or recorded (the writer is sequential)."""
    store = await open_store(database)
    service = ModerationService(scorer=FakeScorer(ABUSE), store=store,
                                policies=PolicyRegistry(DEFAULT_POLICY_PATH), max_delay_s=0.001)
    await service.start()
    author = MemberRef("u1", "u1", joined_at=T0 - timedelta(days=400), created_at=T0 - timedelta(days=400))

    def msg(mid: str, text: str) -> Message:
        return Message(server=ServerRef("discord", "g1"), channel=ChannelRef("c1", name="general"), author=author,
                       id=mid, text=text, created_at=datetime(2026, 6, 1, 12, tzinfo=UTC))

    try:
        first = await asyncio.wait_for(service.handle(msg("m1", "nul\x00inside, you freak")), 10)
        second = await asyncio.wait_for(service.handle(msg("m2", "a plain later message")), 10)
        assert not first.duplicate and not second.duplicate
        assert await store.get_verdict("discord", "g1", "m2") is not None
    finally:
        try:  # close() drains the writer, which retries for ever where the write keeps failing
            await asyncio.wait_for(service.close(), 5)
        except TimeoutError:
            pass
        await store.close()


# -- integers past 32 bits -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [2**31, 10**12, 2**63 - 1, 2**64])
async def test_a_case_number_past_32_bits_is_simply_not_found(store, number):
    """A case number a member or moderator types (Slack's /case and /appeal accept up to 18 digits, Discord's
    integer options up to 2^53) that no case has is answered as no case by every lookup by case number:
    ``None`` / ``[]`` or ``CaseNotFound``. PostgreSQL's columns are INTEGER (int4), so asyncpg refused to encode
    the parameter and a raw ``asyncpg.DataError`` (neither ``StoreBusy`` nor ``StoreRefused``) came out; SQLite's
    ``OverflowError`` past 2^63 - 1 the same."""
    await store.open_case("discord", "g1", "u1", ActionKind.WARN, "insult")
    assert await store.get_case("discord", "g1", number) is None
    with pytest.raises(CaseNotFound):
        await store.open_appeal("discord", "g1", number, "u1", "not me")
    with pytest.raises(CaseNotFound):
        await store.pardon("discord", "g1", case_number=number)
    with pytest.raises(CaseNotFound):
        await store.set_case_reason("discord", "g1", number, "typo", "mod")
    with pytest.raises(CaseNotFound):
        await store.set_case_status("discord", "g1", number, CaseStatus.APPLIED)
    assert await store.review_for_case("discord", "g1", number) is None
    assert await store.case_channel("discord", "g1", number) is None
    assert await store.escalations_of("discord", "g1", number) == []


# -- forget_member ------------------------------------------------------------------------------------------------


async def test_forget_member_leaves_no_real_id_in_member_joins(store):
    """``forget_member`` "replaces the member id everywhere by a stable pseudonym" (and deletes
    ``member_first_seen``). The join record ``member_joins`` (``note_join``: Slack's new-member signal) is not in
    its table list and keeps the real id next to the pseudonymised rest."""
    await store.note_join("discord", "g1", "u1", T0)
    await store.record_batch([make_record("m1", author="u1", text="hi")])
    await store.forget_member("discord", "g1", "u1")
    assert await _rows(store, "SELECT member_id FROM member_joins WHERE member_id = ?", ("u1",)) == []


async def test_forget_member_leaves_no_real_id_in_raids(store):
    """The raid's burst-window members (``raids.members``, JSON) keep the real id after ``forget_member``; the live
    mod log's raid section prints them as "their ids to copy" and ``list_raids`` returns them."""
    await store.record_raid("discord", RaidAlert("g1", "c1", T0, ("u1", "u2"), 12, "flagged_burst"))
    pseudonym = await store.forget_member("discord", "g1", "u1")
    [raid] = await store.list_raids("discord", "g1")
    assert "u1" not in raid.members and pseudonym in raid.members
    [(_, _, raiders)] = await store.modlog_raids("discord", "g1")
    assert "u1" not in raiders


async def test_a_live_raid_board_saved_after_forget_keeps_the_pseudonym(store):
    """A raider runs /mydata forget while the raid is on: the board in memory still names their id (its bulk
    actions act on it), and its next save (``set_raid_state(members=...)``) wrote that real id back into the mod log
    next to the pseudonym forget_member put there. The save keeps the pseudonym; other raiders stay as they are."""
    raid_id = await store.record_raid("discord", RaidAlert("g1", "c1", T0, ("u1", "u2"), 12, "flagged_burst"))
    pseudonym = await store.forget_member("discord", "g1", "u1")
    await store.set_raid_state("discord", "g1", raid_id, members=["u1", "u2", "u3"])
    [raid] = await store.list_raids("discord", "g1")
    assert list(raid.members) == [pseudonym, "u2", "u3"]


_QUOTED = (("cases.reason", "SELECT reason FROM cases"), ("review_items.reason", "SELECT reason FROM review_items"),
           ("strikes.reason", "SELECT reason FROM strikes"), ("verdicts.rule_hits", "SELECT rule_hits FROM verdicts"),
           ("replay_verdicts.rule_hits", "SELECT rule_hits FROM replay_verdicts"))
SECRET = "555-867-5309"


PHONE_RULE = '[[rules.regex]]\nname = "phone"\npattern = "\\\\d{3}-\\\\d{3}-\\\\d{4}"\naction = "delete"\n'


async def _regex_hit(database: str, tmp_path: Path, then, *, rule: str = PHONE_RULE,
                     text: str = f"call me at {SECRET} tonight", secret: str = SECRET) -> list[str]:
    """Record, through the real service, a message (``text``) whose ``secret`` a ``[[rules.regex]]`` rule (``rule``,
    action delete; default: a phone number) matches, and its verdict again as a replay under another policy version;
    run ``then(store)``; return the tables still quoting ``secret``."""
    policy = tmp_path / "regex.toml"
    policy.write_text(rule, encoding="utf-8")
    store = await open_store(database)
    service = ModerationService(scorer=FakeScorer(ABUSE), store=store,
                                policies=PolicyRegistry(DEFAULT_POLICY_PATH, extra_files=(policy,)), max_delay_s=0)
    await service.start()
    author = MemberRef("u1", "u1", joined_at=T0 - timedelta(days=400), created_at=T0 - timedelta(days=400))
    try:
        out = await service.handle(Message(
            server=ServerRef("discord", "g1"), channel=ChannelRef("c1", name="general"), author=author, id="m1",
            text=text, created_at=T0))
        assert out.case_number is not None and out.review_id is not None  # the rule hit: a delete, case, review
        assert await store.record_replay([replace(out.verdict, policy_version="p2")], model_version=None) == 1
        await then(store)
        return [t for t, sql in _QUOTED if any(secret in str(r[0]) for r in await _rows(store, sql))]
    finally:
        await service.close()
        await store.close()


async def test_a_regex_rule_quote_stays_while_the_text_is_kept(database, tmp_path):
    """The quote is what the moderators' cards show of the hit: retention that erases no text (the message is
    newer than the cutoff) leaves it everywhere."""
    async def purge(store) -> None:
        assert await store.purge_expired_text(T0 - timedelta(days=1), now=T0 + timedelta(days=40)) == 0
    assert await _regex_hit(database, tmp_path, purge) == [t for t, _ in _QUOTED]


async def test_retention_erases_the_text_a_regex_rule_quoted(database, tmp_path):
    """A ``[[rules.regex]]`` hit quotes up to 80 characters of the member's text in its detail (DETAIL_CHARS),
    which becomes the case's and the review item's reason and the verdict's ``rule_hits``. Retention erases "message
    text older than retention_days" but only ``messages.excerpt``: the quoted text (a phone number) stays."""
    async def purge(store) -> None:
        assert await store.purge_expired_text(T0 + timedelta(days=1), now=T0 + timedelta(days=40)) == 1
    assert await _regex_hit(database, tmp_path, purge) == []


async def test_forget_member_erases_the_text_a_regex_rule_quoted(database, tmp_path):
    """``/mydata forget`` tells the member "your stored message text was erased"; the phone number a regex rule
    quoted from their message stays in the case, review item and verdict."""
    async def forget(store) -> None:
        await store.forget_member("discord", "g1", "u1")
    assert await _regex_hit(database, tmp_path, forget) == []


async def test_a_replay_after_forget_does_not_write_the_real_id_back(store):
    """After ``/mydata forget`` the member's rows read the pseudonym. A replay of the same export under another
    policy version (``record_replay``: the scan's replay of already-recorded messages) writes the message's author
    id from the export into ``replay_verdicts`` next to the pseudonymised verdict of the same message key, so the
    pseudonym is linked to the real id again."""
    rec = make_record("m1", author="u1", text="some text")
    await store.record_batch([rec])
    pseudonym = await store.forget_member("discord", "g1", "u1")
    replayed = replace(rec.verdict, policy_version="p2")
    assert await store.record_replay([replayed], model_version=None) == 1
    ids = [r[0] for r in await _rows(store, "SELECT member_id FROM replay_verdicts")]
    assert ids == [pseudonym]


async def test_a_replay_of_a_message_never_recorded_names_a_forgotten_member_by_pseudonym(store):
    """A replayed message the mod log never recorded (no verdict row to follow) of a member who asked to be
    forgotten in that server is stored under their pseudonym (``member_pseudonyms``), not the export's id."""
    await store.record_batch([make_record("m1", author="u1")])
    pseudonym = await store.forget_member("discord", "g1", "u1")
    other = make_record("m2", author="u1").verdict
    assert await store.record_replay([other], model_version=None) == 1
    assert [r[0] for r in await _rows(store, "SELECT member_id FROM replay_verdicts")] == [pseudonym]


async def test_a_replay_names_the_member_its_message_was_recorded_under(store):
    """A message recorded after ``/mydata forget`` (the member posts again) is recorded under their id; its replay
    names the same id, so no row pairs that message with the pseudonym either."""
    await store.record_batch([make_record("m1", author="u1")])
    await store.forget_member("discord", "g1", "u1")
    later = make_record("m2", author="u1")
    await store.record_batch([later])
    assert await store.record_replay([replace(later.verdict, policy_version="p2")], model_version=None) == 1
    assert [r[0] for r in await _rows(store, "SELECT member_id FROM replay_verdicts")] == ["u1"]


@pytest.mark.parametrize("erasure", ["retention", "forget"])
async def test_a_replay_after_the_text_was_erased_does_not_quote_it_again(database, tmp_path, erasure):
    """A replay (another policy version) of a message whose text retention or ``/mydata forget`` erased re-judges
    the export's text; its regex hit's quote of that text is not stored again in ``replay_verdicts``."""
    async def erase_then_replay(store) -> None:
        if erasure == "retention":
            await store.purge_expired_text(T0 + timedelta(days=1), now=T0 + timedelta(days=40))
        else:
            await store.forget_member("discord", "g1", "u1")
        hit = RuleHit("regex", f"phone: {SECRET}", label=None, action="delete")
        replayed = replace(make_record("m1").verdict, policy_version="p3", rule_hits=(hit,))
        assert await store.record_replay([replayed], model_version=None) == 1
    assert await _regex_hit(database, tmp_path, erase_then_replay) == []


async def test_two_reason_edits_at_once_audit_the_reason_each_replaced(database):
    """``set_case_reason`` records "reason of case #N changed from OLD to NEW" with the reason it replaced. Two
    moderators (two bot processes on one PostgreSQL) editing the reason at the same moment: on SQLite the second
    waits for the first (``BEGIN IMMEDIATE``) and its note names the first one's reason; on PostgreSQL both read
    the reason before either writes (READ COMMITTED, no row lock taken by the read), so both notes say it was
    changed from the ORIGINAL reason and the audit trail never shows the first edit being replaced."""
    from tests.test_store_postgres import _concurrently

    a, b = await open_store(database), await open_store(database)
    try:
        await a.open_case("discord", "g1", "u1", ActionKind.WARN, "original")
        results = await _concurrently(database, "cases",
                                      lambda: a.set_case_reason("discord", "g1", 1, "from a", "mod-a"),
                                      lambda: b.set_case_reason("discord", "g1", 1, "from b", "mod-b"))
        assert all(isinstance(r, tuple) for r in results), results
        case = await a.get_case("discord", "g1", 1)
        assert case is not None
        final = case.reason
        notes = sorted(c.reason for c in await a.list_cases("discord", "g1") if c.action is ActionKind.LOG)
        first = "from b" if final == "from a" else "from a"
        assert notes == sorted([f"reason of case #1 changed from 'original' to {first!r}",
                                f"reason of case #1 changed from {first!r} to {final!r}"])
    finally:
        await a.close()
        await b.close()


async def test_migration_6_folds_duplicate_raids_without_dropping_their_members(tmp_path):
    """Migration 0006 says duplicates of one burst (two processes recording it) "are folded into the first one".
    It kept the first row as it was and deleted the others: a raider only the second process's window saw (and
    that copy's card id) disappeared from the mod log, the raid's "ids to copy" and its board. The first copy's
    members keep their order, the later copy's new ones follow; the first copy, with no card, takes the other's."""
    import sqlite3

    from bot.store.schema import connect, migrate

    path = tmp_path / "modlog.db"
    db = await connect(path)
    assert await migrate(db, target=5) == 5
    await db.close()
    at = "2024-05-01T12:00:00.000000+00:00"
    with sqlite3.connect(path) as raw:
        for members, card in (('["u1", "u2"]', None), ('["u2", "u3"]', "card-2")):
            raw.execute("INSERT INTO raids (platform, server_id, channel_id, started_at, members, count, reason, "
                        "recorded_at, card_message_id) VALUES ('discord', 'g1', 'c1', ?, ?, 12, 'flagged_burst', ?, ?)",
                        (at, members, at, card))
    raw.close()
    store = await open_store(path)
    try:
        [raid] = await store.list_raids("discord", "g1")
        assert raid.members == ("u1", "u2", "u3"), raid.members
        stored = await store.get_raid("discord", "g1", 1)
        assert stored is not None and stored.card_message_id == "card-2"
    finally:
        await store.close()


# the match is cut at 80 characters (DETAIL_CHARS) and the 80th is a space: the detail ends in " ", the case's and
# the review item's reason are f"{rule}: {detail}".strip(": ") (bot/core/judge.py), so REPLACE(reason, detail, ...)
# no longer finds the detail in them and the quote stays
ADDRESS = "12 Elm Street"
ADDRESS_RULE = '[[rules.regex]]\nname = "address"\npattern = "(?i)my address is .*"\naction = "delete"\n'
TEXT = "my address is " + ADDRESS + ", come " + "x" * 45 + " and more words after the cut"


async def test_forget_member_erases_a_regex_quote_that_ends_in_a_space(database, tmp_path):
    assert len("my address is " + ADDRESS + ", come " + "x" * 45 + " ") == 80
    async def forget(store) -> None:
        await store.forget_member("discord", "g1", "u1")
    assert await _regex_hit(database, tmp_path, forget, rule=ADDRESS_RULE, text=TEXT, secret=ADDRESS) == []


async def test_retention_erases_a_regex_quote_that_ends_in_a_space(database, tmp_path):
    async def purge(store) -> None:
        assert await store.purge_expired_text(T0 + timedelta(days=1), now=T0 + timedelta(days=40)) == 1
    assert await _regex_hit(database, tmp_path, purge, rule=ADDRESS_RULE, text=TEXT, secret=ADDRESS) == []


async def test_a_replay_of_a_forgotten_members_unrecorded_message_does_not_store_their_words(database):
    """After /mydata forget, a replayed message of that member the mod log never recorded is stored under their
    pseudonym (a523dfb), but its regex hit's quote of their text is written as is: the forgotten member's words
    are stored again, next to the pseudonym (a recorded message's quote is erased, 1c4c6a9)."""
    from bot.core.models import RuleHit
    from tests.store_factories import make_record
    store = await open_store(database)
    try:
        await store.record_batch([make_record("m1", author="u1")])
        pseudonym = await store.forget_member("discord", "g1", "u1")
        hit = RuleHit("regex", f"address: my address is {ADDRESS}", label=None, action="delete")
        other = replace(make_record("m2", author="u1").verdict, rule_hits=(hit,))
        assert await store.record_replay([other], model_version=None) == 1
        rows = await _rows(store, "SELECT member_id, rule_hits FROM replay_verdicts")
        assert rows[0][0] == pseudonym
        assert ADDRESS not in rows[0][1], rows
    finally:
        await store.close()


# the invite rule's detail is the invite code, the link rule's the host of the link (in allowlist mode any host the
# member writes): both are the member's words, copied into the case's, review item's and strike's reasons as a
# regex quote is; forgetting and retention erased only the regex rule's quotes
INVITE_CODE = "s3cretroom42"  # the rule quotes the code lower-cased (bot.core.rules.links)
LINK_HOST = "my-private-diary.example.net"
LINK_RULES = {
    "invite": ('[rules.links]\nblock_invites = true\n', f"join us at discord.gg/{INVITE_CODE} tonight", INVITE_CODE),
    "link": ('[rules.links]\nallowed_domains = ["example.org"]\n', f"read https://{LINK_HOST}/today", LINK_HOST),
}


@pytest.mark.parametrize("rule", sorted(LINK_RULES))
async def test_an_invite_or_link_quote_stays_while_the_text_is_kept(database, tmp_path, rule):
    """Before any erasure the code or host is in every table the regex quote is (so the tests below can fail)."""
    policy, text, secret = LINK_RULES[rule]

    async def nothing(store) -> None:
        return None
    assert await _regex_hit(database, tmp_path, nothing, rule=policy, text=text, secret=secret) == [
        t for t, _ in _QUOTED]


@pytest.mark.parametrize("rule", sorted(LINK_RULES))
async def test_forget_member_erases_the_invite_code_or_link_host_a_rule_quoted(database, tmp_path, rule):
    policy, text, secret = LINK_RULES[rule]

    async def forget(store) -> None:
        await store.forget_member("discord", "g1", "u1")
    assert await _regex_hit(database, tmp_path, forget, rule=policy, text=text, secret=secret) == []


@pytest.mark.parametrize("rule", sorted(LINK_RULES))
async def test_retention_erases_the_invite_code_or_link_host_a_rule_quoted(database, tmp_path, rule):
    policy, text, secret = LINK_RULES[rule]

    async def purge(store) -> None:
        assert await store.purge_expired_text(T0 + timedelta(days=1), now=T0 + timedelta(days=40)) == 1
    assert await _regex_hit(database, tmp_path, purge, rule=policy, text=text, secret=secret) == []


def test_erasing_keeps_a_blocklisted_rule_detail_and_names_each_change_by_rule():
    """Only the quoting rules' details change; a blocklist hit names the policy's own term and stays."""
    from bot.store.privacy import ERASED_QUOTE, erased_hits
    from bot.store.schema import dump_json, load_json
    hits = dump_json([{"rule": "blocklist", "detail": "slurs: xyz", "label": "identity_attack", "action": None},
                      {"rule": "invite", "detail": INVITE_CODE, "label": None, "action": "delete"},
                      {"rule": "regex", "detail": "phone: 555", "label": None, "action": "delete"}])
    erased, changed = erased_hits(hits)
    assert [h["detail"] for h in load_json(erased)] == ["slurs: xyz", ERASED_QUOTE, f"phone: {ERASED_QUOTE}"]
    assert changed == {("invite", INVITE_CODE): ERASED_QUOTE, ("regex", "phone: 555"): f"phone: {ERASED_QUOTE}"}
    assert erased_hits(erased) == (erased, {})

