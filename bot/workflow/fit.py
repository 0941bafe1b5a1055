"""Fitting what a person wrote into a platform's room: escaped for its markup, shortened between entities.

Layer: ``bot.workflow`` (platform-neutral; the adapters pass their escaping, e.g. Slack's ``blocks.escape``). A
reason of 1,000 ``&`` is 5,000 characters once Slack escapes it, so a limit counts the text as shown, and a cut
never falls inside ``&amp;``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.workflow.authz import Escape


def _as_is(text: str) -> str:
    return text


def fit_escaped(raw: str, limit: int, escape: Escape = _as_is, *, empty: str = "no reason") -> str:
    """``raw`` through ``escape`` in at most ``limit`` characters: as is when it fits, else the longest start of
    ``raw`` whose escaped form leaves room for "…", and "…" (so an entity such as ``&amp;`` is never cut in half).
    An empty ``raw`` shows ``empty`` (cut likewise)."""
    if not raw:
        raw = empty
    shown = escape(raw)
    if len(shown) <= limit:
        return shown
    lo, hi = 0, min(len(raw), max(0, limit - 1))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if len(escape(raw[:mid])) <= limit - 1 else (lo, mid - 1)
    return escape(raw[:lo]) + "…"


def fit_texts(raws: Sequence[str], room: int, escape: Escape = _as_is, *, empty: str = "no reason") -> list[str]:
    """Each of ``raws`` through ``escape``, together in at most ``room`` characters (separators not counted): short
    ones whole, the longest shortened first and evenly (:func:`fit_escaped`), so each keeps an equal share of what
    the short ones leave. Needs ``room >= len(raws)`` to give each at least one character."""
    shown = [escape(r) if r else escape(empty) for r in raws]
    budget = {i: len(t) for i, t in enumerate(shown)}
    while budget and sum(budget.values()) > room:
        over = sum(budget.values()) - room
        longest = max(budget.values())
        second = max((b for b in budget.values() if b < longest), default=0)
        tied = [i for i, b in budget.items() if b == longest]
        step = min(longest - second, -(-over // len(tied)))
        for i in tied:
            budget[i] -= step
    return [fit_escaped(r, budget[i], escape, empty=empty) for i, r in enumerate(raws)]


def report_lines(reports: Sequence[tuple[str, str]], limit: int, escape: Escape = _as_is,
                 reason_max: int = 200) -> str:
    """The members' reports of a review card, one line each (``<@reporter>: reason``, the reason through ``escape``
    and cut to ``reason_max`` characters as shown, ``-`` when erased), oldest first, as many whole lines as fit in
    ``limit`` characters with ``+N more`` for the rest: the adapters' card field (Discord's 1,024, Slack's section)."""
    lines: list[str] = []
    used = 0
    for i, (reporter, reason) in enumerate(reports):
        line = f"<@{reporter}>: {fit_escaped(reason, reason_max, escape, empty='') or '-'}"
        more = f"\n+{len(reports) - i - 1} more" if i < len(reports) - 1 else ""
        if used + len(line) + len(more) > limit:
            return "\n".join(lines) + f"\n+{len(reports) - i} more"
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
