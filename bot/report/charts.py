"""The report's charts as inline SVG: flags per label (bars) and message volume with flags over time (timeline,
with its bin width and zoom window).

Layer: ``bot.report`` (standard library only; every label is escaped).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from bot.core.models import LABELS
from bot.report.style import _esc


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
    lo = _floor(_add(peak, -1800), 1800)
    return lo, _add(lo, 7200)


_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)


def _add(t: datetime, seconds: float) -> datetime:
    """``t`` plus ``seconds``, kept within years 1-9999 (an export may hold .NET's DateTime.MinValue / MaxValue)."""
    try:
        return t + timedelta(seconds=seconds)
    except OverflowError:
        return _LAST if seconds > 0 else _FIRST


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
        b0 = _add(start, i * width_s)
        b1 = _add(b0, width_s)
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
    end = _add(start, total)
    while t <= end:
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
        if t == _LAST:
            break
        t = _add(t, tick_s)
    parts.append(
        f'<rect x="{left}" y="{height - 14}" width="10" height="10" fill="#9aa5b1"/>'
        f'<text x="{left + 14}" y="{height - 5}">messages</text>'
        f'<rect x="{left + 90}" y="{height - 14}" width="10" height="10" fill="#c0392b"/>'
        f'<text x="{left + 104}" y="{height - 5}">flagged</text>'
        f'<text x="{width - right}" y="{height - 5}" text-anchor="end">per {_esc(bin_name)}, times in UTC</text>'
    )
    parts.append("</svg>")
    return "".join(parts)
