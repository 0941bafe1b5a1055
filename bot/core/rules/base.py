"""What an automod rule is: the :class:`Rule` protocol, the :class:`Stage` it runs at and the :class:`RuleContext`
it reads.

Layer: ``bot.core``. Standard library only (plus the core's own modules).

A rule is one class with a unique :attr:`Rule.name`, the stages it runs at (:attr:`Rule.stages`), its own settings
model (:attr:`Rule.settings_model`) and one method, :meth:`Rule.check`, that returns its hits for one message. It is
built once per server policy version from that policy's ``[rules]`` (``Rule(settings)``), so it compiles its
patterns once; :meth:`Rule.check` must be deterministic and never do I/O (time is message time). The rules run in
the fixed order of their registry (:data:`bot.core.rules.registry.DEFAULT_RULES`); see CONTRIBUTING.md, "Adding a
rule".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Protocol

from pydantic import BaseModel

from bot.core.models import Message, RuleHit, Scores
from bot.core.normalize import Normalized
from bot.core.rules.settings import RulesSettings

if TYPE_CHECKING:
    from bot.core.policy import Policy, Tier


class Stage(StrEnum):
    """When a rule runs on a message.

    * ``CONTENT``: on every message that is not exempt, in the scoring worker thread, before the model scores it;
      stateless (the message, its normalised text, the channel's extra terms, raid mode as the batch began).
    * ``PART``: on each further part of a long message past the normaliser's first 4,000 characters
      (:func:`bot.core.pieces.chunks`); text rules only (``ctx.norm`` is that part).
    * ``ORDERED``: on the event loop in arrival order, after scoring: sees the server's windows (``ctx.spam``),
      the member facts (``ctx.established``, ``ctx.strict``), the scores and the channel's tiers.
    """

    CONTENT = "content"
    PART = "part"
    ORDERED = "ordered"


class SpamWindows(Protocol):
    """A server's spam windows (:class:`bot.core.rules.spam.SpamTracker`): counts one message, returns its hits."""

    def observe(self, message: Message, norm: Normalized, *, raid_mode: bool = False,
                established: bool = False) -> list[RuleHit]: ...


@dataclass(slots=True)
class RuleContext:
    """What a rule reads about one message. Fields past ``raid_mode`` are set only at the stages named.

    Attributes:
        message: The message (``text``, ``mentions``, ``mentions_everyone``, the author's roles and ages).
        norm: ``normalize(message.text)`` (at ``PART``: the normalised part).
        extra_terms: Channel / category blocked terms (the default list's label and action).
        allow_terms: Channel / category allowed terms (with the server's ``allow`` they win over every list).
        may_mention_everyone: The platform says the author holds the mention-everyone permission.
        raid_mode: Raid mode is on in the message's channel (``CONTENT``: as the batch was prepared; ``ORDERED``:
            raid mode's stricter limits apply to this member, :func:`bot.core.judge.raid_tiers_apply`).
        policy: The server's effective policy (``ORDERED``).
        parts: Every normalised part of the message, ``norm`` first (``ORDERED``).
        scores: The model's scores, ``None`` when not scored or the scorer failed (``ORDERED``).
        tiers: The channel's tiers after raid mode (:func:`bot.core.judge.effective_tiers`) (``ORDERED``).
        established: The member is established (``rules.raid.established_min_messages``) (``ORDERED``).
        spam: The server's spam windows; ``None`` when the message must not be counted (an edit, a stateless
            ``score`` run) (``ORDERED``).
        at: Message time (``Message.event_time``) (``ORDERED``).
    """

    message: Message
    norm: Normalized
    extra_terms: Sequence[str] = ()
    allow_terms: Sequence[str] = ()
    may_mention_everyone: bool = False
    raid_mode: bool = False
    policy: Policy | None = None
    parts: tuple[Normalized, ...] = ()
    scores: Scores | None = None
    tiers: Mapping[str, Tier] | None = None
    established: bool = False
    spam: SpamWindows | None = None
    at: datetime | None = None


class Rule(Protocol):
    """One automod rule.

    Class attributes:
        name: Unique in its registry; the ``RuleHit.rule`` of its hits, or the first of them where one rule gives
            hits of several names (``links`` gives ``invite`` and ``link``), which :attr:`hit_names` lists.
        stages: The stages it runs at (:class:`Stage`).
        settings_model: Its settings model (a table of ``[rules]``, or of the policy for a policy-level setting).
        hit_names: Every ``RuleHit.rule`` it can give.

    Construction: ``Rule(settings)`` with the server's ``[rules]`` (:class:`RulesSettings`), once per policy version.
    """

    name: ClassVar[str]
    stages: ClassVar[frozenset[Stage]]
    settings_model: ClassVar[type[BaseModel]]
    hit_names: ClassVar[tuple[str, ...]]

    def __init__(self, settings: RulesSettings) -> None: ...

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        """The rule's hits on one message at one of its stages, in a fixed order; ``[]`` when it does not fire or
        is switched off. ``action`` is the configured action or ``None`` (a signal)."""
        ...
