"""SqliteStore: record_batch idempotence and edits, known_messages, cases, strikes, raids."""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.errors import CaseNotFound
from bot.core.models import MAX_TIMEOUT_S, ActionKind, CaseStatus, RaidAlert
from bot.core.store_port import ModStore
from bot.store.sqlite import KEY_CHUNK, SqliteStore
from tests.store_factories import STRIKE_TTL, T0, make_record

T1 = T0 + timedelta(minutes=5)
T2 = T0 + timedelta(minutes=10)


@pytest.fixture
async def store(tmp_path):
    s = await SqliteStore.open(tmp_path / "data" / "modlog.db")
    yield s
    await s.close()


async def test_open_creates_folders_and_uses_wal(tmp_path):
    """open() creates missing folders and leaves the file in WAL journal mode."""
    path = tmp_path / "a" / "b" / "modlog.db"
    async with await SqliteStore.open(path) as s:
        await s.record_batch([make_record("m1")])
        assert await s.integrity_check() == []
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_foreign_keys_enforced(store):
    """A review item pointing at a case that does not exist is refused (foreign keys are on)."""
    with pytest.raises(sqlite3.IntegrityError):
        await store.open_review("discord", "g1", "u1", "report", "x", case_number=99)


async def test_replay_is_not_written_twice(store):
    """Recording the same message twice keeps one verdict; the replay reports inserted=False and opens nothing."""
    rec = make_record("m1", open_case=True, open_review=True, strike_points=1)
    first = await store.record_batch([rec])
    second = await store.record_batch([rec])
    assert (first[0].inserted, first[0].case_number, first[0].strike_added) == (True, 1, True)
    assert (second[0].inserted, second[0].case_number, second[0].review_id, second[0].strike_added) == (
        False,
        None,
        None,
        False,
    )
    assert len(await store.list_cases("discord", "g1")) == 1
    assert (await store.get_verdict("discord", "g1", "m1")).revision == 1


async def test_duplicate_within_one_batch(store):
    """The same key twice in one batch is written once."""
    results = await store.record_batch([make_record("m1"), make_record("m1")])
    assert [r.inserted for r in results] == [True, False]


async def test_edit_updates_verdict_in_place(store):
    """An edit re-judges the same verdict row (revision + 1) and never earns a second strike."""
    await store.record_batch([make_record("m1", text="v1", strike_points=1)])
    [res] = await store.record_batch([make_record("m1", text="v2", edited=T1, strike_points=1, labels=("threat",))])
    stored = await store.get_verdict("discord", "g1", "m1")
    assert (res.inserted, stored.revision, res.strike_added) == (True, 2, False)
    assert stored.labels == ("threat",) and stored.edited_at == T1


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        # (edited_at, strike points) per step -> (inserted, strike_added) per step, final revision
        ([(None, 1), (T1, 1), (T2, 1)], ([True, True, True], [True, False, False], 3)),
        ([(None, 0), (T1, 2), (T2, 2)], ([True, True, True], [False, True, False], 3)),
        ([(None, 1), (T2, 0), (T1, 1)], ([True, True, False], [True, False, False], 2)),  # stale edit ignored
        ([(None, 0), (T1, 0), (T1, 0)], ([True, True, False], [False, False, False], 2)),  # same edit replayed
    ],
)
async def test_edit_sequences(store, steps, expected):
    """Edits update one row in place; stale or replayed edits write nothing; at most one strike per message."""
    inserted, added = [], []
    for i, (edited, points) in enumerate(steps):
        [res] = await store.record_batch([make_record("m1", text=f"v{i}", edited=edited, strike_points=points)])
        inserted.append(res.inserted)
        added.append(res.strike_added)
    stored = await store.get_verdict("discord", "g1", "m1")
    assert (inserted, added, stored.revision) == expected
    assert len(await store.active_strikes("discord", "g1", "u1", T0)) == (1 if any(added) else 0)


async def test_edit_replaces_excerpt(store):
    """The message excerpt follows the latest judged edit."""
    await store.record_batch([make_record("m1", text="before")])
    await store.record_batch([make_record("m1", text="after", edited=T1)])
    record = await store.member_record("discord", "g1", "u1")
    assert [m["excerpt"] for m in record["messages"]] == ["after"]


async def test_case_review_and_strike_linked(store):
    """open_case + open_review + strike: case 1, review item linked to it, strike carries message and case."""
    [res] = await store.record_batch([make_record("m1", open_case=True, open_review=True, strike_points=2)])
    review = await store.get_review(res.review_id)
    [strike] = await store.active_strikes("discord", "g1", "u1", T0)
    case = await store.get_case("discord", "g1", 1)
    assert (review.case_number, review.source, review.message_id, review.channel_id) == (1, "automod", "m1", "c1")
    assert review.scores["insult"] == 0.9
    assert (strike.message_id, strike.case_number, strike.points) == ("m1", 1, 2)
    assert (case.member_id, case.action, case.status, case.message_id) == ("u1", ActionKind.DELETE, "pending", "m1")


@pytest.mark.parametrize(("shadow", "status"), [(False, CaseStatus.PENDING), (True, CaseStatus.SHADOW)])
async def test_case_status_follows_shadow(store, shadow, status):
    """Cases opened from shadow-mode verdicts are recorded with status shadow."""
    [res] = await store.record_batch([make_record("m1", open_case=True, shadow=shadow)])
    assert (await store.get_case("discord", "g1", res.case_number)).status is status


@pytest.mark.parametrize(
    ("duration_s", "expected"),
    [(600, T0 + timedelta(seconds=600)), (10**9, T0 + timedelta(seconds=MAX_TIMEOUT_S)), (None, None)],
)
async def test_timeout_case_expiry(store, duration_s, expected):
    """A timeout case expires at event time + duration, capped at Discord's 28 days."""
    rec = make_record("m1", action=ActionKind.TIMEOUT, duration_s=duration_s, open_case=True)
    await store.record_batch([rec])
    assert (await store.get_case("discord", "g1", 1)).expires_at == expected


async def test_failed_batch_is_rolled_back(store):
    """An error in one record rolls back the whole batch (no partial writes)."""
    good = make_record("m1", open_case=True)
    bad = make_record("m2", created=datetime(2024, 5, 1, 12))  # noqa: DTZ001 - naive on purpose
    with pytest.raises(ValueError, match="naive"):
        await store.record_batch([good, bad])
    assert await store.known_messages([("discord", "g1", "m1")]) == {}
    assert await store.get_case("discord", "g1", 1) is None
    [res] = await store.record_batch([good])
    assert (res.inserted, res.case_number) == (True, 1)


async def test_flagged_messages_returns_only_flagged_known_keys(store):
    """flagged_messages names the recorded messages whose verdict was flagged; clean and unknown keys are absent."""
    await store.record_batch([make_record("m1"), make_record("m2", labels=(), action=ActionKind.NONE)])
    keys = [("discord", "g1", "m1"), ("discord", "g1", "m2"), ("discord", "g1", "m3"), ("slack", "g1", "m1")]
    assert await store.flagged_messages(keys) == {("discord", "g1", "m1")}


async def test_known_messages_chunks_large_batches(store):
    """known_messages answers for more keys than one query may bind, across servers and platforms."""
    records = [make_record(f"m{i}", server=("g1", "g2")[i % 2]) for i in range(KEY_CHUNK + 300)]
    records.append(make_record("e1", platform="slack", server="g1", edited=T1))
    await store.record_batch(records)
    keys = [("discord", ("g1", "g2")[i % 2], f"m{i}") for i in range(2 * KEY_CHUNK + 100)]
    keys += [("slack", "g1", "e1"), ("slack", "g1", "m0")]
    known = await store.known_messages(keys)
    assert len(known) == KEY_CHUNK + 301
    assert known[("slack", "g1", "e1")] == T1 and known[("discord", "g2", "m1")] is None
    assert ("discord", "g1", f"m{KEY_CHUNK + 300}") not in known


async def test_case_numbers_are_per_server(store):
    """Each (platform, server) numbers its cases from 1."""
    got = []
    for server, platform in [
        ("g1", "discord"),
        ("g2", "discord"),
        ("g1", "discord"),
        ("g1", "slack"),
        ("g2", "discord"),
    ]:
        case = await store.open_case(platform, server, "u1", ActionKind.WARN, "r")
        got.append((platform, server, case.number))
    assert got == [
        ("discord", "g1", 1),
        ("discord", "g2", 1),
        ("discord", "g1", 2),
        ("slack", "g1", 1),
        ("discord", "g2", 2),
    ]


async def test_other_servers_case_is_invisible(store):
    """get_case is scoped by server: case 1 of g1 is not visible from g2."""
    await store.open_case("discord", "g1", "u1", ActionKind.BAN, "spam")
    assert await store.get_case("discord", "g2", 1) is None
    assert await store.get_case("slack", "g1", 1) is None
    assert (await store.get_case("discord", "g1", 1)).action is ActionKind.BAN


async def test_concurrent_case_allocation(store):
    """Concurrent open_case and record_batch calls never reuse or skip a number."""
    manual = [store.open_case("discord", "g1", f"u{i}", ActionKind.WARN, "r") for i in range(20)]
    batches = [store.record_batch([make_record(f"m{i}", open_case=True)]) for i in range(20)]
    results = await asyncio.gather(*manual, *batches)
    numbers = [r.number for r in results[:20]] + [r[0].case_number for r in results[20:]]
    assert sorted(numbers) == list(range(1, 41))


async def test_list_cases_newest_first_and_by_member(store):
    """list_cases returns newest first, filters by member and honours the limit."""
    for member in ["u1", "u2", "u1", "u1"]:
        await store.open_case("discord", "g1", member, ActionKind.WARN, "r")
    assert [c.number for c in await store.list_cases("discord", "g1", member_id="u1")] == [4, 3, 1]
    assert [c.number for c in await store.list_cases("discord", "g1", limit=2)] == [4, 3]


async def test_set_case_status(store):
    """set_case_status records the outcome and failure reason; unknown cases raise CaseNotFound."""
    await store.open_case("discord", "g1", "u1", ActionKind.TIMEOUT, "r")
    case = await store.set_case_status("discord", "g1", 1, CaseStatus.FAILED, "Missing Permissions (50013)")
    assert (case.status, case.failure) == (CaseStatus.FAILED, "Missing Permissions (50013)")
    with pytest.raises(CaseNotFound):
        await store.set_case_status("discord", "g2", 1, CaseStatus.APPLIED)


@pytest.mark.parametrize(("message_ids", "added"), [((None, None), [True, True]), (("m1", "m1"), [True, False])])
async def test_manual_strikes(store, message_ids, added):
    """Manual strikes without a message may repeat; a message earns at most one strike."""
    got = [
        await store.add_strike("discord", "g1", "u1", 1, T0 + STRIKE_TTL, message_id=mid, now=T0) for mid in message_ids
    ]
    assert got == added
    assert len(await store.active_strikes("discord", "g1", "u1", T0)) == added.count(True)


async def test_strike_written_with_its_case_status(store):
    """add_strike / raise_strike with ``case_status`` record the case's outcome in the same transaction as the strike;
    a case of another server writes neither, and a status needs its case."""
    case = await store.open_case("discord", "g1", "u1", ActionKind.WARN, "be nice", moderator_id="mod", now=T0)
    with pytest.raises(CaseNotFound):
        await store.add_strike("discord", "g2", "u1", 1, T0 + STRIKE_TTL, case_number=case.number, now=T0,
                               case_status=CaseStatus.APPLIED)
    assert await store.active_strikes("discord", "g2", "u1", T0) == []
    with pytest.raises(ValueError, match="case_number"):
        await store.add_strike("discord", "g1", "u1", 1, T0 + STRIKE_TTL, now=T0, case_status=CaseStatus.APPLIED)
    assert await store.add_strike("discord", "g1", "u1", 1, T0 + STRIKE_TTL, message_id="m1", case_number=case.number,
                                  now=T0, case_status=CaseStatus.APPLIED, failure="dm: closed")
    got = await store.get_case("discord", "g1", case.number)
    assert (got.status, got.failure) == (CaseStatus.APPLIED, "dm: closed")
    ban = await store.open_case("discord", "g1", "u1", ActionKind.BAN, "for m1", moderator_id="mod", message_id="m1")
    assert await store.raise_strike("discord", "g1", "m1", 5, ban.number, case_status=CaseStatus.APPLIED) == 1
    assert (await store.get_case("discord", "g1", ban.number)).status is CaseStatus.APPLIED
    assert [s.points for s in await store.active_strikes("discord", "g1", "u1", T0)] == [5]


async def test_active_strikes_exclude_expired_and_pardoned(store):
    """Expired and pardoned strikes do not count."""
    await store.add_strike("discord", "g1", "u1", 1, T0 + timedelta(days=1), reason="short", now=T0)
    await store.add_strike("discord", "g1", "u1", 2, T0 + timedelta(days=10), reason="long", now=T0)
    later = T0 + timedelta(days=2)
    assert [s.reason for s in await store.active_strikes("discord", "g1", "u1", later)] == ["long"]
    assert await store.pardon("discord", "g1", member_id="u1", moderator_id="mod", now=later) == 1
    assert await store.active_strikes("discord", "g1", "u1", later) == []


async def test_pardon_case(store):
    """Pardoning a case pardons its strike and marks the case pardoned."""
    await store.record_batch([make_record("m1", open_case=True, strike_points=1)])
    assert await store.pardon("discord", "g1", case_number=1, moderator_id="mod") == 1
    assert await store.active_strikes("discord", "g1", "u1", T0) == []
    assert (await store.get_case("discord", "g1", 1)).status is CaseStatus.PARDONED
    with pytest.raises(CaseNotFound):
        await store.pardon("discord", "g2", case_number=1)
    with pytest.raises(ValueError, match="exactly one"):
        await store.pardon("discord", "g1")


async def test_record_raid(store):
    """record_raid records a burst once: the same burst again gives None, another burst a new id."""
    alert = RaidAlert("g1", "c1", T0, ("u1", "u2"), 12, "flagged_burst")
    later = RaidAlert("g1", "c1", T1, ("u3",), 9, "flagged_burst")
    ids = [await store.record_raid("discord", alert), await store.record_raid("discord", alert),
           await store.record_raid("discord", later)]
    assert ids[0] is not None and ids[1] is None and ids[2] not in (None, ids[0])
    assert (await store.summary("discord", "g1")).raids == 2


async def test_first_seen_keeps_earliest(store):
    """first_seen is the earliest recorded message time of the member in the server."""
    await store.record_batch([make_record("m2", created=T1), make_record("m1", created=T0)])
    assert await store.first_seen("discord", "g1", "u1") == T0
    assert await store.first_seen("discord", "g2", "u1") is None


async def test_times_read_back_aware_utc(store):
    """Times written in another offset come back as aware UTC datetimes."""
    cet = datetime(2024, 5, 1, 14, 0, tzinfo=UTC).astimezone(ZoneInfo("Europe/Paris"))
    case = await store.open_case("discord", "g1", "u1", ActionKind.WARN, "r", now=cet)
    stored = await store.get_case("discord", "g1", case.number)
    assert stored.created_at == datetime(2024, 5, 1, 14, 0, tzinfo=UTC) and stored.created_at.tzinfo is UTC


async def test_an_untimed_message_is_stored_and_read_back_without_a_time(store):
    """A message without a time (a JSON line without ``created_at``) with a timeout, a case and a review item: it is
    stored with no time (never the Unix epoch), sets no first-seen time and no channel's latest message, its case
    and review item are dated when they were recorded (the timeout ends that long after), every reader of the mod
    log takes it, and retention erases its text counting from when it was stored."""
    from bot.store.schema import utcnow

    before = utcnow()
    [res] = await store.record_batch([make_record("untimed", created=None, action=ActionKind.TIMEOUT, duration_s=600,
                                                  open_case=True, open_review=True)])
    after = utcnow()
    assert res.case_number == 1 and res.review_id is not None
    assert (await store.get_verdict("discord", "g1", "untimed")) is not None
    [msg] = (await store.member_record("discord", "g1", "u1"))["messages"]
    assert msg["message_id"] == "untimed" and msg["created_at"] is None and msg["excerpt"] == "some text"
    assert await store.first_seen("discord", "g1", "u1") is None
    assert await store.latest_messages("discord", "g1") == {}
    case = await store.get_case("discord", "g1", 1)
    assert before - timedelta(seconds=1) <= case.created_at <= after + timedelta(seconds=1)
    assert case.expires_at is not None
    assert abs((case.expires_at - case.created_at).total_seconds() - 600) < 1
    review = await store.get_review(res.review_id)
    assert review.message_id == "untimed"
    assert [c.number for c in await store.list_cases("discord", "g1")] == [1]
    assert (await store.summary("discord", "g1")).messages == 1
    assert await store.purge_expired_text(before - timedelta(days=30)) == 0  # stored just now: young
    assert await store.purge_expired_text(after + timedelta(days=1)) == 1  # the cutoff passed its storing


PORT_METHODS = sorted(n for n in dir(ModStore) if not n.startswith("_") and callable(getattr(ModStore, n)))


@pytest.mark.parametrize("name", PORT_METHODS)
def test_implements_modstore_port(name):
    """SqliteStore has every ModStore method with the port's parameters (names, kinds and defaults)."""
    port = inspect.signature(getattr(ModStore, name)).parameters
    ours = inspect.signature(getattr(SqliteStore, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [(p.name, p.kind, p.default) for p in port.values()]


def test_port_has_no_any_return():
    """No method of the store port returns ``Any`` (every seam is typed)."""
    import typing

    hints = {n: typing.get_type_hints(getattr(ModStore, n)).get("return") for n in PORT_METHODS}
    assert [n for n, h in hints.items() if h is typing.Any] == []
