"""Persistent components (``discord.ui.DynamicItem``: they work after a restart) of review, appeal and raid cards and
of member notices, and the report / appeal modals.

Layer: ``bot.adapters.discord``. The state lives in the custom id (namespaced ``mod:...``, at most 100 characters,
Discord's limit); callbacks only parse it and hand over to :class:`cogs.review.Review`, which acknowledges the
interaction first (Discord's 3-second deadline), then asks the workflow, which checks permissions server-side.

Custom ids:
    ``mod:review:<review_id>:<decision>``  review card buttons (the words of ``bot.workflow.sanction_kinds``:
                                           dismiss, delete, warn, kick, ban, investigating)
    ``mod:review:<review_id>:timeout``     the duration select of a review card (values are seconds)
    ``mod:appeal:<server_id>:<case>``      Appeal button of a member notice (works from the DM)
    ``mod:appealdecide:<appeal_id>:<uphold|overturn>`` appeal card buttons
    ``mod:raid:<server_id>:<raid_id>:<action>``  raid card buttons (timeout, kick, ban, pause_invites, end)
    ``mod:confirm:<review|raid>:<id>:<decision>:<nonce>``  the reason modal of a decision that asks first
    ``mod:appealform:<server_id>:<case>``  the appeal form (modal) of a member
    ``mod:reportform:<member_id>:<channel_id|0>:<message_id|0>``  the report form (modal) of a member
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

import discord

from bot.workflow.confirm import CONFIRM_TTL_S, Confirmation
from bot.workflow.sanction_kinds import REGISTRY, Style
from bot.workflow.views import RaidCard, ReviewCard

log = logging.getLogger(__name__)

#: The registry's neutral button looks as Discord's.
STYLES: dict[Style, discord.ButtonStyle] = {Style.PRIMARY: discord.ButtonStyle.primary,
                                           Style.SECONDARY: discord.ButtonStyle.secondary,
                                           Style.DANGER: discord.ButtonStyle.danger,
                                           Style.SUCCESS: discord.ButtonStyle.success}
#: Timeout durations offered on a card: label -> seconds (28 days is Discord's cap).
TIMEOUT_CHOICES: dict[str, int] = {"10 minutes": 600, "1 hour": 3600, "1 day": 86400, "1 week": 604800,
                                   "28 days": 2419200}
#: Raid card buttons that are no sanction: action -> (label, style). The bulk sanctions come from the registry.
RAID_EXTRAS: dict[str, tuple[str, discord.ButtonStyle]] = {
    "pause_invites": ("Pause invites (24 h)", discord.ButtonStyle.secondary),
    "end": ("End raid mode", discord.ButtonStyle.success),
}


def review_button_look(decision: str) -> tuple[str, discord.ButtonStyle]:
    """Label and style of review card decision ``decision`` (a registry entry).

    Raises:
        KeyError: not a registered kind.
    """
    kind = REGISTRY.get(decision)
    if kind is None:
        raise KeyError(decision)
    return kind.label, STYLES[kind.style]


def raid_button_look(action: str) -> tuple[str, discord.ButtonStyle]:
    """Label and style of raid card action ``action`` (a bulk sanction of the registry, or an extra).

    Raises:
        KeyError: neither.
    """
    kind = REGISTRY.get(action)
    if kind is not None and kind.raid_label:
        return kind.raid_label, STYLES[kind.style]
    return RAID_EXTRAS[action]


class ReviewClicks(Protocol):
    """What the card and raid buttons call on the Review cog (``cogs/review.py``)."""

    async def on_review_click(self, interaction: discord.Interaction, review_id: int, decision: str,
                              seconds: int | None) -> None: ...

    async def on_appeal_click(self, interaction: discord.Interaction, appeal_id: int, decision: str) -> None: ...

    async def on_raid_click(self, interaction: discord.Interaction, raid_id: int, action: str) -> None: ...

    async def file_report(self, interaction: discord.Interaction, *, member_id: str, channel_id: str | None,
                          message_id: str | None, excerpt: str, reason: str) -> None: ...

    async def file_appeal(self, interaction: discord.Interaction, server_id: str, case_number: int,
                          text: str) -> None: ...

    def remember_excerpt(self, modal: ReportModal) -> None: ...


def _review_cog(interaction: discord.Interaction) -> ReviewClicks:
    """The loaded Review cog (looked up by name, so the adapter does not import ``cogs``). Raises ``RuntimeError``
    when it is not loaded."""
    cog = interaction.client.get_cog("Review")  # type: ignore[attr-defined]
    if cog is None:
        raise RuntimeError("Review cog not loaded")
    return cast(ReviewClicks, cog)


class ReviewButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                   template=r"mod:review:(?P<id>\d{1,18}):(?P<decision>(?!timeout$)[a-z_]{1,20})"):
    """A decision button on a review card (any registry kind's word but ``timeout``, the duration select's; the
    workflow refuses a word that is no decision)."""

    def __init__(self, review_id: int, decision: str, *, disabled: bool = False) -> None:
        label, style = review_button_look(decision) if decision in REGISTRY else (decision, STYLES[Style.SECONDARY])
        super().__init__(discord.ui.Button(label=label, style=style, disabled=disabled,
                                           custom_id=f"mod:review:{review_id}:{decision}"))
        self.review_id = review_id
        self.decision = decision

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> ReviewButton:
        return cls(int(match["id"]), match["decision"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).on_review_click(interaction, self.review_id, self.decision, None)


class ReviewTimeoutSelect(discord.ui.DynamicItem[discord.ui.Select[Any]],
                          template=r"mod:review:(?P<id>\d{1,18}):timeout"):
    """The "Timeout for..." duration select on a review card (values are seconds)."""

    def __init__(self, review_id: int, *, disabled: bool = False) -> None:
        options = [discord.SelectOption(label=k, value=str(v)) for k, v in TIMEOUT_CHOICES.items()]
        super().__init__(discord.ui.Select(placeholder="Timeout for...", options=options, disabled=disabled,
                                           custom_id=f"mod:review:{review_id}:timeout"))
        self.review_id = review_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> ReviewTimeoutSelect:
        return cls(int(match["id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        data = cast(Mapping[str, object], interaction.data or {})  # a component interaction's payload
        values = data.get("values")
        first = values[0] if isinstance(values, list) and values else None
        seconds = int(first) if first is not None and str(first).isdigit() else None
        await _review_cog(interaction).on_review_click(interaction, self.review_id, "timeout", seconds)


class AppealButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                   template=r"mod:appeal:(?P<server>\d{1,20}):(?P<case>\d{1,9})"):
    """The Appeal button of a member notice (DM): opens the appeal modal for that case."""

    def __init__(self, server_id: str, case_number: int) -> None:
        super().__init__(discord.ui.Button(label="Appeal", style=discord.ButtonStyle.secondary,
                                           custom_id=f"mod:appeal:{server_id}:{case_number}"))
        self.server_id = server_id
        self.case_number = case_number

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> AppealButton:
        return cls(match["server"], int(match["case"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await open_form(interaction, AppealModal(self.server_id, self.case_number))


class AppealDecisionButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                           template=r"mod:appealdecide:(?P<id>\d{1,18}):(?P<decision>uphold|overturn)"):
    """Uphold / Overturn on an appeal card."""

    def __init__(self, appeal_id: int, decision: str, *, disabled: bool = False) -> None:
        style = discord.ButtonStyle.success if decision == "overturn" else discord.ButtonStyle.secondary
        super().__init__(discord.ui.Button(label=decision.capitalize(), style=style, disabled=disabled,
                                           custom_id=f"mod:appealdecide:{appeal_id}:{decision}"))
        self.appeal_id = appeal_id
        self.decision = decision

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> AppealDecisionButton:
        return cls(int(match["id"]), match["decision"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).on_appeal_click(interaction, self.appeal_id, self.decision)


class RaidButton(discord.ui.DynamicItem[discord.ui.Button[Any]],
                 template=r"mod:raid:(?P<server>\d{1,20}):(?P<id>\d{1,18}):(?P<action>[a-z_]{1,20})"):
    """A bulk action on a raid card (a registry bulk sanction, pause_invites or end; the workflow refuses any
    other word)."""

    def __init__(self, server_id: str, raid_id: int, action: str, *, disabled: bool = False) -> None:
        try:
            label, style = raid_button_look(action)
        except KeyError:
            label, style = action, discord.ButtonStyle.secondary
        super().__init__(discord.ui.Button(label=label, style=style, disabled=disabled,
                                           custom_id=f"mod:raid:{server_id}:{raid_id}:{action}"))
        self.server_id = server_id
        self.raid_id = raid_id
        self.action = action

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> RaidButton:
        return cls(match["server"], int(match["id"]), match["action"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _review_cog(interaction).on_raid_click(interaction, self.raid_id, self.action)


def review_view(card: ReviewCard) -> discord.ui.View:
    """Components of a review card (decision buttons and the timeout select) or an appeal card (Uphold /
    Overturn); disabled once a final decision is recorded."""
    view = discord.ui.View(timeout=None)
    if card.appeal_id is not None:
        for decision in ("uphold", "overturn"):
            view.add_item(AppealDecisionButton(card.appeal_id, decision, disabled=card.decision is not None))
        return view
    disabled = card.final
    for kind in REGISTRY:
        if not kind.on_card or kind.key in card.capabilities_missing:
            continue
        view.add_item(ReviewButton(card.review_id, kind.key, disabled=disabled))
    if "timeout" not in card.capabilities_missing:
        view.add_item(ReviewTimeoutSelect(card.review_id, disabled=disabled))
    return view


def raid_view(card: RaidCard) -> discord.ui.View:
    """Bulk-action buttons of a raid card (only the actions the platform supports; disabled once ended)."""
    view = discord.ui.View(timeout=None)
    for action in card.actions_offered:
        kind = REGISTRY.get(action)
        if action in RAID_EXTRAS or (kind is not None and kind.raid_label):
            view.add_item(RaidButton(card.server_id, card.raid_id, action, disabled=card.closed))
    return view


def notice_view(server_id: str, case_number: int) -> discord.ui.View:
    """The Appeal button of a member notice (warning, timeout, kick or ban DM)."""
    view = discord.ui.View(timeout=None)
    view.add_item(AppealButton(server_id, case_number))
    return view


#: Custom id prefixes of the member forms: ``mod:appealform:<server_id>:<case>`` and
#: ``mod:reportform:<member_id>:<channel_id|0>:<message_id|0>`` (at most 100 characters). What a submit acts on is in
#: its custom id, so the submit is handled from it (:func:`read_form`) whenever it comes: after a restart, or however
#: long the member took to write.
APPEAL_FORM = "mod:appealform:"
REPORT_FORM = "mod:reportform:"
#: The custom ids of the forms' text inputs.
APPEAL_INPUT = "appeal"
REPORT_INPUT = "reason"


class AppealModal(discord.ui.Modal, title="Appeal a moderation case"):
    """Asks for the appeal text; the case comes from the button or ``/appeal`` and travels in the custom id
    (:data:`APPEAL_FORM`). Opened with :func:`open_form`; its submit is handled by :class:`cogs.review.Review`."""

    text: discord.ui.TextInput[Any] = discord.ui.TextInput(
        label="Why should this case be overturned?", style=discord.TextStyle.paragraph, min_length=5,
        max_length=1500, custom_id=APPEAL_INPUT)

    def __init__(self, server_id: str, case_number: int) -> None:
        super().__init__(timeout=None, custom_id=f"{APPEAL_FORM}{server_id}:{case_number}")
        self.server_id = server_id
        self.case_number = case_number


class ReportModal(discord.ui.Modal, title="Report to moderators"):
    """Asks for the reason of a report about a message (context menu) or a member (``/report``); who and which
    message travel in the custom id (:data:`REPORT_FORM`). Opened with :func:`open_form`; its submit is handled by
    :class:`cogs.review.Review`."""

    reason: discord.ui.TextInput[Any] = discord.ui.TextInput(
        label="What is wrong?", style=discord.TextStyle.paragraph, min_length=3, max_length=1000,
        custom_id=REPORT_INPUT)

    def __init__(self, *, member_id: str, channel_id: str | None = None, message_id: str | None = None,
                 excerpt: str = "") -> None:
        super().__init__(timeout=None,
                         custom_id=f"{REPORT_FORM}{member_id}:{channel_id or 0}:{message_id or 0}")
        self.member_id = member_id
        self.channel_id = channel_id
        self.message_id = message_id
        self.excerpt = excerpt


async def open_form(interaction: discord.Interaction, modal: AppealModal | ReportModal) -> None:
    """Open a member form as the interaction's answer. discord.py is left holding nothing (it would keep an open
    modal in memory until submitted, and drop a submit it no longer holds: after a restart, or past a timeout,
    losing what the member wrote); the submit is read from its custom id by :func:`read_form`."""
    modal.stop()  # a finished modal is not stored by send_modal
    await interaction.response.send_modal(modal)


@dataclass(frozen=True, slots=True)
class AppealForm:
    """A submitted appeal form: the server and case appealed, and the member's text."""

    server_id: str
    case_number: int
    text: str


@dataclass(frozen=True, slots=True)
class ReportForm:
    """A submitted report form: the member reported, the message's channel and id (``None``: a report about the
    member), and the reporter's reason."""

    member_id: str
    channel_id: str | None
    message_id: str | None
    reason: str


_APPEAL_ID = re.compile(rf"{re.escape(APPEAL_FORM)}(?P<server>\d{{1,20}}):(?P<case>\d{{1,9}})")
_REPORT_ID = re.compile(rf"{re.escape(REPORT_FORM)}(?P<member>\d{{1,20}}):(?P<channel>\d{{1,20}}):(?P<message>\d{{1,20}})")


def _input_value(components: object, input_id: str) -> str | None:
    """The value of text input ``input_id`` in a modal submit's components (action rows, or labels holding one
    component), or ``None`` when it is not there."""
    if not isinstance(components, list):
        return None
    for c in components:
        if not isinstance(c, dict):
            continue
        if c.get("type") == 4 and c.get("custom_id") == input_id:
            value = c.get("value")
            return value if isinstance(value, str) else ""
        found = _input_value(c.get("components"), input_id)
        if found is None and isinstance(c.get("component"), dict):
            found = _input_value([c["component"]], input_id)
        if found is not None:
            return found
    return None


def read_form(data: Mapping[str, object]) -> AppealForm | ReportForm | None:
    """A member form's submit (``interaction.data`` of a modal submit), or ``None`` when it is not one (another
    modal, a malformed custom id, its text input missing)."""
    custom_id = str(data.get("custom_id", ""))
    components = data.get("components")
    if (m := _APPEAL_ID.fullmatch(custom_id)) is not None:
        text = _input_value(components, APPEAL_INPUT)
        return None if text is None else AppealForm(m["server"], int(m["case"]), text)
    if (m := _REPORT_ID.fullmatch(custom_id)) is not None:
        reason = _input_value(components, REPORT_INPUT)
        if reason is None:
            return None
        channel, message = m["channel"], m["message"]
        return ReportForm(m["member"], None if channel == "0" else channel, None if message == "0" else message,
                          reason)
    return None


#: Custom id prefix of confirmation modals: ``mod:confirm:<review|raid>:<id>:<decision>:<nonce>`` (at most 100
#: characters). The nonce keeps two moderators' modals on one card apart (discord.py keys open modals by custom id).
CONFIRM_PREFIX = "mod:confirm:"


class ReasonModal(discord.ui.Modal):
    """The confirmation of a decision that asks first (Kick, Ban, a raid card's bulk sanctions): one required
    reason, rendered from the workflow's :class:`~bot.workflow.confirm.Confirmation` (its lengths fit Discord's
    limits: title and label 45, placeholder 100, text input up to 4,000). It stays open
    :data:`~bot.workflow.confirm.CONFIRM_TTL_S` seconds; only a submit acts (``on_reason``), so closing it
    changes nothing. A submit after it expired (or after a restart) is answered by :class:`cogs.review.Review`."""

    def __init__(self, confirmation: Confirmation, what: str,
                 on_reason: Callable[[discord.Interaction, str], Awaitable[None]],
                 on_close: Callable[[ReasonModal], None], *, timeout: float = CONFIRM_TTL_S) -> None:
        custom_id = f"{CONFIRM_PREFIX}{what}:{secrets.token_hex(6)}"[:100]
        super().__init__(title=confirmation.title[:45], timeout=timeout, custom_id=custom_id)
        self.reason: discord.ui.TextInput[Any] = discord.ui.TextInput(
            label=confirmation.label[:45], style=discord.TextStyle.paragraph, required=True,
            placeholder=confirmation.placeholder[:100], default=confirmation.default or None,
            min_length=confirmation.min_length, max_length=min(confirmation.max_length, 4000))
        self.add_item(self.reason)
        self._on_reason = on_reason
        self._on_close = on_close

    async def on_submit(self, interaction: discord.Interaction) -> None:
        try:
            await self._on_reason(interaction, self.reason.value)
        finally:
            self._on_close(self)

    async def on_timeout(self) -> None:
        self._on_close(self)


DYNAMIC_ITEMS = (ReviewButton, ReviewTimeoutSelect, AppealButton, AppealDecisionButton, RaidButton)
