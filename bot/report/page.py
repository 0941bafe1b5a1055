"""The report's HTML page: sections (servers, incidents, diff, flags, timeline, members, messages) and the file.

Layer: ``bot.report``. Every value from the scan is escaped (:func:`bot.report.style._esc`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from bot.core.models import LABELS
from bot.report.actions import action_words
from bot.report.charts import _bar_svg, _timeline_svg, zoom_window
from bot.report.grouping import build_report_data
from bot.report.ids import platform_name
from bot.report.rows import MAX_TEXT
from bot.report.schema import Raid, ReportData, Row, _time, lookup
from bot.report.style import _CSS, _SCRIPT, _SCRIPT_HASH, _esc
from bot.workflow import words

log = logging.getLogger(__name__)


def _named(name: str, ident: str, kind: str) -> str:
    """A name with its id on hover (``title``); the bare id when there is no name."""
    if name and name != ident:
        return f'<span title="{_esc(kind)} id {_esc(ident)}">{_esc(name)}</span>'
    return f'<span class="id">{_esc(ident)}</span>'


def platform_label(platform: str, source: str = "") -> str:
    """Where a server's messages come from, as shown: ``"Discord"``, ``"Slack"``, or for an export the platform
    its ids say it came from with ``(export)`` (``"Discord (export)"``: a guild and its export may share one
    server id and one name, and must read apart); ``source``: the row's display platform, guessed from its ids
    when not given."""
    shown = source or platform_name(platform, "")
    if platform and platform.lower() != shown.lower():
        return f"{shown} ({platform})"
    return shown


def _server_named(data: ReportData, platform: str, server_id: str, name: str = "") -> str:
    """A server's name (its id on hover), the server being its platform and id."""
    return _named(name or lookup(data.servers, platform, server_id), server_id, "server")


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
    return _server_named(data, row.platform, row.server_id, row.server_name)


def _channel(data: ReportData, row: Row) -> str:
    where = (row.platform, row.server_id)
    name = row.channel if row.channel != row.channel_id else lookup(data.channels, *where, row.channel_id)
    if not (row.is_thread and row.parent_id):
        return _named(name, row.channel_id, "channel")
    parent = lookup(data.channels, *where, row.parent_id)
    thread = _named(name if name and name != parent else "thread", row.channel_id, "thread")
    return _named(parent, row.parent_id, "channel") + " › " + thread


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
        where = (f"{_channel(data, r)}<br><small>{_server(data, r)} · {_esc(platform_label(r.platform, r.source))}"
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


def _platforms_shown(data: ReportData) -> dict[tuple[str, str], str]:
    """``(platform, server id)`` -> the platform shown for that server (as its first row shows it)."""
    out: dict[tuple[str, str], str] = {}
    for r in data.all_rows:
        if (r.platform, r.server_id) not in out:
            out[(r.platform, r.server_id)] = platform_label(r.platform, r.source)
    return out


def _platform_of(shown: Mapping[tuple[str, str], str], platform: str, server_id: str) -> str:
    """The platform shown for a server (:func:`_platforms_shown`; ``""`` when neither rows nor summary name
    one)."""
    return lookup(shown, platform, server_id) or (platform_label(platform) if platform else "")


def _servers_section(data: ReportData) -> list[str]:
    per: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in data.all_rows:
        per[(r.platform, r.server_id)].append(r)
    keys: list[tuple[str, ...]] = [*per] or [tuple(k.split("/", 1)) for k in data.policies]
    if not keys:
        return []
    p = ['<h2>Servers and the policy that judged them</h2><div class="scroll"><table>',
         "<tr><th>platform</th><th>server</th><th>channels</th><th>messages</th><th>flagged</th>"
         "<th>policy files (in order)</th><th>policy version</th></tr>"]
    for key in keys:
        platform, server_id = key[0], key[-1]
        rows = per.get((platform, server_id), [])
        source = platform_label(platform, rows[0].source if rows else "")
        prov = data.policies.get(f"{platform}/{server_id}", {})
        versions = sorted({r.policy_version for r in rows if r.policy_version})
        current = str(prov.get("version") or "")
        version = _esc(current) if current else ""
        older = [v for v in versions if v != current]
        if older:
            version += ("<br>" if version else "") + "verdicts judged under: " + ", ".join(_esc(v) for v in versions)
        files = "<br>".join(_esc(f) for f in prov.get("files") or ()) or "not recorded"
        p.append(
            f"<tr><td>{_esc(source)}</td><td>{_server_named(data, platform, server_id)}</td>"
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
        platform = raid.platform or (any_row.platform if any_row else "")
        source = platform_label(platform, any_row.source if any_row else "") if platform or any_row else ""
        where = _named(lookup(data.channels, platform, raid.server_id, raid.channel_id), raid.channel_id, "channel")
        flagged = sum(r.flagged for r in raid.rows)
        everyone = raiders(raid)
        known = {m: lookup(data.names, platform, raid.server_id, m) for m in everyone}
        names = "".join(f"<li>{'<bdi>' + _esc(known[m]) + '</bdi> ' if known[m] else ''}"
                        f'<code class="id">{_esc(m)}</code></li>' for m in everyone)
        p.append(
            f'<div class="incident raid" id="raid-{i}"><h3>Raid {i}: {where} in '
            f"{_server_named(data, platform, raid.server_id)}"
            f"{' (' + _esc(source) + ')' if source else ''}</h3>"
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
        # per server (its platform and id): a member's points in one server never add to their points in another
        p.append('<div class="scroll"><table><tr><th>platform</th><th>server</th><th>member</th><th>id</th>'
                 "<th>points</th></tr>")
        shown = _platforms_shown(data)
        p += [
            f"<tr><td>{e(_platform_of(shown, pf, s))}</td><td>{_server_named(data, pf, s)}</td>"
            f"<td>{e(lookup(data.names, pf, s, m) or m)}</td>"
            f'<td class="id">{e(m)}</td><td class="num">{v}</td></tr>'
            for pf, s, m, v in data.top_members
        ]
        p.append("</table></div>")
    else:
        p.append("<p>No strikes.</p>")
    p.append(f"<h2>Flagged messages ({len(data.rows)})</h2>")
    p.append(_message_table(data, data.rows, full=True))
    p.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(p)


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[IO[str]]:
    """A text file (UTF-8) to write ``path`` whole or not at all: a temporary file beside it, renamed over ``path``
    when the ``with`` block ends normally, removed when it raises (the previous file, if any, untouched; no
    temporary file left). A new file is owner-only (mode 0600: the mod log page and ``scan --out`` hold members'
    ids and words, as a backup does); a file that exists keeps its permission bits (an admin may have opened it to
    a group); a symbolic link at ``path`` is written through (its target is replaced). Missing parent folders are
    made.

    Raises:
        OSError: the file cannot be created, written, flushed to disk or renamed (the previous one is untouched).
    """
    target = Path(path).resolve() if Path(path).is_symlink() else Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_page(path: Path, html: str) -> None:
    """Write ``html`` to ``path`` (UTF-8) whole or not at all (:func:`replacing`), so a reader never sees half a
    page and a write that fails half-way (a full disk) leaves the previous page as it was and no temporary file. A
    new page is owner-only (0600); a page that exists keeps its permission bits; a symbolic link at ``path`` is
    written through.

    Raises:
        OSError: the page cannot be written (the previous one is untouched).
    """
    with replacing(path) as f:
        f.write(html)


def write_html_report(path: Path, summary: Mapping[str, Any], verdict_rows: Iterable[Mapping[str, Any]]) -> None:
    """Build the report (see :func:`build_report_data`) and write it to ``path`` as UTF-8 HTML (whole or not at
    all: :func:`write_page`).

    Raises:
        OSError: ``path`` cannot be written.
    """
    data = build_report_data(summary, verdict_rows)
    path = Path(path)
    write_page(path, render_html(data))
    log.info("wrote report %s (%d flagged of %d)", path, data.flagged, data.messages)
