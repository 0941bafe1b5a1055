"""Decisions that ask first: which moderator decisions need a confirmation with a reason, and what the reason does.

Layer: ``bot.workflow`` (platform-neutral). The adapters only render a :class:`Confirmation` as their platform's
modal (Discord: a ``discord.ui.Modal`` with one text input; Slack: ``views.open`` with one ``plain_text_input``) and
hand the typed reason back to :meth:`~bot.workflow.reviews.ReviewsMixin.decide_review` or
:meth:`~bot.workflow.raids.RaidResponse.raid_action`, which refuse a decision that asks first when it comes without
a reason, and run every permission check again at submit.

What the reason does: it becomes the reason of the case (each raider's case for a bulk action), as typed; the member
reads it in their notice, the platform's audit log records it, and the mod log and ``case show`` show it.

Why required and prefilled: a kick or ban cannot be undone from the card, and a moderator reading the mod log months
later needs to know why it was taken (issue 28: "find every case about a member and why each was taken"); the text
input is prefilled with the card's own reason (the flag, or the raid), so confirming during a raid costs one click,
and what the moderator submits, edited or not, is what the case says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.models import ActionKind
from bot.core.storable import storable_text
from bot.workflow.authz import Refused
from bot.workflow.sanction_kinds import REGISTRY

#: Shortest reason accepted, in characters (after stripping spaces).
REASON_MIN = 3
#: Longest reason accepted, in characters: what Discord's audit log keeps of a reason (``X-Audit-Log-Reason``,
#: 512; the Discord enforcer sends at most 500) so the member's notice, the audit log and the case say the same;
#: well within the mod log's 1,000 characters per case reason, Discord's text input limit (4,000) and Slack's
#: ``plain_text_input`` limit (3,000).
REASON_MAX = 500
#: Seconds a confirmation stays open (Discord: the modal's timeout; Slack: checked against the time it was opened,
#: carried in the modal's ``private_metadata``). A later submit changes nothing and says so.
CONFIRM_TTL_S = 600

#: Discord's limits for a modal (Slack's title is shorter, 24: its adapter cuts).
TITLE_MAX = 45
LABEL_MAX = 45
PLACEHOLDER_MAX = 100

_VERBS = {ActionKind.TIMEOUT: "Time out", ActionKind.KICK: "Kick", ActionKind.BAN: "Ban"}


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What a confirmation modal asks (adapters render it; lengths fit Discord's limits).

    Attributes:
        title: The modal's title, at most :data:`TITLE_MAX` characters ("Ban member (review #12)").
        label: The text input's label, at most :data:`LABEL_MAX` characters.
        placeholder: Shown while the input is empty, at most :data:`PLACEHOLDER_MAX` characters.
        default: The prefilled reason (the card's own), at most :data:`REASON_MAX` characters.
        submit: The submit button's word ("Ban", "Kick all").
        min_length: Shortest reason, :data:`REASON_MIN`.
        max_length: Longest reason, :data:`REASON_MAX`.
    """

    title: str
    label: str
    placeholder: str
    default: str
    submit: str
    min_length: int = REASON_MIN
    max_length: int = REASON_MAX


def asks_first(choice: str) -> bool:
    """Whether review card decision ``choice`` (a key of :data:`bot.workflow.common.DECISIONS`) asks first
    (:attr:`~bot.workflow.sanction_kinds.SanctionKind.asks_first`: Kick and Ban, which remove the member)."""
    kind = REGISTRY.get(choice)
    return kind is not None and kind.asks_first


def raid_asks_first(action: str) -> bool:
    """Whether raid card action ``action`` asks first (the bulk sanctions, which act on every raider at once;
    ``"pause_invites"`` and ``"end"`` do not)."""
    kind = REGISTRY.get(action)
    return kind is not None and bool(kind.raid_label) and kind.raid_asks_first


def check_reason(reason: str | None, what: str) -> str:
    """The reason a moderator submitted, stripped, a NUL or a lone surrogate in it as U+FFFD
    (:func:`~bot.core.storable.storable_text`: the mod log stores it so on both backends).

    Args:
        reason: The submitted text (``None``: the decision came without its confirmation).
        what: The decision, for the refusal ("Ban").

    Raises:
        Refused: no reason, shorter than :data:`REASON_MIN` or longer than :data:`REASON_MAX` characters
            (nothing was changed).
    """
    if reason is None:
        raise Refused(f"{what} asks for a reason first: press the button and fill in the reason. Nothing was "
                      "changed.")
    text = storable_text(reason.strip())
    if len(text) < REASON_MIN:
        raise Refused(f"{what} needs a reason of at least {REASON_MIN} characters. Nothing was changed.")
    if len(text) > REASON_MAX:
        raise Refused(f"That reason is {len(text)} characters; at most {REASON_MAX} fit (the audit log and the "
                      f"member's notice keep {REASON_MAX}). Shorten it and try again. Nothing was changed.")
    return text


def expired(opened_at: datetime, now: datetime) -> bool:
    """Whether a confirmation opened at ``opened_at`` is past :data:`CONFIRM_TTL_S` at ``now``."""
    return (now - opened_at).total_seconds() > CONFIRM_TTL_S


EXPIRED = (f"This confirmation expired (they stay open {CONFIRM_TTL_S // 60} minutes) or was already submitted. "
           "Nothing was changed; press the button again.")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def review_confirmation(kind: ActionKind, review_id: int, default: str, *,
                        channel_only: bool = False) -> Confirmation:
    """The confirmation of a kick or ban decided on review card ``review_id`` (``default``: the prefilled reason).
    ``channel_only``: the platform's kick removes the member from the channel only (Slack), and it says so."""
    verb = "Remove" if channel_only and kind is ActionKind.KICK else _VERBS.get(kind, kind.label.capitalize())
    whom = "member from channel" if channel_only and kind is ActionKind.KICK else "member"
    return Confirmation(title=_cut(f"{verb} {whom} (review #{review_id})", TITLE_MAX),
                        label="Reason (the member is told it)",
                        placeholder="Why? It goes on the case, in the mod log and the audit log.",
                        default=_cut(default.strip(), REASON_MAX), submit=verb)


def raid_confirmation(kind: ActionKind, raid_id: int, raiders: int, default: str, *,
                      channel_only: bool = False) -> Confirmation:
    """The confirmation of a bulk action on raid ``raid_id`` (``raiders``: how many it acts on; ``channel_only``:
    as for :func:`review_confirmation`)."""
    verb = "Remove" if channel_only and kind is ActionKind.KICK else _VERBS.get(kind, kind.label.capitalize())
    where = " from channel" if channel_only and kind is ActionKind.KICK else ""
    return Confirmation(title=_cut(f"{verb} all {raiders}{where} (raid #{raid_id})", TITLE_MAX),
                        label="Reason (on each raider's case)",
                        placeholder="Why? Each raider's case, notice and audit log entry says it.",
                        default=_cut(default.strip(), REASON_MAX), submit=f"{verb} all")


__all__ = ["CONFIRM_TTL_S", "EXPIRED", "REASON_MAX", "REASON_MIN",
           "Confirmation", "asks_first", "check_reason", "expired", "raid_asks_first", "raid_confirmation",
           "review_confirmation"]
