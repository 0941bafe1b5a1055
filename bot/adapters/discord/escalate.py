"""Strikes and the escalation ladder for moderators' sanctions (``/mod ...`` and review card buttons).

Layer: ``bot.adapters.discord``. Automod strikes are added by the core pipeline; a moderator's sanction goes
through the same :class:`bot.core.escalation.StrikeLedger` (``bot.service.ledger``) so both count towards one
total: the strike is recorded in the mod log and, when a ladder step of ``policy.strikes.ladder`` is crossed, the
step's action is carried out on Discord and recorded as its own case (``moderator_id`` unset, reason naming the
ladder step and the triggering case).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import discord

from bot.adapters.discord.translate import PLATFORM
from bot.core.models import Action, ActionKind, CaseStatus

log = logging.getLogger(__name__)


def _strongest(actions: tuple[Action, ...]) -> Action | None:
    """The strongest of the crossed steps' actions (longest timeout among timeouts)."""
    if not actions:
        return None
    return max(actions, key=lambda a: (a.kind, a.duration_s or 0))


def _supersedes(step: Action, kind: ActionKind, duration_s: int | None) -> bool:
    """Whether a ladder action adds anything to the moderator's own sanction ``kind`` (a longer timeout counts)."""
    if step.kind > kind:
        return True
    return step.kind is ActionKind.TIMEOUT and kind is ActionKind.TIMEOUT and (step.duration_s or 0) > (duration_s or 0)


async def strike_and_escalate(bot: Any, guild: discord.Guild, member_id: str, kind: ActionKind, reason: str, *,
                              case_number: int | None, duration_s: int | None = None,
                              message_id: str | None = None, now: datetime | None = None) -> str:
    """Add the strike a moderator's sanction earns and carry out a crossed ladder step.

    Args:
        bot: The running :class:`bot.adapters.discord.client.ModBot` (store, service ledger, enforcer, policies).
        guild: The server.
        member_id: The sanctioned member.
        kind: The sanction carried out (delete, warn, timeout, kick, ban); its points come from
            ``policy.strikes.points`` (config/default.toml: delete 1, warn 1, timeout 2, kick 3, ban 5).
        reason: Stored on the strike.
        case_number: The moderator's case (linked to the strike, named in the escalation case).
        duration_s: The moderator's timeout length in seconds (a shorter ladder timeout adds nothing).
        message_id: The message sanctioned, if any: a message never earns two strikes (automod's included).
        now: Event time (UTC); defaults to now.

    Returns:
        A note for the moderator: ``""`` when nothing escalated, else ``"escalation: case #N timeout ..."`` (with
        ``FAILED: reason`` when Discord refused the escalation action).
    """
    gid = str(guild.id)
    at = now or datetime.now(UTC)
    policy = await bot.policy(gid)
    decision = await bot.service.ledger.add(policy, platform=PLATFORM, server_id=gid, member_id=member_id,
                                            message_id=message_id, action=kind, at=at, reason=reason)
    if decision.strike is None:
        return ""
    await bot.store.add_strike(PLATFORM, gid, member_id, decision.strike.points, decision.strike.expires_at,
                               reason=reason, message_id=message_id, case_number=case_number, now=at)
    step = _strongest(decision.escalation)
    if step is None or not _supersedes(step, kind, duration_s):
        return ""
    why = f"escalation after case #{case_number}: {step.reason}" if case_number else f"escalation: {step.reason}"
    expires = at + timedelta(seconds=step.duration_s) if step.kind is ActionKind.TIMEOUT and step.duration_s else None
    case = await bot.store.open_case(PLATFORM, gid, member_id, step.kind, why, expires_at=expires)
    action = Action(step.kind, why, step.duration_s, "escalation")
    res = await bot.enforcer.sanction(guild, member_id, action, case_number=case.number)
    await bot.store.set_case_status(PLATFORM, gid, case.number, CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                    failure=None if res.ok else res.reason)
    log.info("escalation case %s (%s) after %d points", case.number, step.kind.label, decision.total_after,
             extra={"server": gid})
    text = f"escalation: case #{case.number} {step.kind.label}"
    if step.duration_s and step.kind is ActionKind.TIMEOUT:
        text += f" ({step.duration_s}s)"
    return text + (f" FAILED: {res.reason}" if not res.ok else "")


def forget_member(bot: Any, guild_id: int | str, member_id: str) -> None:
    """Drop the ledger's cached strikes of a member after a pardon, overturn or forget (reloads from the store)."""
    service = getattr(bot, "service", None)
    if service is not None:
        service.ledger.forget(PLATFORM, str(guild_id), member_id)
