"""Persistent review, appeal and warn-DM components (``discord.ui.DynamicItem``: they work after a restart).

Layer: ``bot.adapters.discord``. The state lives in the custom id (namespaced ``mod:...``, under 100 characters);
callbacks only parse it and hand over to the Review cog (``interaction.client.get_cog("Review")``), which
checks permissions server-side and does the work.

Custom ids:
    ``mod:review:<review_id>:<decision>``  buttons on a review card (decision: dismiss, delete, warn, kick, ban,
        investigating)
    ``mod:review:<review_id>:timeout``     the duration select on a review card (values are seconds)
    ``mod:appeal:<server_id>:<case>``      Appeal button in a warn DM (opens the appeal modal)
    ``mod:appealdecide:<appeal_id>:<uphold|overturn>`` buttons on an appeal card
"""

from __future__ import annotations

import logging
import re
from typing import Any

import discord

log = logging.getLogger(__name__)

#: Button decisions on a review card, mapped to their label and style.
REVIEW_BUTTONS: dict[str, tuple[str, discord.ButtonStyle]] = {
    "dismiss": ("Dismiss (false positive)", discord.ButtonStyle.secondary),
    "delete": ("Delete", discord.ButtonStyle.primary),
    "warn": ("Warn", discord.ButtonStyle.primary),
    "kick": ("Kick", discord.ButtonStyle.danger),
    "ban": ("Ban", discord.ButtonStyle.danger),
    "investigating": ("Investigating", discord.ButtonStyle.secondary),
}
#: Timeout durations offered on a card: label -> seconds (28 days is Discord's cap).
TIMEOUT_CHOICES: dict[str, int] = {"10 minutes": 600, "1 hour": 3600, "1 day": 86400, "1 week": 604800,
                                   "28 days": 2419200}


def _review_cog(interaction: discord.Interaction) -> Any:
    cog = interaction.client.get_cog("Review")  # type: ignore[attr-defined]
    if cog is None:
        raise RuntimeError("Review cog not loaded")
    return cog


class ReviewButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                   template=r"mod:review:(?P<id>\d+):(?P<decision>dismiss|delete|warn|kick|ban|investigating)"):
    """A decision button on a review card."""

    def __init__(self, review_id: int, decision: str, *, disabled: bool = False) -> None:
        label, style = REVIEW_BUTTONS[decision]
        super().__init__(discord.ui.Button(label=label, style=style, disabled=disabled,
                                           custom_id=f"mod:review:{review_id}:{decision}"))
        self.review_id = review_id
        self.decision = decision

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button[Any],
                             match: re.Match[str], /) -> ReviewButton:
        return cls(int(match["id"]), match["decision"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).on_review_click(interaction, self.review_id, self.decision, None)


class ReviewTimeoutSelect(discord.ui.DynamicItem[discord.ui.Select[Any]], template=r"mod:review:(?P<id>\d+):timeout"):
    """The "Timeout for..." duration select on a review card (values are seconds)."""

    def __init__(self, review_id: int, *, disabled: bool = False) -> None:
        options = [discord.SelectOption(label=k, value=str(v)) for k, v in TIMEOUT_CHOICES.items()]
        super().__init__(discord.ui.Select(placeholder="Timeout for...", options=options, disabled=disabled,
                                           custom_id=f"mod:review:{review_id}:timeout"))
        self.review_id = review_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Select[Any],
                             match: re.Match[str], /) -> ReviewTimeoutSelect:
        return cls(int(match["id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        values = (interaction.data or {}).get("values") or []
        seconds = int(values[0]) if values and str(values[0]).isdigit() else None
        await _review_cog(interaction).on_review_click(interaction, self.review_id, "timeout", seconds)


class AppealButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"mod:appeal:(?P<server>\d+):(?P<case>\d+)"):
    """The Appeal button in a warn DM: opens the appeal modal for that case."""

    def __init__(self, server_id: str, case_number: int) -> None:
        super().__init__(discord.ui.Button(label="Appeal", style=discord.ButtonStyle.secondary,
                                           custom_id=f"mod:appeal:{server_id}:{case_number}"))
        self.server_id = server_id
        self.case_number = case_number

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button[Any],
                             match: re.Match[str], /) -> AppealButton:
        return cls(match["server"], int(match["case"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(AppealModal(self.server_id, self.case_number))


class AppealDecisionButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                           template=r"mod:appealdecide:(?P<id>\d+):(?P<decision>uphold|overturn)"):
    """Uphold / Overturn on an appeal card."""

    def __init__(self, appeal_id: int, decision: str, *, disabled: bool = False) -> None:
        style = discord.ButtonStyle.success if decision == "overturn" else discord.ButtonStyle.secondary
        super().__init__(discord.ui.Button(label=decision.capitalize(), style=style, disabled=disabled,
                                           custom_id=f"mod:appealdecide:{appeal_id}:{decision}"))
        self.appeal_id = appeal_id
        self.decision = decision

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button[Any],
                             match: re.Match[str], /) -> AppealDecisionButton:
        return cls(int(match["id"]), match["decision"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).on_appeal_click(interaction, self.appeal_id, self.decision)


def review_view(review_id: int, *, disabled: bool = False) -> discord.ui.View:
    """The component rows of a review card: six buttons and the timeout select."""
    view = discord.ui.View(timeout=None)
    for decision in REVIEW_BUTTONS:
        view.add_item(ReviewButton(review_id, decision, disabled=disabled))
    view.add_item(ReviewTimeoutSelect(review_id, disabled=disabled))
    return view


def appeal_view(appeal_id: int, *, disabled: bool = False) -> discord.ui.View:
    """Uphold / Overturn buttons of an appeal card."""
    view = discord.ui.View(timeout=None)
    for decision in ("uphold", "overturn"):
        view.add_item(AppealDecisionButton(appeal_id, decision, disabled=disabled))
    return view


def warn_view(server_id: str, case_number: int) -> discord.ui.View:
    """The Appeal button attached to a warn DM."""
    view = discord.ui.View(timeout=None)
    view.add_item(AppealButton(server_id, case_number))
    return view


class AppealModal(discord.ui.Modal, title="Appeal a moderation case"):
    """Asks for the appeal text; the case comes from the button or ``/appeal``."""

    text: discord.ui.TextInput[Any] = discord.ui.TextInput(
        label="Why should this case be overturned?", style=discord.TextStyle.paragraph, min_length=5,
        max_length=1500)

    def __init__(self, server_id: str, case_number: int) -> None:
        super().__init__(timeout=900)
        self.server_id = server_id
        self.case_number = case_number

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).file_appeal(interaction, self.server_id, self.case_number, self.text.value)


class ReportModal(discord.ui.Modal, title="Report to moderators"):
    """Asks for the reason of a report about a message (context menu) or a member (``/report``)."""

    reason: discord.ui.TextInput[Any] = discord.ui.TextInput(
        label="What is wrong?", style=discord.TextStyle.paragraph, min_length=3, max_length=1000)

    def __init__(self, *, member_id: str, channel_id: str | None = None, message_id: str | None = None,
                 excerpt: str = "") -> None:
        super().__init__(timeout=900)
        self.member_id = member_id
        self.channel_id = channel_id
        self.message_id = message_id
        self.excerpt = excerpt

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).file_report(interaction, member_id=self.member_id, channel_id=self.channel_id,
                                                   message_id=self.message_id, excerpt=self.excerpt,
                                                   reason=self.reason.value)


DYNAMIC_ITEMS = (ReviewButton, ReviewTimeoutSelect, AppealButton, AppealDecisionButton)
