"""Cases in chat: ``/case list`` and ``/case search`` (filters, pages with Previous/Next buttons), ``/case reason``
(audited) and ``/member info``.

Layer: cogs (discord.py extension, loaded after ``cogs.moderation``, whose ``/case`` group it adds three
subcommands to). Thin: acknowledged at once, the member translated into an ``Actor`` with their own permissions in
this server, then :mod:`bot.workflow.cases` authorizes, filters, pages and words the answer (the same functions
answer Slack's ``/modcase``); a reason change is also posted to the mod log.

The Previous/Next buttons of a page (:class:`CasePager`) answer only the moderator who asked (anyone else is told
so, ephemerally, and the page does not move); each click authorizes again and reads the mod log afresh, paging the
cases there were when the list was asked for (cases opened since are counted in the header, not shifted in). They live
:data:`PAGER_TIMEOUT_S` seconds (inside the 15 minutes an interaction token can edit its answer), then are taken off
the message; after a restart they no longer page, and a click says so (the ``page`` option reaches any page at any
time).
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.cards import CONTENT_MAX, cut, md
from bot.adapters.discord.interact import actor_of, answer, guarded
from bot.adapters.discord.translate import PLATFORM
from bot.workflow.cases import (
    MAX_PAGE,
    MAX_REASON,
    CaseFilter,
    CasePage,
    case_filter,
    change_reason,
    member_info,
    search_cases,
)

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: How long a page's Previous/Next buttons answer, in seconds (an interaction's token edits its answer 15 minutes).
PAGER_TIMEOUT_S = 600.0
#: Choices offered for the ``action`` option.
ACTION_CHOICES = [app_commands.Choice(name=a, value=a) for a in ("warn", "timeout", "kick", "ban", "delete",
                                                                  "review", "log")]
FILTER_HELP = {"member": "Cases about this member", "moderator": "Cases this moderator opened",
               "action": "Only this action", "label": "A label of the case's message, e.g. insult",
               "since": "From this day (YYYY-MM-DD, UTC)", "until": "Up to this day (YYYY-MM-DD, UTC, included)",
               "page": "Page of results (10 per page)"}


#: Custom id prefix of the page buttons: ``mod:casepage:<nonce>:<previous|next>``. A click whose pager this process
#: does not hold (the bot restarted since the page was shown, or the pager timed out and its buttons could not be
#: taken off) is answered by :meth:`Cases.on_interaction`.
PAGER_PREFIX = "mod:casepage:"
#: The answer to a page button of a pager this process does not hold.
PAGER_GONE = ("These page buttons have expired (the bot restarted, or the list was left 10 minutes): run `/case list` "
              "or `/case search` again (`page:` goes straight to a page).")


class CasePager(discord.ui.View):
    """Previous / Next buttons under one page of cases; only the moderator who asked (``invoker_id``) turns it.
    ``live``: the nonces of the pagers this process holds (:attr:`Cases.pagers`); this one's is in it until it
    times out."""

    def __init__(self, bot: ModBot, origin: discord.Interaction, filters: CaseFilter, result: CasePage,
                 live: set[str] | None = None) -> None:
        super().__init__(timeout=PAGER_TIMEOUT_S)
        self.bot = bot
        self.origin = origin
        self.invoker_id = origin.user.id
        self.filters = filters
        self.result = result
        self.nonce = secrets.token_hex(8)
        self.live = live if live is not None else set()
        self.live.add(self.nonce)
        self.previous.custom_id = f"{PAGER_PREFIX}{self.nonce}:previous"
        self.next.custom_id = f"{PAGER_PREFIX}{self.nonce}:next"
        self._show_page_buttons()

    def _show_page_buttons(self) -> None:
        # not ``_refresh``: discord.py's View._refresh(components) must not be shadowed
        self.previous.disabled = not self.result.has_previous
        self.next.disabled = not self.result.has_next

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        """Only the moderator who asked may turn the pages; anyone else is told so and nothing moves."""
        if interaction.user.id == self.invoker_id:
            return True
        await interaction.response.send_message(
            "Only the moderator who asked can turn these pages: use `/case list` yourself.", ephemeral=True)
        return False

    async def _turn(self, interaction: discord.Interaction, step: int) -> None:
        async def work() -> None:
            actor = actor_of(interaction, await self.bot.policy(interaction.guild_id or 0))
            self.result = await search_cases(self.bot.store, PLATFORM, actor, str(interaction.guild_id),
                                             self.filters, page=self.result.page + step, room=CONTENT_MAX,
                                             escape=md, newest=self.result.newest)  # the same list's pages
            self._show_page_buttons()
            await interaction.edit_original_response(content=cut(self.result.text(), CONTENT_MAX), view=self)

        await guarded(interaction, work, update=True)

    @discord.ui.button(label="Previous", style=discord.ButtonStyle.secondary)
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button[CasePager]) -> None:
        await self._turn(interaction, -1)

    @discord.ui.button(label="Next", style=discord.ButtonStyle.secondary)
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button[CasePager]) -> None:
        await self._turn(interaction, +1)

    async def on_timeout(self) -> None:
        """Take the buttons off the message (they would no longer answer)."""
        self.live.discard(self.nonce)
        try:
            await self.origin.edit_original_response(view=None)
        except discord.HTTPException as exc:
            log.debug("could not take the page buttons off: %s", exc)


async def send_page(bot: ModBot, interaction: discord.Interaction, filters: CaseFilter, page: int) -> None:
    """Answer with one page of cases and, when there is more than one page, Previous/Next buttons."""
    actor = actor_of(interaction, await bot.policy(interaction.guild_id or 0))
    result = await search_cases(bot.store, PLATFORM, actor, str(interaction.guild_id), filters, page=page,
                                room=CONTENT_MAX, escape=md)  # a reason may quote a member (a flagged name)
    if result.pages < 2:
        await answer(interaction, result.text())
        return
    cog = bot.get_cog("Cases")
    live = cog.pagers if isinstance(cog, Cases) else None
    await interaction.followup.send(cut(result.text(), CONTENT_MAX), ephemeral=True,
                                    view=CasePager(bot, interaction, filters, result, live), wait=True)


def _id(user: discord.abc.User | None) -> str | None:
    return str(user.id) if user else None


def list_command(bot: ModBot) -> app_commands.Command:
    """``/case list [member] [moderator] [action] [label] [since] [until] [page]``."""

    @app_commands.describe(**FILTER_HELP)
    @app_commands.choices(action=ACTION_CHOICES)
    async def case_list(interaction: discord.Interaction, member: discord.User | None = None,
                        moderator: discord.User | None = None, action: str | None = None,
                        label: str | None = None, since: str | None = None, until: str | None = None,
                        page: app_commands.Range[int, 1, MAX_PAGE] = 1) -> None:
        async def work() -> None:
            filters = case_filter(member=_id(member), moderator=_id(moderator), action=action, label=label,
                                  since=since, until=until)
            await send_page(bot, interaction, filters, page)

        await guarded(interaction, work)

    return app_commands.Command(name="list", description="This server's cases, newest first (filters, pages)",
                                callback=case_list)


def search_command(bot: ModBot) -> app_commands.Command:
    """``/case search [text] [member] [moderator] [action] [label] [since] [until] [page]``."""

    @app_commands.describe(text="Words in the reason", **FILTER_HELP)
    async def search(interaction: discord.Interaction, text: str | None = None, member: discord.User | None = None,
                     moderator: discord.User | None = None, action: str | None = None, label: str | None = None,
                     since: str | None = None, until: str | None = None,
                     page: app_commands.Range[int, 1, MAX_PAGE] = 1) -> None:
        async def work() -> None:
            filters = case_filter(member=_id(member), moderator=_id(moderator), action=action, label=label,
                                  text=text, since=since, until=until)
            await send_page(bot, interaction, filters, page)

        await guarded(interaction, work)

    return app_commands.Command(name="search", description="Search this server's cases (words, filters, pages)",
                                callback=search)


def reason_command(bot: ModBot) -> app_commands.Command:
    """``/case reason number reason``: correct a case's reason (audited)."""

    @app_commands.describe(number="Case number", reason=f"The new reason (at most {MAX_REASON} characters)")
    async def reason(interaction: discord.Interaction, number: int, reason: str) -> None:
        async def work() -> None:
            actor = actor_of(interaction, await bot.policy(interaction.guild_id or 0))
            await answer(interaction, await change_reason(bot.store, PLATFORM, actor, str(interaction.guild_id),
                                                          number, reason, desk=bot.desk, escape=md))

        await guarded(interaction, work)

    return app_commands.Command(name="reason", description="Change a case's reason (audited)", callback=reason)


class Cases(commands.Cog):
    """``/member info``."""

    member = app_commands.Group(name="member", description="A member's moderation record",
                                default_permissions=discord.Permissions(manage_messages=True), guild_only=True)

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot
        #: nonces of the page buttons (:class:`CasePager`) this process holds
        self.pagers: set[str] = set()

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A Previous / Next of a page shown before the bot restarted (or whose pager timed out): no pager holds it
        (discord.py would leave it unanswered, "This interaction failed"), so the moderator is told how to go on;
        nothing else is done."""
        if interaction.type is not discord.InteractionType.component:
            return
        custom_id = str(dict(interaction.data or {}).get("custom_id", ""))
        if not custom_id.startswith(PAGER_PREFIX) or custom_id[len(PAGER_PREFIX):].split(":")[0] in self.pagers:
            return
        try:
            await answer(interaction, PAGER_GONE)
        except discord.HTTPException as exc:
            log.info("a page button of an earlier process could not be answered: %s", exc)

    @member.command(name="info", description="A member's cases, strikes, notes and appeals in this server")
    async def info(self, interaction: discord.Interaction, member: discord.User) -> None:
        async def work() -> None:
            actor = actor_of(interaction, await self.bot.policy(interaction.guild_id or 0))
            lines = await member_info(self.bot.store, PLATFORM, actor, str(interaction.guild_id), str(member.id),
                                      room=CONTENT_MAX, escape=md)
            await answer(interaction, "\n".join(lines))

        await guarded(interaction, work)


SUBCOMMANDS = ("list", "search", "reason")


async def setup(bot: ModBot) -> None:
    """Extension entry point: ``/member info``, and ``list`` / ``search`` / ``reason`` in ``cogs.moderation``'s
    ``/case``."""
    group = bot.tree.get_command("case")
    if not isinstance(group, app_commands.Group):
        raise RuntimeError("cogs.cases needs cogs.moderation (the /case group) loaded first")
    group.add_command(list_command(bot))
    group.add_command(search_command(bot))
    group.add_command(reason_command(bot))
    await bot.add_cog(Cases(bot))


async def teardown(bot: ModBot) -> None:
    """Extension exit: remove the added subcommands (a reload adds them afresh)."""
    group = bot.tree.get_command("case")
    if isinstance(group, app_commands.Group):
        for name in SUBCOMMANDS:
            group.remove_command(name)
