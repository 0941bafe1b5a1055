"""Who may do what: server-side authorization of every moderator action, one rule for every platform.

Layer: ``bot.workflow`` (platform-neutral). The adapter translates the platform's own permissions into an
:class:`Actor` on every interaction (Discord: the member's permissions computed by Discord for that interaction and
the position of their highest role; Slack: workspace owner/admin flags and the configured moderator user group);
the workflow calls :func:`authorize` before it changes anything.

The rules follow Discord's own (and python-discord's and Zeppelin's practice):

* each action needs its permission (:data:`REQUIRED`, from :mod:`bot.workflow.sanction_kinds`): Ban Members for ban and unban, Kick Members for kick,
  Moderate Members for timeouts, Manage Messages for deletes, warnings, dismissals, reports' review and appeals,
  Manage Server for policy changes;
* the policy's ``server.moderator_roles`` grant Manage Messages-level actions (review, delete, warn) only, never
  kick, ban or timeout, which need the platform permission itself;
* the moderator must rank strictly above the target (role hierarchy), as the bot must; nobody acts on the
  server's owner, on themselves or on the bot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import SupportsIndex

from bot.core.models import ActionKind
from bot.workflow.permissions import PERMISSION_NAMES, Permission
from bot.workflow.ports import MemberInfo
from bot.workflow.sanction_kinds import ACTION_PERMISSION

#: The permission each action needs from the moderator (from the sanction registry).
REQUIRED: dict[ActionKind, Permission] = ACTION_PERMISSION

#: Permissions a configured moderator role grants (the lightest tier: deciding review items, deleting, warning).
MODERATOR_ROLE_GRANTS = frozenset({Permission.MANAGE_MESSAGES})


@dataclass(frozen=True, slots=True)
class Actor:
    """The member asking for an action, as the platform says right now.

    Attributes:
        id: Member id.
        name: Display name (for the mod log).
        permissions: Platform permissions held at server level (``ADMINISTRATOR`` is expanded by the adapter).
        rank: Position of the member's highest role (see :attr:`MemberInfo.rank`).
        is_owner: Owns the server.
        moderator_role: Holds one of the policy's ``server.moderator_roles``.
        denied: Permissions held at server level but taken away in the channel concerned (Discord's permission
            overwrites); a moderator role does not grant them back there. Set by :meth:`in_channel`.
    """

    id: str
    name: str = ""
    permissions: frozenset[Permission] = frozenset()
    rank: int = 0
    is_owner: bool = False
    moderator_role: bool = False
    denied: frozenset[Permission] = frozenset()

    def has(self, permission: Permission) -> bool:
        """Whether the actor holds ``permission`` (owners hold all; a moderator role grants the lightest tier,
        except where the channel concerned takes the permission away)."""
        if self.is_owner or permission in self.permissions:
            return True
        return self.moderator_role and permission in MODERATOR_ROLE_GRANTS and permission not in self.denied

    def in_channel(self, held: frozenset[Permission] | ChannelPermissions) -> Actor:
        """This actor with the permissions the platform computes for them in one channel (``held``: roles and
        the channel's overwrites applied): those not held there are not held, and those held at server level but
        not there, or that the channel takes away from them (:attr:`ChannelPermissions.withheld`), are ``denied``
        (a moderator role does not grant them back)."""
        there = held if isinstance(held, ChannelPermissions) else ChannelPermissions(held)
        return Actor(id=self.id, name=self.name, permissions=there.held, rank=self.rank, is_owner=self.is_owner,
                     moderator_role=self.moderator_role,
                     denied=self.denied | (self.permissions - there.held) | (there.withheld - there.held))

    @property
    def is_moderator(self) -> bool:
        """May use the review queue at all (Manage Messages, a moderator role or ownership)."""
        return self.has(Permission.MANAGE_MESSAGES)


@dataclass(frozen=True, slots=True)
class ChannelPermissions:
    """A member's permissions in one channel, as the platform computes them.

    Attributes:
        held: The permissions they hold there (roles, Administrator and the channel's overwrites applied).
        withheld: Permissions the channel takes away from them whatever their roles grant: on Discord, an overwrite
            (for @everyone, one of their roles or themselves) that denies it and none that allows it back, or no
            View Channel there at all (every permission withheld). A moderator role (``server.moderator_roles``)
            does not grant these there: the server's admins have said this member may not do that in this channel.
    """

    held: frozenset[Permission]
    withheld: frozenset[Permission] = frozenset()


class Said(str):
    """Words a person typed (a key, a value, a filter, a name), quoted inside a workflow sentence.

    A plain ``str`` to everything else; a platform that renders markup escapes it when it shows the sentence
    (:meth:`Refused.render`; Slack: ``&``, ``<``, ``>`` as entities, so ``<!channel>`` or ``<@U1>`` typed by a
    member can neither ping nor link), while the sentence's own mentions (``<@U1>`` the workflow writes) stay
    mentions."""

    __slots__ = ()


#: Makes typed text safe in a platform's markup (Slack: ``bot.adapters.slack.blocks.escape``).
Escape = Callable[[str], str]


def _render(parts: tuple[str, ...], escape: Escape) -> str:
    return "".join(escape(p) if isinstance(p, Said) else p for p in parts)


class Sentence(str):
    """A sentence of the workflow's (an answer, a summary, a card's note, a mod-log line) built from pieces where
    what a person typed or chose is a :class:`Said` (a member's display name in a refusal): ``str(self)`` is the
    pieces joined, :meth:`render` escapes the typed ones for a platform's markup, the rest (the workflow's own
    ``<@U1>``) as written.

    ``sentence[:n]`` (a start, as a card's room cuts it) is a :class:`Sentence` of the first ``n`` characters with
    its pieces kept; a cut inside the workflow's own words drops an unclosed ``<…`` there, so a mention is kept
    whole or left out, never half (so the start may be shorter than ``n``). Any other index or slice is plain
    text. Joining with ``+`` gives plain text: build a longer sentence from pieces (``Sentence(*a.parts, …)``)."""

    parts: tuple[str, ...]

    def __new__(cls, *parts: str) -> Sentence:
        self = super().__new__(cls, "".join(parts))
        self.parts = tuple(p for p in parts if p)
        return self

    def render(self, escape: Escape) -> str:
        """The sentence with every :class:`Said` piece passed through ``escape`` (the rest as written)."""
        return _render(self.parts, escape)

    def __getitem__(self, key: SupportsIndex | slice, /) -> str:
        if not isinstance(key, slice) or key.start not in (None, 0) or key.step not in (None, 1) or key.stop is None \
                or key.stop < 0:
            return str.__getitem__(self, key)
        room, kept = key.stop, list[str]()
        for part in self.parts:
            if len(part) <= room:
                kept.append(part)
                room -= len(part)
                continue
            if room > 0:
                head = part[:room]
                if not isinstance(part, Said) and head.rfind("<") > head.rfind(">"):
                    head = head[:head.rfind("<")]
                kept.append(Said(head) if isinstance(part, Said) else head)
            break
        return Sentence(*kept)


def joined(sep: str, items: Iterable[str]) -> Sentence:
    """``sep.join(items)`` as a :class:`Sentence` that keeps each item's pieces (a :class:`Sentence`'s
    :class:`Said` pieces stay typed, so a member's display name quoted in a note is escaped wherever the note is
    shown); empty items are left out."""
    parts: list[str] = []
    for item in items:
        if not item:
            continue
        if parts:
            parts.append(sep)
        parts += item.parts if isinstance(item, Sentence) else (item,)
    return Sentence(*parts)


class Refused(Exception):  # noqa: N818 - a refusal is an outcome, shown to the moderator as is
    """An action was refused; ``str(self)`` is the sentence shown to the moderator. Nothing was changed.

    Built from one sentence, or from pieces where what the person typed is a :class:`Said`
    (``Refused("Unknown policy key `", Said(key), "`.")``): ``str(self)`` joins the pieces as they are, and
    :meth:`render` escapes the typed ones for a platform's markup."""

    def __init__(self, *parts: str) -> None:
        super().__init__("".join(parts))
        self.parts: tuple[str, ...] = parts

    def render(self, escape: Escape) -> str:
        """The sentence with every :class:`Said` piece passed through ``escape`` (the rest as written)."""
        return _render(self.parts, escape)


def authorize(actor: Actor, kind: ActionKind, target: MemberInfo | None = None, *,
              bot: MemberInfo | None = None, permission: Permission | None = None) -> None:
    """Check that ``actor`` may do ``kind`` to ``target``.

    Args:
        actor: Who asks.
        kind: The action (its permission comes from :data:`REQUIRED` unless ``permission`` is given).
        target: The member acted on, when known and still in the server (a user who left can still be banned).
        bot: The bot's own member (its rank bounds whom it can sanction).
        permission: Override the permission needed (e.g. Manage Server for a policy change).

    Raises:
        Refused: with the reason, naming the missing permission or the hierarchy problem.
    """
    need = permission or REQUIRED[kind]
    if not actor.has(need):
        raise Refused(f"You need {PERMISSION_NAMES[need]} for this. Nothing was changed.")
    if target is None or kind <= ActionKind.REVIEW and permission is None:
        return
    if target.id == actor.id:
        raise Refused("You cannot do that to yourself. Nothing was changed.")
    if bot is not None and target.id == bot.id:
        raise Refused("The bot does not moderate itself. Nothing was changed.")
    if target.is_owner:
        raise Refused("Nobody can act on the server's owner. Nothing was changed.")
    if kind >= ActionKind.WARN and not actor.is_owner and target.rank >= actor.rank:
        raise Refused(Said(target.name or target.id), " ranks at or above you (role hierarchy). Nothing was changed.")
    if kind >= ActionKind.TIMEOUT and bot is not None and target.rank >= bot.rank:
        raise Refused(Said(target.name or target.id), " ranks at or above the bot's highest role (role hierarchy): "
                      "move the bot's role higher. Nothing was changed.")


__all__ = ["MODERATOR_ROLE_GRANTS", "PERMISSION_NAMES", "REQUIRED", "Actor", "Escape", "Permission", "Refused", "Said",
           "Sentence", "authorize", "joined"]
