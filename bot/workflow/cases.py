"""Cases in chat: search and filter a server's cases page by page, correct a case's reason (audited), and one
member's record, for ``/case search``, ``/case reason`` and ``/member info`` (Discord; Slack can call the same).

Layer: ``bot.workflow`` (platform-neutral). Every function authorizes first (Manage Messages or a moderator role:
:class:`~bot.workflow.authz.Refused` otherwise), reads only the calling server's cases, and answers in lines of
text with ``<@id>`` mentions (rendered by both Discord and Slack). Bad input (an unknown case, another server's
case, a reason too long, a page past the end) raises :class:`Refused` with the sentence to show; nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.models import ActionKind
from bot.core.records import CaseRecord
from bot.core.store_port import ModStore
from bot.workflow import words
from bot.workflow.authz import Actor, Refused, authorize

#: Cases per page of ``/case search`` (ten lines stay well inside Discord's 2,000 and Slack's 3,000 characters).
PER_PAGE = 10
#: Longest case reason, in characters (the same cap as ``/mod note``).
MAX_REASON = 1000


@dataclass(frozen=True, slots=True)
class CasePage:
    """One page of matching cases, newest first: ``lines`` to show, ``page`` (1-based) of ``pages``, ``total``."""

    lines: tuple[str, ...]
    page: int
    pages: int
    total: int


def case_line(rec: CaseRecord) -> str:
    """``#12 2026-06-01 warn <@member> by <@moderator>: reason [identity_attack]`` (one line of a list)."""
    c = rec.case
    by = f"<@{c.moderator_id}>" if c.moderator_id else "automod"
    labels = f" [{', '.join(rec.labels)}]" if rec.labels else ""
    reason = words.rule_detail(c.reason)
    reason = reason if len(reason) <= 80 else reason[:79] + "…"
    return f"#{c.number} {c.created_at:%Y-%m-%d} {c.action.label} <@{c.member_id}> by {by}: {reason or '-'}{labels}"


async def search_cases(store: ModStore, platform: str, actor: Actor, server_id: str, *, member: str | None = None,
                       moderator: str | None = None, action: str | None = None, label: str | None = None,
                       text: str | None = None, page: int = 1, per_page: int = PER_PAGE) -> CasePage:
    """The server's cases matching every filter given, newest first, one page.

    Args:
        member / moderator: Ids (``moderator="automod"`` for cases nobody opened by hand).
        action: An action name (``warn``, ``timeout``, ...); label: a label of the case's message.
        text: Words that must all appear in the reason (case-insensitive).
        page: 1-based page number.

    Raises:
        Refused: not a moderator, an unknown action, or a page past the last one.
    """
    authorize(actor, ActionKind.LOG)
    if action is not None:
        try:
            action = ActionKind.parse(action).label
        except (KeyError, ValueError):
            raise Refused(f"Unknown action `{action}`.") from None
    needles = (text or "").lower().split()
    found = []
    for rec in reversed(await store.modlog_cases(platform, server_id)):
        c = rec.case
        if member and c.member_id != member or action and c.action.label != action:
            continue
        if moderator and (c.moderator_id or "automod") != moderator or label and label not in rec.labels:
            continue
        if needles and not all(n in c.reason.lower() for n in needles):
            continue
        found.append(rec)
    pages = max(1, -(-len(found) // per_page))
    if not 1 <= page <= pages:
        raise Refused(f"There are only {words.plural(pages, 'page')} of results.")
    chunk = found[(page - 1) * per_page:page * per_page]
    return CasePage(tuple(case_line(r) for r in chunk), page, pages, len(found))


async def change_reason(store: ModStore, platform: str, actor: Actor, server_id: str, number: int, reason: str) -> str:
    """Replace case ``number``'s reason, audited (a note case records old and new reason and who): the answer.

    Raises:
        Refused: not a moderator, an empty or too long reason, no such case in this server.
    """
    authorize(actor, ActionKind.LOG)
    reason = reason.strip()
    if not reason:
        raise Refused("The reason is empty. Nothing was changed.")
    if len(reason) > MAX_REASON:
        raise Refused(f"The reason has {len(reason):,} characters; at most {MAX_REASON:,}. Nothing was changed.")
    if not 1 <= number <= 10**9 or await store.get_case(platform, server_id, number) is None:
        raise Refused(f"There is no case #{number} in this server. Nothing was changed.")
    case, note = await store.set_case_reason(platform, server_id, number, reason, actor.id)
    return f"Case #{case.number} now reads: {reason} (the change is recorded as case #{note.number})."


async def member_info(store: ModStore, platform: str, actor: Actor, server_id: str, member_id: str,
                      now: datetime | None = None, recent: int = 10) -> list[str]:
    """A member's record for moderators: cases by action, active strikes and points, notes, appeals, the
    ``recent`` newest cases.

    Raises:
        Refused: not a moderator.
    """
    authorize(actor, ActionKind.LOG)
    now = now or datetime.now(UTC)
    cases = [r for r in await store.modlog_cases(platform, server_id) if r.case.member_id == member_id]
    strikes = await store.active_strikes(platform, server_id, member_id, now)
    appeals = [a for a in await store.modlog_appeals(platform, server_id) if a.member_id == member_id]
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
        lines += [case_line(r) for r in reversed(cases[-recent:])]
    return lines
