"""The live mod log as one self-contained HTML page: ``python -m bot report --db FILE --out mod-log.html``.

What a moderator of a running server reads: per server, the open review items; every case, searchable and
filterable by member, moderator, action, label and date; one section per member with their cases, strikes and
appeals; the raids with every raider's id to copy; the appeals; statistics with charts over time. Read through the
store's public methods (:class:`bot.core.store_port.ModLogReadStore`); nothing is written (opening the store
applies pending migrations, as every command does).

Built with :mod:`bot.report`'s code (its styles, charts, escaping, names with ids, the phone layout of message
tables) and :mod:`bot.workflow.words`. Like the scan report it loads nothing from outside (a Content-Security-Policy
forbids it): one inline script, allowed by its hash, filters the case table; without scripts every case is shown.
Member names are not stored in the mod log, so members and moderators appear by id (a Discord id can be pasted
into the client's search, ``from:`` or a profile link).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.report.charts import _bar_svg, _timeline_svg
from bot.report.page import _td, write_page
from bot.report.style import _CSS, _esc
from bot.workflow import words

#: The filter script of the case table: every input / select with ``data-filter="<key>"`` keeps the rows whose
#: ``data-<key>`` contains its value (case-insensitive; dates compare as ISO text), the free-text box searches the
#: whole row; the count of shown rows is updated. Text and query are compared NFKC-folded, lower-cased and without
#: invisible characters (soft hyphen, zero-width and bidi controls), as evaders write words: "bad\u200bword" and
#: fullwidth letters are found by the plain word.
_SCRIPT = (
    "(function(){var f=document.querySelectorAll('[data-filter]');if(!f.length)return;"
    "function norm(s){return s.normalize('NFKC').replace(/[\\u00ad\\u180e\\u200b-\\u200f\\u202a-\\u202e"
    "\\u2060-\\u2064\\ufeff]/g,'').toLowerCase();}"
    "document.querySelectorAll('.filters').forEach(function(x){x.hidden=false;});"
    "function run(){document.querySelectorAll('table.cases').forEach(function(t){"
    "var sid=t.getAttribute('data-server'),n=0;t.querySelectorAll('tbody tr').forEach(function(r){var ok=true;"
    "document.querySelectorAll('[data-filter][data-for=\"'+sid+'\"]').forEach(function(i){var v=norm(i.value)"
    ".trim();if(!v)return;var k=i.getAttribute('data-filter');"
    "if(k==='text'){if(!r.hasOwnProperty('_text'))r._text=norm(r.textContent);if(r._text.indexOf(v)<0)ok=false;}"
    "else if(k==='from'){if((r.getAttribute('data-date')||'')<v)ok=false;}"
    "else if(k==='to'){if((r.getAttribute('data-date')||'')>v)ok=false;}"
    "else if(((r.getAttribute('data-'+k)||'').toLowerCase().split(' ')).indexOf(v)<0)ok=false;});"
    "r.hidden=!ok;if(ok)n++;});var c=document.getElementById('shown-'+sid);if(c)c.textContent=n;});}"
    "f.forEach(function(i){i.addEventListener('input',run);i.addEventListener('change',run);});run();})();"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()

_LIVE_CSS = """
.filters{display:flex;flex-wrap:wrap;gap:.5em;margin:.5em 0}.filters label{display:flex;flex-direction:column;
font-size:.85em;color:#555}.filters input,.filters select{font:inherit;padding:.25em;min-width:9em;max-width:100%}
.member{border-left:4px solid #2c7be5;padding-left:.8em;margin:1em 0}section.server{margin-bottom:2.5em}
nav.toc{display:flex;flex-wrap:wrap;gap:.3em 1em}
"""


#: Characters an HTML id made from a server id may not hold (see :attr:`ServerLog.key`).
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(slots=True)
class ServerLog:
    """One server's mod log, as read from the store (see :func:`read_modlog`)."""

    platform: str
    server_id: str
    cases: list[Any] = field(default_factory=list)
    reviews: list[Any] = field(default_factory=list)
    review_times: dict[int, datetime] = field(default_factory=dict)
    appeals: list[Any] = field(default_factory=list)
    strikes: list[Any] = field(default_factory=list)
    raids: list[tuple[int, Any, tuple[str, ...]]] = field(default_factory=list)
    verdicts: list[Any] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``platform-serverid`` for the section's HTML ids and links: letters, digits, ``_``, ``.`` and ``-`` only
        (an id from an imported export is any string: quotes or ``>`` in it must not end the attribute); an id
        with other characters gets them as ``_`` and 8 hex digits of its SHA-256, so two servers stay apart."""
        raw = f"{self.platform}-{self.server_id}"
        safe = _UNSAFE_ID.sub("_", raw)
        return safe if safe == raw else f"{safe}-{hashlib.sha256(raw.encode()).hexdigest()[:8]}"


def select_servers(known: Sequence[tuple[str, str]], wanted: Sequence[str]) -> list[tuple[str, str]]:
    """The ``(platform, server id)`` pairs of ``known`` (the mod log's servers) that ``wanted`` names, in
    ``known``'s order: ``platform:id`` names one server, a bare id every platform's server with that id (a guild
    and the scanned export of it).

    Raises:
        LookupError: an entry of ``wanted`` names no server of ``known`` (``"no server X in this mod log"``).
    """
    known_set = set(known)
    chosen: set[tuple[str, str]] = set()
    for value in wanted:
        platform, sep, server_id = value.partition(":")
        exact = bool(sep) and (platform, server_id) in known_set
        found = {(platform, server_id)} if exact else {k for k in known_set if k[1] == value}
        if not found:
            raise LookupError(f"no server {value} in this mod log")
        chosen |= found
    return [k for k in known if k in chosen]


async def read_modlog(store: Any, servers: Sequence[tuple[str, str]] | None = None) -> list[ServerLog]:
    """Read every server's (or the given ``(platform, server id)`` pairs') mod log through the store's methods."""
    out = []
    for platform, server_id in servers if servers is not None else await store.modlog_servers():
        out.append(ServerLog(
            platform=platform, server_id=server_id,
            cases=await store.modlog_cases(platform, server_id),
            reviews=await store.modlog_reviews(platform, server_id),
            review_times=await store.modlog_review_times(platform, server_id),
            appeals=await store.modlog_appeals(platform, server_id),
            strikes=await store.modlog_strikes(platform, server_id),
            raids=await store.modlog_raids(platform, server_id),
            verdicts=await store.modlog_verdict_points(platform, server_id),
        ))
    return out


def _id(value: str | None) -> str:
    return f'<code class="id">{_esc(value)}</code>' if value else "automod"


def _day(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d") if t else ""


def _when(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d %H:%M") if t else ""


#: Characters of a reason shown before "…": in the case table's summary (the full text opens below it, once per
#: page) and in a member section's line (which links to the case row instead of repeating the text).
REASON_SHOWN = 300
MEMBER_REASON_SHOWN = 120


def _said(text: str) -> str:
    """``text`` escaped in a ``<bdi>``: a reason holds members' words (a report's text, a regex rule's quote), and a
    right-to-left override (U+202E) in them must not reorder what the line says after them."""
    return f"<bdi>{_esc(text)}</bdi>"


def _reason_cell(reason: str, *, verbatim: bool = False) -> str:
    """A case's or review item's reason for a table (escaped, isolated: :func:`_said`), its rule details in words
    (:func:`bot.workflow.words.rule_detail`) unless ``verbatim`` (a member's own words: a report, an appeal): as is
    when short; else its first :data:`REASON_SHOWN` characters and "…" as a ``<details>`` summary that opens to
    the whole text (kept once in the page)."""
    text = reason if verbatim else words.rule_detail(reason)
    if not text:
        return "-"
    if len(text) <= REASON_SHOWN:
        return _said(text)
    return (f"<details><summary>{_said(text[:REASON_SHOWN] + '…')} ({len(text):,} characters)</summary>"
            f"{_said(text)}</details>")


def _short_reason(reason: str, limit: int = MEMBER_REASON_SHOWN, *, verbatim: bool = False) -> str:
    """A reason cut to ``limit`` characters with "…" (escaped, isolated: :func:`_said`), for lines that link to the
    full text; its rule details in words unless ``verbatim`` (a member's own words)."""
    text = reason if verbatim else words.rule_detail(reason)
    return _said(text if len(text) <= limit else text[:limit] + "…") if text else "-"


def _case_status(c: Any) -> str:
    status = c.status.value
    return status + (f": {c.failure}" if c.failure else "")


def _open_reviews(log: ServerLog) -> list[str]:
    """The review queue: undecided items, those of shadow cases (a scan, or a server in shadow mode: what WOULD have
    gone to review, nobody was asked) in their own table after the real queue."""
    shadow = {r.case.number for r in log.cases if r.case.status.value == "shadow"}
    undecided = [r for r in log.reviews if r.decision.value in ("open", "investigating")]
    items = [r for r in undecided if r.case_number not in shadow]
    would = [r for r in undecided if r.case_number in shadow]
    p = [f'<h3 id="{log.key}-queue">Open review items ({len(items)})</h3>']
    p += _review_table(log, items) if items else ["<p>The review queue is empty.</p>"]
    if would:
        p.append(f'<h3 id="{log.key}-would-review">Would have gone to review, shadow mode ({len(would)})</h3>')
        p.append("<p>Flagged while the policy was in shadow mode (a <code>scan</code> of history, or a server trying a "
                 "policy): recorded for this report, never shown to moderators.</p>")
        p += _review_table(log, would)
    return p


def _review_table(log: ServerLog, items: list[Any]) -> list[str]:
    p: list[str] = []
    p.append('<div class="scroll"><table class="msgs reviews"><thead><tr><th>item</th><th>opened</th><th>member</th>'
             "<th>source</th><th>reason</th><th>case</th></tr></thead><tbody>")
    for r in items:
        case = f'<a href="#{log.key}-case-{r.case_number}">#{r.case_number}</a>' if r.case_number else "-"
        p.append("<tr>" + _td("", "item", f"Review #{r.id}" + (" (investigating)" if r.decision.value != "open"
                                                                else ""))
                 + _td("when", "opened", _esc(_when(log.review_times.get(r.id))))
                 + _td("", "member", f'<a href="#{log.key}-member-{_esc(r.member_id)}">{_id(r.member_id)}</a>')
                 + _td("", "source", _esc(r.source))
                 + _td("why", "reason", _reason_cell(r.reason, verbatim=r.source in words.MEMBERS_WORDS))
                 + _td("", "case", case) + "</tr>")
    p.append("</tbody></table></div>")
    return p


def _cases(log: ServerLog) -> list[str]:
    sid = log.key
    p = [f'<h3 id="{sid}-cases">Cases (<span id="shown-{sid}">{len(log.cases)}</span> of {len(log.cases)} shown)'
         "</h3>"]
    if not log.cases:
        return [*p, "<p>No cases yet.</p>"]
    actions = sorted({r.case.action.label for r in log.cases})
    labels = sorted({label for r in log.cases for label in r.labels})

    def select(key: str, options: list[str], what: str) -> str:
        opts = "".join(f'<option value="{_esc(o)}">{_esc(o)}</option>' for o in options)
        return (f'<label>{what}<select data-filter="{key}" data-for="{sid}"><option value="">any</option>{opts}'
                "</select></label>")

    p.append(f'<div class="filters" hidden><label>search<input type="search" data-filter="text" data-for="{sid}" '
             'placeholder="any word"></label>'
             f'<label>member id<input data-filter="member" data-for="{sid}"></label>'
             f'<label>moderator id<input data-filter="moderator" data-for="{sid}" placeholder="or automod"></label>'
             + select("action", actions, "action") + select("labels", labels, "label")
             + f'<label>from<input type="date" data-filter="from" data-for="{sid}"></label>'
             f'<label>to<input type="date" data-filter="to" data-for="{sid}"></label></div>')
    p.append(f'<div class="scroll"><table class="msgs cases" data-server="{sid}"><thead><tr><th>case</th>'
             "<th>date</th><th>member</th><th>action</th><th>reason</th><th>labels</th><th>moderator</th>"
             "<th>status</th></tr></thead><tbody>")
    for rec in log.cases:
        c = rec.case
        mod = c.moderator_id or "automod"
        dur = f" ({words.duration((c.expires_at - c.created_at).total_seconds())})" if c.expires_at else ""
        attrs = (f' id="{sid}-case-{c.number}" data-member="{_esc(c.member_id)}" data-moderator="{_esc(mod)}" '
                 f'data-action="{_esc(c.action.label)}" data-labels="{_esc(" ".join(rec.labels))}" '
                 f'data-date="{_day(c.created_at)}"')
        p.append(f"<tr{attrs}>" + _td("", "case", f"#{c.number}") + _td("when", "date", _esc(_when(c.created_at)))
                 + _td("", "member", f'<a href="#{sid}-member-{_esc(c.member_id)}">{_id(c.member_id)}</a>')
                 + _td("act", "action", _esc(c.action.label + dur))
                 + _td("why", "reason", _reason_cell(c.reason))
                 + _td("", "labels", _esc(", ".join(rec.labels)) or "-")
                 + _td("", "moderator", _id(c.moderator_id)) + _td("", "status", _esc(_case_status(c))) + "</tr>")
    p.append("</tbody></table></div>")
    return p


def _members(log: ServerLog, now: datetime) -> list[str]:
    by_member: dict[str, dict[str, list[Any]]] = defaultdict(
        lambda: {"cases": [], "strikes": [], "appeals": [], "reviews": []})
    for rec in log.cases:
        by_member[rec.case.member_id]["cases"].append(rec)
    for s in log.strikes:
        by_member[s.member_id]["strikes"].append(s)
    for a in log.appeals:
        by_member[a.member_id]["appeals"].append(a)
    for r in log.reviews:  # a report of a member with no case yet: the review queue links here too
        if r.case_number is None:
            by_member[r.member_id]["reviews"].append(r)
    p = [f'<h3 id="{log.key}-members">Members ({len(by_member)})</h3>']
    if not by_member:
        return [*p, "<p>No member has a case, a strike, an appeal or a review item.</p>"]

    def points(m: str) -> int:
        return sum(s.points for s in by_member[m]["strikes"] if not s.pardoned and s.expires_at > now)

    for m in sorted(by_member, key=lambda m: (-points(m), -len(by_member[m]["cases"]), m)):
        d = by_member[m]
        active = [s for s in d["strikes"] if not s.pardoned and s.expires_at > now]
        p.append(f'<div class="member" id="{log.key}-member-{_esc(m)}"><h4>{_id(m)}</h4>'
                 f"<p>{words.plural(len(d['cases']), 'case')}; active: "
                 f"{words.strikes(len(active), sum(s.points for s in active))}; "
                 f"{words.plural(len(d['strikes']), 'strike')} in all; {words.plural(len(d['appeals']), 'appeal')}"
                 + (f"; {words.plural(len(d['reviews']), 'review item')} with no case" if d["reviews"] else "")
                 + "</p><ul>")
        for rec in d["cases"]:
            c = rec.case
            p.append(f'<li><a href="#{log.key}-case-{c.number}">case #{c.number}</a> {_esc(_when(c.created_at))}: '
                     f"{_esc(c.action.label)} ({_esc(c.status.value)}), {_short_reason(c.reason)}"
                     f"{' [' + _esc(', '.join(rec.labels)) + ']' if rec.labels else ''}, by "
                     f"{_id(c.moderator_id)}</li>")
        for s in d["strikes"]:
            state = "pardoned" if s.pardoned else "active" if s.expires_at > now else "expired"
            p.append(f"<li>strike: {words.plural(s.points, 'point')} {_esc(_when(s.created_at))}, {state} "
                     f"(until {_esc(_day(s.expires_at))}){f' for case #{s.case_number}' if s.case_number else ''}"
                     "</li>")
        for a in d["appeals"]:
            p.append(f"<li>appeal #{a.id} of case #{a.case_number}: {_esc(a.status)}</li>")
        for r in d["reviews"]:
            p.append(f"<li>review #{r.id} ({_esc(r.source)}, {_esc(r.decision.value)}) "
                     f"{_esc(_when(log.review_times.get(r.id)))}: "
                     f"{_short_reason(r.reason, verbatim=r.source in words.MEMBERS_WORDS)}</li>")
        p.append("</ul></div>")
    return p


def _raids(log: ServerLog) -> list[str]:
    p = [f'<h3 id="{log.key}-raids">Raids ({len(log.raids)})</h3>']
    if not log.raids:
        return [*p, "<p>No raid recorded.</p>"]
    for raid_id, r, raiders in log.raids:
        p.append(f'<div class="incident raid" id="{log.key}-raid-{raid_id}"><h4>Raid #{raid_id} in channel '
                 f"{_id(r.channel_id)}, {_esc(_when(r.started_at))} UTC</h4><p>{_esc(r.reason)}; "
                 f"{words.plural(r.count, 'message')} from {words.plural(len(r.members), 'member')} in the burst "
                 f"window; {words.plural(len(raiders), 'member')} took part (in the burst window or with a flagged "
                 "message in the raid), their ids to copy:</p>"
                 f'<pre class="ids" id="{log.key}-raid-{raid_id}-ids">{_esc(" ".join(raiders))}</pre></div>')
    return p


def _appeals(log: ServerLog) -> list[str]:
    p = [f'<h3 id="{log.key}-appeals">Appeals ({len(log.appeals)})</h3>']
    if not log.appeals:
        return [*p, "<p>No appeals.</p>"]
    p.append('<div class="scroll"><table class="msgs"><thead><tr><th>appeal</th><th>filed</th><th>member</th>'
             "<th>case</th><th>status</th><th>decided by</th></tr></thead><tbody>")
    for a in log.appeals:
        p.append("<tr>" + _td("", "appeal", f"Appeal #{a.id}") + _td("when", "filed", _esc(_when(a.created_at)))
                 + _td("", "member", _id(a.member_id))
                 + _td("", "case", f'<a href="#{log.key}-case-{a.case_number}">#{a.case_number}</a>')
                 + _td("", "status", _esc(a.status)) + _td("", "decided by", _id(a.moderator_id) if a.moderator_id
                                                             else "-") + "</tr>")
    p.append("</tbody></table></div>")
    return p


def _stats(log: ServerLog) -> list[str]:
    p = [f'<h3 id="{log.key}-stats">Statistics</h3>']
    times = [v.judged_at for v in log.verdicts]
    flagged = [v.judged_at for v in log.verdicts if v.flagged]
    p.append(f"<p>{words.plural(len(times), 'message')} judged, {words.plural(len(flagged), 'flagged')}; "
             f"{words.plural(len(log.cases), 'case')}, {words.plural(len(log.reviews), 'review item')}, "
             f"{words.plural(len(log.appeals), 'appeal')}.</p>")
    p.append('<h4>Messages and flags over time</h4><div class="scroll">' + _timeline_svg(times, flagged) + "</div>")
    if log.cases:
        p.append('<h4>Cases per action</h4><div class="scroll">'
                 + _bar_svg(Counter(r.case.action.label for r in log.cases)).replace("flags per label",
                                                                                   "cases per action") + "</div>")
    return p


#: Which numbers the page shows: the ones the platforms show (a review card's title, a case reason's "review #12",
#: the reporter's "Your report (review #12)"), so a moderator can match the page to the review channel. The store
#: numbers review items, appeals and raids across the whole mod log and cases per server.
NUMBERING = ("Review items, appeals and raids keep the number their card shows in the server (Review #12), counted "
             "across every server of this mod log, so one server's numbers skip; cases are numbered per server.")


def render_modlog(logs: Sequence[ServerLog], *, title: str = "Mod log", now: datetime | None = None) -> str:
    """The whole page (``str``); one section per server, in ``logs`` order."""
    now = now or datetime.now(UTC)
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{_SCRIPT_HASH}'"
    p = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         '<meta name="viewport" content="width=device-width, initial-scale=1">',
         f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
         f"<title>{_esc(title)}</title><style>{_CSS}{_LIVE_CSS}</style></head><body>",
         f"<h1>{_esc(title)}</h1>",
         f"<p>Generated {_esc(now.strftime('%Y-%m-%d %H:%M:%S'))} UTC from the mod log. All times are UTC. "
         "Members and moderators are shown by id.</p>", f"<p>{NUMBERING}</p>"]
    if not logs:
        p.append("<p>The mod log is empty: no server has a verdict, a case or a review item yet.</p>")
    for log in logs:
        k = log.key
        p.append(f'<section class="server" id="{k}"><h2>{_esc(log.platform.capitalize())} server '
                 f"{_id(log.server_id)}</h2>"
                 f'<nav class="toc"><a href="#{k}-queue">review queue</a><a href="#{k}-cases">cases</a>'
                 f'<a href="#{k}-members">members</a><a href="#{k}-raids">raids</a><a href="#{k}-appeals">appeals</a>'
                 f'<a href="#{k}-stats">statistics</a></nav>')
        p += _open_reviews(log) + _cases(log) + _members(log, now) + _raids(log) + _appeals(log) + _stats(log)
        p.append("</section>")
    p.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(p)


async def write_modlog_report(store: Any, out: Path, *, servers: Sequence[tuple[str, str]] | None = None,
                              now: datetime | None = None) -> int:
    """Read the mod log from ``store`` and write the page to ``out`` (UTF-8; whole or not at all, the previous page
    kept on a failure: :func:`bot.report.page.write_page`). Returns the number of servers.

    Raises:
        OSError: ``out`` cannot be written.
    """
    logs = await read_modlog(store, servers)
    write_page(Path(out), render_modlog(logs, now=now))  # whole or not at all: a timer rewrites it while read
    return len(logs)
