"""The scan report in a real headless Chromium (Playwright): numbers, opening texts, and a phone-width layout.

Chromium comes from the system (Debian's ``chromium`` package; ``scripts/setup.sh`` installs it when apt-get is
available), or from ``MODBOT_CHROMIUM``. Without it the test fails when ``CI`` is set and is skipped otherwise.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from bot.report import write_html_report
from tests.report_scan import synthetic_scan

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def _chromium() -> str:
    """Path of the Chromium binary, or fail (under CI) / skip (locally) with the reason."""
    candidates = [os.environ.get("MODBOT_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                  "/usr/bin/chromium"]
    found = next((c for c in candidates if c and Path(c).is_file() and os.access(c, os.X_OK)), None)
    problem = None
    if found is None:
        problem = ("no Chromium found (looked at $MODBOT_CHROMIUM, chromium, chromium-browser, /usr/bin/chromium); "
                   "install it with `apt-get install chromium` (scripts/setup.sh does when apt-get is available)")
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "playwright is not installed: pip install -e '.[dev]'"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run: {problem}")
        pytest.skip(problem)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict, list[dict]]:
    """The synthetic scan's report file, its summary and rows."""
    tmp = tmp_path_factory.mktemp("browser")
    summary, rows = asyncio.run(synthetic_scan(tmp))
    out = tmp / "report.html"
    write_html_report(out, summary, rows)
    return out, summary, rows


@pytest.fixture(scope="module")
def browser(report):
    """A headless Chromium driven by Playwright (started after the report: Playwright runs its own event loop)."""
    path = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


def test_numbers_on_the_page_match_the_scan(browser, report):
    """The summary cards read in the browser match the scan: 28 messages, 8 flagged, 7 acted on, 1 raid."""
    path, summary, rows = report
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.as_uri())
    cards = page.locator("#summary span").all_inner_texts()
    leading = [re.match(r"\d+", c) for c in cards]
    assert all(leading), cards
    numbers = [int(m.group()) for m in leading if m]
    assert numbers == [len(rows), sum(r["flagged"] for r in rows), 7, 1] == [28, 8, 7, 1]
    assert summary["messages"] == 28 and summary["flagged"] == 8
    assert page.locator("#raid-1 tr").count() == 1 + 7
    assert page.locator("h2", has_text="Flagged messages (8)").is_visible()
    page.close()


def test_a_text_opens_with_one_click_and_show_all_opens_every_text(browser, report):
    """A message text is hidden until its summary is clicked; "Show all texts" then opens every text on the page."""
    path, _, _ = report
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.as_uri())
    row = page.locator("#raid-1 tr", has_text="raider2")
    text = row.locator(".msg")
    assert not text.is_visible() and text.inner_text() == ""
    row.locator("summary").click()
    assert text.is_visible() and text.inner_text() == "trans freak, get out of here #2"
    button = page.locator("#toggle-texts")
    assert button.is_visible() and button.inner_text() == "Show all texts"
    button.click()
    texts = page.locator("details.text")
    assert texts.count() >= 8
    assert all(texts.nth(i).evaluate("d => d.open") for i in range(texts.count()))
    assert page.locator("#thread-1 .msg").first.is_visible()
    assert button.inner_text() == "Hide all texts"
    button.click()
    assert not text.is_visible()
    page.close()


DESKTOP = {"width": 1400, "height": 900}
NARROW = {"width": 400, "height": 844}


def _overflowing_cells(page, width: int) -> list[str]:
    """Header cells of message tables, and action cells, that end past ``width`` px or start left of 0."""
    return page.evaluate(
        """w => [...document.querySelectorAll('table.msgs th, table.msgs td.act')]
             .filter(e => e.offsetParent !== null)
             .map(e => [e.textContent.trim().slice(0, 30), e.getBoundingClientRect()])
             .filter(([_, r]) => r.left < 0 || r.right > w + 0.5)
             .map(([t, r]) => `${t} ${Math.round(r.left)}-${Math.round(r.right)}`)""", width)


@pytest.mark.parametrize("viewport", [PHONE, NARROW], ids=["390px", "400px"])
def test_phone_width_has_no_horizontal_overflow(browser, report, tmp_path, viewport):
    """At phone widths the page is not wider than the screen and every message row is a card whose action is on
    screen (no column starts off-screen); a screenshot is taken."""
    path, _, _ = report
    page = browser.new_page(viewport=viewport)
    page.goto(path.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert page.evaluate("document.body.scrollWidth") <= viewport["width"]
    assert _overflowing_cells(page, viewport["width"]) == []
    actions = page.locator("#raid-1 td.act")
    assert actions.count() == 7 and actions.first.is_visible()
    box = actions.first.bounding_box()
    assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= viewport["width"]
    shot = tmp_path / "phone.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    page.close()


def test_desktop_width_shows_every_column(browser, report):
    """At 1,400 px the flagged-messages table fits its box (no sideways scrolling) and its last column, the
    scores, is on screen."""
    path, _, _ = report
    page = browser.new_page(viewport=DESKTOP)
    page.goto(path.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]
    assert _overflowing_cells(page, DESKTOP["width"]) == []
    fits = page.evaluate("""[...document.querySelectorAll('table.msgs')].map(t =>
        t.scrollWidth <= t.parentElement.clientWidth + 1)""")
    assert fits and all(fits)
    scores = page.locator("table.msgs th", has_text="scores").last
    box = scores.bounding_box()
    assert box is not None and box["x"] + box["width"] <= DESKTOP["width"]
    page.close()


def test_raid_lists_every_raider_with_copyable_ids(browser, report):
    """The raid names all seven members who posted flagged messages in it (five were in the burst window), and
    their ids can be copied as one block of text."""
    path, _, rows = report
    page = browser.new_page(viewport=DESKTOP)
    page.goto(path.as_uri())
    expected = [f"90000000000000000{i}" for i in range(6)] + ["508792563302400003"]
    assert page.locator("#raid-1 ul.raiders li").count() == 7
    assert page.locator("#raid-1-ids").inner_text().split() == expected
    assert page.locator("#raid-1 ul.raiders code").all_inner_texts() == expected
    authors = {r["author_id"] for r in rows if r["flagged"] and r["author"].startswith(("raider", "sam"))}
    assert authors == set(expected)
    page.close()


def test_no_absolute_host_path_on_the_page(browser, report):
    """The page shows policy files without the host's folders (the packaged default by its package path)."""
    path, _, _ = report
    page = browser.new_page(viewport=DESKTOP)
    page.goto(path.as_uri())
    text = page.locator("body").inner_text()
    assert "bot/config/default.toml (packaged default)" in text
    assert str(Path.home()) not in text and "/work/" not in text and "/tmp/" not in text
    page.close()
