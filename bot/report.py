"""Self-contained HTML report of an offline ``scan``: what a moderator reads after scanning an export.

The page has no scripts, no external resources and no network access: CSS and the charts (inline SVG) are
generated here. Every value from the scan is HTML-escaped; abusive message text is hidden behind a
click-to-reveal ``<details>`` element.
"""

from __future__ import annotations

import html
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.core.models import LABELS

log = logging.getLogger(__name__)

#: Longest message text shown in the report, in characters (the rest is cut with an ellipsis).
MAX_TEXT = 500
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class FlaggedRow:
    """One flagged message as shown in the report.

    Attributes:
        id: Message id.
        time: Posting time (UTC) or ``None`` when the row had none.
        channel: Channel name or id.
        author: Author name or id.
        text: Original text (escaped and truncated at render time).
        scores: Label -> score in [0, 1] or ``None`` (missing label).
        rule_hits: ``"rule: detail"`` strings.
        action: Strongest action (``"none"``, ``"review"``, ``"delete"``, ...).
        labels: Labels that flagged it.
    """

    id: str
    time: datetime | None
    channel: str
    author: str
    text: str
    scores: Mapping[str, float | None]
    rule_hits: tuple[str, ...]
    action: str
    labels: tuple[str, ...]


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
        raids: Raid alerts as dicts ``{"channel", "started_at", "count", "members", "reason"}``.
        top_members: ``(member, strike points)``, most points first.
        rows: Flagged messages, in time order.
        meta: Extra key/value lines for the summary (inputs, model, policy version, errors).
        generated_at: When the report was built (UTC).
    """

    title: str = "Moderation scan report"
    messages: int = 0
    flagged: int = 0
    label_counts: dict[str, int] = field(default_factory=dict)
    actions_count: int = 0
    action_counts: dict[str, int] = field(default_factory=dict)
    raids: list[dict[str, Any]] = field(default_factory=list)
    top_members: list[tuple[str, int]] = field(default_factory=list)
    rows: list[FlaggedRow] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
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
    return {k: getattr(r, k, None) for k in ("channel_id", "started_at", "count", "members", "reason")}


def _row(r: Mapping[str, Any]) -> FlaggedRow:
    hits = []
    for h in r.get("rule_hits") or ():
        if isinstance(h, Mapping):
            hits.append(f"{h.get('rule', '?')}: {h.get('detail', '')}".rstrip(": "))
        else:
            hits.append(str(h))
    scores = r.get("scores") if isinstance(r.get("scores"), Mapping) else {}
    return FlaggedRow(
        id=str(r.get("id", "")),
        time=_time(r.get("time") or r.get("created_at")),
        channel=str(r.get("channel", "")),
        author=str(r.get("author", "")),
        text=str(r.get("text", "")),
        scores=dict(scores),
        rule_hits=tuple(hits),
        action=str(r.get("action", "none")),
        labels=tuple(str(x) for x in r.get("labels") or ()),
    )


def build_report_data(summary: Mapping[str, Any], verdict_rows: Iterable[Mapping[str, Any]]) -> ReportData:
    """Collect :class:`ReportData` from a scan summary and per-message verdict rows.

    Args:
        summary: Optional keys: ``title``, ``messages`` (int), ``flagged`` (int), ``label_counts``
            ({label: int}), ``actions`` (int), ``action_counts`` ({action: int}), ``raids`` (dicts or
            :class:`~bot.core.models.RaidAlert`), ``top_members`` ([(member, points)] or {member: points}) and any
            ``inputs``/``model``/``policy_version``/``errors`` shown as metadata. Missing counts are computed
            from the rows.
        verdict_rows: :meth:`Verdict.to_json` dicts, optionally with ``text``, ``time``/``created_at`` (ISO or
            datetime) and ``strike_points``. Only rows with ``flagged`` true are listed.

    Returns:
        The report data; rows sorted by time (rows without a time last).
    """
    n = 0
    rows: list[FlaggedRow] = []
    labels: Counter[str] = Counter()
    actions: Counter[str] = Counter()
    strikes: Counter[str] = Counter()
    for r in verdict_rows:
        n += 1
        if int(r.get("strike_points") or 0) > 0:
            strikes[str(r.get("author", ""))] += int(r["strike_points"])
        if not r.get("flagged"):
            continue
        row = _row(r)
        rows.append(row)
        labels.update(row.labels)
        actions[row.action] += 1
    rows.sort(key=lambda x: (x.time is None, x.time or datetime.min.replace(tzinfo=UTC)))
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
    meta = {k: str(summary[k]) for k in ("inputs", "model", "policy_version", "errors") if summary.get(k)}
    return ReportData(
        title=str(summary.get("title") or "Moderation scan report"),
        messages=int(summary.get("messages") or n),
        flagged=int(summary.get("flagged") or len(rows)),
        label_counts={k: int(v) for k, v in (summary.get("label_counts") or labels).items()},
        actions_count=int(summary.get("actions") if summary.get("actions") is not None else acted),
        action_counts={str(k): int(v) for k, v in action_counts.items()},
        raids=[_raid_dict(r) for r in summary.get("raids") or ()],
        top_members=top_list[:10],
        rows=rows,
        meta=meta,
    )


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


def _timeline_svg(times: list[datetime], bins: int = 40) -> str:
    if not times:
        return "<p>No flagged message has a timestamp.</p>"
    lo, hi = min(times), max(times)
    span = max((hi - lo).total_seconds(), 1.0)
    counts = [0] * bins
    for t in times:
        counts[min(bins - 1, int((t - lo).total_seconds() / span * bins))] += 1
    top = max(counts)
    width, height, left, bottom = 640, 180, 40, 150
    bw = (width - left - 10) / bins
    parts = [
        f'<svg class="timeline" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="flagged messages over time">',
        f'<line x1="{left}" y1="{bottom}" x2="{width - 10}" y2="{bottom}" stroke="#555"/>',
        f'<line x1="{left}" y1="10" x2="{left}" y2="{bottom}" stroke="#555"/>',
        f'<text x="{left - 6}" y="16" text-anchor="end">{top}</text>',
        f'<text x="{left - 6}" y="{bottom}" text-anchor="end">0</text>',
    ]
    for i, c in enumerate(counts):
        if c:
            bh = (bottom - 12) * c / top
            parts.append(
                f'<rect x="{left + i * bw + 1:.1f}" y="{bottom - bh:.1f}" width="{max(bw - 2, 1):.1f}" '
                f'height="{bh:.1f}" fill="#8e44ad"><title>{c} flagged</title></rect>'
            )
    fmt = "%Y-%m-%d %H:%M:%S" if span < 86400 * 2 else "%Y-%m-%d"
    parts.append(f'<text x="{left}" y="{bottom + 18}">{_esc(lo.strftime(fmt))} UTC</text>')
    parts.append(f'<text x="{width - 10}" y="{bottom + 18}" text-anchor="end">{_esc(hi.strftime(fmt))} UTC</text>')
    parts.append(f'<text x="{width / 2:.0f}" y="{bottom + 18}" text-anchor="middle">bins of {span / bins:.0f} s</text>')
    parts.append("</svg>")
    return "".join(parts)


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.num{text-align:right}.scores{font-size:.85em;white-space:nowrap}
.hi{color:#c0392b;font-weight:bold}details summary{cursor:pointer;color:#555}
.msg{white-space:pre-wrap;word-break:break-word;max-width:420px}svg text{font-size:12px;fill:#333}
.cards span{display:inline-block;border:1px solid #ccc;border-radius:6px;padding:.5em 1em;margin-right:.5em}
"""


def _scores_cell(scores: Mapping[str, float | None], labels: tuple[str, ...]) -> str:
    out = []
    for k in LABELS:
        v = scores.get(k)
        shown = "missing" if v is None else f"{float(v):.2f}"
        cls = ' class="hi"' if k in labels else ""
        out.append(f"<span{cls}>{_esc(k)}={_esc(shown)}</span>")
    return "<br>".join(out)


def render_html(data: ReportData) -> str:
    """Render the report as one HTML document (``str``); no scripts, no external resources."""
    e = _esc
    p: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{e(data.title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(data.title)}</h1>",
        f"<p>Generated {e(data.generated_at.strftime('%Y-%m-%d %H:%M:%S'))} UTC. All times are UTC.</p>",
        '<h2>Summary</h2><p class="cards">',
        f"<span>{data.messages} messages scanned</span><span>{data.flagged} flagged</span>",
        f"<span>{data.actions_count} actions</span><span>{len(data.raids)} raids</span></p>",
    ]
    if data.meta:
        p.append(
            "<table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in data.meta.items()) + "</table>"
        )
    if data.action_counts:
        p.append("<table><tr><th>action</th><th>messages</th></tr>")
        p += [f'<tr><td>{e(k)}</td><td class="num">{v}</td></tr>' for k, v in sorted(data.action_counts.items())]
        p.append("</table>")
    p.append("<h2>Flags per label</h2><table><tr><th>label</th><th>flagged messages</th></tr>")
    extra = [k for k in data.label_counts if k not in LABELS]
    p += [f'<tr><td>{e(k)}</td><td class="num">{data.label_counts.get(k, 0)}</td></tr>' for k in (*LABELS, *extra)]
    p.append("</table>" + _bar_svg(data.label_counts))
    p.append("<h2>Flags over time</h2>" + _timeline_svg([r.time for r in data.rows if r.time is not None]))
    p.append("<h2>Raids</h2>")
    if data.raids:
        p.append("<table><tr><th>channel</th><th>started</th><th>messages</th><th>members</th><th>reason</th></tr>")
        for r in data.raids:
            members = r.get("members") or ()
            started = r.get("started_at")
            started_s = started.strftime("%Y-%m-%d %H:%M:%S") if isinstance(started, datetime) else started
            p.append(
                f"<tr><td>{e(r.get('channel') or r.get('channel_id'))}</td><td>{e(started_s)}</td>"
                f'<td class="num">{e(r.get("count"))}</td><td>{e(", ".join(map(str, members)))} '
                f"({len(members)})</td><td>{e(r.get('reason'))}</td></tr>"
            )
        p.append("</table>")
    else:
        p.append("<p>No raid detected.</p>")
    p.append("<h2>Members by strike points</h2>")
    if data.top_members:
        p.append("<table><tr><th>member</th><th>points</th></tr>")
        p += [f'<tr><td>{e(m)}</td><td class="num">{v}</td></tr>' for m, v in data.top_members]
        p.append("</table>")
    else:
        p.append("<p>No strikes.</p>")
    p.append(f"<h2>Flagged messages ({len(data.rows)})</h2>")
    p.append(
        "<table><tr><th>time</th><th>channel</th><th>author</th><th>message</th><th>scores</th>"
        "<th>labels</th><th>rule hits</th><th>action</th></tr>"
    )
    for r in data.rows:
        text = r.text if len(r.text) <= MAX_TEXT else r.text[:MAX_TEXT] + "…"
        when = r.time.strftime("%Y-%m-%d %H:%M:%S") if r.time else ""
        p.append(
            f'<tr id="m-{e(r.id)}"><td>{e(when)}</td><td>{e(r.channel)}</td><td>{e(r.author)}</td>'
            f'<td><details><summary>show text ({len(r.text)} chars)</summary><div class="msg">{e(text)}</div>'
            f'</details></td><td class="scores">{_scores_cell(r.scores, r.labels)}</td>'
            f"<td>{e(', '.join(r.labels))}</td><td>{'<br>'.join(e(h) for h in r.rule_hits)}</td>"
            f"<td>{e(r.action)}</td></tr>"
        )
    p.append("</table></body></html>")
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
