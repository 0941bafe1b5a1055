"""Grouping a scan's rows into the report: raids with their messages, threads with their flagged replies, flags per
label and member, and the summary (:func:`build_report_data`).

Layer: ``bot.report``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from bot.report.schema import Raid, ReportData, Row, Thread, _raid_dict, _time, row_from_json


def _by_time(row: Row) -> tuple[bool, datetime]:
    return (row.time is None, row.time or datetime.min.replace(tzinfo=UTC))


def _group_raids(raw: Sequence[Mapping[str, Any]], rows: Sequence[Row]) -> list[Raid]:
    """Attach to each raid alert its messages (see :class:`Raid`)."""
    alerts = sorted(
        (
            (_time(r.get("started_at")), str(r.get("platform") or ""), str(r.get("server_id") or ""),
             str(r.get("channel_id") or r.get("channel") or ""), r)
            for r in raw
        ),
        key=lambda a: (a[0] is None, a[0] or datetime.min.replace(tzinfo=UTC)),
    )
    out = []
    for i, (start, platform, server, channel, r) in enumerate(alerts):
        nxt = next((a[0] for a in alerts[i + 1 :] if a[1:4] == (platform, server, channel) and a[0]), None)
        members = tuple(str(x) for x in r.get("members") or ())
        mine = [
            row
            for row in rows
            if (not platform or not row.platform or row.platform == platform)
            and (not server or not row.server_id or row.server_id == server)
            and channel in (row.channel_id, row.parent_id)
            and row.time is not None
            and (start is None or row.time >= start)
            and (nxt is None or row.time < nxt)
            and (row.author_id in members or row.raid_mode)
        ]
        out.append(Raid(server, channel, start, members, int(r.get("count") or 0), str(r.get("reason") or ""),
                        tuple(mine), platform))
    return out


def _group_threads(rows: Sequence[Row], raids: Sequence[Raid] = ()) -> list[Thread]:
    """Threads (thread channels and reply chains) that have flagged replies, oldest root first; flagged replies that
    belong to a raid are counted, not repeated. Messages are keyed by platform, server and id (an export of a
    guild holds the same ids as the guild)."""
    raid_of = {(r.platform, r.server_id, r.id): i for i, raid in enumerate(raids, 1) for r in raid.rows}
    by_id = {(r.platform, r.server_id, r.id): r for r in rows}

    def root_of(r: Row) -> str | None:
        if r.is_thread:
            return r.channel_id
        cur, seen = r, 0
        while cur.reply_to and seen < 100:
            parent = by_id.get((cur.platform, cur.server_id, cur.reply_to))
            if parent is None:
                return cur.reply_to
            if parent.is_thread:
                return parent.channel_id
            cur, seen = parent, seen + 1
        return cur.id if cur is not r else None

    groups: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for r in rows:
        root = root_of(r)
        if root is not None and root != r.id:
            groups[(r.platform, r.server_id, root)].append(r)
    out: list[tuple[Row, Thread]] = []  # (the row the thread sorts by: its root, else its first flagged reply)
    for (platform, server, root_id), replies in groups.items():
        flagged = sorted((r for r in replies if r.flagged), key=_by_time)
        if not flagged:
            continue
        own = tuple(r for r in flagged if (r.platform, r.server_id, r.id) not in raid_of)
        in_raids = sorted({raid_of[key] for r in flagged if (key := (r.platform, r.server_id, r.id)) in raid_of})
        root_row = by_id.get((platform, server, root_id))
        # every flagged reply may be shown under a raid (own is empty) while the root is not in the export
        out.append((root_row or flagged[0], Thread(root_id, root_row, own, len(replies) - len(flagged),
                                                   len(flagged) - len(own), tuple(in_raids))))
    out.sort(key=lambda pair: _by_time(pair[0]))
    return [thread for _, thread in out]


def _top_member(entry: Sequence[Any]) -> tuple[str, str, str, int]:
    """``(platform, server id, member id, points)`` from a summary's entry of 4, 3 (no platform) or 2 (no
    server) parts."""
    *named, points = entry
    platform, server, member = (["", "", ""] + [str(x) for x in named])[-3:]
    return platform, server, member, int(points)


def build_report_data(summary: Mapping[str, Any], verdict_rows: Iterable[Mapping[str, Any]]) -> ReportData:
    """Collect :class:`ReportData` from a scan summary and per-message rows.

    Args:
        summary: Optional keys: ``title``, ``messages`` (int), ``flagged`` (int), ``label_counts``
            ({label: int}), ``actions`` (int), ``action_counts`` ({action: int}), ``raids`` (dicts or
            :class:`~bot.core.models.RaidAlert`; a dict's ``platform`` names its server's platform),
            ``top_members`` ([(platform, server id, member id, points)]: a member's points per server, a server
            being its platform and id, never summed across servers; an older [(server id, member id, points)]
            names no platform, [(member id, points)] or {member id: points} no server),
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
    strikes: Counter[tuple[str, str, str]] = Counter()  # (platform, server id, member id) -> points
    names: dict[tuple[str, str, str], str] = {}
    channels: dict[tuple[str, str, str], str] = {}
    servers: dict[tuple[str, str], str] = {}
    for r in verdict_rows:
        row = row_from_json(r)
        all_rows.append(row)
        if row.author != row.author_id:
            names.setdefault((row.platform, row.server_id, row.author_id), row.author)
        if row.channel != row.channel_id:
            channels.setdefault((row.platform, row.server_id, row.channel_id), row.channel)
        if row.server_id:
            servers.setdefault((row.platform, row.server_id), row.server_name)
        if row.strike_points > 0:
            strikes[(row.platform, row.server_id, row.author_id)] += row.strike_points
        if row.flagged:
            labels.update(row.labels)
            actions[row.action] += 1
    all_rows.sort(key=_by_time)
    rows = [r for r in all_rows if r.flagged]
    top = summary.get("top_members")
    top_list: list[tuple[str, str, str, int]]
    if isinstance(top, Mapping):
        top_list = [("", "", str(k), int(v)) for k, v in top.items()]
    elif top:
        top_list = [_top_member(t) for t in top]
    else:
        top_list = [(*key, points) for key, points in strikes.items()]
    top_list.sort(key=lambda t: -t[3])
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
        actions_count=int(given if (given := summary.get("actions")) is not None else acted),
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
