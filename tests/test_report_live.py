"""The live mod log (``python -m bot report``): read from a real SQLite mod log, rendered, and used in a real
headless Chromium at desktop and phone widths (filters, member sections, raids, no overflow)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.models import ActionKind, CaseStatus
from bot.store.sqlite import SqliteStore
from tests.report_scan import GUILD, synthetic_scan
from tests.test_report_browser import _chromium, _overflowing_cells

NOW = datetime.now(UTC)
MOD = "111111111111111111"
ALICE = "222222222222222222"
BOB = "333333333333333333"


async def _build(tmp: Path) -> Path:
    """The synthetic scan's mod log (verdicts, automod cases, a raid) plus manual cases, a strike and an appeal."""
    await synthetic_scan(tmp)
    db = tmp / "mod.db"
    async with await SqliteStore.open(db) as store:
        p, s = GUILD.platform, GUILD.id
        warn = await store.open_case(p, s, ALICE, ActionKind.WARN, "account age 6734s < 604800s", moderator_id=MOD,
                                     status=CaseStatus.APPLIED, now=NOW - timedelta(days=3))
        await store.open_case(p, s, BOB, ActionKind.TIMEOUT, "spam", moderator_id=MOD, status=CaseStatus.APPLIED,
                              expires_at=NOW - timedelta(days=1) + timedelta(hours=1), now=NOW - timedelta(days=1))
        await store.add_strike(p, s, ALICE, 2, NOW + timedelta(days=20), reason="warned")
        await store.open_appeal(p, s, warn.number, ALICE, "I did not do it", now=NOW - timedelta(days=2))
    return db


@pytest.fixture(scope="module")
def modlog(tmp_path_factory) -> tuple[Path, str]:
    """``(db, page)``: the mod log and its page written by the CLI."""
    tmp = tmp_path_factory.mktemp("live")
    db = asyncio.run(_build(tmp))
    out = tmp / "mod-log.html"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    return db, out


def test_report_reads_every_server_case_member_raid_and_appeal(modlog):
    """The page has a section per server, every case with its labels, member sections, the raid, the appeal."""
    db, out = modlog
    page = out.read_text(encoding="utf-8")
    import sqlite3

    with sqlite3.connect(db) as con:
        cases = con.execute("SELECT COUNT(*) FROM cases WHERE server_id = ?", (GUILD.id,)).fetchone()[0]
        servers = con.execute("SELECT COUNT(DISTINCT platform || server_id) FROM verdicts").fetchone()[0]
    assert page.count('<section class="server"') == servers == 2
    key = f"{GUILD.platform}-{GUILD.id}"
    assert page.count(f'id="{key}-case-') == cases and cases >= 3
    assert f'id="{key}-member-{ALICE}"' in page and "appeal #1 of case #" in page
    assert "account age 1 hour 52 minutes, under 7 days" in page  # plain words
    raiders = " ".join([f"90000000000000000{i}" for i in range(6)] + ["508792563302400003"])
    assert f'<pre class="ids" id="{key}-raid-1-ids">{raiders}</pre>' in page  # all 7, not the 5 of the window
    assert "active: 1 strike worth 2 points" in page
    assert 'data-labels="identity_attack' in page or 'data-labels="toxicity' in page
    assert "https://" not in page and " src=" not in page and "default-src 'none'" in page


def test_report_of_a_missing_database_is_a_one_line_error(tmp_path, capsys):
    """report on a database that does not exist exits 2 with one line and creates nothing."""
    missing = tmp_path / "nope.db"
    assert main(["report", "--db", str(missing), "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {missing}: no such database; nothing to report"]
    assert not missing.exists() and not (tmp_path / "x.html").exists()


@pytest.fixture(scope="module")
def browser(modlog):
    path = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


def _shown(page, key: str) -> int:
    return page.locator(f'table.cases[data-server="{key}"] tbody tr:not([hidden])').count()


@pytest.mark.browser
def test_case_filters_by_member_moderator_action_label_and_date(browser, modlog):
    """In Chromium the case table filters by member, moderator, action, label, date and free text; a filter that
    matches nothing shows no row; clearing it shows every case again."""
    _, out = modlog
    key = f"{GUILD.platform}-{GUILD.id}"
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(out.as_uri())
    total = _shown(page, key)
    assert total >= 3 and page.locator(f"#shown-{key}").inner_text() == str(total)

    def field(name: str):
        return page.locator(f'[data-filter="{name}"][data-for="{key}"]')

    field("member").fill(ALICE)
    assert _shown(page, key) == 1 and page.locator(f"#shown-{key}").inner_text() == "1"
    field("member").fill("")
    field("moderator").fill(MOD)
    assert _shown(page, key) == 2
    field("action").select_option("timeout")
    assert _shown(page, key) == 1
    field("moderator").fill("")
    field("action").select_option("")
    field("labels").select_option("identity_attack")
    labelled = _shown(page, key)
    assert 0 < labelled < total
    field("labels").select_option("")
    field("from").fill((NOW - timedelta(days=1, hours=1)).strftime("%Y-%m-%d"))
    assert _shown(page, key) >= 1
    field("from").fill("")
    field("text").fill("no such words anywhere")
    assert _shown(page, key) == 0
    field("text").fill("")
    assert _shown(page, key) == total
    page.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1400, 400])
def test_mod_log_is_readable_at_desktop_and_phone_widths(browser, modlog, width):
    """At 1,400 and 400 px the page is no wider than the screen and no table header or action cell starts or
    ends off-screen (on a phone each case is a card)."""
    _, out = modlog
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(out.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert _overflowing_cells(page, width) == []
    first = page.locator("table.cases tbody tr").first.locator("td.act")
    box = first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    page.close()


async def _two_servers(tmp: Path) -> Path:
    """One mod log with two Discord servers whose review items (and appeals) were queued in turn: server A holds
    reviews 1 and 3, server B reviews 2 and 4 (the ids their cards show)."""
    db = tmp / "two.db"
    async with await SqliteStore.open(db) as store:
        for n in range(4):
            server = "100000000000000001" if n % 2 == 0 else "100000000000000002"
            await store.open_review("discord", server, ALICE, "report", f"report {n + 1}", now=NOW)
        case = await store.open_case("discord", "100000000000000002", ALICE, ActionKind.WARN, "rude",
                                     moderator_id=MOD, status=CaseStatus.APPLIED, now=NOW)
        await store.open_appeal("discord", "100000000000000002", case.number, ALICE, "please", now=NOW)
    return db


def test_report_numbers_review_items_as_their_cards_and_says_so(tmp_path):
    """With two servers in one mod log, each server's review items carry the number their card and the case
    reasons show (Review #2, #4 in server B: the mod log counts them across servers), and the page says which
    numbering each kind of item uses, so a moderator of one server is not left wondering where #1 and #3 went."""
    # in a thread of its own: the browser tests of this module leave an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, _two_servers(tmp_path)).result()
        out = tmp_path / "two.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    page = out.read_text(encoding="utf-8")
    a, b = page.split('<section class="server" id="discord-100000000000000002">')
    assert ">Review #1<" in a and ">Review #3<" in a and ">Review #2<" not in a
    assert ">Review #2<" in b and ">Review #4<" in b and ">Review #1<" not in b
    note = ("Review items, appeals and raids keep the number their card shows in the server (Review #12), counted "
            "across every server of this mod log, so one server's numbers skip; cases are numbered per server.")
    assert page.count(note) == 1
    assert ">Appeal #1<" in b and "case #1" in b


def test_report_of_one_server_holds_nothing_of_another(tmp_path, capsys):
    """A bot in two servers keeps one mod log; each server's moderators get a page of their own server only:
    ``report --server discord:<id>`` (or the bare id) writes that server's section, and not a word, review item,
    case or appeal of the other (there was no way to leave a server out: the only page held every server's cases,
    members and reasons, to be shared in one server's mod channel). A server the mod log does not hold is refused
    (exit 2, no page) rather than written as an empty page."""
    a, b = "100000000000000001", "100000000000000002"
    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, _two_servers(tmp_path)).result()
        pages = {}
        for arg, name in ((f"discord:{a}", "a"), (b, "b")):
            out = tmp_path / f"{name}.html"
            assert pool.submit(main, ["report", "--db", str(db), "--out", str(out), "--server", arg]).result() == 0
            pages[name] = out.read_text(encoding="utf-8")
        capsys.readouterr()
        missing = tmp_path / "none.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(missing),
                                  "--server", "slack:T0001"]).result() == 2
    assert capsys.readouterr().err.strip() == f"error: {db}: no server slack:T0001 in this mod log"
    assert not missing.exists()
    assert pages["a"].count('<section class="server"') == 1 and f'id="discord-{a}"' in pages["a"]
    assert "report 1" in pages["a"] and "report 3" in pages["a"]
    assert b not in pages["a"] and "report 2" not in pages["a"] and "rude" not in pages["a"]
    assert pages["b"].count('<section class="server"') == 1 and ">Appeal #1<" in pages["b"] and "rude" in pages["b"]
    assert a not in pages["b"] and "report 1" not in pages["b"]


def test_a_server_or_member_id_with_markup_cannot_break_out_of_the_page(tmp_path):
    """Ids come from the platform or from an imported export, where they are any string: a server id and a member
    id holding quotes and tags become neither attributes nor elements (the server's anchors are made of safe
    characters and stay distinct; the ids are shown escaped)."""
    evil_server = '9"><img src=x onerror=alert(1)>'
    evil_member = "7' onmouseover='alert(2)"

    async def build() -> Path:
        db = tmp_path / "evil.db"
        async with await SqliteStore.open(db) as store:
            for server in (evil_server, '9"><img src=x onerror=alert(1)?'):
                await store.open_case("discord", server, evil_member, ActionKind.WARN, "<b>rude</b>",
                                      moderator_id=MOD, status=CaseStatus.APPLIED, now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "evil.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    page = out.read_text(encoding="utf-8")
    assert "<img" not in page and "<b>rude" not in page and "onmouseover='" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    import re

    keys = re.findall(r'<section class="server" id="([^"]*)"', page)
    assert len(keys) == 2 and len(set(keys)) == 2 and all(re.fullmatch(r"[A-Za-z0-9_.-]+", k) for k in keys)


def test_a_scans_would_be_reviews_are_not_the_open_review_queue(tmp_path):
    """A scan (shadow mode) records what would have gone to review: its items were listed as "Open review items
    (10)" on the report of a scan's mod log, as if moderators had a queue. They are shown apart, under "Would have
    gone to review, shadow mode"; a real open item stays in the queue."""

    async def build() -> Path:
        db = tmp_path / "shadow.db"
        async with await SqliteStore.open(db) as store:
            p, s = "discord", "100000000000000001"
            for member, status in ((ALICE, CaseStatus.SHADOW), (BOB, CaseStatus.APPLIED)):
                case = await store.open_case(p, s, member, ActionKind.REVIEW, "flagged", status=status, now=NOW)
                await store.open_review(p, s, member, "automod", "flagged", case_number=case.number, now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "shadow.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    page = out.read_text(encoding="utf-8")
    queue, would = page.split("Would have gone to review, shadow mode (1)")
    assert "Open review items (1)" in queue and f"member-{BOB}" in queue.split("Open review items (1)")[1]
    assert f"member-{ALICE}" in would.split("</table>")[0]


@pytest.mark.browser
def test_a_right_to_left_override_in_a_reason_does_not_reorder_the_rest_of_its_line(browser, tmp_path):
    """A reason holds members' words (a report's text copied by a moderator's decision, a regex rule's quote), and
    with them a right-to-left override (U+202E) with no end: in Chromium the words after the reason stay in their
    order, in the member's line (", by <moderator id>") and after the case table's cut reason ("(326
    characters)"). They were drawn reversed (the moderator's id before "by", ")sretcarahc 623("), so the line read
    as something else."""
    reason = "spam \u202e" + "i" * 320  # narrow letters: the member's line fits on one line

    async def build() -> Path:
        db = tmp_path / "bidi.db"
        async with await SqliteStore.open(db) as store:
            await store.open_case("discord", "100000000000000001", ALICE, ActionKind.WARN, reason, moderator_id=MOD,
                                  status=CaseStatus.APPLIED, now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "bidi.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(out.as_uri())
    before = """([root, a, b]) => {
        const el = document.querySelector(root);
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        const at = (word) => {
            for (let n = walker.currentNode.nodeType === 3 ? walker.currentNode : walker.nextNode(); n;
                 n = walker.nextNode()) {
                const i = n.data.indexOf(word);
                if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + word.length);
                              return r.getBoundingClientRect(); }
            }
            throw new Error(word);
        };
        const x = at(a), y = at(b);  // x is read before y: on an earlier line, or on its line left of it
        return x.bottom <= y.top || (x.top < y.bottom && x.left < y.left);
    }"""
    in_order = [page.evaluate(before, [".member li", ", by", MOD]),
                page.evaluate(before, ["table.cases summary", "(326", "characters)"])]
    assert in_order == [True, True]
    page.close()


def test_a_reporters_and_an_appellants_words_are_shown_as_they_wrote_them(tmp_path):
    """An open report's and an appeal's review item read the member's own words: the page shows them as written.
    They went through the rewording meant for automod's reasons ("30s" -> "30 seconds", " < " -> ", under "), so
    "he said 5 < 6 then spammed for 30s" read "he said 5, under 6 then spammed for 30 seconds" in the record; an
    automod item's reason is still put in words."""
    said = "he said 5 < 6 then spammed for 30s"

    async def build() -> Path:
        db = tmp_path / "words.db"
        async with await SqliteStore.open(db) as store:
            p, s = "discord", "100000000000000001"
            await store.open_review(p, s, ALICE, "report", said, now=NOW)
            case = await store.open_case(p, s, BOB, ActionKind.WARN, "rude", moderator_id=MOD,
                                         status=CaseStatus.APPLIED, now=NOW)
            await store.open_appeal(p, s, case.number, BOB, f"I did not: {said}", now=NOW)
            await store.open_review(p, s, BOB, "automod", "account age 6734s < 604800s", now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "words.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    queue = out.read_text(encoding="utf-8").split("Open review items (3)")[1].split("</table>")[0]
    assert f"<bdi>{said.replace('<', '&lt;')}</bdi>" in queue
    assert f"<bdi>I did not: {said.replace('<', '&lt;')}</bdi>" in queue
    assert "30 seconds" not in queue and "account age 1 hour 52 minutes, under 7 days" in queue


def test_a_page_that_cannot_be_written_whole_leaves_the_previous_page(tmp_path):
    """A timer rewrites the page every few minutes; a rewrite that fails half-way (a full disk; here the
    process's file-size limit, which fails the write as a full disk does) exits 2 and leaves the previous page
    whole, and no half-written file beside it. The page was written in place: the failure left it cut off
    mid-table (and a moderator opening it during any rewrite read a partial page)."""
    import os
    import resource
    import signal
    import subprocess
    import sys

    async def build() -> Path:
        db = tmp_path / "big.db"
        async with await SqliteStore.open(db) as store:
            for n in range(300):
                await store.open_case("discord", "100000000000000001", f"{n:018d}", ActionKind.WARN,
                                      f"case {n}: " + "words of the reason " * 45, moderator_id=MOD,
                                      status=CaseStatus.APPLIED, now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "mod-log.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    before = out.read_bytes()
    assert len(before) > 300_000 and before.rstrip().endswith(b"</html>")

    def limit_file_size() -> None:  # in the child: a write past 100 kB fails with EFBIG instead of a signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    run = subprocess.run([sys.executable, "-m", "bot", "report", "--db", str(db), "--out", str(out)],
                         preexec_fn=limit_file_size, capture_output=True, text=True, check=False,
                         cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"error: {out}: cannot be written")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "mod-log" in p.name) == ["mod-log.html"]


def test_a_reported_member_without_a_case_has_a_section_the_queue_links_to(tmp_path):
    """A member reported by another (an open report item, no case yet) is linked from the review queue to their
    member section: the section exists, with the report item in it. The member list held only members with a
    case, a strike or an appeal, so the queue's link to a reported member led nowhere."""
    async def build() -> Path:
        db = tmp_path / "reported.db"
        async with await SqliteStore.open(db) as store:
            await store.open_review("discord", "100000000000000001", BOB, "report", "keeps following me", now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "reported.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    page = out.read_text(encoding="utf-8")
    key = "discord-100000000000000001"
    assert f'href="#{key}-member-{BOB}"' in page.split("Open review items (1)")[1].split("</table>")[0]
    section = page.split(f'<div class="member" id="{key}-member-{BOB}">')[1].split("</div>")[0]
    assert "1 review item" in section and "review #1 (report, open)" in section and "keeps following me" in section


@pytest.mark.browser
def test_the_search_finds_words_hidden_by_invisible_or_wide_characters(browser, tmp_path):
    """A reason quoting a member's words keeps them as written: "bad\u200bword" (a zero-width space inside) and
    "ｓｃａｍ" (fullwidth letters), as evaders write them. In Chromium the case search finds them by "badword" and
    "scam" (and a query typed with a soft hyphen finds the plain word); it found nothing, so a moderator searching
    the word saw no case."""
    async def build() -> Path:
        db = tmp_path / "hidden.db"
        async with await SqliteStore.open(db) as store:
            for n, reason in enumerate(("regex: words: bad\u200bword", "regex: words: ｓｃａｍ link", "plain spam")):
                await store.open_case("discord", "100000000000000001", f"{n:018d}", ActionKind.WARN, reason,
                                      moderator_id=MOD, status=CaseStatus.APPLIED, now=NOW)
        return db

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, build()).result()
        out = tmp_path / "hidden.html"
        assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(out.as_uri())
    key = "discord-100000000000000001"
    search = page.locator(f'[data-filter="text"][data-for="{key}"]')
    found = {}
    for query in ("badword", "scam", "sp\u00adam", "nothing like it"):
        search.fill(query)
        found[query] = _shown(page, key)
    assert found == {"badword": 1, "scam": 1, "sp\u00adam": 1, "nothing like it": 0}
    page.close()


def test_a_new_page_is_owner_only_and_a_rewrite_keeps_the_mode_the_admin_gave(tmp_path):
    """The page holds members' ids and words (report and appeal texts, quotes in reasons), as a backup holds their
    text: a new page is created owner-only (0600) whatever the umask, as ``backup`` creates its copy; an admin who
    opened it to the moderators' group (chmod 640) keeps that mode when the timer rewrites it. It was created
    world-readable (0644 under the usual umask 022)."""
    import os

    with ThreadPoolExecutor(1) as pool:
        db = pool.submit(asyncio.run, _two_servers(tmp_path)).result()
        out = tmp_path / "page.html"
        old = os.umask(0o022)
        try:
            assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
            assert out.stat().st_mode & 0o777 == 0o600
            out.chmod(0o640)
            assert pool.submit(main, ["report", "--db", str(db), "--out", str(out)]).result() == 0
            assert out.stat().st_mode & 0o777 == 0o640
        finally:
            os.umask(old)

