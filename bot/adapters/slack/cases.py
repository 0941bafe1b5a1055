"""Cases in chat on Slack: ``/modcase list|search|show|reason`` and ``/modmember info``, the twins of Discord's
``/case list|search|show|reason`` and ``/member info``.

Layer: ``bot.adapters.slack``. :func:`register_cases` is called from :func:`bot.adapters.slack.app.register`.
Thin: every command is acknowledged at once (Slack's 3 seconds), the caller's rights are read afresh from Slack
(:meth:`~bot.adapters.slack.app.SlackHandlers.actor`: workspace owner/admin, the policy's moderator group or
list), then :mod:`bot.workflow.cases` authorizes, filters, pages and words the answer, exactly as for Discord;
this module only reads the words of the command and escapes members' text for mrkdwn. Answers are ephemeral.

Filters are ``key:value`` words in any order (``member:@ann by:@mod action:warn label:insult since:2026-06-01
until:2026-06-30 page:2``; ``by:automod`` for cases nobody opened by hand); a bare ``@member`` is the member; on
``search`` the other words must be in the reason. Slack sends mentions escaped (``<@U123|ann>``; the manifest sets
``should_escape: true``). A list of more than one page carries Previous / Next buttons (action ids
``cases:page:*``; the button's value holds the command, its filters and the page) that replace the ephemeral answer
in place through the click's ``response_url``; only the moderator who asked turns them, and each click authorizes
again and reads the mod log afresh, paging the cases there were when the list was asked for (the value carries the
list's :attr:`~bot.workflow.cases.CasePage.newest` case number; cases opened since are counted in the header, not
shifted in). The ``page:`` word reaches any page at any time (of the cases there are then).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.adapters.slack import blocks
from bot.adapters.slack.parts import SlackListeners
from bot.adapters.slack.translate import PLATFORM
from bot.workflow.authz import Refused, Said
from bot.workflow.cases import (
    MAX_PAGE,
    CasePage,
    case_details,
    case_filter,
    case_title,
    change_reason,
    member_info,
    search_cases,
)

log = logging.getLogger(__name__)

#: The slash commands this module listens to (also in ``config/slack-app-manifest.yml``).
CASE_COMMANDS = ("/modcase", "/modmember")
#: A user mention as Slack sends it: ``<@U123>`` or ``<@U123|name>``.
USER = re.compile(r"^<@([UW][A-Z0-9]+)(?:\|[^>]*)?>$")
#: Filter words: ``key:value``.
FILTER_KEYS = ("member", "by", "action", "label", "since", "until", "page")
CASE_USAGE = ("Usage: /modcase list [@member] [by:@moderator|automod] [action:warn] [label:insult] "
              "[since:YYYY-MM-DD] [until:YYYY-MM-DD] [page:N] | /modcase search <words> [the same filters] | "
              "/modcase show <number> | /modcase reason <number> <new reason>")
MEMBER_USAGE = "Usage: /modmember info @member"


@dataclass
class Words:
    """A command's text split into filters (``key:value``, a bare mention as ``member``) and the other words."""

    filters: dict[str, str] = field(default_factory=dict)
    rest: list[str] = field(default_factory=list)


def user_id(token: str) -> str | None:
    """The user id of a mention token (``<@U123|ann>``), else ``None``."""
    m = USER.match(token.strip())
    return m.group(1) if m else None


def read_words(args: list[str]) -> Words:
    """Split filter words from the rest.

    Raises:
        Refused: a filter given twice, or ``member:`` / ``by:`` that is not a mention (``by:automod`` is allowed).
    """
    out = Words()
    for token in args:
        key, sep, value = token.partition(":")
        key = key.lower()
        if sep and key in FILTER_KEYS and value:
            pass
        elif user_id(token):
            key, value = "member", token
        else:
            out.rest.append(token)
            continue
        if key in out.filters:
            raise Refused(f"`{key}` is given twice.")
        if key in ("member", "by") and not (key == "by" and value.lower() == "automod"):
            uid = user_id(value)
            if uid is None:
                raise Refused(f"`{key}:` takes a mention (`{key}:@name`){' or `automod`' if key == 'by' else ''}.")
            value = uid
        if key not in ("member", "by"):
            value = blocks.unescape(value)  # Slack sends & < > as entities: the filter as typed
        out.filters[key] = value.lower() if key == "by" and value.lower() == "automod" else value
    return out


def page_number(words: Words) -> int:
    """The ``page:`` word (1 without it).

    Raises:
        Refused: not a whole number from 1.
    """
    raw = words.filters.get("page", "1")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9) or not 1 <= int(raw) <= MAX_PAGE:  # "²".isdigit()
        raise Refused(f"`page` must be a whole number from 1 to {MAX_PAGE:,}, not `", Said(raw[:20]), "`.")
    return int(raw)


#: One answer: its text (mrkdwn) and, for a page with neighbours, blocks with Previous / Next buttons.
Answer = tuple[str, list[dict[str, Any]] | None]
#: Action ids of the page buttons.
PAGE_ACTION = "cases:page"
#: Slack's limit of a button's value, in characters (a longer command gets no buttons; ``page:`` still works).
VALUE_MAX = 2000


def next_hint(result: CasePage) -> str:
    """``Next page: the same command with page:3.`` under a page that is not the last one, else nothing."""
    return f"\nNext page: the same command with `page:{result.page + 1}`." if result.has_next else ""


def page_blocks(text: str, result: CasePage, user: str, sub: str, args: list[str]) -> list[dict[str, Any]] | None:
    """The page as a section with Previous / Next buttons (only those that lead somewhere), or ``None`` for a
    single page (or a command too long to fit a button's value).

    A button's value is JSON: ``u`` the moderator who asked, ``s`` the subcommand, ``a`` its words without
    ``page:``, ``p`` the page it leads to and ``n`` the list's newest case number (:attr:`CasePage.newest`, so the
    next page is of the same cases)."""
    if result.pages < 2:
        return None
    kept = [a for a in args if not a.lower().startswith("page:")]
    buttons = []
    for label, page, shown in (("Previous", result.page - 1, result.has_previous),
                               ("Next", result.page + 1, result.has_next)):
        value = json.dumps({"u": user, "s": sub, "a": kept, "p": page, "n": result.newest}, ensure_ascii=False)
        if len(value) > VALUE_MAX:
            return None
        if shown:
            buttons.append(blocks.button(label, f"{PAGE_ACTION}:{label.lower()}", value=value))
    return [blocks.section(text), {"type": "actions", "block_id": "pages", "elements": buttons}]


def _number(raw: str) -> int:
    text = raw.lstrip("#")
    if not (text.isascii() and text.isdigit() and len(text) <= 18):  # "²".isdigit(), but int("²") raises
        raise Refused("`", Said(blocks.unescape(raw)[:20]), "` is not a case number.")
    return int(text)


async def case_command(handlers: SlackListeners, team: str, user: str, args: list[str], *,
                       newest: int | None = None) -> Answer:
    """``/modcase list|search|show|reason``: the answer (text, and blocks with page buttons for a long list).
    ``newest``: a page button's list (its newest case number): only the cases up to it are paged; ``None``: a new
    list, of every case now.

    Raises:
        Refused: not a moderator, or bad input (the sentence to show; nothing changed).
    """
    bot = handlers.bot
    actor = await handlers.actor(team, user)
    sub, rest = (args[0].lower(), args[1:]) if args else ("", [])
    if sub in ("list", "search"):
        words = read_words(rest)
        if sub == "list" and words.rest:
            raise Refused("`/modcase list` takes filters only; to search reasons use `/modcase search ",
                          Said(blocks.unescape(" ".join(words.rest))[:60]), "`.")
        f = words.filters
        filters = case_filter(member=f.get("member"), moderator=f.get("by"), action=f.get("action"),
                              label=f.get("label"), text=blocks.unescape(" ".join(words.rest)) if sub == "search" else None,
                              since=f.get("since"), until=f.get("until"))
        # a page with neighbours is shown in a section (page_blocks): its 3,000 characters bound the page's text
        result = await search_cases(bot.store, PLATFORM, actor, team, filters, page=page_number(words),
                                    escape=blocks.escape, room=blocks.SECTION_MAX, newest=newest)
        text = result.text(blocks.escape)
        return text + next_hint(result), page_blocks(text, result, user, sub, rest)
    if sub == "show" and len(rest) == 1:
        case = await bot.workflow.case(actor, team, _number(rest[0]))
        return f"*{case_title(case)}*\n" + "\n".join(case_details(case, blocks.escape)), None
    if sub == "reason" and len(rest) >= 2:
        return await change_reason(bot.store, PLATFORM, actor, team, _number(rest[0]), blocks.unescape(" ".join(rest[1:])),
                                   desk=bot.desk, escape=blocks.escape), None
    return CASE_USAGE, None


async def member_command(handlers: SlackListeners, team: str, user: str, args: list[str]) -> Answer:
    """``/modmember info @member``: the member's record (the same lines as Discord's ``/member info``).

    Raises:
        Refused: not a moderator.
    """
    if len(args) != 2 or args[0].lower() != "info" or user_id(args[1]) is None:
        return MEMBER_USAGE, None
    actor = await handlers.actor(team, user)
    lines = await member_info(handlers.bot.store, PLATFORM, actor, team, user_id(args[1]) or "", room=TEXT_MAX,
                              escape=blocks.escape)
    return "\n".join(lines), None


def register_cases(app: AsyncApp, handlers: SlackListeners) -> None:
    """Attach ``/modcase`` and ``/modmember`` to a bolt app (``handlers``: the app's :class:`SlackHandlers`)."""

    async def on_command(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        team = command.get("team_id") or handlers.bot.team_id
        user = command.get("user_id", "")
        args = (command.get("text") or "").split()
        run = case_command if command.get("command") == "/modcase" else member_command
        try:
            text, content = await run(handlers, team, user, args)
        except Refused as exc:
            text, content = blocks.refusal(exc), None
        await respond(text=blocks.cut(text, TEXT_MAX), response_type="ephemeral",
                      **({"blocks": content} if content else {}))

    async def on_page(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        """Previous / Next under a page: only the moderator who asked; the answer is replaced in place."""
        await ack()
        team = (body.get("team") or {}).get("id") or handlers.bot.team_id
        user = (body.get("user") or {}).get("id", "")
        try:
            value = json.loads(action.get("value") or "{}")
            sub, args, page = str(value["s"]), [str(a) for a in value["a"]], int(value["p"])
            asker = str(value["u"])
            newest = None if value.get("n") is None else int(value["n"])  # a button of before "n": a new list
        except (ValueError, KeyError, TypeError):
            await respond(text="That button is broken; run the command again.", response_type="ephemeral",
                          replace_original=False)
            return
        if user != asker or sub not in ("list", "search"):
            await respond(text="Only the moderator who asked can turn these pages: use `/modcase list` yourself.",
                          response_type="ephemeral", replace_original=False)
            return
        try:
            text, content = await case_command(handlers, team, user, [sub, *args, f"page:{page}"], newest=newest)
        except Refused as exc:
            await respond(text=blocks.refusal(exc), response_type="ephemeral", replace_original=False)
            return
        await respond(text=blocks.cut(text, TEXT_MAX), replace_original=True,
                      blocks=content or [blocks.section(text)])

    for name in CASE_COMMANDS:
        app.command(name)(on_command)
    app.action(re.compile(rf"^{PAGE_ACTION}:"))(on_page)


#: Longest answer text, in characters (Slack's advice for a message's text; a page's lines are fitted within it).
TEXT_MAX = 3_900
