"""Tests of the HTML scan report: content, escaping, names, wording, tiers, incidents, links and the inline charts."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from bot.core.models import RaidAlert
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.records import MemberPoints, ScanSummary
from bot.jobs.scan import _print_summary
from bot.report import (
    MAX_TEXT,
    action_words,
    build_report_data,
    choose_bin,
    discord_link,
    explain,
    policy_provenance,
    render_html,
    row_from_json,
    write_html_report,
    zoom_window,
)
from tests.policy_defaults import IA_ACT, IA_REVIEW
from tests.report_scan import snowflake, synthetic_scan


def _row(i: int, text: str, flagged: bool = True, labels=("identity_attack",), points: int = 0) -> dict:
    return {
        "id": f"m{i}",
        "channel": "general",
        "author": f"user{i % 2}",
        "text": text,
        "time": datetime(2026, 6, 1, 18, 2, i, tzinfo=UTC).isoformat(),
        "scores": {"toxicity": 0.91, "identity_attack": 0.88, "threat": None},
        "rule_hits": [{"rule": "blocklist", "detail": "slur", "label": "identity_attack"}],
        "flagged": flagged,
        "labels": list(labels) if flagged else [],
        "action": "timeout" if flagged else "none",
        "strike_points": points,
    }


ROWS = [
    _row(1, "<script>alert('x')</script> & friends", points=3),
    _row(2, "ordinary", flagged=False),
    _row(3, "y" * (MAX_TEXT + 50), labels=("identity_attack", "threat"), points=2),
]
SUMMARY = {
    "title": "Scan of <b>general</b>",
    "raids": [
        RaidAlert("g", "general", datetime(2026, 6, 1, 18, 2, 14, tzinfo=UTC), ("r1", "r2"), 10, "new_member_burst")
    ],
    "inputs": "examples/discord/celebration.json",
}


@pytest.fixture
def page(tmp_path: Path) -> str:
    """The rendered report for ROWS/SUMMARY."""
    out = tmp_path / "sub" / "report.html"
    write_html_report(out, SUMMARY, ROWS)
    return out.read_text(encoding="utf-8")


def test_report_escapes_script(page):
    """Message text with <script> is escaped, never live markup: the page's one script is its own button."""
    assert page.count("<script>") == 1 and "alert(" not in page.split("<script>")[1]
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; friends" in page
    assert "Scan of &lt;b&gt;general&lt;/b&gt;" in page


def test_report_has_svg_and_details(page):
    """Charts are inline SVG, every flagged text sits inside a <details> element and nothing loads from outside."""
    assert page.count("<svg") == 2
    assert page.count('<details class="text">') == 2
    assert "http://" not in page and "https://" not in page
    assert " src=" not in page and "<link" not in page and "default-src 'none'" in page


@pytest.mark.parametrize(
    "needle",
    [
        "2 flagged",
        "3 messages scanned",
        "<span>1 raids</span>",
        "would time out",
        "new_member_burst",
        '<pre class="ids" id="raid-1-ids">r1 r2</pre>',
        "blocklist: slur",
        '<span class="hi">identity_attack 0.88</span>',
        "threat: not read by this model",
        "y" * MAX_TEXT + "…",
    ],
)
def test_report_contents(page, needle):
    """Summary counts, raid, rule hits, scores (missing shown as such) and truncated text appear."""
    assert needle in page


def test_build_report_data_counts():
    """Counts per label, actions, strikes and row order are computed from the rows."""
    data = build_report_data({}, ROWS)
    assert (data.messages, data.flagged, data.actions_count) == (3, 2, 2)
    assert data.label_counts == {"identity_attack": 2, "threat": 1}
    assert data.top_members == [("", "", "user1", 5)]  # these rows name no platform or server
    assert [r.id for r in data.rows] == ["m1", "m3"]
    assert data.rows[0].time == datetime(2026, 6, 1, 18, 2, 1, tzinfo=UTC)


def test_report_without_flags(tmp_path):
    """An empty scan still renders a valid page saying there is nothing to show."""
    out = tmp_path / "r.html"
    write_html_report(out, {}, [])
    page = out.read_text(encoding="utf-8")
    assert "No raid detected and no thread has a flagged reply." in page and "No message has a timestamp." in page


# ---------------------------------------------------------------------------------------------- synthetic scan


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    """``(summary, rows, page)`` of the synthetic two-server scan (real service, fake scorer, real SQLite)."""
    tmp = tmp_path_factory.mktemp("synthetic")
    summary, rows = asyncio.run(synthetic_scan(tmp))
    out = tmp / "report.html"
    write_html_report(out, summary, rows)
    return summary, rows, out.read_text(encoding="utf-8")


def _flagged_row(rows, author):
    return next(r for r in rows if r["author"] == author and r["flagged"])


def test_shadow_scan_says_would(scan):
    """A scan's verdicts are shadow, so actions read "would delete" / "would send to review", never bare verbs."""
    _, rows, page = scan
    assert all(r["shadow"] for r in rows)
    assert "Shadow scan: nothing was done to anyone." in page
    assert '<td class="act" data-label="action">would delete<br><small>would send to review</small></td>' in page
    assert "<td>would delete</td>" in page and "<td>delete</td>" not in page


def test_action_words():
    """Shadow wording adds "would", enforced wording is past tense, timeouts carry their length."""
    assert action_words("timeout", True, 3600) == "would time out (1 hour)"
    assert action_words("timeout", False, 600) == "timed out (10 minutes)"
    assert action_words("review") == "would send to review"
    assert action_words("ban", False) == "banned"


def test_names_with_ids_on_hover(scan):
    """Members, channels and servers show names with their ids in a title; raid members and strike rows too."""
    _, _, page = scan
    assert '<span title="member id 900000000000000003">raider3</span>' in page
    assert '<span title="channel id 880000000000000010">general</span>' in page
    assert '<span title="server id 880000000000000001">Harbor &lt;Lights&gt;</span>' in page
    assert "".join(f'<li><bdi>raider{i}</bdi> <code class="id">90000000000000000{i}</code></li>' for i in range(6)) in page
    assert ('<tr><td>Discord (export)</td><td><span title="server id 880000000000000001">Harbor &lt;Lights&gt;</span>'
            '</td><td>sam</td><td class="id">508792563302400003</td><td class="num">1</td></tr>') in page


def test_platform_and_server_columns_tell_copies_apart(scan):
    """The Discord export and the Slack workspace are separate rows of the server table with their own counts; the
    export reads as one ("Discord (export)"), never as the live guild its ids may share."""
    _, rows, page = scan
    assert {r["source"] for r in rows} == {"Discord", "Slack"}
    assert ('<tr><td>Discord (export)</td><td><span title="server id 880000000000000001">Harbor &lt;Lights&gt;</span></td>'
            '<td class="num">1</td><td class="num">24</td><td class="num">7</td>') in page
    assert ('<tr><td>Slack</td><td><span class="id">T0HARBOR01</span></td><td class="num">2</td>'
            '<td class="num">4</td><td class="num">1</td>') in page


def test_report_names_the_policy_of_each_server(scan):
    """Each server's row names the policy files in order and the version that judged its verdicts."""
    summary, rows, page = scan
    version = rows[0]["policy_version"]
    shown = "bot/config/default.toml (packaged default)"
    assert summary["policies"]["slack/T0HARBOR01"] == {"files": [shown], "version": version}
    assert page.count(f'<td class="path">{shown}</td><td>{version}</td>') == 2


async def test_policy_provenance_lists_a_server_file(tmp_path):
    """A server's own file in the servers folder is listed after the default, with the version it yields."""
    servers = tmp_path / "servers"
    servers.mkdir()
    own = servers / "slack-T1.toml"
    own.write_text("[thresholds]\ninsult = { review = 0.5 }\n", encoding="utf-8")
    reg = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=servers)
    prov = await policy_provenance(reg, [("slack", "T1"), ("slack", "T2")])
    default = "bot/config/default.toml (packaged default)"
    assert prov["slack/T1"]["files"] == [default, "…/servers/slack-T1.toml"]  # no host folders in a report
    assert prov["slack/T2"]["files"] == [default]
    assert prov["slack/T1"]["version"] != prov["slack/T2"]["version"]


def test_explanation_uses_the_tier_that_applied(scan):
    """Under raid mode the untargeted message is explained against raid mode's stricter tier (0.98 x 0.8 = 0.78),
    not the untargeted tier 0.98; a message before raid mode against the default policy's plain tiers."""
    _, rows, _ = scan
    late = row_from_json(_flagged_row(rows, "sam"))
    assert late.raid_mode and late.tiers["identity_attack"] == (0.784, None)
    lines = explain(late)
    assert lines[0] == "raid mode was on: its stricter tiers applied"
    assert "identity_attack 0.97 (review from 0.78)" in lines
    assert ("identity_target: no identity named, so identity_attack was held to the untargeted tier: review from "
            "0.78 (made stricter by raid mode)") in lines
    first = row_from_json(_flagged_row(rows, "raider0"))
    assert not first.raid_mode
    assert f"identity_attack 0.97 (review from {IA_REVIEW:.2f}, act from {IA_ACT:.2f})" in explain(first)


def test_incidents_group_the_raid_and_the_threads(scan):
    """The raid lists its six attacks and the untargeted message under raid mode; the Slack thread lists its flagged
    reply; the celebration post's thread points to the raid instead of repeating it."""
    summary, rows, page = scan
    data = build_report_data(summary, rows)
    assert [r.author for r in data.raids[0].rows] == [f"raider{i}" for i in range(6)] + ["sam"]
    slack, post = data.threads
    assert slack.root is not None and slack.root.author == "ana"
    assert [r.author for r in slack.replies] == ["troll"] and slack.unflagged == 1
    assert post.root is not None and post.root.author == "jules"
    assert (post.replies, post.in_raids, post.raids) == ((), 6, (1,))
    assert page.index('id="raid-1"') < page.index('id="thread-1"') < page.index("<h2>Flagged messages (8)</h2>")
    assert '6 flagged replies shown under <a href="#raid-1">Raid 1</a>' in page


def test_discord_links_only_for_real_ids(scan):
    """Discord rows link to discord.com when the ids are real snowflakes; made-up ids, CSV names and Slack don't."""
    _, rows, page = scan
    r = _flagged_row(rows, "raider0")
    assert r["link"] == f"https://discord.com/channels/880000000000000001/880000000000000010/{r['id']}"
    assert f'<a href="{r["link"]}" rel="noopener noreferrer" target="_blank">open</a>' in page
    assert _flagged_row(rows, "troll")["link"] is None
    t = datetime(2026, 6, 1, tzinfo=UTC)
    assert discord_link("880000000000000001", "880000000000000010", "1511059554828288016", t) is None
    assert discord_link("880000000000000001", "general", snowflake(t, 1), t) is None
    assert discord_link("1", "2", "3", None) is None


@pytest.mark.parametrize(
    ("span_s", "width", "name"),
    [(10, 60, "1 minute"), (2 * 3600, 300, "5 minutes"), (86400, 3600, "1 hour"), (30 * 86400, 86400, "1 day"),
     (3 * 365 * 86400, 30 * 86400, "30 days")],
)
def test_choose_bin(span_s, width, name):
    """The time plot's bin is the smallest named width giving at most 60 bins."""
    assert choose_bin(span_s) == (width, name)


def test_time_plot_has_volume_flags_and_real_times(scan):
    """The plot draws message volume and flags per 5 minutes with clock times and the date on its axis."""
    _, _, page = scan
    svg = page[page.index('<svg class="timeline"'):]
    svg = svg[: svg.index("</svg>")]
    assert "per 5 minutes, times in UTC" in svg and "bins of" not in svg
    assert '>17:00</text>' in svg and '>18:30</text>' in svg and ">2026-06-01</text>" in svg
    assert svg.count('class="vol"') >= 10 and svg.count('class="flag"') == 2
    assert "2026-06-01 18:35 to 2026-06-01 18:40 UTC: 8 messages, 7 flagged" in svg


def test_show_all_texts_script_is_allowed_by_its_hash(scan):
    """The page's only script is allowed by the hash in its Content-Security-Policy, nothing else is."""
    _, _, page = scan
    script = page.split("<script>")[1].split("</script>")[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    assert '<button id="toggle-texts" type="button" aria-pressed="false" hidden>Show all texts</button>' in page


def test_terminal_summary_names_members():
    """scan's terminal summary shows strike members by name with their id in a column, per server: one member in
    two workspaces is two rows with that server's points."""
    console = Console(record=True, width=120)
    summary = ScanSummary(messages=3, flagged=1, flagged_per_label={"insult": 1}, actions={"delete": 1},
                          cases_by_status={}, raids=0,
                          top_members=(MemberPoints("slack", "T1", "U0TROLL000", 2, 1),
                                       MemberPoints("slack", "T2", "U0TROLL000", 1, 1),
                                       MemberPoints("slack", "T1", "U9", 1, 1)))
    _print_summary(console, summary, 3, 3, 1.0, {"U0TROLL000": "troll"})
    text = console.export_text()
    assert re.search(r"slack/T1\s+│\s+troll\s+│\s+U0TROLL000\s+│\s+2\s+│\s+1", text)
    assert re.search(r"slack/T2\s+│\s+troll\s+│\s+U0TROLL000\s+│\s+1\s+│\s+1", text)
    assert re.search(r"slack/T1\s+│\s+U9\s+│\s+U9\s+│\s+1", text)


def test_report_strike_points_per_server():
    """The report's members by strike points keeps each server's points apart: the same member id flagged in two
    servers is two rows (server named), from the rows as from a scan summary's ``top_members``."""
    rows = [{**_row(1, "a", points=3), "server_id": "g1", "server_name": "Guild One"},
            {**_row(3, "b", points=2), "server_id": "g2", "server_name": "Guild Two"},
            {**_row(5, "c", points=2), "server_id": "g2", "server_name": "Guild Two"}]
    data = build_report_data({}, rows)
    assert data.top_members == [("", "g2", "user1", 4), ("", "g1", "user1", 3)]  # these rows name no platform
    given = build_report_data({"top_members": [("g1", "user1", 3), ("g2", "user1", 4)]}, rows)
    assert given.top_members == [("", "g2", "user1", 4), ("", "g1", "user1", 3)]
    page = render_html(data)
    members = page.split("<h2>Members by strike points</h2>")[1].split("</table>")[0]
    assert "<th>server</th>" in members
    assert re.search(r"Guild Two</span></td><td>user1</td><td class=\"id\">user1</td><td class=\"num\">4<", members)
    assert re.search(r"Guild One</span></td><td>user1</td><td class=\"id\">user1</td><td class=\"num\">3<", members)


def test_close_up_of_the_most_flagged_hour():
    """A scan spanning a day gets a close-up plot of two hours around the hour with the most flags; a short one not."""
    day = [datetime(2026, 5, 31, 20, 15, tzinfo=UTC)] + [datetime(2026, 6, 1, 18, 2, s, tzinfo=UTC) for s in range(9)]
    flags = day[3:6] + [datetime(2026, 6, 1, 9, 0, tzinfo=UTC)]
    assert zoom_window(day, flags) == (datetime(2026, 6, 1, 17, 30, tzinfo=UTC), datetime(2026, 6, 1, 19, 30, tzinfo=UTC))
    assert zoom_window(day[1:], day[3:6]) is None and zoom_window(day, []) is None
    rows = [{"id": f"m{i}", "time": t.isoformat(), "flagged": 3 <= i < 6, "labels": ["insult"], "action": "review"}
            for i, t in enumerate(day)]
    page = render_html(build_report_data({}, rows))
    assert "<h3>Close-up: 2026-06-01 17:30 to 19:30 UTC, around the hour with the most flags</h3>" in page
    assert page.count('<svg class="timeline"') == 2 and "per 1 minute, times in UTC" in page


def _on(platform: str, server_name: str, row: dict, channel_name: str) -> dict:
    return {**row, "platform": platform, "server_id": "g1", "server_name": server_name, "channel_id": "c1",
            "channel": channel_name, "author_id": row["author"]}


def test_report_keeps_two_platforms_servers_of_one_id_apart():
    """A Discord guild and an export (a Slack or DiscordChatExporter server) recorded under the same server id are
    two servers in every per-server table, each with its platform and its own name (the id in the title): the
    servers table (its own counts), the members by strike points (each server's points, never summed), a raid
    (only its own platform's messages) and each flagged message's "where"."""
    rows = [_on("discord", "Live Guild", _row(1, "live insult", points=3), "general"),
            _on("export", "Guild Export", _row(3, "exported insult", points=2), "old-general")]
    raid = {"platform": "discord", "server_id": "g1", "channel_id": "c1", "started_at": rows[0]["time"],
            "members": ["user1"], "count": 5, "reason": "flagged_burst"}
    for summary in ({"raids": [raid]},
                    {"raids": [raid], "top_members": [("discord", "g1", "user1", 3), ("export", "g1", "user1", 2)]}):
        data = build_report_data(summary, rows)
        assert data.top_members == [("discord", "g1", "user1", 3), ("export", "g1", "user1", 2)]
        page = render_html(data)
        servers = page.split("<h2>Servers and the policy that judged them</h2>")[1].split("</table>")[0]
        live = '<span title="server id g1">Live Guild</span>'
        export = '<span title="server id g1">Guild Export</span>'
        assert re.search(rf'<td>Discord</td><td>{live}</td><td class="num">1</td><td class="num">1</td>', servers)
        assert re.search(rf'<td>export</td><td>{export}</td><td class="num">1</td><td class="num">1</td>', servers)
        members = page.split("<h2>Members by strike points</h2>")[1].split("</table>")[0]
        assert "<th>platform</th><th>server</th>" in members
        assert re.search(rf"<td>Discord</td><td>{live}</td><td>user1</td><td class=\"id\">user1</td>"
                         r"<td class=\"num\">3<", members)
        assert re.search(rf"<td>export</td><td>{export}</td><td>user1</td><td class=\"id\">user1</td>"
                         r"<td class=\"num\">2<", members)
        incident = page.split('<div class="incident raid" id="raid-1">')[1].split("</div>")[0]
        assert f"in {live} (Discord)</h3>" in incident
        assert "live insult" in incident and "exported insult" not in incident
        assert '<span title="channel id c1">general</span>' in incident
        flagged = page.split("<h2>Flagged messages (2)</h2>")[1]
        live_row, export_row = flagged.split('<tr id="m-m1">')[1], flagged.split('<tr id="m-m3">')[1]
        assert f"{live} · Discord" in live_row.split("</tr>")[0]
        assert f"{export} · export" in export_row.split("</tr>")[0]
        assert '<span title="channel id c1">old-general</span>' in export_row.split("</tr>")[0]


def test_report_threads_keep_two_platforms_messages_of_one_id_apart():
    """An export's flagged reply to message ``m1`` hangs off the export's ``m1``, never the live guild's message
    of that id under the same server id: its thread names the export's root."""
    export_root = {**_on("export", "Guild Export", _row(3, "exported root", flagged=False), "general"), "id": "m1"}
    live_root = {**_on("discord", "Live Guild", _row(4, "live root", flagged=False), "general"), "id": "m1"}
    reply = {**_on("export", "Guild Export", _row(5, "exported reply"), "general"), "reply_to": "m1"}
    data = build_report_data({}, [live_root, export_root, reply])
    (thread,) = data.threads
    assert thread.root is not None and (thread.root.platform, thread.root.text) == ("export", "exported root")
    assert [r.id for r in thread.replies] == ["m5"]
