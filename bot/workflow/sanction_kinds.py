"""The sanction registry: one entry per thing a moderator can pick on a card (a sanction, or dismiss /
investigating), from which authorization, the workflow, both adapters' buttons and custom ids, and the report's
words derive.

Layer: ``bot.workflow`` (platform-neutral). Before this registry a sanction kind was written in about ten places
(issue 29); now each of them reads :data:`REGISTRY`:

* :data:`bot.workflow.authz.REQUIRED` (permission per action) is :data:`ACTION_PERMISSION`;
* the workflow's capability checks (cards, decisions, sanctions, raid cards) use :meth:`SanctionRegistry.capable`;
* :data:`bot.workflow.common.DECISIONS` (card decision -> review decision, action, outcome) is a live view;
* :mod:`bot.workflow.confirm` asks first where :attr:`SanctionKind.asks_first` says so;
* Discord's review and raid buttons (``bot.adapters.discord.views``) and Slack's blocks
  (``bot.adapters.slack.blocks``) take their labels, styles and custom-id words from the entries;
* the report's "would" / "did" words (``bot.report``) are :data:`ACTION_WORDS`.

* the strike points a kind earns are :meth:`SanctionKind.strike_points` (the policy's ``strikes.points`` of its
  action: :data:`bot.core.policy.DEFAULT_STRIKE_POINTS` unless the server overrides them).

What stays outside: :class:`bot.core.models.ActionKind` (the fixed, ordered set of actions the core judges with;
an entry names one), the default points per action (:data:`bot.core.policy.DEFAULT_STRIKE_POINTS`: automod's
strikes are judged in the core, which never imports the workflow, so the table lives there and an entry reads
its action's), and carrying a sanction out on the platform (``SanctionsMixin._sanction_on_platform``: the DM's order
and the timeout's cap differ per action).

Adding a kind is one :meth:`SanctionRegistry.register` call (see ``tests/test_sanction_kinds.py``): a new card
button and custom id on every platform that can, its decision, its confirmation, its raid-card bulk action.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.models import ActionKind, ReviewDecision
from bot.core.policy import DEFAULT_STRIKE_POINTS, Policy
from bot.workflow.permissions import Permission
from bot.workflow.ports import Capability


class Style(enum.StrEnum):
    """A button's look, in platform-neutral words (Discord: the ``ButtonStyle`` of that name; Slack: ``primary``
    and ``danger``, no style for the others)."""

    PRIMARY = "primary"
    SECONDARY = "secondary"
    DANGER = "danger"
    SUCCESS = "success"


@dataclass(frozen=True, slots=True)
class SanctionKind:
    """One choice a moderator can make on a review card (and, for a bulk sanction, on a raid card).

    Attributes:
        key: The word in custom ids and action ids (``mod:review:<id>:<key>``; lower-case letters and ``_``, at
            most 20) and in :data:`bot.workflow.common.DECISIONS`.
        action: What is carried out and recorded on the case (``NONE`` for dismiss / investigating).
        decision: The review item's decision when chosen.
        outcome: Past-tense words on the decided card and in the mod log ("banned").
        permission: What the moderator needs (entries sharing an action agree).
        capability: What the platform must be able to do (``None``: always possible, e.g. a warning, which
            counts even when its DM cannot be delivered).
        channel_capability: A weaker stand-in that acts in the message's channel only (Slack's "remove from
            channel" for a kick); used when the platform lacks ``capability`` and the item has a channel.
        label: The card button's label; ``channel_label`` where the stand-in is used.
        style: The card button's look.
        on_card: Offered as a button (a timeout is a duration select instead).
        raid_label: The raid card's bulk action ("Ban all"; empty: not a bulk action); ``raid_channel_label``
            where the stand-in is used.
        asks_first: A card decision that opens the reason modal first (:mod:`bot.workflow.confirm`).
        raid_asks_first: The same for its raid-card bulk action.
        would: The report's words for a shadow verdict of this action ("would ban").
        did: The report's words for an enforced one ("banned").
    """

    key: str
    action: ActionKind
    decision: ReviewDecision
    outcome: str
    permission: Permission
    label: str
    style: Style
    capability: Capability | None = None
    channel_capability: Capability | None = None
    channel_label: str = ""
    on_card: bool = True
    raid_label: str = ""
    raid_channel_label: str = ""
    asks_first: bool = False
    raid_asks_first: bool = False
    would: str = ""
    did: str = ""

    def strike_points(self, policy: Policy | None = None) -> int:
        """The strike points this kind earns: its action's ``strikes.points`` in ``policy`` (a server's override
        included), or :data:`bot.core.policy.DEFAULT_STRIKE_POINTS` without one; 0 for dismiss / investigating
        and when the policy's strikes are off. A kind sharing an action (a kick by another name) earns that
        action's points: a case records the action, and the strike is the action's."""
        if policy is not None:
            return policy.strikes.points.get(self.action.label, 0) if policy.strikes.enabled else 0
        return DEFAULT_STRIKE_POINTS.get(self.action.label, 0)


class SanctionRegistry:
    """The entries, in card order (the card shows its buttons in this order)."""

    def __init__(self, kinds: list[SanctionKind]) -> None:
        self._kinds: dict[str, SanctionKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: SanctionKind, *, before: str | None = None) -> None:
        """Add an entry (at the end, or before entry ``before``).

        Raises:
            ValueError: a key already taken, not lower-case letters and ``_`` (1-20), or a permission that
                disagrees with another entry of the same action.
        """
        if kind.key in self._kinds:
            raise ValueError(f"sanction kind {kind.key!r} is already registered")
        if not (0 < len(kind.key) <= 20 and kind.key.replace("_", "").isalpha() and kind.key.islower()):
            raise ValueError(f"sanction kind key {kind.key!r}: lower-case letters and _ only, at most 20")
        same = next((k for k in self._kinds.values() if k.action is kind.action and kind.action > ActionKind.REVIEW),
                    None)
        if same is not None and same.permission is not kind.permission:
            raise ValueError(f"{kind.key!r} and {same.key!r} act as {kind.action.label} but need different "
                             "permissions")
        if before is None:
            self._kinds[kind.key] = kind
            return
        items = list(self._kinds.items())
        at = next(i for i, (k, _) in enumerate(items) if k == before)
        self._kinds = dict([*items[:at], (kind.key, kind), *items[at:]])

    def unregister(self, key: str) -> None:
        """Remove entry ``key`` (a test fixture's cleanup)."""
        del self._kinds[key]

    def __iter__(self) -> Iterator[SanctionKind]:
        return iter(list(self._kinds.values()))

    def __contains__(self, key: object) -> bool:
        return key in self._kinds

    def get(self, key: str) -> SanctionKind | None:
        """The entry of ``key``, or ``None``."""
        return self._kinds.get(key)

    def of_action(self, action: ActionKind) -> SanctionKind | None:
        """The entry named after ``action`` (``"ban"`` for ``BAN``), or ``None`` (none, log, review)."""
        return self._kinds.get(action.label)

    def raid_kinds(self) -> list[SanctionKind]:
        """The entries that are raid-card bulk actions, in card order."""
        return [k for k in self if k.raid_label]

    @staticmethod
    def capable(kind: SanctionKind, can: set[Capability] | frozenset[Capability], channel_id: str | None) -> bool:
        """Whether a platform holding capabilities ``can`` carries out ``kind`` (``channel_id``: the message's
        channel, where a channel stand-in acts)."""
        return (kind.capability is None or kind.capability in can
                or (kind.channel_capability is not None and kind.channel_capability in can and bool(channel_id)))

    @staticmethod
    def by_channel(kind: SanctionKind, can: set[Capability] | frozenset[Capability]) -> bool:
        """Whether ``kind`` is carried out by its channel stand-in on a platform holding ``can``."""
        return (kind.capability is not None and kind.capability not in can and kind.channel_capability is not None
                and kind.channel_capability in can)


#: The built-in entries.
REGISTRY = SanctionRegistry([
    SanctionKind("dismiss", ActionKind.NONE, ReviewDecision.DISMISSED, "dismissed (false positive)",
                 Permission.MANAGE_MESSAGES, "Dismiss (false positive)", Style.SECONDARY),
    SanctionKind("delete", ActionKind.DELETE, ReviewDecision.DELETED, "message deleted", Permission.MANAGE_MESSAGES,
                 "Delete", Style.PRIMARY, capability=Capability.DELETE, would="would delete", did="deleted"),
    SanctionKind("warn", ActionKind.WARN, ReviewDecision.WARNED, "warned", Permission.MANAGE_MESSAGES, "Warn",
                 Style.PRIMARY, would="would warn", did="warned"),
    SanctionKind("timeout", ActionKind.TIMEOUT, ReviewDecision.TIMED_OUT, "timed out", Permission.MODERATE_MEMBERS,
                 "Timeout", Style.DANGER, capability=Capability.TIMEOUT, on_card=False,
                 raid_label="Timeout all (1 hour)", raid_asks_first=True, would="would time out", did="timed out"),
    SanctionKind("kick", ActionKind.KICK, ReviewDecision.KICKED, "kicked", Permission.KICK_MEMBERS, "Kick",
                 Style.DANGER, capability=Capability.KICK, channel_capability=Capability.REMOVE_FROM_CHANNEL,
                 channel_label="Remove from channel", raid_label="Kick all",
                 raid_channel_label="Remove all from channel", asks_first=True, raid_asks_first=True,
                 would="would kick", did="kicked"),
    SanctionKind("ban", ActionKind.BAN, ReviewDecision.BANNED, "banned", Permission.BAN_MEMBERS, "Ban", Style.DANGER,
                 capability=Capability.BAN, raid_label="Ban all", asks_first=True, raid_asks_first=True,
                 would="would ban", did="banned"),
    SanctionKind("investigating", ActionKind.NONE, ReviewDecision.INVESTIGATING, "investigating",
                 Permission.MANAGE_MESSAGES, "Investigating", Style.SECONDARY),
])


def there(kind: SanctionKind, can: frozenset[Capability], channel_id: str | None) -> str:
    """``" in that channel"`` when ``kind`` is refused in ``channel_id`` alone (its channel stand-in, which the
    platform refuses there: Slack's #general), else ``""`` (the platform cannot do it anywhere)."""
    return " in that channel" if channel_id and REGISTRY.capable(kind, can, channel_id) else ""


#: Actions that are no sanction: the permission they need and the report's (would, did) words.
_NOT_SANCTIONS: dict[ActionKind, tuple[Permission, str, str]] = {
    ActionKind.NONE: (Permission.MANAGE_MESSAGES, "no action", "no action"),
    ActionKind.LOG: (Permission.MANAGE_MESSAGES, "would log", "logged"),
    ActionKind.REVIEW: (Permission.MANAGE_MESSAGES, "would send to review", "sent to review"),
}


def _primary(action: ActionKind) -> SanctionKind:
    kind = REGISTRY.of_action(action)
    if kind is None:
        raise LookupError(f"no sanction kind named {action.label!r} in the registry")
    return kind


#: The permission each action needs from the moderator (:data:`bot.workflow.authz.REQUIRED`).
ACTION_PERMISSION: dict[ActionKind, Permission] = {
    a: _NOT_SANCTIONS[a][0] if a in _NOT_SANCTIONS else _primary(a).permission for a in ActionKind}
#: The report's words per action name: ``{"ban": ("would ban", "banned"), ...}``.
ACTION_WORDS: dict[str, tuple[str, str]] = {
    a.label: _NOT_SANCTIONS[a][1:] if a in _NOT_SANCTIONS else (_primary(a).would, _primary(a).did)
    for a in ActionKind}

__all__ = ["ACTION_PERMISSION", "ACTION_WORDS", "REGISTRY", "SanctionKind", "SanctionRegistry", "Style", "there"]
