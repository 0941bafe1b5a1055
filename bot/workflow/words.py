"""Plain words for moderators, the same on Discord, on Slack and in the HTML report: durations in minutes, hours
or days, tiers as "review from 0.95", only the labels that mattered, strikes without "1 (1 points)".

Layer: ``bot.workflow`` (platform-neutral, standard library only). The Discord cards, the Slack blocks and
:mod:`bot.report` call these; none of them words a duration, a tier or a strike count on its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

#: What a review card shows for a message whose text the mod log erased since (retention, ``/mydata forget``).
TEXT_ERASED = "(text erased from the mod log: its retention period ended, or the member asked)"
#: Units of :func:`duration`, largest first: (seconds, singular, plural).
_UNITS = ((86400, "day", "days"), (3600, "hour", "hours"), (60, "minute", "minutes"), (1, "second", "seconds"))
#: A number of seconds in a rule's detail (``6734s``, ``30s``, ``2.5s``).
_SECONDS = re.compile(r"\b(\d+(?:\.\d+)?)s\b")


def text_erased(days: int | None = None) -> str:
    """What a review card shows in place of a message's erased text: ``"(text erased after 30 days: the server's
    retention period)"`` when retention erased it after ``days`` days (the card edited by the purge), else
    :data:`TEXT_ERASED` (the cause not known where the card is rebuilt)."""
    if days is None:
        return TEXT_ERASED
    return f"(text erased after {plural(days, 'day')}: the server's retention period)"


def plural(n: int, one: str, many: str | None = None) -> str:
    """``"1 strike"``, ``"3 strikes"`` (``many`` defaults to ``one + "s"``); thousands separated."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def duration(seconds: float | None) -> str:
    """A length of time in the largest two units that say it, rounded down: ``45 seconds``, ``12 minutes``,
    ``1 hour 52 minutes``, ``7 days``, ``2 days 4 hours``; ``unknown`` for ``None``. The second unit is always the
    next smaller one (seconds are only named under an hour, minutes under a day), and is left out when zero."""
    if seconds is None:
        return "unknown"
    s = max(0, int(seconds))
    for i, (size, one, many) in enumerate(_UNITS):
        if s >= size:
            n, rest = divmod(s, size)
            words = plural(n, one, many)
            if i + 1 < len(_UNITS) and (m := rest // _UNITS[i + 1][0]):
                words += " " + plural(m, *_UNITS[i + 1][1:])
            return words
    return "0 seconds"


def tier(review: float | None, act: float | None) -> str:
    """The thresholds that applied to a label, in words: ``review from 0.95, act from 0.98``; ``review from
    0.95`` (no act tier); ``act from 0.98``; ``off`` when both tiers are off."""
    parts = [f"review from {review:.2f}" if review is not None else "", f"act from {act:.2f}" if act is not None else ""]
    return ", ".join(p for p in parts if p) or "off"


def labels_that_mattered(scores: Mapping[str, float | None], tiers: Mapping[str, tuple[float | None, float | None]],
                         flagged: Sequence[str] = ()) -> list[str]:
    """The labels worth showing a moderator, in ``scores`` order: every label that flagged the message
    (``flagged``) or reached its review or act tier; when none did, the single highest-scoring label (so a card
    says what the model thought most likely). Labels the model lacks (``None``) never matter."""
    out = []
    for label, score in scores.items():
        if score is None:
            continue
        review, act = tiers.get(label, (None, None))
        reached = any(t is not None and score >= t for t in (review, act))
        if label in flagged or reached:
            out.append(label)
    if not out:
        known = [(s, label) for label, s in scores.items() if s is not None]
        if known:
            out.append(max(known, key=lambda x: x[0])[1])
    return out


def score_line(label: str, score: float | None, review: float | None, act: float | None) -> str:
    """``identity_attack 0.91 (review from 0.78, act from 0.95)``; ``threat: not read by this model``."""
    if score is None:
        return f"{label}: not read by this model"
    return f"{label} {score:.2f} ({tier(review, act)})"


def strikes(count: int, points: int) -> str:
    """Prior strikes in words: ``no strikes``, ``1 strike``, ``3 strikes``, and the points only when they differ
    from the count: ``1 strike worth 3 points``, ``2 strikes worth 5 points``."""
    if count <= 0:
        return "no strikes"
    return plural(count, "strike") + worth(count, points)


def worth(count: int, points: int) -> str:
    """``" worth 5 points"`` after a count of strikes whose points differ from the count, else ``""`` (one point
    per strike goes without saying)."""
    return "" if points == count else f" worth {plural(points, 'point')}"


def rule_detail(detail: str) -> str:
    """A rule hit's detail with its seconds in plain durations and ``a < b`` as ``a, under b``:
    ``account age 6734s < 604800s`` -> ``account age 1 hour 52 minutes, under 7 days``; ``5 identical messages in
    30s`` -> ``5 identical messages in 30 seconds``; ``identity_attack 0.97 >= 0.95`` -> ``identity_attack 0.97, at
    or over 0.95`` (the reason an automod case records)."""
    text = _SECONDS.sub(lambda m: duration(float(m.group(1))), detail)
    for sign, said in ((" >= ", ", at or over "), (" <= ", ", at or under "), (" < ", ", under "), (" > ", ", over ")):
        text = text.replace(sign, said)
    return text


def rule_hit(hit: str) -> str:
    """``rule: detail`` (as :class:`bot.workflow.views.Evidence` carries it) with the detail in plain words."""
    rule, sep, detail = hit.partition(": ")
    return f"{rule}: {rule_detail(detail)}" if sep else rule_detail(hit)


#: Review item sources whose reason is a member's own words (a report's text, an appeal), shown as written.
MEMBERS_WORDS = frozenset({"report", "appeal"})


def item_reason(source: str, reason: str) -> str:
    """A review item's reason as a moderator reads it: a member's own words (a report's text, an appeal's: source
    in :data:`MEMBERS_WORDS`) as written; automod's rule details in plain words (:func:`rule_detail`)."""
    return reason if source in MEMBERS_WORDS else rule_detail(reason)
