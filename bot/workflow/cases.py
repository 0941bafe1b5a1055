"""Cases in chat: list, filter and search a server's cases page by page, one case in full, correct a case's reason
(audited), and one member's record, for ``/case list|search|show|reason`` and ``/member info`` (Discord) and
``/modcase list|search|show|reason`` and ``/modmember info`` (Slack): both adapters call these, neither filters,
pages or words a case itself.

Layer: ``bot.workflow`` (platform-neutral). Every function authorizes first (Manage Messages or a moderator role:
:class:`~bot.workflow.authz.Refused` otherwise), reads only the calling server's cases (the store's mod-log read
port, :class:`bot.core.store_port.ModLogReadStore`), and answers in lines of text with ``<@id>`` mentions
(rendered by both Discord and Slack). Bad input (an unknown action, a date that is not ``YYYY-MM-DD``, a range that
ends before it starts, an unknown case, another server's case, a reason too long, a page past the end) raises
:class:`Refused` with the sentence to show; nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime

from bot.core.models import MAX_CASE_NUMBER, ActionKind, Case, Strike
from bot.core.records import CaseRecord
from bot.core.storable import storable_text
from bot.core.store_port import ModStore
from bot.workflow import words
from bot.workflow.authz import Actor, Escape, Refused, Said, Sentence, authorize
from bot.workflow.fit import fit_escaped, fit_texts
from bot.workflow.ports import ModDesk
from bot.workflow.views import LogEntry

#: Cases per page of ``/case list`` and ``/case search`` (ten lines stay well inside Discord's 2,000 and Slack's
#: 3,000 characters).
PER_PAGE = 10
#: Longest case reason, in characters (the same cap as ``/mod note``).
MAX_REASON = 1000
#: Characters of a reason in one line of a case list, as shown (escaped for the platform).
LINE_REASON_MAX = 80
#: Shorter reasons tried, in turn, when a list's lines do not fit the platform's room (long labels, many lines).
SHORTER_REASONS = (60, 40, 20, 1)


def _as_is(text: str) -> str:
    return text


#: Highest page number accepted (a page past the last one is refused with the number of pages anyway).
MAX_PAGE = 100_000


@dataclass(frozen=True, slots=True)
class CaseFilter:
    """What a case list keeps: every field given must match (``None``: any).

    Attributes:
        member: The member's id. moderator: the moderator's id, or ``"automod"`` for cases nobody opened by hand.
        action: An action name (``warn``, ``timeout``, ...), already checked by :func:`case_filter`.
        label: A label of the case's message (``insult``...). text: words that must all be in the reason.
        since / until: First and last day (UTC, both included).
    """

    member: str | None = None
    moderator: str | None = None
    action: str | None = None
    label: str | None = None
    text: str | None = None
    since: date | None = None
    until: date | None = None

    def matches(self, rec: CaseRecord, members: Collection[str] = ()) -> bool:
        """Whether the case passes every filter (``members``: every id :attr:`member` may be stored under, its
        pseudonym after ``/mydata forget`` too; empty: :attr:`member` alone)."""
        c = rec.case
        if self.member and c.member_id not in (members or (self.member,)):
            return False
        if self.action and c.action.label != self.action:
            return False
        if self.moderator and (c.moderator_id or "automod") != self.moderator:
            return False
        if self.label and self.label not in rec.labels:
            return False
        day = c.created_at.astimezone(UTC).date()
        if self.since and day < self.since or self.until and day > self.until:
            return False
        needles = (self.text or "").lower().split()
        return all(n in c.reason.lower() for n in needles)

    def describe(self, escape: Escape = _as_is) -> str:
        """The filters in words, for the answer's first line: ``member <@1>, action warn, from 2026-06-01``;
        empty when there are none (the label and words typed pass through ``escape``)."""
        parts = [f"member <@{self.member}>" if self.member else "",
                 ("by automod" if self.moderator == "automod" else f"by <@{self.moderator}>") if self.moderator else "",
                 f"action {self.action}" if self.action else "", f"label {escape(self.label)}" if self.label else "",
                 f"reason has “{escape(self.text)}”" if self.text else "",
                 f"from {self.since:%Y-%m-%d}" if self.since else "", f"until {self.until:%Y-%m-%d}" if self.until else ""]
        return ", ".join(p for p in parts if p)

    @property
    def empty(self) -> bool:
        """No filter given (every case of the server)."""
        return all(getattr(self, f.name) in (None, "") for f in fields(self))


def parse_day(value: str | None, name: str) -> date | None:
    """A ``YYYY-MM-DD`` day (``None`` or blank: no bound).

    Raises:
        Refused: not such a date (the answer names the option and an example).
    """
    if value is None or not value.strip():
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise Refused(f"`{name}` must be a date like 2026-06-01 (year-month-day), not `", Said(value.strip()[:40]),
                      "`.") from None


def case_filter(*, member: str | None = None, moderator: str | None = None, action: str | None = None,
                label: str | None = None, text: str | None = None, since: str | date | None = None,
                until: str | date | None = None) -> CaseFilter:
    """Check and normalize a moderator's filters (action names are case-insensitive, labels lower-cased, dates
    ``YYYY-MM-DD``).

    Raises:
        Refused: an unknown action, a bad date, or ``since`` after ``until``.
    """
    if action is not None and action.strip():
        try:
            action = ActionKind.parse(action).label
        except (KeyError, ValueError):
            allowed = ", ".join(k.label for k in ActionKind if k is not ActionKind.NONE)
            raise Refused("Unknown action `", Said(action.strip()[:40]), f"` (one of: {allowed}).") from None
    else:
        action = None
    first = since if isinstance(since, date) or since is None else parse_day(since, "since")
    last = until if isinstance(until, date) or until is None else parse_day(until, "until")
    if first and last and first > last:
        raise Refused(f"`since` ({first:%Y-%m-%d}) is after `until` ({last:%Y-%m-%d}).")
    return CaseFilter(member=member or None, moderator=moderator or None, action=action,
                      label=(label or "").strip().lower() or None, text=(text or "").strip() or None,
                      since=first, until=last)


@dataclass(frozen=True, slots=True)
class CasePage:
    """One page of matching cases, newest first: ``lines`` to show, ``page`` (1-based) of ``pages``, ``total``
    matching, and the ``filters`` that chose them.

    ``newest`` is the number of the server's newest case when the list was first asked for (``None``: no case
    yet): turning the page of the same list passes it back to :func:`search_cases`, so cases opened meanwhile
    neither shift the pages (a case shown twice, or one never shown) nor change their count; ``newer`` counts
    those matching cases opened since, which the header mentions."""

    lines: tuple[str, ...]
    page: int
    pages: int
    total: int
    filters: CaseFilter = CaseFilter()
    newest: int | None = None
    newer: int = 0

    @property
    def has_previous(self) -> bool:
        """There is a page before this one."""
        return self.page > 1

    @property
    def has_next(self) -> bool:
        """There is a page after this one."""
        return self.page < self.pages

    def text(self, escape: Escape = _as_is) -> str:
        """The answer: ``12 matching cases (member <@1>), page 1 of 2:`` and the lines; when nothing matches,
        ``No case matches these filters (...).`` (or ``No cases in this server yet.`` without filters)."""
        what = self.filters.describe(escape)
        if not self.total:
            return f"No case matches these filters ({what})." if what else "No cases in this server yet."
        newer = f" ({words.plural(self.newer, 'newer case')} since this list was opened: ask again to see " \
                f"{'it' if self.newer == 1 else 'them'})" if self.newer else ""
        head = f"{words.plural(self.total, 'matching case' if what else 'case')}{f' ({what})' if what else ''}, " \
               f"page {self.page} of {self.pages}{newer}:"
        return head + "\n" + "\n".join(self.lines)


def case_line(rec: CaseRecord, escape: Escape = _as_is, reason_max: int = LINE_REASON_MAX) -> str:
    """``#12 2026-06-01 warn <@member> by <@moderator>: reason [identity_attack]`` (one line of a list; the reason
    passes through ``escape`` and is cut to ``reason_max`` characters as shown)."""
    c = rec.case
    by = f"<@{c.moderator_id}>" if c.moderator_id else "automod"
    labels = f" [{', '.join(rec.labels)}]" if rec.labels else ""
    reason = words.rule_detail(c.reason)
    # counted as shown (escaped: "&" is "&amp;" on Slack)
    shown = fit_escaped(reason, reason_max, escape) if reason else "-"
    return f"#{c.number} {c.created_at:%Y-%m-%d} {c.action.label} <@{c.member_id}> by {by}: {shown}{labels}"


async def search_cases(store: ModStore, platform: str, actor: Actor, server_id: str, filters: CaseFilter | None = None,
                       *, page: int = 1, per_page: int = PER_PAGE, escape: Escape = _as_is,
                       room: int | None = None, newest: int | None = None) -> CasePage:
    """The server's cases matching ``filters``, newest first, one page of ``per_page`` (reasons through
    ``escape``). ``room``: the platform's characters for the answer (Discord 2,000); when the page's
    :meth:`CasePage.text` would not fit, the reasons are shortened (:data:`SHORTER_REASONS`) so every line stays.
    ``newest``: another page of a list already shown, whose :attr:`CasePage.newest` this is: only cases numbered
    up to it are paged (those opened since are counted in :attr:`CasePage.newer`); ``None``: a new list, of every
    case now.

    Raises:
        Refused: not a moderator, or a page past the last one (nothing matching is one empty page 1).
    """
    authorize(actor, ActionKind.LOG)
    filters = filters or CaseFilter()
    cases = await store.modlog_cases(platform, server_id)
    if newest is None:
        newest = max((rec.case.number for rec in cases), default=None)
    # a forgotten member's cases name their pseudonym: they are still theirs
    members = await store.member_ids(platform, server_id, filters.member) if filters.member else ()
    matching = [rec for rec in reversed(cases) if filters.matches(rec, members)]
    found = [rec for rec in matching if newest is not None and rec.case.number <= newest]
    newer = len(matching) - len(found)
    pages = max(1, -(-len(found) // per_page))
    if not 1 <= page <= pages:
        raise Refused(f"There {'is' if pages == 1 else 'are'} only {words.plural(pages, 'page')} of results.")
    chunk = found[(page - 1) * per_page:page * per_page]
    for reason_max in (LINE_REASON_MAX, *SHORTER_REASONS):
        result = CasePage(tuple(case_line(r, escape, reason_max) for r in chunk), page, pages, len(found), filters,
                          newest, newer)
        if room is None or len(result.text(escape)) <= room:
            break
    return result


def case_title(case: Case) -> str:
    """``Case #12: warn (applied)``."""
    return f"Case #{case.number}: {case.action.label} ({case.status.value})"


def case_details(case: Case, escape: Escape = _as_is) -> list[str]:
    """One case in full, after its :func:`case_title`: member, moderator, when (UTC), end, failure, reason (the
    last two through ``escape``)."""
    lines = [f"Member: <@{case.member_id}>",
             f"Moderator: {f'<@{case.moderator_id}>' if case.moderator_id else 'automod'}",
             f"Opened: {case.created_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"]
    if case.expires_at:
        lines.append(f"Ends: {case.expires_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    if case.failure:
        lines.append(f"Failure: {escape(case.failure)}")
    lines.append(f"Reason: {escape(words.rule_detail(case.reason)) or '-'}")
    return lines


async def change_reason(store: ModStore, platform: str, actor: Actor, server_id: str, number: int, reason: str, *,
                        desk: ModDesk | None = None, escape: Escape = _as_is) -> str:
    """Replace case ``number``'s reason, audited (a note case records old and new reason and who), and post the
    change to the mod log when a ``desk`` (:class:`bot.workflow.ports.ModDesk`) is given. Returns the answer
    (the new reason through ``escape``).

    Raises:
        Refused: not a moderator, an empty or too long reason, no such case in this server, or a case about the
            moderator themselves (as they may not pardon it, dismiss its card or decide its appeal).
    """
    authorize(actor, ActionKind.LOG)
    reason = storable_text(reason.strip())  # a NUL as U+FFFD, as a sanction's reason
    if not reason:
        raise Refused("The reason is empty. Nothing was changed.")
    if len(reason) > MAX_REASON:
        raise Refused(f"The reason has {len(reason):,} characters; at most {MAX_REASON:,}. Nothing was changed.")
    case = await store.get_case(platform, server_id, number) if 1 <= number <= MAX_CASE_NUMBER else None
    if case is None:
        raise Refused(f"There is no case #{number} in this server. Nothing was changed.")
    if case.member_id in await store.member_ids(platform, server_id, actor.id):  # their pseudonym too (forget)
        raise Refused("You cannot change the reason of a case about yourself. Nothing was changed.")
    case, note = await store.set_case_reason(platform, server_id, number, reason, actor.id)
    head, tail = f"Case #{case.number} now reads: ", f" (the change is recorded as case #{note.number})."
    if desk is not None:  # the new reason is typed words there too (the platform escapes them)
        await desk.post_mod_log(server_id, LogEntry(title=f"Case #{number}: reason changed", lines=(
            Sentence(head, Said(reason), tail), f"Moderator: {actor.id}"), moderator_id=actor.id, kind="case"))
    return head + escape(reason) + tail


async def member_info(store: ModStore, platform: str, actor: Actor, server_id: str, member_id: str,
                      now: datetime | None = None, recent: int = 10, escape: Escape = _as_is,
                      room: int | None = None) -> list[str]:
    """A member's record for moderators: cases by action, active strikes and points, notes, appeals, the
    ``recent`` newest cases (those stored under the member's pseudonym after ``/mydata forget`` too). ``room``: the platform's characters for the answer; the case lines' reasons are
    shortened (:data:`SHORTER_REASONS`) until the lines joined by newlines fit, so no case is cut off.

    Raises:
        Refused: not a moderator.
    """
    authorize(actor, ActionKind.LOG)
    now = now or datetime.now(UTC)
    ids = await store.member_ids(platform, server_id, member_id)  # after /mydata forget, the pseudonym's too
    cases = [r for r in await store.modlog_cases(platform, server_id) if r.case.member_id in ids]
    strikes = await store.active_strikes(platform, server_id, member_id, now)
    appeals = [a for a in await store.modlog_appeals(platform, server_id) if a.member_id in ids]
    if not cases and not strikes and not appeals:
        return [f"<@{member_id}> has no cases, strikes or appeals in this server."]
    kinds: dict[str, int] = {}
    for r in cases:
        kinds[r.case.action.label] = kinds.get(r.case.action.label, 0) + 1
    notes = [r for r in cases if r.case.action is ActionKind.LOG and r.case.moderator_id]
    lines = [f"<@{member_id}> (`{member_id}`): {words.plural(len(cases), 'case')}"
             + (f" ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})" if kinds else ""),
             f"Active strikes: {words.strikes(len(strikes), sum(s.points for s in strikes))}"
             + (f", the first expires {min(s.expires_at for s in strikes):%Y-%m-%d}" if strikes else ""),
             f"Notes: {len(notes)}; appeals: {len(appeals)}"
             + (f" ({', '.join(f'#{a.id} {a.status}' for a in appeals)})" if appeals else "")]
    if cases:
        lines.append("Newest cases:")
        for reason_max in (LINE_REASON_MAX, *SHORTER_REASONS):
            newest = [case_line(r, escape, reason_max) for r in reversed(cases[-recent:])]
            if room is None or len("\n".join([*lines, *newest])) <= room:
                break
        lines += newest
    return lines


def strike_lines(strikes: Sequence[Strike], *, room: int, when: Callable[[datetime], str],
                 escape: Escape = _as_is) -> list[str]:
    """A member's active strikes as ``/mystatus`` lines (``2 points: <reason> (case #3), expires <when>``) that,
    joined by newlines, fit ``room`` characters (Discord: an embed field's 1,024; Slack: a section's 3,000).

    Every strike keeps its line, with its points, case number and expiry: the reasons (through ``escape``, which is
    counted) share the room left, each cut with "…" to an equal share (a short one leaves its rest to the others).
    Only when even the lines without reasons do not fit, the last strikes give way to ``…and N more``.
    ``when`` renders an expiry (Discord: a relative timestamp; Slack: a date).
    """
    def frame(s: Strike, reason: str) -> str:
        return (f"{words.plural(s.points, 'point')}: {reason}" + (f" (case #{s.case_number})" if s.case_number else "")
                + f", expires {when(s.expires_at)}")

    bare = [len(frame(s, "")) for s in strikes]
    left = room - sum(bare) - max(0, len(strikes) - 1)
    if strikes and left < len(strikes):  # not even one character of reason each: as many bare lines as fit
        lines: list[str] = []
        for i, s in enumerate(strikes):
            line, rest = frame(s, "…"), len(strikes) - i - 1
            if len("\n".join([*lines, line, *([f"…and {rest} more"] if rest else [])])) > room:
                return [*lines, f"…and {rest + 1} more"]
            lines.append(line)
        return lines
    shown = fit_texts([s.reason for s in strikes], left, escape, empty="no reason")
    return [frame(s, shown[i]) for i, s in enumerate(strikes)]
