"""Builders of core values for the store tests (no database access here)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.models import (
    LABELS,
    Action,
    ActionKind,
    ChannelRef,
    MemberRef,
    Message,
    RuleHit,
    Scores,
    ServerRef,
    Strike,
    Verdict,
)
from bot.core.ports import VerdictRecord

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
STRIKE_TTL = timedelta(days=30)


def make_message(
    message_id: str,
    *,
    server: str = "g1",
    platform: str = "discord",
    author: str = "u1",
    channel: str = "c1",
    text: str = "some text",
    created: datetime | None = T0,
    edited: datetime | None = None,
) -> Message:
    """A message with the given key and times."""
    return Message(
        server=ServerRef(platform, server),
        channel=ChannelRef(channel, name="general"),
        author=MemberRef(author),
        id=message_id,
        text=text,
        created_at=created,
        edited_at=edited,
    )


def make_record(
    message_id: str,
    *,
    server: str = "g1",
    platform: str = "discord",
    author: str = "u1",
    text: str = "some text",
    created: datetime | None = T0,
    edited: datetime | None = None,
    labels: tuple[str, ...] = ("insult",),
    rules: tuple[str, ...] = (),
    action: ActionKind = ActionKind.DELETE,
    duration_s: int | None = None,
    open_case: bool = False,
    open_review: bool = False,
    strike_points: int = 0,
    shadow: bool = False,
) -> VerdictRecord:
    """A verdict record; ``labels`` score 0.9, the rest 0.01; a strike of ``strike_points`` when > 0."""
    msg = make_message(
        message_id, server=server, platform=platform, author=author, text=text, created=created, edited=edited
    )
    scores = Scores({lab: (0.9 if lab in labels else 0.01) for lab in LABELS}, model="fake-v1")
    flagged = bool(labels or rules)
    actions = (Action(action, reason=f"{action.label} for {', '.join(labels + rules)}", duration_s=duration_s),)
    verdict = Verdict(
        message=msg,
        scores=scores,
        rule_hits=tuple(RuleHit(rule, detail="hit", label=None) for rule in rules),
        labels=labels,
        flagged=flagged,
        action=action if flagged else ActionKind.NONE,
        actions=actions if flagged else (),
        strike_points=strike_points,
        shadow=shadow,
        policy_version="p1",
        latency_ms=3.5,
    )
    strike = None
    if strike_points:
        at = msg.event_time
        assert at is not None
        strike = Strike(server, author, strike_points, at, at + STRIKE_TTL, "auto")
    return VerdictRecord(
        verdict=verdict,
        excerpt=text,
        is_edit=edited is not None,
        open_case=open_case,
        open_review=open_review,
        strike=strike,
    )
