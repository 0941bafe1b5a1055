"""Member commands: "Report to moderators" (message menu), /report, /appeal, /mystatus, /mydata export|forget.

Layer: cogs (discord.py extension). Every answer is ephemeral. Bad input (unknown case, another member's or
another server's case, no working review channel) gets a clear ephemeral error and changes nothing.
"""

from __future__ import annotations

import io
import json
import logging
import zipfile
from typing import TYPE_CHECKING, cast

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.cards import FIELD_VALUE_MAX, md
from bot.adapters.discord.interact import answer, guarded
from bot.adapters.discord.views import AppealModal, ReportModal, ReviewClicks, open_form
from bot.workflow import words
from bot.workflow.cases import strike_lines

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: Largest case number accepted from a member (SQLite integers are larger; this only rejects nonsense).
MAX_CASE = 10_000_000


def export_file(record: object, stem: str, limit: int) -> tuple[str, discord.File | None]:
    """The answer to ``/mydata export``: its text and the file, ``<stem>.json``, or, when that is larger than
    ``limit`` bytes (the interaction's ``attachment_size_limit``: Discord refuses a larger file with 413), the same
    JSON in ``<stem>.zip`` (the verdicts' scores compress about twentyfold). When even the zip is too large: no
    file, and a text that says so (both sizes) and whom to ask."""
    blob = json.dumps(record, indent=2, default=str).encode()
    if len(blob) <= limit:
        return "Everything this bot stores about you in this server:", discord.File(io.BytesIO(blob),
                                                                                  filename=f"{stem}.json")
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(f"{stem}.json", blob)
    if packed.tell() <= limit:
        packed.seek(0)
        return ("Everything this bot stores about you in this server (zipped: the JSON file is too large for "
                "Discord):", discord.File(packed, filename=f"{stem}.zip"))
    return (f"Your data is too large to send here: {_size(packed.tell())} even zipped, and Discord takes files of "
            f"at most {_size(limit)}. Ask the server's admins for a copy.", None)


def _size(n: int) -> str:
    """``300 bytes``, ``64 KiB``, ``10.0 MiB``."""
    if n < 1024:
        return f"{n:,} bytes"
    if n < 1024 * 1024:
        return f"{n // 1024:,} KiB"
    return f"{n / (1024 * 1024):,.1f} MiB"


class Member(commands.Cog):
    """Commands every member can use."""

    mydata = app_commands.Group(name="mydata", description="Your data held by the moderation bot", guild_only=True)

    def __init__(self, bot: ModBot) -> None:
        self.bot = bot
        self.report_menu = app_commands.ContextMenu(name="Report to moderators", callback=self.report_message)
        self.report_menu.guild_only = True

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.report_menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.report_menu.name, type=self.report_menu.type)

    async def report_message(self, interaction: discord.Interaction, message: discord.Message) -> None:
        """Message context menu: report a message; the reason is asked in a modal."""
        modal = ReportModal(member_id=str(message.author.id), channel_id=str(message.channel.id),
                            message_id=str(message.id), excerpt=message.content or "")
        review = self.bot.get_cog("Review")
        if review is not None:  # the card shows the message's text when automod did not keep it
            cast(ReviewClicks, review).remember_excerpt(modal)
        await open_form(interaction, modal)

    @app_commands.command(name="report", description="Report a member to the moderators")
    @app_commands.describe(member="Who you are reporting")
    @app_commands.guild_only()
    async def report(self, interaction: discord.Interaction, member: discord.User) -> None:
        """Report a member; the reason is asked in a modal."""
        if member.id == interaction.user.id:
            await answer(interaction, "You cannot report yourself.")
            return
        await open_form(interaction, ReportModal(member_id=str(member.id)))

    @app_commands.command(name="appeal", description="Appeal one of your moderation cases")
    @app_commands.describe(case="The case number from your notice or /mystatus")
    @app_commands.guild_only()
    async def appeal(self, interaction: discord.Interaction, case: int) -> None:
        """Ask for the appeal text in a modal at once (a modal must be the first answer, within 3 seconds); the
        workflow checks on submit that the case is the member's own, in this server."""
        assert interaction.guild is not None
        if not 1 <= case <= MAX_CASE:
            await answer(interaction, f"Case numbers go from 1 to {MAX_CASE}.")
            return
        await open_form(interaction, AppealModal(str(interaction.guild.id), case))

    @app_commands.command(name="mystatus", description="Your active strikes and open appeals (only you see this)")
    @app_commands.guild_only()
    async def mystatus(self, interaction: discord.Interaction) -> None:
        """Active strikes with their expiry, and open appeals."""
        async def work() -> None:
            strikes, appeals = await self.bot.workflow.member_status(str(interaction.guild_id),
                                                                     str(interaction.user.id))
            embed = discord.Embed(title="Your moderation status", colour=discord.Colour.blurple())
            if strikes:
                lines = strike_lines(strikes, room=FIELD_VALUE_MAX,
                                     when=lambda at: discord.utils.format_dt(at, "R"), escape=md)
                embed.add_field(name=f"Active strikes: {len(strikes)}{words.worth(len(strikes), sum(s.points for s in strikes))}",
                                value="\n".join(lines), inline=False)
            else:
                embed.add_field(name="Active strikes", value="none", inline=False)
            embed.add_field(name="Open appeals", value="\n".join(
                f"appeal #{a.id} of case #{a.case_number}" for a in appeals)[:1024] or "none", inline=False)
            await answer(interaction, embed=embed)

        await guarded(interaction, work)

    @mydata.command(name="export", description="Get everything the bot stores about you as a JSON file")
    async def export(self, interaction: discord.Interaction) -> None:
        """Send the member's records (messages kept, verdicts, cases, strikes, reports, appeals) as JSON."""
        async def work() -> None:
            record = await self.bot.workflow.export_member(str(interaction.guild_id), str(interaction.user.id))
            text, file = export_file(record, f"mydata-{interaction.guild_id}", interaction.filesize_limit)
            await answer(interaction, text, **({"file": file} if file is not None else {}))

        await guarded(interaction, work)

    @mydata.command(name="forget", description="Erase your message text and pseudonymise your records here")
    @app_commands.describe(confirm="Type FORGET to confirm")
    async def forget(self, interaction: discord.Interaction, confirm: str) -> None:
        """Erase stored message text and pseudonymise the member's id; what enforcement needs stays."""
        async def work() -> None:
            if confirm != "FORGET":
                await answer(interaction, "Nothing was erased: type FORGET (capitals) to confirm.")
                return
            result = await self.bot.workflow.forget_member(str(interaction.guild_id), str(interaction.user.id))
            log.info("member data forgotten", extra={"server": interaction.guild_id})
            await answer(interaction, result.text)

        await guarded(interaction, work)


async def setup(bot: ModBot) -> None:
    """Extension entry point."""
    await bot.add_cog(Member(bot))
