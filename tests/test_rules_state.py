"""Tests of the stateful rules: duplicate / crowd / flood spam, new-account signals, raid detection and raid mode."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.models import ChannelRef, MemberRef, Message, RaidAlert, RuleHit, ServerRef
from bot.core.normalize import normalize
from bot.core.rules import (
    NewAccountSettings,
    RaidDetector,
    RaidSettings,
    SpamSettings,
    SpamTracker,
    is_new_member,
    new_account_hits,
)

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
_ids = iter(range(1, 10**9))


def msg(
    text: str = "hello there",
    *,
    author: str = "u1",
    at: float = 0.0,
    channel: str = "c1",
    parent: str | None = None,
    server: str = "s1",
    mid: str | None = None,
    joined_ago: float | None = None,
    created_ago: float | None = None,
) -> Message:
    when = T0 + timedelta(seconds=at)
    return Message(
        server=ServerRef("discord", server),
        channel=ChannelRef(channel, parent_id=parent, is_thread=parent is not None),
        author=MemberRef(
            author,
            joined_at=None if joined_ago is None else when - timedelta(seconds=joined_ago),
            created_at=None if created_ago is None else when - timedelta(seconds=created_ago),
        ),
        id=mid or f"m{next(_ids)}",
        text=text,
        created_at=when,
    )


def feed(tracker: SpamTracker, posts: Sequence[tuple[str, str, float]], **kw) -> list[list[str]]:
    """Observe (author, text, seconds) posts; the rules hit per post."""
    out = []
    for author, text, at in posts:
        m = msg(text, author=author, at=at)
        out.append([h.rule for h in tracker.observe(m, normalize(text), **kw)])
    return out


SPAM = "buy cheap followers at my shop today"


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ([0, 5, 10], [[], [], ["duplicate_spam"]]),
        ([0, 5, 10, 12], [[], [], ["duplicate_spam"], ["duplicate_spam"]]),
        ([0, 20, 40], [[], [], []]),  # window 30 s: never three inside it
        ([0, 29, 30], [[], [], ["duplicate_spam"]]),  # window edges are inclusive
    ],
)
def test_duplicate_spam_window(times: list[float], expected: list[list[str]]) -> None:
    """Three identical messages from one member within 30 s hit, from the third one on."""
    tracker = SpamTracker(SpamSettings(flood_count=50))
    assert feed(tracker, [("u1", SPAM, t) for t in times]) == expected


def test_duplicate_spam_matches_normalised_text() -> None:
    """Case, spacing and leet variants of the same text count as duplicates."""
    tracker = SpamTracker(SpamSettings(flood_count=50, crowd_duplicate_count=50))
    posts = [("u1", "FREE N1TRO here", 0), ("u1", "free   nitro here", 1), ("u1", "Free Nitro Here", 2)]
    assert feed(tracker, posts)[-1] == ["duplicate_spam"]


@pytest.mark.parametrize(
    ("posts", "last"),
    [
        ([(f"u{i}", SPAM, i) for i in range(5)], ["crowd_spam"]),
        ([(f"u{i}", SPAM, i) for i in range(4)], []),
        ([(f"u{i}", SPAM, i * 20) for i in range(5)], []),  # spread over 80 s > 60 s window
        ([("u1", SPAM, i) for i in range(2)] + [(f"u{i}", SPAM, 5 + i) for i in range(2, 5)], []),  # 4 members
        ([(f"u{i}", "lol", i) for i in range(10)], []),
        ([(f"u{i}", "+1", i) for i in range(10)], []),
        ([(f"u{i}", "thanks everyone", i) for i in range(10)], []),
        ([(f"u{i}", "happy new year!", i) for i in range(10)], []),
    ],
)
def test_crowd_duplicate(posts: list[tuple[str, str, float]], last: list[str]) -> None:
    """The same long text from five members within 60 s hits; short common replies never do."""
    tracker = SpamTracker(SpamSettings(duplicate_count=50, flood_count=50))
    assert feed(tracker, posts)[-1] == last


@pytest.mark.parametrize(
    ("gap", "raid_mode", "first_hit"),
    [
        (1.0, False, 6),  # 7th message in 10 s
        (2.0, False, None),  # 7 messages take 12 s
        (1.0, True, 4),  # raid mode: 7 * 0.8 -> 5
    ],
)
def test_flood(gap: float, raid_mode: bool, first_hit: int | None) -> None:
    """Seven messages from one member within 10 s flood (five in raid mode)."""
    tracker = SpamTracker(SpamSettings())
    hits = feed(tracker, [("u1", f"message number {i}", i * gap) for i in range(7)], raid_mode=raid_mode)
    flagged = [i for i, h in enumerate(hits) if "flood" in h]
    assert (flagged[0] if flagged else None) == first_hit


def test_spam_hit_carries_actions() -> None:
    """Duplicate and flood hits carry `action`; crowd hits carry `crowd_action`."""
    tracker = SpamTracker(
        SpamSettings(action="timeout", crowd_action="log", duplicate_count=2, flood_count=2, crowd_duplicate_count=2)
    )
    tracker.observe(msg(SPAM, author="u1", at=0), normalize(SPAM))
    hits = tracker.observe(msg(SPAM, author="u1", at=1), normalize(SPAM))
    hits += tracker.observe(msg(SPAM, author="u2", at=2), normalize(SPAM))
    assert [(h.rule, h.action) for h in hits] == [
        ("duplicate_spam", "timeout"),
        ("flood", "timeout"),
        ("crowd_spam", "log"),
    ]


def test_redelivered_message_is_not_counted_twice() -> None:
    """Observing the same message id again (redelivery, edit) neither counts nor hits."""
    tracker = SpamTracker(SpamSettings(duplicate_count=2))
    m = msg(SPAM, mid="same")
    assert tracker.observe(m, normalize(SPAM)) == []
    assert tracker.observe(m, normalize(SPAM)) == []


def test_spam_memory_is_bounded() -> None:
    """Members and texts idle longer than the longest window are evicted."""
    tracker = SpamTracker(SpamSettings())
    for i in range(600):
        tracker.observe(msg(f"{SPAM} number {i}", author=f"u{i}", at=i), normalize(f"{SPAM} number {i}"))
    assert len(tracker) <= 2 * 62


def test_spam_rejects_naive_datetime() -> None:
    """A naive timestamp raises ValueError instead of being read as local time."""
    m = msg(SPAM)
    naive = Message(m.server, m.channel, m.author, "x", SPAM, datetime(2024, 5, 1, 12, 0))  # noqa: DTZ001
    with pytest.raises(ValueError, match="naive"):
        SpamTracker().observe(naive, normalize(SPAM))


@pytest.mark.parametrize(
    ("joined_ago", "created_ago", "expected"),
    [
        (None, None, []),
        (10 * 86400, 400 * 86400, []),
        (10 * 86400, 3600, [RuleHit(rule="new_account", detail="account age 3600s < 604800s")]),
        (60, 400 * 86400, [RuleHit(rule="new_member", detail="member age 60s < 3600s")]),
        (
            60,
            60,
            [
                RuleHit(rule="new_account", detail="account age 60s < 604800s"),
                RuleHit(rule="new_member", detail="member age 60s < 3600s"),
            ],
        ),
    ],
)
def test_new_account_signals(joined_ago, created_ago, expected) -> None:
    """Young accounts and recent joins give signal hits with age and threshold in seconds."""
    m = msg(joined_ago=joined_ago, created_ago=created_ago)
    assert new_account_hits(m, NewAccountSettings()) == expected


def test_new_account_threshold_zero_and_action() -> None:
    """A zero threshold switches a check off; a configured action is carried."""
    s = NewAccountSettings(min_member_age_s=0, action="review")
    assert new_account_hits(msg(joined_ago=1, created_ago=1), s) == [
        RuleHit(rule="new_account", detail="account age 1s < 604800s", action="review")
    ]


@pytest.mark.parametrize(
    ("joined_ago", "created_ago", "expected"),
    [
        (3600, 400 * 86400, True),
        (2 * 86400, 3600, False),  # joined long ago; account age is not used when the join time is known
        (None, 3600, True),
        (None, None, False),
    ],
)
def test_is_new_member(joined_ago, created_ago, expected: bool) -> None:
    """A member is new when joined within new_member_age_s (account age if the join time is unknown)."""
    assert is_new_member(msg(joined_ago=joined_ago, created_ago=created_ago), RaidSettings()) is expected


def observe_all(
    det: RaidDetector, posts: list[tuple[str, float]], *, flagged: bool, new: bool, channel: str = "c1"
) -> list[RaidAlert]:
    alerts = [det.observe(msg(author=a, at=t, channel=channel), flagged=flagged, is_new_member=new) for a, t in posts]
    return [a for a in alerts if a is not None]


def test_raid_of_new_members_gives_one_alert_and_raid_mode() -> None:
    """Ten new members posting flagged messages within seconds raise exactly one alert and raid mode."""
    det = RaidDetector(RaidSettings())
    alerts = observe_all(det, [(f"n{i}", i * 0.5) for i in range(10)], flagged=True, new=True)
    assert alerts == [
        RaidAlert(
            server_id="s1",
            channel_id="c1",
            started_at=T0,
            members=("n0", "n1", "n2", "n3", "n4"),
            count=5,
            reason="flagged_burst",
        )
    ]
    assert det.raid_mode("s1", "c1", T0 + timedelta(seconds=10)) is True
    assert det.raid_mode("s1", "other", T0 + timedelta(seconds=10)) is False
    assert det.raid_mode("s1", "c1", T0 + timedelta(seconds=4.5 + 900)) is False


def test_busy_channel_of_established_members_gives_no_alert() -> None:
    """Hundreds of messages from established members, a few flagged, raise no alert."""
    det = RaidDetector(RaidSettings())
    alerts = [
        det.observe(msg(author=f"u{i % 20}", at=i * 0.2), flagged=(i % 50 == 0 and i < 200), is_new_member=False)
        for i in range(500)
    ]
    assert [a for a in alerts if a is not None] == []
    assert det.raid_mode("s1", "c1", T0 + timedelta(seconds=100)) is False


def test_one_member_posting_many_flagged_messages_is_not_a_raid() -> None:
    """Bursts count distinct members, so one member's flagged spam raises no raid alert."""
    det = RaidDetector(RaidSettings())
    assert observe_all(det, [("u1", i) for i in range(20)], flagged=True, new=True) == []


@pytest.mark.parametrize(
    ("second_start", "alerts"),
    [
        (30.0, 1),  # same burst continues: suppressed
        (300.0, 1),  # within the 600 s cooldown after the last flagged message
        (4.0 + 601.0, 2),  # after the cooldown: a new burst, a new alert
    ],
)
def test_second_burst_after_cooldown(second_start: float, alerts: int) -> None:
    """A second burst raises a second alert only after the cooldown."""
    det = RaidDetector(RaidSettings())
    first = [(f"a{i}", float(i)) for i in range(5)]
    second = [(f"b{i}", second_start + i) for i in range(5)]
    assert len(observe_all(det, first + second, flagged=True, new=False)) == alerts


def test_new_member_burst_without_flags() -> None:
    """Eight new members' first messages in one channel raise a new_member_burst alert."""
    det = RaidDetector(RaidSettings())
    alerts = observe_all(det, [(f"n{i}", i * 2.0) for i in range(12)], flagged=False, new=True)
    assert [(a.reason, a.count, len(a.members)) for a in alerts] == [("new_member_burst", 8, 8)]


def test_bursts_are_per_channel() -> None:
    """Flagged messages spread over channels do not add up to a burst."""
    det = RaidDetector(RaidSettings())
    alerts = [
        det.observe(msg(author=f"n{i}", at=i, channel=f"c{i % 5}"), flagged=True, is_new_member=True) for i in range(20)
    ]
    assert [a for a in alerts if a is not None] == []


def test_raid_mode_off_setting_alerts_without_mode() -> None:
    """With raid_mode = false an alert is raised but raid mode stays off."""
    det = RaidDetector(RaidSettings(raid_mode=False))
    assert len(observe_all(det, [(f"n{i}", i) for i in range(5)], flagged=True, new=False)) == 1
    assert det.raid_mode("s1", "c1", T0 + timedelta(seconds=6)) is False


def test_manual_raid_mode() -> None:
    """Moderators switch raid mode on per server or channel; threads follow their parent; off ends it."""
    det = RaidDetector(RaidSettings())
    at = T0
    det.set_raid_mode("s1", "c1", True, at)
    later = at + timedelta(days=3)
    assert (det.raid_mode("s1", "c1", later), det.raid_mode("s1", "c2", later)) == (True, False)
    assert det.raid_mode("s1", "thread9", later, parent_id="c1") is True
    det.set_raid_mode("s1", None, True, at)
    assert det.raid_mode("s1", "c2", later) is True
    assert det.active_channels("s1", later) == ["*", "c1"]
    det.set_raid_mode("s1", None, False, at)
    assert (det.raid_mode("s1", "c1", later), det.raid_mode("s1", "c2", later)) == (False, False)


def test_manual_off_ends_automatic_raid_mode() -> None:
    """/raidmode off ends a burst's automatic raid mode for the channel."""
    det = RaidDetector(RaidSettings())
    observe_all(det, [(f"n{i}", i) for i in range(5)], flagged=True, new=False)
    at = T0 + timedelta(seconds=10)
    assert det.raid_mode("s1", "c1", at) is True
    det.set_raid_mode("s1", "c1", False, at)
    assert det.raid_mode("s1", "c1", at) is False


def test_raid_memory_is_bounded() -> None:
    """Idle channels are evicted once their window, cooldown and raid mode have passed."""
    det = RaidDetector(RaidSettings(window_s=10, cooldown_s=10, raid_mode_duration_s=10))
    for i in range(300):
        det.observe(msg(author="u", at=i * 5.0, channel=f"c{i}"), flagged=True, is_new_member=False)
    assert len(det) <= 4


def test_brigade_split_between_thread_and_channel_is_one_burst() -> None:
    """Flagged posts spread over a thread and its parent channel count as one burst, alerted on the parent."""
    det = RaidDetector(RaidSettings())
    alerts = []
    for i in range(6):
        m = msg(author=f"n{i}", at=i * 2.0, channel="t1" if i % 2 else "c1", parent="c1" if i % 2 else None)
        alerts.append(det.observe(m, flagged=True, is_new_member=True))
    fired = [a for a in alerts if a is not None]
    assert len(fired) == 1 and fired[0].channel_id == "c1" and fired[0].count == 5
    assert det.raid_mode("s1", "t1", T0 + timedelta(seconds=20), parent_id="c1") is True
