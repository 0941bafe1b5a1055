"""SqliteStore: text retention, /mydata export and forget, modstats and the scan summary."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from bot.core.models import ActionKind, ReviewDecision
from bot.store.sqlite import SqliteStore
from tests.store_factories import T0, make_record

DAY = timedelta(days=1)


@pytest.fixture
async def store(tmp_path):
    s = await SqliteStore.open(tmp_path / "modlog.db")
    yield s
    await s.close()


async def test_purge_expired_text_keeps_mod_log(store):
    """Retention erases old excerpts (by edit time for edits) and keeps verdicts, cases and strikes."""
    await store.record_batch(
        [
            make_record("old", text="old text", created=T0, open_case=True, strike_points=1),
            make_record("edited", text="recent edit", created=T0, edited=T0 + 20 * DAY),
            make_record("new", text="new text", created=T0 + 25 * DAY),
        ]
    )
    assert await store.purge_expired_text(T0 + 10 * DAY, now=T0 + 40 * DAY) == 1
    assert await store.purge_expired_text(T0 + 10 * DAY) == 0
    messages = {m["message_id"]: m for m in (await store.member_record("discord", "g1", "u1"))["messages"]}
    assert {k: m["excerpt"] for k, m in messages.items()} == {"old": None, "edited": "recent edit", "new": "new text"}
    assert messages["old"]["purged_at"] == "2024-06-10T12:00:00.000000+00:00"
    assert (await store.get_verdict("discord", "g1", "old")).labels == ("insult",)
    assert (await store.get_case("discord", "g1", 1)).message_id == "old"
    assert len(await store.active_strikes("discord", "g1", "u1", T0)) == 1


async def test_retention_erases_future_dated_text_counting_from_when_it_was_stored(store):
    """A message dated a year ahead (a wrong clock, a doctored export) kept its text for ever: retention compared
    its own date. Its date is clamped to when the mod log stored it, so 30-day retention erases it once 30 days
    have passed since then, not before; a message stored at the same time with its real date is kept."""
    from bot.store.schema import utcnow

    stored = utcnow()
    await store.record_batch([make_record("future", text="from the future", created=stored + 365 * DAY),
                              make_record("today", text="posted today", created=stored)])
    assert await store.purge_expired_text(stored - 30 * DAY) == 0  # retention's cutoff today: both are young
    assert await store.purge_expired_text(stored - 1 * DAY) == 0
    # 31 days later, the cutoff passes the moment both were stored: each is erased (neither is kept for ever)
    assert await store.purge_expired_text(stored + 1 * DAY) == 2
    messages = {m["message_id"]: m for m in (await store.member_record("discord", "g1", "u1"))["messages"]}
    assert messages["future"]["excerpt"] is None and messages["future"]["purged_at"] is not None
    assert await store.get_verdict("discord", "g1", "future") is not None


async def test_retention_of_an_edited_future_dated_message_counts_from_the_edit_being_stored(store):
    """An edit stores new text and renews the verdict's ``judged_at``: the clamp counts from then, not from the
    first version's storing."""
    from bot.store.schema import to_db_time, utcnow

    await store.record_batch([make_record("m", text="first", created=utcnow() + 400 * DAY)])
    await store._db.execute("UPDATE verdicts SET judged_at = ? WHERE message_id = 'm'",
                            (to_db_time(utcnow() - 90 * DAY),))  # the first version was stored 90 days ago
    await store.record_batch([make_record("m", text="edited", created=utcnow() + 400 * DAY,
                                          edited=utcnow() + 401 * DAY)])
    assert await store.purge_expired_text(utcnow() - 30 * DAY) == 0  # the edit is new
    assert (await store.message_excerpt("discord", "g1", "m"))[1] == "edited"


async def _member_history(store: SqliteStore, server: str = "g1") -> None:
    await store.record_batch(
        [
            make_record("m1", server=server, author="u1", text="secret 1", open_case=True, strike_points=1),
            make_record("m2", server=server, author="u1", text="secret 2", open_case=True, open_review=True),
            make_record("m3", server=server, author="u2", text="bystander", open_case=True),
        ]
    )
    await store.open_appeal("discord", server, 1, "u1", "my appeal text")
    await store.add_report("discord", server, "u1", "u2", "u2 was rude", message_id="m3")


async def test_member_record_export(store):
    """member_record lists the member's messages, verdicts, cases, strikes, reviews, reports and appeals."""
    await _member_history(store)
    record = await store.member_record("discord", "g1", "u1")
    assert [m["excerpt"] for m in record["messages"]] == ["secret 1", "secret 2"]
    assert [c["number"] for c in record["cases"]] == [1, 2]
    assert [s["message_id"] for s in record["strikes"]] == ["m1"]
    assert [r["source"] for r in record["review_items"]] == ["automod", "appeal"]
    assert [a["text"] for a in record["appeals"]] == ["my appeal text"]
    assert [r["reason"] for r in record["reports_filed"]] == ["u2 was rude"]
    assert record["verdicts"][0]["labels"] == ["insult"] and record["first_seen"].startswith("2024-05-01T12:00")


async def test_forget_member(store):
    """forget_member erases the member's text and replaces their id by a stable pseudonym, keeping counts."""
    await _member_history(store)
    await _member_history(store, server="g2")
    pseudonym = await store.forget_member("discord", "g1", "u1")
    assert re.fullmatch(r"forgotten-[0-9a-f]{16}", pseudonym)
    assert await store.forget_member("discord", "g1", "u1") == pseudonym
    gone = await store.member_record("discord", "g1", "u1")
    assert [gone[k] for k in ("messages", "verdicts", "cases", "strikes", "appeals", "reports_filed")] == [[]] * 6
    assert gone["first_seen"] is None
    kept = await store.member_record("discord", "g1", pseudonym)
    assert [m["excerpt"] for m in kept["messages"]] == [None, None]
    assert [a["text"] for a in kept["appeals"]] == [""] and [r["reason"] for r in kept["reports_filed"]] == [""]
    assert [c["number"] for c in kept["cases"]] == [1, 2] and len(kept["strikes"]) == 1
    assert (await store.get_case("discord", "g1", 1)).member_id == pseudonym
    assert (await store.get_case("discord", "g1", 3)).member_id == "u2"
    assert [m["excerpt"] for m in (await store.member_record("discord", "g2", "u1"))["messages"]] == [
        "secret 1",
        "secret 2",
    ]
    assert await store.forget_member("discord", "g2", "u1") != pseudonym
    assert len(await store.known_messages([("discord", "g1", "m1"), ("discord", "g1", "m2")])) == 2


async def _stats_fixture(store: SqliteStore) -> None:
    results = await store.record_batch(
        [
            make_record("a", labels=("insult",), rules=("blocklist",), open_case=True, open_review=True),
            make_record("b", labels=("insult",), open_case=True, open_review=True),
            make_record("c", labels=("insult",), rules=("blocklist",), open_review=True),
            make_record("d", labels=("threat",), action=ActionKind.TIMEOUT, open_case=True, strike_points=2),
            make_record("e", labels=(), action=ActionKind.NONE),
        ]
    )
    a, b, c, d, _ = results
    assert a.review_id and b.review_id and c.review_id and d.case_number
    await store.decide_review(a.review_id, ReviewDecision.DISMISSED, "mod")
    await store.decide_review(b.review_id, ReviewDecision.DELETED, "mod")
    await store.decide_review(c.review_id, ReviewDecision.INVESTIGATING, "mod")
    appeal = await store.open_appeal("discord", "g1", d.case_number, "u1", "sorry")
    await store.decide_appeal(appeal, upheld=False, moderator_id="mod")


async def test_modstats(store):
    """modstats counts flags, decisions, dismissals and overturns per label and per rule."""
    await _stats_fixture(store)
    stats = await store.modstats("discord", "g1", since=T0 - DAY)
    got = {name: (s.flags, s.decisions, s.dismissals, s.cases, s.overturned) for name, s in stats.per_label.items()}
    assert got == {"insult": (3, 2, 1, 2, 0), "threat": (1, 0, 0, 1, 1)}
    insult, threat, blocklist = stats.per_label["insult"], stats.per_label["threat"], stats.per_rule["blocklist"]
    assert (insult.false_positive_rate, insult.overturn_rate) == (0.5, 0.0)
    assert (threat.false_positive_rate, threat.overturn_rate) == (None, 1.0)
    assert (blocklist.flags, blocklist.decisions, blocklist.dismissals) == (2, 1, 1)
    assert (await store.modstats("discord", "g2", since=T0 - DAY)).per_label == {}


async def test_summary(store):
    """summary counts verdicts, flagged per label, actions, case statuses and top members by strike points."""
    await _stats_fixture(store)
    await store.record_batch([make_record("x", author="u2", strike_points=1)])
    summary = await store.summary("discord", "g1")
    assert (summary.messages, summary.flagged) == (6, 5)
    assert summary.flagged_per_label == {"insult": 4, "threat": 1}
    assert summary.actions == {"delete": 4, "timeout": 1}
    assert summary.cases_by_status == {"pending": 2, "overturned": 1}
    assert summary.top_members == (("discord", "g1", "u2", 1, 1),)  # u1's strike was pardoned by the overturn


async def test_scan_summary_over_servers(store):
    """scan_summary adds up several servers' counts but ranks each member's strike points per server, as the
    escalation ladder counts them: one member id in two servers (a Discord user id is global) is two rows, never
    their sum; the same server id on another platform is another server."""
    await store.record_batch(
        [
            make_record("a", server="g1", author="u1", strike_points=1),
            make_record("b", server="g2", author="u1", strike_points=2),
            make_record("c", server="g2", author="u2", strike_points=2),
            make_record("e", server="g2", author="u1", strike_points=1),
            make_record("d", server="g3", author="u3", strike_points=9),
            make_record("f", platform="slack", server="g1", author="u1", strike_points=9),
        ]
    )
    summary = await store.scan_summary([("discord", "g1"), ("discord", "g2")], top=3)
    assert (summary.messages, summary.flagged, summary.flagged_per_label) == (4, 4, {"insult": 4})
    assert summary.top_members == (("discord", "g2", "u1", 3, 2), ("discord", "g2", "u2", 2, 1),
                                   ("discord", "g1", "u1", 1, 1))
    [top] = summary.top_members[:1]
    assert (top.platform, top.server_id, top.member_id, top.points, top.strikes) == ("discord", "g2", "u1", 3, 2)
