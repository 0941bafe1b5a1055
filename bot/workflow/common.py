"""Values shared by the workflow's parts: results, decisions, durations, the policy port.

Layer: ``bot.workflow`` (platform-neutral).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.models import ActionKind, ReviewDecision
from bot.core.policy import Policy
from bot.workflow.sanction_kinds import REGISTRY
from bot.workflow.views import ReviewCard

#: A case left ``pending`` by a stop is carried out at startup only if it is younger than this (seconds); an older
#: one is marked failed: acting an hour late surprises members and moderators more than it helps.
RECOVER_WITHIN_S = 3600

#: Seconds before a refused unban at a temporary ban's end is tried again.
UNBAN_RETRY_S = 600

class _Decisions(Mapping[str, tuple[ReviewDecision, ActionKind, str]]):
    """Card decision -> (review decision, action carried out, past-tense outcome): a live view of
    :data:`bot.workflow.sanction_kinds.REGISTRY` (a kind registered later is a decision at once)."""

    def __getitem__(self, key: str) -> tuple[ReviewDecision, ActionKind, str]:
        kind = REGISTRY.get(key)
        if kind is None:
            raise KeyError(key)
        return kind.decision, kind.action, kind.outcome

    def __iter__(self) -> Iterator[str]:
        return (k.key for k in REGISTRY)

    def __len__(self) -> int:
        return sum(1 for _ in REGISTRY)


#: Card decision -> (review decision, action carried out, past-tense outcome).
DECISIONS: Mapping[str, tuple[ReviewDecision, ActionKind, str]] = _Decisions()


class PolicySource(Protocol):
    """Per-server effective policies (:class:`bot.core.policy_registry.PolicyRegistry`)."""

    async def get(self, platform: str, server_id: str) -> Policy: ...


@dataclass(frozen=True, slots=True)
class Result:
    """What the workflow did for a moderator or member; ``text`` is the (ephemeral) answer to show.

    Attributes:
        text: One or more sentences for the person who asked.
        ok: False when refused or when the platform refused the action.
        case_number: The case opened, if any.
        card: The review card to re-render (decisions), if any.
        failure: The platform's reason when it refused the action.
        notes: Further lines (a DM not delivered, an escalation).
    """

    text: str
    ok: bool = True
    case_number: int | None = None
    card: ReviewCard | None = None
    failure: str | None = None
    notes: tuple[str, ...] = ()


def dur(seconds: int | None) -> str:
    if not seconds:
        return ""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds} s"


class WorkflowParts:
    """What the workflow's mixins (sanctions, reviews) share, set by :class:`ModerationWorkflow`: declared once
    here so each mixin reads as what it is."""

    platform: str
    store: Any
    enforcer: Any
    desk: Any
    policies: Any
    ledger: Any
    clock: Any
    _timers: dict[tuple[str, int], asyncio.Task[None]]
    _card_locks: dict[int, asyncio.Lock]
    # methods of the other parts
    can: Any
    _delete: Any
    sanction: Any
    strike: Any
    target: Any
    capable: Any
    _kick_capable: Any
