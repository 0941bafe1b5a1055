"""Self-contained HTML report of an offline ``scan``: what a moderator reads after scanning an export.

The page loads nothing from outside (a Content-Security-Policy forbids it): CSS, the charts (inline SVG) and one
tiny inline script (the "show all texts" button, allowed by its hash) are generated here. Without scripts every
text still opens with one click. Every value from the scan is HTML-escaped.

What a moderator sees, in order: the servers scanned with the policy (files and version) that judged each; what
the policy would have done (scans never act, so actions read "would delete", "would time out"); incidents (a raid
with its messages, a thread with its flagged replies); flags per label; message volume and flags over time; members
by strike points; then every flagged message with platform, server, channel and member names (ids on hover), a
link to the message where the export has real ids, and why it was flagged, against the tier that actually applied
(raid mode included). Message tables fit a 1,400 px screen without scrolling and turn into one card per message
on a phone (600 px and less); other tables scroll inside their own box. Policy files are shown without the host's
folders (:func:`display_path`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.models import LABELS, Message, Verdict
from bot.workflow import words
from bot.workflow.sanction_kinds import ACTION_WORDS

log = logging.getLogger(__name__)

#: Longest message text shown in the report, in characters (the rest is cut with an ellipsis).
MAX_TEXT = 500
#: Longest text a scan row carries (``scan`` keeps this much of every message for the report).
ROW_TEXT = 1000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_SNOWFLAKE = re.compile(r"^\d{15,20}$")
_SLACK_ID = re.compile(r"^[A-Z0-9]+(?::\d+\.\d+)?:\d+\.\d+$")
#: Seconds a Discord message id's embedded time may differ from the export's timestamp for the id to count as real.
_SNOWFLAKE_TOLERANCE_S = 60.0
_DISCORD_EPOCH = datetime(2015, 1, 1, tzinfo=UTC)

#: What a shadow verdict would have done, per action (scans never act); from the sanction registry.
WOULD = {action: would for action, (would, _) in ACTION_WORDS.items()}
#: What an enforced verdict did, per action.
DID = {action: did for action, (_, did) in ACTION_WORDS.items()}


def action_words(action: str, shadow: bool = True, duration_s: int | None = None) -> str:
    """Moderator wording of an action: ``"would time out (1 h)"`` for a shadow verdict, ``"timed out"`` otherwise.

    Unknown action names are shown as ``"would <name>"`` / ``"<name>"``.
    """
    words = (WOULD if shadow else DID).get(action) or (f"would {action}" if shadow else action)
    if duration_s:
        words += f" ({_duration(duration_s)})"
    return words


def _duration(seconds: int) -> str:
    return words.duration(seconds)


def display_path(path: str | Path) -> str:
    """A policy or input path as the report shows it, without the host's folders: the packaged default policy as
    ``bot/config/default.toml (packaged default)``, a path under the current folder relative to it, any other
    absolute path as ``…/<folder>/<file>`` (the host's home and user names stay out of a report that is shared)."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    package = Path(__file__).resolve().parent
    try:
        return f"bot/{p.resolve().relative_to(package).as_posix()} (packaged default)"
    except ValueError:
        pass
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return "…/" + "/".join(p.parts[-2:])


# ---------------------------------------------------------------------------------------------- rows from a scan


def platform_name(platform: str, message_id: str) -> str:
    """Display name of where a message comes from: ``"Discord"``, ``"Slack"`` or ``"export"``.

    Offline readers record DiscordChatExporter files as platform ``"export"``; their message ids are Discord
    snowflakes, and Slack export ids are ``"<channel>:<ts>"``, which tells the two apart.
    """
    if platform in ("discord", "slack"):
        return platform.capitalize()
    if _SNOWFLAKE.match(message_id):
        return "Discord"
    if _SLACK_ID.match(message_id):
        return "Slack"
    return platform or "export"


def discord_link(server_id: str, channel_id: str, message_id: str, created_at: datetime | None) -> str | None:
    """``https://discord.com/channels/<guild>/<channel>/<message>`` when all three ids are real snowflakes.

    A message id counts as real when the time it encodes is within a minute of the export's timestamp (made-up
    ids and the channel names a CSV export uses in place of ids give no link). ``None`` otherwise.
    """
    if not all(_SNOWFLAKE.match(x or "") for x in (server_id, channel_id, message_id)):
        return None
    if created_at is not None:
        encoded = _DISCORD_EPOCH + timedelta(milliseconds=int(message_id) >> 22)
        if abs((encoded - created_at).total_seconds()) > _SNOWFLAKE_TOLERANCE_S:
            return None
    return f"https://discord.com/channels/{server_id}/{channel_id}/{message_id}"


def message_fields(m: Message) -> dict[str, Any]:
    """The report's fields of one message: names and ids, platform, server, thread links, time, text and link.

    Keys: ``platform`` (raw ``ServerRef.platform``), ``source`` (``"Discord"``/``"Slack"``/...), ``server_id``,
    ``server_name``, ``channel`` (name, else id), ``channel_id``, ``parent_id``, ``is_thread``, ``author`` (name,
    else id), ``author_id``, ``reply_to``, ``time`` (ISO-8601 UTC), ``text`` (first :data:`ROW_TEXT` characters)
    and ``link`` (a URL or ``None``: only Discord messages with real ids have one; Slack exports carry none).
    """
    link = None
    if platform_name(m.server.platform, m.id) == "Discord":
        link = discord_link(m.server.id, m.channel.id, m.id, m.created_at)
    return {
        "platform": m.server.platform,
        "source": platform_name(m.server.platform, m.id),
        "server_id": m.server.id,
        "server_name": m.server.name,
        "channel": m.channel.name or m.channel.id,
        "channel_id": m.channel.id,
        "parent_id": m.channel.parent_id,
        "is_thread": m.channel.is_thread,
        "author": m.author.name or m.author.id,
        "author_id": m.author.id,
        "reply_to": m.reply_to,
        "time": m.created_at.isoformat(),
        "text": m.text[:ROW_TEXT],
        "link": link,
    }


def verdict_fields(v: Verdict) -> dict[str, Any]:
    """The report's fields of one verdict beyond :meth:`Verdict.to_json`.

    Keys: ``shadow``, ``raid_mode``, ``tiers`` (``{label: [review, act]}``, scores in [0, 1] or ``None`` for an off
    tier: the tiers that actually applied), ``policy_version``, ``score_status``, ``strike_points`` and ``actions``
    (``[{"kind", "reason", "duration_s"}]``, strongest first).
    """
    return {
        "shadow": v.shadow,
        "raid_mode": v.raid_mode,
        "tiers": {k: list(t) for k, t in v.tiers.items()},
        "policy_version": v.policy_version,
        "score_status": v.score_status,
        "strike_points": v.strike_points,
        "actions": [{"kind": a.kind.label, "reason": a.reason, "duration_s": a.duration_s} for a in v.actions],
    }


def scan_row(v: Verdict) -> dict[str, Any]:
    """One report row for a verdict judged now: :meth:`Verdict.to_json` plus :func:`verdict_fields` and
    :func:`message_fields` (which replaces ``channel``/``author`` with the same name-or-id values)."""
    return {**v.to_json(), **verdict_fields(v), **message_fields(v.message)}


async def policy_provenance(registry: Any, servers: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Which policy files, in order, and which version judge each server (for the report's server table).

    Args:
        registry: A :class:`bot.core.policy_registry.PolicyRegistry`.
        servers: ``(platform, server id)`` pairs.

    Returns:
        ``{"<platform>/<server id>": {"files": [path str], "version": str}}``; ``files`` lists the default, every
        ``--policy`` file and the server's own file when one exists in the registry's servers folder
        (:meth:`~bot.core.policy_registry.PolicyRegistry.server_file`: a Discord export's guild uses
        ``discord-<guild id>.toml``).
    """
    out: dict[str, dict[str, Any]] = {}
    for platform, server_id in servers:
        files = [registry.default_path, *registry.extra_files]
        own = registry.server_file(platform, server_id)
        if own is not None:
            files.append(own)
        policy = await registry.get(platform, server_id)
        out[f"{platform}/{server_id}"] = {"files": [display_path(f) for f in files], "version": policy.version}
    return out


# ---------------------------------------------------------------------------------------------- report data


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
        rows: The raid's messages: in its channel (or a thread of it), from the alert on (until the channel's next
            alert), posted by a member of the alert or judged under raid mode; in time order.
    """

    server_id: str
    channel_id: str
    started_at: datetime | None
    members: tuple[str, ...]
    count: int
    reason: str
    rows: tuple[Row, ...] = ()


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
        top_members: ``(member id, strike points)``, most points first.
        rows: Flagged messages, in time order.
        all_rows: Every scanned message row (for the volume plot, names and incidents).
        names: Member id -> name; ``channels``: channel id -> name; ``servers``: server id -> name (from the rows).
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
    top_members: list[tuple[str, int]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    all_rows: list[Row] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)
    servers: dict[str, str] = field(default_factory=dict)
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    shadow: bool = True
    meta: dict[str, str] = field(default_factory=dict)
    diff: dict[str, Any] | None = None
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def _esc(value: object) -> str:
    text = "" if value is None else str(value)
    return html.escape(_CONTROL.sub("\ufffd", text), quote=True)


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
    return {k: getattr(r, k, None) for k in ("server_id", "channel_id", "started_at", "count", "members", "reason")}


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
    scores = r.get("scores") if isinstance(r.get("scores"), Mapping) else {}
    actions = tuple(
        (str(a.get("kind", "")), str(a.get("reason") or ""), a.get("duration_s"))
        for a in r.get("actions") or ()
        if isinstance(a, Mapping)
    )
    tiers = r.get("tiers") if isinstance(r.get("tiers"), Mapping) else {}
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


def _by_time(row: Row) -> tuple[bool, datetime]:
    return (row.time is None, row.time or datetime.min.replace(tzinfo=UTC))


def _group_raids(raw: Sequence[Mapping[str, Any]], rows: Sequence[Row]) -> list[Raid]:
    """Attach to each raid alert its messages (see :class:`Raid`)."""
    alerts = sorted(
        (
            (_time(r.get("started_at")), str(r.get("server_id") or ""), str(r.get("channel_id") or r.get("channel") or ""), r)
            for r in raw
        ),
        key=lambda a: (a[0] is None, a[0] or datetime.min.replace(tzinfo=UTC)),
    )
    out = []
    for i, (start, server, channel, r) in enumerate(alerts):
        nxt = next((a[0] for a in alerts[i + 1 :] if a[2] == channel and a[1] == server and a[0]), None)
        members = tuple(str(x) for x in r.get("members") or ())
        mine = [
            row
            for row in rows
            if (not server or not row.server_id or row.server_id == server)
            and channel in (row.channel_id, row.parent_id)
            and row.time is not None
            and (start is None or row.time >= start)
            and (nxt is None or row.time < nxt)
            and (row.author_id in members or row.raid_mode)
        ]
        out.append(
            Raid(server, channel, start, members, int(r.get("count") or 0), str(r.get("reason") or ""), tuple(mine))
        )
    return out


def _group_threads(rows: Sequence[Row], raids: Sequence[Raid] = ()) -> list[Thread]:
    """Threads (thread channels and reply chains) that have flagged replies, oldest root first; flagged replies that
    belong to a raid are counted, not repeated."""
    raid_of = {(r.server_id, r.id): i for i, raid in enumerate(raids, 1) for r in raid.rows}
    by_id = {(r.server_id, r.id): r for r in rows}

    def root_of(r: Row) -> str | None:
        if r.is_thread:
            return r.channel_id
        cur, seen = r, 0
        while cur.reply_to and seen < 100:
            parent = by_id.get((cur.server_id, cur.reply_to))
            if parent is None:
                return cur.reply_to
            if parent.is_thread:
                return parent.channel_id
            cur, seen = parent, seen + 1
        return cur.id if cur is not r else None

    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in rows:
        root = root_of(r)
        if root is not None and root != r.id:
            groups[(r.server_id, root)].append(r)
    out = []
    for (server, root_id), replies in groups.items():
        flagged = sorted((r for r in replies if r.flagged), key=_by_time)
        if not flagged:
            continue
        own = tuple(r for r in flagged if (r.server_id, r.id) not in raid_of)
        in_raids = sorted({raid_of[(r.server_id, r.id)] for r in flagged if (r.server_id, r.id) in raid_of})
        out.append(Thread(root_id, by_id.get((server, root_id)), own, len(replies) - len(flagged),
                          len(flagged) - len(own), tuple(in_raids)))
    out.sort(key=lambda t: _by_time(t.root or t.replies[0]))
    return out


def build_report_data(summary: Mapping[str, Any], verdict_rows: Iterable[Mapping[str, Any]]) -> ReportData:
    """Collect :class:`ReportData` from a scan summary and per-message rows.

    Args:
        summary: Optional keys: ``title``, ``messages`` (int), ``flagged`` (int), ``label_counts``
            ({label: int}), ``actions`` (int), ``action_counts`` ({action: int}), ``raids`` (dicts or
            :class:`~bot.core.models.RaidAlert`), ``top_members`` ([(member id, points)] or {member id: points}),
            ``policies`` (see :func:`policy_provenance`) and any ``inputs``/``model``/``policy_version``/``errors``
            shown as metadata; ``diff`` (:func:`bot.jobs.replay.compute_diff`) for a replay under another policy.
            Missing counts are computed from the rows.
        verdict_rows: :func:`scan_row` dicts (or plain :meth:`Verdict.to_json` dicts, optionally with ``text``,
            ``time``/``created_at`` (ISO or datetime) and ``strike_points``). Only rows with ``flagged`` true are
            listed; all rows feed the volume plot, the names and the incidents.

    Returns:
        The report data; rows sorted by time (rows without a time last).
    """
    all_rows: list[Row] = []
    labels: Counter[str] = Counter()
    actions: Counter[str] = Counter()
    strikes: Counter[str] = Counter()
    names: dict[str, str] = {}
    channels: dict[str, str] = {}
    servers: dict[str, str] = {}
    for r in verdict_rows:
        row = row_from_json(r)
        all_rows.append(row)
        if row.author != row.author_id:
            names.setdefault(row.author_id, row.author)
        if row.channel != row.channel_id:
            channels.setdefault(row.channel_id, row.channel)
        if row.server_id:
            servers.setdefault(row.server_id, row.server_name)
        if row.strike_points > 0:
            strikes[row.author_id] += row.strike_points
        if row.flagged:
            labels.update(row.labels)
            actions[row.action] += 1
    all_rows.sort(key=_by_time)
    rows = [r for r in all_rows if r.flagged]
    top = summary.get("top_members")
    if isinstance(top, Mapping):
        top_list = [(str(k), int(v)) for k, v in top.items()]
    elif top:
        top_list = [(str(k), int(v)) for k, v in top]
    else:
        top_list = list(strikes.items())
    top_list.sort(key=lambda kv: -kv[1])
    action_counts = dict(summary.get("action_counts") or actions)
    acted = sum(v for k, v in action_counts.items() if k not in ("none", "log", "review"))
    raids = _group_raids([_raid_dict(r) for r in summary.get("raids") or ()], all_rows)
    meta = {k: str(summary[k]) for k in ("inputs", "model", "policy_version", "errors") if summary.get(k)}
    if summary.get("policies"):
        meta.pop("policy_version", None)  # the server table names each server's policy
    return ReportData(
        title=str(summary.get("title") or "Moderation scan report"),
        messages=int(summary.get("messages") or len(all_rows)),
        flagged=int(summary.get("flagged") or len(rows)),
        label_counts={k: int(v) for k, v in (summary.get("label_counts") or labels).items()},
        actions_count=int(summary.get("actions") if summary.get("actions") is not None else acted),
        action_counts={str(k): int(v) for k, v in action_counts.items()},
        raids=raids,
        threads=_group_threads(all_rows, raids),
        top_members=top_list[:10],
        rows=rows,
        all_rows=all_rows,
        names=names,
        channels=channels,
        servers=servers,
        policies={str(k): dict(v) for k, v in (summary.get("policies") or {}).items()},
        shadow=all(r.shadow for r in all_rows),
        meta=meta,
        diff=dict(summary["diff"]) if summary.get("diff") else None,
    )


# ---------------------------------------------------------------------------------------------- charts


def _bar_svg(counts: Mapping[str, int]) -> str:
    items = [(k, counts.get(k, 0)) for k in LABELS] + [(k, v) for k, v in counts.items() if k not in LABELS]
    top = max([v for _, v in items] + [1])
    h = 22 * len(items) + 6
    parts = [
        f'<svg class="bars" width="520" height="{h}" viewBox="0 0 520 {h}" role="img" aria-label="flags per label">'
    ]
    for i, (k, v) in enumerate(items):
        y = 4 + i * 22
        w = 0 if v == 0 else max(2, round(300 * v / top))
        parts.append(
            f'<text x="150" y="{y + 14}" text-anchor="end">{_esc(k)}</text>'
            f'<rect x="158" y="{y}" width="{w}" height="16" fill="#c0392b"><title>{_esc(k)}: {v}</title></rect>'
            f'<text x="{164 + w}" y="{y + 14}">{v}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


#: Candidate bin widths of the time plot, in seconds, with their names.
BINS: tuple[tuple[int, str], ...] = (
    (60, "1 minute"),
    (300, "5 minutes"),
    (900, "15 minutes"),
    (3600, "1 hour"),
    (6 * 3600, "6 hours"),
    (86400, "1 day"),
    (7 * 86400, "1 week"),
    (30 * 86400, "30 days"),
)
#: Spacing of the time axis' labels, in seconds (the smallest giving at most about 7 labels, a multiple of the bin).
_TICKS = (60, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400,
          14 * 86400, 28 * 86400, 56 * 86400, 91 * 86400, 182 * 86400, 364 * 86400)
#: Most bins the time plot draws; the smallest width of :data:`BINS` that fits is chosen.
MAX_BINS = 60


def choose_bin(span_s: float) -> tuple[int, str]:
    """The bin width (seconds, name) for a plot spanning ``span_s`` seconds: the smallest of :data:`BINS` giving at
    most :data:`MAX_BINS` bins (the widest when none does)."""
    for width, name in BINS:
        if span_s / width < MAX_BINS:
            return width, name
    return BINS[-1]


#: The whole-scan plot gets a close-up when it spans more than this (seconds) and has flags.
ZOOM_OVER_S = 6 * 3600


def zoom_window(all_times: Sequence[datetime], flagged_times: Sequence[datetime]) -> tuple[datetime, datetime] | None:
    """Two hours (UTC) from 30 minutes before the clock hour with the most flags (the earliest on a tie), when the
    scan spans more than :data:`ZOOM_OVER_S` and has flagged messages with times; else ``None``."""
    if not flagged_times or not all_times or (max(all_times) - min(all_times)).total_seconds() <= ZOOM_OVER_S:
        return None
    hours = Counter(_floor(t, 3600) for t in flagged_times)
    peak = min(hours, key=lambda h: (-hours[h], h))
    lo = peak - timedelta(minutes=30)
    lo = _floor(lo, 1800)
    return lo, lo + timedelta(hours=2)


def _floor(t: datetime, width: int) -> datetime:
    if width >= 86400:
        return t.replace(hour=0, minute=0, second=0, microsecond=0)
    s = int(t.timestamp())
    return datetime.fromtimestamp(s - s % width, UTC)


def _timeline_svg(all_times: Sequence[datetime], flagged_times: Sequence[datetime]) -> str:
    if not all_times:
        return "<p>No message has a timestamp.</p>"
    lo, hi = min(all_times), max(all_times)
    width_s, bin_name = choose_bin((hi - lo).total_seconds())
    start = _floor(lo, width_s)
    n = int((hi - start).total_seconds() // width_s) + 1
    vol, flg = [0] * n, [0] * n
    for t in all_times:
        vol[min(n - 1, int((t - start).total_seconds() // width_s))] += 1
    for t in flagged_times:
        flg[min(n - 1, int((t - start).total_seconds() // width_s))] += 1
    top = max(vol)
    width, height, left, right, bottom = 640, 215, 44, 10, 160
    bw = (width - left - right) / n
    parts = [
        f'<svg class="timeline" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="messages and flagged messages per {bin_name}">',
        f'<line x1="{left}" y1="{bottom}" x2="{width - right}" y2="{bottom}" stroke="#555"/>',
        f'<line x1="{left}" y1="10" x2="{left}" y2="{bottom}" stroke="#555"/>',
        f'<text x="{left - 6}" y="16" text-anchor="end">{top}</text>',
        f'<text x="{left - 6}" y="{bottom}" text-anchor="end">0</text>',
    ]
    for i in range(n):
        x = left + i * bw
        b0 = start + timedelta(seconds=i * width_s)
        b1 = b0 + timedelta(seconds=width_s)
        fmt = "%Y-%m-%d %H:%M" if width_s < 86400 else "%Y-%m-%d"
        tip = f"{b0.strftime(fmt)} to {b1.strftime(fmt)} UTC: {vol[i]} messages, {flg[i]} flagged"
        for value, colour, cls in ((vol[i], "#9aa5b1", "vol"), (flg[i], "#c0392b", "flag")):
            if value:
                bh = (bottom - 12) * value / top
                parts.append(
                    f'<rect class="{cls}" x="{x + 1:.1f}" y="{bottom - bh:.1f}" width="{max(bw - 2, 1):.1f}" '
                    f'height="{bh:.1f}" fill="{colour}"><title>{_esc(tip)}</title></rect>'
                )
    total = width_s * n
    tick_s = next((t for t in _TICKS if t >= total / 7 and t % width_s == 0), width_s * max(1, round(n / 6)))
    first = start.timestamp()
    first = first if first % tick_s == 0 else first + tick_s - first % tick_s
    prev_date = None
    t = datetime.fromtimestamp(first, UTC)
    while t <= start + timedelta(seconds=total):
        x = left + (t - start).total_seconds() / width_s * bw
        if tick_s >= 86400:
            line1, line2 = t.strftime("%Y-%m-%d"), ""
        else:
            line1 = t.strftime("%H:%M")
            line2 = t.strftime("%Y-%m-%d") if t.date() != prev_date else ""
            prev_date = t.date()
        parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="#555"/>')
        if x > width - right - 20:  # a label this close to the edge would be cut off
            break
        parts.append(f'<text class="tick" x="{x:.1f}" y="{bottom + 17}" text-anchor="middle">{_esc(line1)}</text>')
        if line2:
            parts.append(f'<text x="{x:.1f}" y="{bottom + 31}" text-anchor="middle">{_esc(line2)}</text>')
        t += timedelta(seconds=tick_s)
    parts.append(
        f'<rect x="{left}" y="{height - 14}" width="10" height="10" fill="#9aa5b1"/>'
        f'<text x="{left + 14}" y="{height - 5}">messages</text>'
        f'<rect x="{left + 90}" y="{height - 14}" width="10" height="10" fill="#c0392b"/>'
        f'<text x="{left + 104}" y="{height - 5}">flagged</text>'
        f'<text x="{width - right}" y="{height - 5}" text-anchor="end">per {_esc(bin_name)}, times in UTC</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------- HTML

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em 1.5em;color:#222;max-width:1280px;line-height:1.4}
h1{font-size:1.5em;overflow-wrap:anywhere}h2{font-size:1.25em;margin-top:1.6em}h3{font-size:1.05em;margin:1em 0 .3em}
p,li,dd{overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1.2em;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}.scores{font-size:.85em;white-space:nowrap}
.hi{color:#c0392b;font-weight:bold}details summary{cursor:pointer;color:#555}
.msg{white-space:pre-wrap;overflow-wrap:anywhere;min-width:12em;max-width:28em}
td.when{white-space:nowrap;font-size:.9em}td.act{min-width:7em}.why{min-width:16em;max-width:26em;font-size:.9em}
td.where{min-width:9em;max-width:16em;overflow-wrap:anywhere}
.raiders{columns:2 16em;padding-left:1.2em}.raiders code,pre.ids{font-size:.85em;user-select:all}
pre.ids{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;border:1px solid #ddd;padding:.4em .6em;
max-height:12em;overflow-y:auto}
.path{overflow-wrap:anywhere;min-width:12em}
svg text{font-size:12px;fill:#333}svg{display:block;max-width:100%;height:auto}svg.timeline text{font-size:14px}
.cards{display:flex;flex-wrap:wrap;gap:.5em;padding:0}
.cards span{border:1px solid #ccc;border-radius:6px;padding:.5em 1em}
.banner{background:#fff7e0;border:1px solid #e0c060;border-radius:6px;padding:.5em 1em}
.incident{border-left:4px solid #c0392b;padding-left:.8em;margin:1em 0}
.thread{border-left-color:#8e44ad}
abbr,[title]{text-decoration:none}.id{color:#666;font-size:.85em}
#toggle-texts{font:inherit;padding:.4em 1em;margin:.3em 0}
@media (max-width:600px){body{padding:.5em .7em;font-size:15px}th,td{padding:3px 5px}
.msg{min-width:0;max-width:none}td.when{font-size:.8em}.why{min-width:0}
table.msgs,table.msgs tbody,table.msgs tr,table.msgs td{display:block;width:100%;max-width:none;min-width:0}
table.msgs thead{display:none}table.msgs tr{border:1px solid #ccc;border-radius:6px;margin:0 0 .6em;padding:.2em 0}
table.msgs td{border:0;border-bottom:1px solid #eee;white-space:normal}table.msgs td:last-child{border-bottom:0}
table.msgs td::before{content:attr(data-label);display:block;font-size:.75em;color:#666;text-transform:uppercase}}
"""

#: The only script: the "show all texts" button (opens or closes every message text at once).
_SCRIPT = (
    "(function(){var b=document.getElementById('toggle-texts');if(!b)return;b.hidden=false;"
    "b.addEventListener('click',function(){var o=b.getAttribute('aria-pressed')!=='true';"
    "document.querySelectorAll('details.text').forEach(function(d){d.open=o;});"
    "b.setAttribute('aria-pressed',o?'true':'false');b.textContent=o?'Hide all texts':'Show all texts';});})();"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()


def _named(name: str, ident: str, kind: str) -> str:
    """A name with its id on hover (``title``); the bare id when there is no name."""
    if name and name != ident:
        return f'<span title="{_esc(kind)} id {_esc(ident)}">{_esc(name)}</span>'
    return f'<span class="id">{_esc(ident)}</span>'


def _scores_cell(scores: Mapping[str, float | None], labels: tuple[str, ...],
                 tiers: Mapping[str, tuple[float | None, float | None]] | None = None) -> str:
    """The labels that mattered (:func:`bot.workflow.words.labels_that_mattered`) with their scores; labels that
    flagged the message in bold red; a label the model lacks is named as such when it was asked for."""
    ordered = {k: scores.get(k) for k in LABELS if k in scores}
    out = []
    for k in words.labels_that_mattered(ordered, tiers or {}, labels):
        cls = ' class="hi"' if k in labels else ""
        out.append(f"<span{cls}>{_esc(k)} {float(scores[k] or 0):.2f}</span>")
    missing = [k for k in labels if scores.get(k) is None]
    out += [f"<span>{_esc(k)}: not read by this model</span>" for k in missing]
    return "<br>".join(out) or "-"


def explain(row: Row) -> list[str]:
    """Why a message was flagged, in plain text lines, against the tiers that actually applied.

    Each label at or above its review or act tier gives ``"identity_attack 0.91 ≥ review tier 0.78"`` (and the act
    tier with what it would do); raid mode is named when its stricter tiers applied; an ``identity_target`` signal is
    explained with the ``identity_attack`` tier that applied (the untargeted tier, made stricter by raid mode when
    on). Rule hits follow as ``"rule: detail"``. Verdicts recorded without tiers (an earlier run) say so.
    """
    lines: list[str] = []
    if row.raid_mode:
        lines.append("raid mode was on: its stricter tiers applied")
    act_kinds = {a[0] for a in row.actions if a[0] not in ("review", "none", "log")}
    for label in LABELS:
        score = row.scores.get(label)
        if score is None or label not in row.tiers:
            continue
        review, act = row.tiers[label]
        if any(t is not None and score >= t for t in (review, act)):
            lines.append(words.score_line(label, score, review, act))
    if not row.tiers and row.labels:
        lines.append("tiers not recorded for this verdict (judged by an earlier run): " + ", ".join(row.labels))
    for rule, detail in row.rule_hits:
        if rule == "identity_target":
            review, act = row.tiers.get("identity_attack", (None, None))
            applied = words.tier(review, act)
            when = " (made stricter by raid mode)" if row.raid_mode else ""
            lines.append(f"identity_target: no identity named, so identity_attack was held to the untargeted tier: "
                         f"{applied}{when}" if row.tiers else f"identity_target: {words.rule_detail(detail)}")
        else:
            lines.append(f"{rule}: {words.rule_detail(detail)}" if detail else rule)
    for kind, reason, _dur in row.actions:
        if kind in act_kinds and reason:
            lines.append(f"{action_words(kind, row.shadow)}: {reason}")
    return lines


def _action_cell(row: Row) -> str:
    dur = next((a[2] for a in row.actions if a[0] == row.action), None)
    words = action_words(row.action, row.shadow, dur)
    extra = [action_words(a[0], row.shadow, a[2]) for a in row.actions if a[0] != row.action and a[0] != "none"]
    return _esc(words) + "".join(f"<br><small>{_esc(x)}</small>" for x in extra)


def _text(row: Row, *, open_: bool = False) -> str:
    text = row.text if len(row.text) <= MAX_TEXT else row.text[:MAX_TEXT] + "…"
    shown = f"{len(row.text)} chars" if row.text else "no text"
    return (f'<details class="text"{" open" if open_ else ""}><summary>show text ({shown})</summary>'
            f'<div class="msg">{_esc(text)}</div></details>')


def _link(row: Row) -> str:
    if not row.link:
        return ""
    return f'<a href="{_esc(row.link)}" rel="noopener noreferrer" target="_blank">open</a>'


def _server(data: ReportData, row: Row) -> str:
    return _named(row.server_name or data.servers.get(row.server_id, ""), row.server_id, "server")


def _channel(data: ReportData, row: Row) -> str:
    name = row.channel if row.channel != row.channel_id else data.channels.get(row.channel_id, "")
    if not (row.is_thread and row.parent_id):
        return _named(name, row.channel_id, "channel")
    parent = data.channels.get(row.parent_id, "")
    thread = _named(name if name and name != parent else "thread", row.channel_id, "thread")
    return _named(parent, row.parent_id, "channel") + " › " + thread


def _member(data: ReportData, member_id: str) -> str:
    return _named(data.names.get(member_id, ""), member_id, "member")


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _when(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") if t else ""


def _message_table(data: ReportData, rows: Sequence[Row], *, full: bool) -> str:
    """Messages as a table (class ``msgs``); what a moderator needs first (member, text, action) comes first. At
    desktop widths (1,400 px) every column fits without scrolling: where a message was posted is one cell (channel,
    server, platform, link) and the scores cell names only the labels that mattered. At phone widths (600 px and
    less) each row becomes a card, one labelled line per cell (``data-label``), so nothing starts off-screen."""
    head = ["time", "member", "message", "action"]
    if full:
        head.append("why (against the tier that applied)")
    head.append("where")
    if full:
        head.append("scores")
    out = ['<div class="scroll"><table class="msgs"><thead><tr>' + "".join(f"<th>{h}</th>" for h in head)
           + "</tr></thead><tbody>"]
    for r in rows:
        when = f"{r.time.strftime('%Y-%m-%d')} <br>{r.time.strftime('%H:%M:%S')}" if r.time else ""
        link = _link(r)
        where = (f"{_channel(data, r)}<br><small>{_server(data, r)} · {_esc(r.source)}"
                 f"{' · ' + link if link else ''}</small>")
        cells = [
            ("when", "time", when),
            ("", "member", _named(r.author, r.author_id, "member")),
            ("", "message", _text(r)),
            ("act", "action", _action_cell(r) if r.flagged else "not flagged"),
        ]
        if full:
            cells.append(("why", "why", "<br>".join(_esc(x) for x in explain(r))))
        cells.append(("where", "where", where))
        if full:
            cells.append(("scores", "scores", _scores_cell(r.scores, r.labels, r.tiers)))
        anchor = f' id="m-{_esc(r.id)}"' if full else ""
        out.append(f"<tr{anchor}>" + "".join(_td(*cell) for cell in cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _td(cls: str, label: str, value: str) -> str:
    """One table cell with its column name in ``data-label`` (the phone layout shows it above the value)."""
    attr = f' class="{cls}"' if cls else ""
    return f'<td{attr} data-label="{label}">{value}</td>'


def raiders(raid: Raid) -> list[str]:
    """Everyone who took part in a raid, in order: the members of the alert's burst window, then every other
    author of a flagged message of the raid (a burst window holds only the first few; a moderator copying who to
    ban needs them all)."""
    out = list(dict.fromkeys(raid.members))
    out += [r.author_id for r in raid.rows if r.flagged and r.author_id not in out]
    return list(dict.fromkeys(out))


def _servers_section(data: ReportData) -> list[str]:
    per: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in data.all_rows:
        per[(r.platform, r.server_id)].append(r)
    keys = list(per) or [tuple(k.split("/", 1)) for k in data.policies]
    if not keys:
        return []
    p = ['<h2>Servers and the policy that judged them</h2><div class="scroll"><table>',
         "<tr><th>platform</th><th>server</th><th>channels</th><th>messages</th><th>flagged</th>"
         "<th>policy files (in order)</th><th>policy version</th></tr>"]
    for key in keys:
        platform, server_id = key[0], key[-1]
        rows = per.get((platform, server_id), [])
        source = rows[0].source if rows else platform
        prov = data.policies.get(f"{platform}/{server_id}", {})
        versions = sorted({r.policy_version for r in rows if r.policy_version})
        current = str(prov.get("version") or "")
        version = _esc(current) if current else ""
        older = [v for v in versions if v != current]
        if older:
            version += ("<br>" if version else "") + "verdicts judged under: " + ", ".join(_esc(v) for v in versions)
        files = "<br>".join(_esc(f) for f in prov.get("files") or ()) or "not recorded"
        p.append(
            f"<tr><td>{_esc(source)}</td><td>{_named(data.servers.get(server_id, ''), server_id, 'server')}</td>"
            f'<td class="num">{len({r.channel_id for r in rows})}</td><td class="num">{len(rows)}</td>'
            f'<td class="num">{sum(r.flagged for r in rows)}</td><td class="path">{files}</td><td>{version}</td></tr>'
        )
    p.append("</table></div>")
    return p


def _incidents_section(data: ReportData) -> list[str]:
    p = [f"<h2>Incidents ({len(data.raids)} raids, {len(data.threads)} threads with flagged replies)</h2>"]
    if not data.raids and not data.threads:
        p.append("<p>No raid detected and no thread has a flagged reply.</p>")
    for i, raid in enumerate(data.raids, 1):
        any_row = raid.rows[0] if raid.rows else None
        server = data.servers.get(raid.server_id, "")
        where = _named(data.channels.get(raid.channel_id, ""), raid.channel_id, "channel")
        flagged = sum(r.flagged for r in raid.rows)
        everyone = raiders(raid)
        names = "".join(f"<li>{_esc(data.names.get(m, '')) + ' ' if data.names.get(m) else ''}"
                        f'<code class="id">{_esc(m)}</code></li>' for m in everyone)
        p.append(
            f'<div class="incident raid" id="raid-{i}"><h3>Raid {i}: {where} in '
            f"{_named(server, raid.server_id, 'server')}"
            f"{' (' + _esc(any_row.source) + ')' if any_row else ''}</h3>"
            f"<p>started {_esc(_when(raid.started_at))} UTC; {_esc(raid.reason)}; {raid.count} messages in the burst "
            f"window when the alert was raised, from {_n(len(raid.members), 'member', 'members')}.</p>"
            f"<p>{_n(len(everyone), 'member took', 'members took')} part (in the burst window or with a flagged "
            f'message in the raid):</p><ul class="raiders">{names}</ul>'
            f'<p>Their ids, to copy:</p><pre class="ids" id="raid-{i}-ids">{_esc(" ".join(everyone))}</pre>'
            f"<p>{_n(len(raid.rows), 'message belongs', 'messages belong')} to it ({flagged} flagged): by its "
            "members or judged under raid mode.</p>"
        )
        if raid.rows:
            p.append(_message_table(data, raid.rows, full=False))
        p.append("</div>")
    for i, th in enumerate(data.threads, 1):
        root = th.root
        if root is not None:
            head = (f"Thread {i}: {_named(root.author, root.author_id, 'member')} in {_channel(data, root)}, "
                    f"{_esc(_when(root.time))} UTC")
        else:
            head = f"Thread {i}: replies to message <span class=\"id\">{_esc(th.root_id)}</span>"
        p.append(f'<div class="incident thread" id="thread-{i}"><h3>{head}</h3>')
        if root is not None:
            p.append(f"<p>The message replied to{' (' + _link(root) + ')' if root.link else ''}:</p>{_text(root)}")
        shown = _n(len(th.replies), "flagged reply", "flagged replies")
        if th.in_raids:
            where = ", ".join(f'<a href="#raid-{n}">Raid {n}</a>' for n in th.raids)
            shown += f" below; {_n(th.in_raids, 'flagged reply', 'flagged replies')} shown under {where}"
        p.append(f"<p>{shown}; {_n(th.unflagged, 'reply', 'replies')} not flagged.</p>")
        if th.replies:
            p.append(_message_table(data, th.replies, full=False))
        p.append("</div>")
    return p


def _side(side: Mapping[str, Any], shadow: bool) -> str:
    if not side.get("flagged"):
        return "not flagged"
    why = ", ".join(side.get("labels") or side.get("rules") or [])
    return _esc(action_words(str(side.get("action", "none")), shadow)) + (f"<br><small>{_esc(why)}</small>" if why else "")


def _diff_section(data: ReportData) -> list[str]:
    """What the policy change did (a replay): totals, actions before and after, per label, channel and member,
    then every changed message with its text and both verdicts."""
    d = data.diff
    if not d:
        return []
    c = d.get("counts", {})
    before = ", ".join(d.get("before_versions") or []) or "-"
    after = ", ".join(d.get("after_versions") or []) or "-"
    p = ['<h2 id="policy-change">What the policy change does</h2>',
         f"<p>{int(d.get('compared', 0))} recorded messages re-judged from their stored scores: policy version "
         f'<span class="id">{_esc(before)}</span> (recorded) → <span class="id">{_esc(after)}</span> (now). '
         "Both verdict sets are kept in the mod log.</p>",
         '<p class="cards" id="diff-summary">',
         f'<span id="n-newly-flagged">{int(c.get("newly flagged", 0))} newly flagged</span>',
         f'<span id="n-no-longer-flagged">{int(c.get("no longer flagged", 0))} no longer flagged</span>',
         f'<span id="n-action-changed">{int(c.get("action changed", 0))} with another action</span>',
         f'<span>{int(c.get("labels changed", 0))} with other labels</span>',
         f"<span>flagged {int(d.get('flagged_before', 0))} → {int(d.get('flagged_after', 0))}</span></p>"]
    if d.get("first_time"):
        p.append(f"<p>{int(d['first_time'])} messages had no recorded verdict and were judged for the first time.</p>")
    acts = sorted(set(d.get("actions_before", {})) | set(d.get("actions_after", {})))
    if acts:
        p.append('<div class="scroll"><table><tr><th>action</th><th>recorded</th><th>now</th></tr>')
        p += [f"<tr><td>{_esc(action_words(a, data.shadow))}</td><td class=\"num\">{d['actions_before'].get(a, 0)}</td>"
              f"<td class=\"num\">{d['actions_after'].get(a, 0)}</td></tr>" for a in acts]
        p.append("</table></div>")
    if d.get("per_label"):
        p.append('<h3>Per label</h3><div class="scroll"><table><tr><th>label</th><th>messages gaining it</th>'
                 "<th>messages losing it</th></tr>")
        p += [f'<tr><td>{_esc(k)}</td><td class="num">{v["gained"]}</td><td class="num">{v["lost"]}</td></tr>'
              for k, v in d["per_label"].items()]
        p.append("</table></div>")
    kinds = ("newly flagged", "no longer flagged", "action changed", "labels changed")
    for title, key, kind in (("Per channel", "per_channel", "channel"), ("Per member", "per_member", "member")):
        if not d.get(key):
            continue
        p.append(f'<h3>{title}</h3><div class="scroll"><table><tr><th>{kind}</th>'
                 + "".join(f"<th>{k}</th>" for k in kinds) + "</tr>")
        p += [f"<tr><td>{_named(r['name'], r['id'], kind)}</td>"
              + "".join(f'<td class="num">{int(r.get(k, 0))}</td>' for k in kinds) + "</tr>" for r in d[key]]
        p.append("</table></div>")
    msgs = d.get("messages") or []
    p.append(f'<h3>Changed messages ({len(msgs)})</h3><div class="scroll"><table id="diff-messages"><tr>'
             "<th>change</th><th>time</th><th>member</th><th>message</th><th>recorded</th><th>now</th>"
             "<th>channel</th></tr>")
    for r in msgs:
        t = _time(r.get("time"))
        text = str(r.get("text", ""))
        text = text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"
        p.append(f'<tr><td>{_esc(r.get("change"))}</td><td class="when">{_esc(_when(t))}</td>'
                 f"<td>{_named(str(r.get('member', '')), str(r.get('member_id', '')), 'member')}</td>"
                 f'<td><details class="text"><summary>show text ({len(text)} chars)</summary>'
                 f'<div class="msg">{_esc(text)}</div></details></td>'
                 f"<td>{_side(r.get('before', {}), data.shadow)}</td><td>{_side(r.get('after', {}), data.shadow)}</td>"
                 f"<td>{_named(str(r.get('channel', '')), str(r.get('channel_id', '')), 'channel')}</td></tr>")
    p.append("</table></div>")
    return p


def render_html(data: ReportData) -> str:
    """Render the report as one HTML document (``str``); one inline script (allowed by hash), no external
    resources."""
    e = _esc
    would = "would be acted on" if data.shadow else "acted on"
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'"
    p: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        f"<title>{e(data.title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(data.title)}</h1>",
        f"<p>Generated {e(data.generated_at.strftime('%Y-%m-%d %H:%M:%S'))} UTC. All times are UTC. "
        "Hover a name to see its id.</p>",
    ]
    if data.shadow:
        p.append('<p class="banner">Shadow scan: nothing was done to anyone. Actions below are what the policy '
                 "<b>would</b> have done.</p>")
    p += [
        '<h2>Summary</h2><p class="cards" id="summary">',
        f'<span id="n-messages">{data.messages} messages scanned</span>',
        f'<span id="n-flagged">{data.flagged} flagged</span>',
        f'<span id="n-actions">{data.actions_count} {would}</span>',
        f"<span>{len(data.raids)} raids</span></p>",
    ]
    p += _diff_section(data)
    p += _servers_section(data)
    if data.meta:
        p.append(
            '<div class="scroll"><table>'
            + "".join(f'<tr><th>{e(k)}</th><td class="path">{e(v)}</td></tr>' for k, v in data.meta.items())
            + "</table></div>"
        )
    if data.action_counts:
        p.append('<h3>What the policy would do</h3>' if data.shadow else "<h3>What was done</h3>")
        p.append('<div class="scroll"><table><tr><th>action</th><th>messages</th></tr>')
        p += [
            f'<tr><td>{e(action_words(k, data.shadow))}</td><td class="num">{v}</td></tr>'
            for k, v in sorted(data.action_counts.items())
        ]
        p.append("</table></div>")
    p.append('<p><button id="toggle-texts" type="button" aria-pressed="false" hidden>Show all texts</button></p>')
    p += _incidents_section(data)
    p.append('<h2>Flags per label</h2><div class="scroll"><table><tr><th>label</th><th>flagged messages</th></tr>')
    extra = [k for k in data.label_counts if k not in LABELS]
    p += [f'<tr><td>{e(k)}</td><td class="num">{data.label_counts.get(k, 0)}</td></tr>' for k in (*LABELS, *extra)]
    p.append('</table></div><div class="scroll">' + _bar_svg(data.label_counts) + "</div>")
    all_times = [r.time for r in data.all_rows if r.time]
    flag_times = [r.time for r in data.rows if r.time]
    p.append('<h2>Messages and flags over time</h2><div class="scroll">' + _timeline_svg(all_times, flag_times)
             + "</div>")
    zoom = zoom_window(all_times, flag_times)
    if zoom is not None:
        lo, hi = zoom
        p.append(
            f"<h3>Close-up: {e(lo.strftime('%Y-%m-%d %H:%M'))} to {e(hi.strftime('%H:%M'))} UTC, around the hour "
            'with the most flags</h3><div class="scroll">'
            + _timeline_svg([t for t in all_times if lo <= t < hi], [t for t in flag_times if lo <= t < hi])
            + "</div>"
        )
    p.append("<h2>Members by strike points</h2>")
    if data.top_members:
        p.append('<div class="scroll"><table><tr><th>member</th><th>id</th><th>points</th></tr>')
        p += [
            f'<tr><td>{e(data.names.get(m, m))}</td><td class="id">{e(m)}</td><td class="num">{v}</td></tr>'
            for m, v in data.top_members
        ]
        p.append("</table></div>")
    else:
        p.append("<p>No strikes.</p>")
    p.append(f"<h2>Flagged messages ({len(data.rows)})</h2>")
    p.append(_message_table(data, data.rows, full=True))
    p.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(p)


def write_html_report(path: Path, summary: Mapping[str, Any], verdict_rows: Iterable[Mapping[str, Any]]) -> None:
    """Build the report (see :func:`build_report_data`) and write it to ``path`` as UTF-8 HTML.

    Raises:
        OSError: ``path`` cannot be written.
    """
    data = build_report_data(summary, verdict_rows)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(data), encoding="utf-8")
    log.info("wrote report %s (%d flagged of %d)", path, data.flagged, data.messages)
