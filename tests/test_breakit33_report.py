"""The scan report shows a member's display name without letting it reorder what follows it: a name holding a
right-to-left override (U+202E) is isolated, so the raider's id next to it reads as it is and stays where it is.
Rendered from report rows and checked in a real headless Chromium (as ``tests/test_report_browser.py``)."""

from __future__ import annotations

import pytest

from bot.report import write_html_report
from tests.test_report_browser import _chromium

pytestmark = pytest.mark.browser

RAIDER = "900000000000000001"


def test_a_right_to_left_override_in_a_name_does_not_reverse_the_raiders_id(tmp_path):
    """A raider named "evil" + U+202E: in the raid's list, their id is drawn to the right of the name and its
    digits in order (unisolated, the override drew the id first and reversed: 100000000000000009)."""
    row = {"id": "1", "text": "get out", "created_at": "2026-03-01T10:00:00+00:00", "platform": "discord",
           "server_id": "111", "channel_id": "c1", "channel": "general", "author_id": RAIDER,
           "author": "evil\u202e", "flagged": True, "action": "delete", "labels": ["insult"]}
    summary = {"messages": 1, "raids": [{"platform": "discord", "server_id": "111", "channel_id": "c1",
                                         "started_at": "2026-03-01T09:59:00+00:00", "members": [RAIDER],
                                         "count": 1, "reason": "flagged_burst"}]}
    out = tmp_path / "report.html"
    write_html_report(out, summary, [row])
    path = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(out.as_uri())
            item = page.locator("ul.raiders li").first
            code = item.locator("code.id")
            li_box, code_box = item.bounding_box(), code.bounding_box()
            assert li_box is not None and code_box is not None
            assert code_box["x"] > li_box["x"] + 10, (li_box, code_box)  # after the name, not before it
            # the id's digits as drawn, left to right: the caret position of each character's left edge
            drawn = page.evaluate("""(el) => { const t = el.firstChild, r = document.createRange(), xs = [];
                for (let i = 0; i < t.length; i++) { r.setStart(t, i); r.setEnd(t, i + 1);
                  xs.push([r.getBoundingClientRect().x, t.data[i]]); }
                return xs.sort((a, b) => a[0] - b[0]).map(x => x[1]).join(''); }""", code.element_handle())
            assert drawn == RAIDER
        finally:
            browser.close()
