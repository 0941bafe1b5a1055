"""Tests of the HTML scan report: content, escaping, click-to-reveal text and the inline SVG charts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.models import RaidAlert
from bot.report import MAX_TEXT, build_report_data, write_html_report


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
    """Message text with <script> is escaped, never live markup."""
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; friends" in page
    assert "Scan of &lt;b&gt;general&lt;/b&gt;" in page


def test_report_has_svg_and_details(page):
    """Charts are inline SVG and every flagged text sits inside a <details> element."""
    assert page.count("<svg") == 2
    assert page.count("<details>") == 2
    assert "http://" not in page and "https://" not in page


@pytest.mark.parametrize(
    "needle",
    [
        "2 flagged",
        "3 messages scanned",
        "1 raids",
        "new_member_burst",
        "r1, r2 (2)",
        "blocklist: slur",
        "identity_attack=0.88",
        "threat=missing",
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
    assert data.top_members == [("user1", 5)]
    assert [r.id for r in data.rows] == ["m1", "m3"]
    assert data.rows[0].time == datetime(2026, 6, 1, 18, 2, 1, tzinfo=UTC)


def test_report_without_flags(tmp_path):
    """An empty scan still renders a valid page saying there is nothing to show."""
    out = tmp_path / "r.html"
    write_html_report(out, {}, [])
    page = out.read_text(encoding="utf-8")
    assert "No raid detected." in page and "No flagged message has a timestamp." in page
