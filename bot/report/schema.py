"""The report's data: one :class:`Row` per judged message (read back from a scan row by :func:`row_from_json`),
:class:`Raid` and :class:`Thread` incidents, and the whole :class:`ReportData`.

Layer: ``bot.report``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.report.ids import platform_name


@dataclass(frozen=True, slots=True)
class Row:
    """One scanned message as shown in the report.

    Attributes:
        id: Message id.
        time: Posting time (UTC) or ``None`` when the row had none.
        platform: Raw platform of the server (``"discord"``, ``"slack"``, ``"export"``).
        source: Display platform (``"Discord"``, ``"Slack"``, ``"export"``).
        server_id, server_name: The server (name may be empty).
        channel_id, channel: The channel or thread id and its name (the id when unnamed).
        parent_id: Parent channel of a thread, else ``None``.
        is_thread: The message is in a thread.
        author_id, author: The member's id and name (the id when unnamed).
        reply_to: Id of the message replied to, if any.
        text: Original text (escaped and truncated at render time).
        link: URL of the message on its platform, or ``None``.
        scores: Label -> score in [0, 1] or ``None`` (missing label).
        rule_hits: ``(rule, detail)`` pairs.
        action: Strongest action (``"none"``, ``"review"``, ``"delete"``, ...).
        actions: ``(kind, reason, duration_s)`` of every action, strongest first (empty when unknown).
        labels: Labels that flagged it.
        flagged: Whether anything asked for review or action.
        shadow: A shadow verdict (nothing was done; scans are always shadow).
        raid_mode: Raid mode's stricter tiers applied.
        tiers: Label -> ``(review, act)`` tiers actually applied; empty when the verdict did not record them.
        policy_version: Version of the policy that judged it.
        strike_points: Points of the strike it earned.
    """

    id: str
    time: datetime | None
    platform: str
    source: str
    server_id: str
    server_name: str
    channel_id: str
    channel: str
    parent_id: str | None
    is_thread: bool
    author_id: str
    author: str
    reply_to: str | None
    text: str
    link: str | None
    scores: Mapping[str, float | None]
    rule_hits: tuple[tuple[str, str], ...]
    action: str
    actions: tuple[tuple[str, str, int | None], ...]
    labels: tuple[str, ...]
    flagged: bool
    shadow: bool
    raid_mode: bool
    tiers: Mapping[str, tuple[float | None, float | None]]
    policy_version: str
    strike_points: int


#: Older name of :class:`Row`.
FlaggedRow = Row


@dataclass(frozen=True, slots=True)
class Raid:
    """A raid alert with the messages that belong to it.

    Attributes:
        server_id, channel_id: Where.
        started_at: First message of the burst (UTC), or ``None``.
        members: Ids of the members in the alert.
        count: Messages in the burst window when the alert was raised.
        reason: ``"flagged_burst"`` or ``"new_member_burst"``.
        rows: The raid's messages: in its channel (or a thread of it) of its server on its platform, from the alert
            on (until the channel's next alert), posted by a member of the alert or judged under raid mode; in time
            order.
        platform: Raw platform of the raid's server (``""`` when the alert named none: then any platform's server
            of that id).
    """

    server_id: str
    channel_id: str
    started_at: datetime | None
    members: tuple[str, ...]
    count: int
    reason: str
    rows: tuple[Row, ...] = ()
    platform: str = ""


@dataclass(frozen=True, slots=True)
class Thread:
    """A thread (a thread channel, or a chain of replies) with flagged replies.

    Attributes:
        root_id: Id of the message the thread hangs off (thread channel id for thread channels).
        root: That message's row when it was scanned, else ``None``.
        replies: Flagged replies not already shown under a raid, in time order.
        unflagged: Replies not flagged.
        in_raids: Flagged replies shown under a raid instead (numbers of those raids in ``raids``, 1-based).
        raids: Numbers of the raids (1-based, as the report numbers them) holding the other flagged replies.
    """

    root_id: str
    root: Row | None
    replies: tuple[Row, ...]
    unflagged: int
    in_raids: int = 0
    raids: tuple[int, ...] = ()


@dataclass(slots=True)
class ReportData:
    """Everything the report shows.

    Attributes:
        title: Page title.
        messages: Messages scanned.
        flagged: Messages flagged.
        label_counts: Label -> number of flagged messages carrying it.
        actions_count: Messages whose action is stronger than ``review`` (would be / were acted on).
        action_counts: Action name -> messages.
        raids: Raid alerts with their messages.
        threads: Threads with flagged replies.
        top_members: ``(platform, server id, member id, strike points)``, most points first: a member's points
            per server, a server being its platform and id (a Discord guild and an export of the same id are two;
            ``""`` where the summary named no platform or server).
        rows: Flagged messages, in time order.
        all_rows: Every scanned message row (for the volume plot, names and incidents).
        names: ``(platform, server id, member id)`` -> name; ``channels``: ``(platform, server id, channel id)`` ->
            name; ``servers``: ``(platform, server id)`` -> name (from the rows; the first name seen wins).
        policies: ``"<platform>/<server id>"`` -> ``{"files": [...], "version": str}``.
        shadow: True unless some verdict was enforced (scans never act).
        meta: Extra key/value lines for the summary (inputs, model, errors).
        diff: What a policy change did (a ``scan`` replay: :func:`bot.jobs.replay.compute_diff`), else ``None``.
        generated_at: When the report was built (UTC).
    """

    title: str = "Moderation scan report"
    messages: int = 0
    flagged: int = 0
    label_counts: dict[str, int] = field(default_factory=dict)
    actions_count: int = 0
    action_counts: dict[str, int] = field(default_factory=dict)
    raids: list[Raid] = field(default_factory=list)
    threads: list[Thread] = field(default_factory=list)
    top_members: list[tuple[str, str, str, int]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    all_rows: list[Row] = field(default_factory=list)
    names: dict[tuple[str, str, str], str] = field(default_factory=dict)
    channels: dict[tuple[str, str, str], str] = field(default_factory=dict)
    servers: dict[tuple[str, str], str] = field(default_factory=dict)
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    shadow: bool = True
    meta: dict[str, str] = field(default_factory=dict)
    diff: dict[str, Any] | None = None
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def lookup(table: Mapping[Any, str], *key: str) -> str:
    """``table[key]`` (a name by platform, server and id), else ``""``. Where a part of ``key`` is ``""`` (an
    older summary names no platform or server), the first entry whose other parts match; an entry's ``""`` part
    never stands for a named one."""
    found = table.get(key)
    if found is not None or all(key):
        return found or ""
    for k, name in table.items():
        if all(want in ("", have) for want, have in zip(key, k, strict=True)):
            return name
    return ""


def _time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            t = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return t if t.tzinfo else t.replace(tzinfo=UTC)
    return None


def _raid_dict(r: Any) -> dict[str, Any]:
    if isinstance(r, Mapping):
        return dict(r)
    return {k: getattr(r, k, None)
            for k in ("platform", "server_id", "channel_id", "started_at", "count", "members", "reason")}


def _tier(value: Any) -> tuple[float | None, float | None]:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return tuple(None if x is None else float(x) for x in value)  # type: ignore[return-value]
    return (None, None)


def row_from_json(r: Mapping[str, Any]) -> Row:
    """A :class:`Row` from one scan row dict (see :func:`build_report_data`); missing fields get neutral values."""
    hits = []
    for h in r.get("rule_hits") or ():
        if isinstance(h, Mapping):
            hits.append((str(h.get("rule", "?")), str(h.get("detail") or "")))
        else:
            hits.append((str(h), ""))
    scores = found if isinstance(found := r.get("scores"), Mapping) else {}
    actions = tuple(
        (str(a.get("kind", "")), str(a.get("reason") or ""), a.get("duration_s"))
        for a in r.get("actions") or ()
        if isinstance(a, Mapping)
    )
    tiers = given if isinstance(given := r.get("tiers"), Mapping) else {}
    mid = str(r.get("id", ""))
    platform = str(r.get("platform") or "")
    channel = str(r.get("channel", ""))
    author = str(r.get("author", ""))
    return Row(
        id=mid,
        time=_time(r.get("time") or r.get("created_at")),
        platform=platform,
        source=str(r.get("source") or (platform_name(platform, mid) if platform else "")),
        server_id=str(r.get("server_id") or ""),
        server_name=str(r.get("server_name") or ""),
        channel_id=str(r.get("channel_id") or channel),
        channel=channel,
        parent_id=str(r["parent_id"]) if r.get("parent_id") else None,
        is_thread=bool(r.get("is_thread")),
        author_id=str(r.get("author_id") or author),
        author=author,
        reply_to=str(r["reply_to"]) if r.get("reply_to") else None,
        text=str(r.get("text", "")),
        link=str(r["link"]) if r.get("link") else None,
        scores=dict(scores),
        rule_hits=tuple(hits),
        action=str(r.get("action", "none")),
        actions=actions,
        labels=tuple(str(x) for x in r.get("labels") or ()),
        flagged=bool(r.get("flagged")),
        shadow=bool(r.get("shadow", True)),
        raid_mode=bool(r.get("raid_mode")),
        tiers={str(k): _tier(v) for k, v in tiers.items()},
        policy_version=str(r.get("policy_version") or ""),
        strike_points=int(r.get("strike_points") or 0),
    )
