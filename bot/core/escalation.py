"""Strikes and the escalation ladder.

Layer: ``bot.core``. Standard library and core modules only.

A sanctioned message earns one strike worth ``policy.strikes.points[action]`` points, which expire after
``policy.strikes.expire_after_s`` seconds. When a member's active points cross a ladder step (the total goes from
below ``step.points`` to at or above it), that step's action is returned once, as data (Red-DiscordBot's warnings
idea without replaying commands). One message never earns two strikes: an edit that is judged again finds the
message already struck.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.core.models import Action, ActionKind, Strike
from bot.core.policy import Policy

#: Loads a member's active strikes from the mod log: ``(platform, server_id, member_id, now) -> strikes``.
StrikeLoader = Callable[[str, str, str, datetime], Awaitable[list[Strike]]]


@dataclass
class _MemberStrikes:
    strikes: list[Strike] = field(default_factory=list)
    struck_messages: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class StrikeDecision:
    """Result of :meth:`StrikeLedger.add`.

    Attributes:
        strike: The strike to record, or ``None`` (already struck for this message, strikes off, 0 points).
        total_before: Active points before this strike.
        total_after: Active points after it.
        escalation: Actions from ladder steps crossed by this strike (usually zero or one).
        raised: The message already had a strike and it was raised to this action's points (not a second strike).
    """

    strike: Strike | None
    total_before: int
    total_after: int
    escalation: tuple[Action, ...] = ()
    raised: bool = False


class StrikeLedger:
    """In-memory view of active strikes per member, seeded lazily from the mod log.

    Args:
        loader: Async function returning a member's active strikes from the store (called once per member).
    """

    def __init__(self, loader: StrikeLoader | None = None) -> None:
        self._loader = loader
        self._members: dict[tuple[str, str, str], _MemberStrikes] = {}
        #: How many times each member's view was forgotten: a load that a :meth:`forget` overtook is stale.
        self._forgotten: dict[tuple[str, str, str], int] = {}

    async def _get(self, platform: str, server_id: str, member_id: str, now: datetime) -> _MemberStrikes:
        """The member's cached view, loaded once. Several callers may wait on the store at once (three warns of one
        member decided together): the first load to finish is kept and every caller gets that one entry, so no
        caller's strike is added to a copy another overwrites. A load that a :meth:`forget` overtook (a pardon
        written meanwhile) is read again."""
        key = (platform, server_id, member_id)
        while True:
            entry = self._members.get(key)
            if entry is not None:
                return entry
            entry = _MemberStrikes()
            if self._loader is None:
                self._members[key] = entry
                return entry
            generation = self._forgotten.get(key, 0)
            loaded = await self._loader(platform, server_id, member_id, now)
            if self._forgotten.get(key, 0) != generation:
                continue
            kept = self._members.get(key)
            if kept is not None:  # another caller's load finished first; it may already hold their strike
                return kept
            for s in loaded:
                entry.strikes.append(s)
                if s.message_id:
                    entry.struck_messages.add(s.message_id)
            self._members[key] = entry
            return entry

    async def active(self, platform: str, server_id: str, member_id: str, now: datetime) -> list[Strike]:
        """Active strikes of a member at ``now`` (oldest first)."""
        entry = await self._get(platform, server_id, member_id, now)
        return [s for s in entry.strikes if not s.pardoned and s.expires_at > now]

    def forget(self, platform: str, server_id: str, member_id: str) -> None:
        """Drop the cached view of a member (after a pardon or an overturned case), so it reloads from the store."""
        key = (platform, server_id, member_id)
        self._members.pop(key, None)
        self._forgotten[key] = self._forgotten.get(key, 0) + 1

    async def add(
        self,
        policy: Policy,
        *,
        platform: str,
        server_id: str,
        member_id: str,
        message_id: str | None,
        action: ActionKind,
        at: datetime,
        reason: str,
        raise_existing: bool = False,
    ) -> StrikeDecision:
        """Give the member a strike for ``action`` unless this message already has one; apply the ladder.

        Args:
            policy: The server's policy (points, expiry, ladder).
            action: The strongest sanction of the verdict; its points come from ``policy.strikes.points``.
            at: The event time (UTC); expiry is counted from it.
            raise_existing: When the message already has a strike worth fewer points (automod deleted it, then a
                moderator banned for it), raise that strike to this action's points instead of giving none: one
                message, one strike, worth its strongest sanction. Used for moderators' decisions only; an edit
                judged again by automod never changes the strike.
        """
        entry = await self._get(platform, server_id, member_id, at)
        before = _total(entry.strikes, at)
        points = policy.strikes.points.get(action.label, 0)
        if not policy.strikes.enabled or points <= 0:
            return StrikeDecision(None, before, before)
        if message_id and message_id in entry.struck_messages:
            old = next((s for s in entry.strikes if s.message_id == message_id), None)
            if not raise_existing or old is None or old.points >= points or old.pardoned:
                return StrikeDecision(None, before, before)
            new = Strike(server_id=old.server_id, member_id=old.member_id, points=points, created_at=old.created_at,
                         expires_at=old.expires_at, reason=old.reason, message_id=message_id,
                         case_number=old.case_number)
            entry.strikes[entry.strikes.index(old)] = new
            after = _total(entry.strikes, at)
            return StrikeDecision(new, before, after, tuple(ladder_actions(policy, before, after)), raised=True)
        strike = Strike(
            server_id=server_id,
            member_id=member_id,
            points=points,
            created_at=at,
            expires_at=at + timedelta(seconds=policy.strikes.expire_after_s),
            reason=reason,
            message_id=message_id,
        )
        entry.strikes.append(strike)
        if message_id:
            entry.struck_messages.add(message_id)
        after = before + points
        return StrikeDecision(strike, before, after, tuple(ladder_actions(policy, before, after)))


def _total(strikes: Iterable[Strike], now: datetime) -> int:
    return sum(s.points for s in strikes if not s.pardoned and s.expires_at > now)


def ladder_actions(policy: Policy, before: int, after: int) -> list[Action]:
    """Actions of the ladder steps crossed going from ``before`` to ``after`` active points; strongest last."""
    out: list[Action] = []
    for step in policy.strikes.ladder:
        if before < step.points <= after:
            out.append(
                Action(
                    kind=ActionKind.parse(step.action),
                    duration_s=step.duration_s,
                    source="escalation",
                    reason=f"{after} active strike points (ladder step at {step.points})",
                )
            )
    return out
