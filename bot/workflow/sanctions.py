"""Moderators' sanctions, strikes and escalation, pardons, unbans and temporary bans (a mixin of
:class:`bot.workflow.workflow.ModerationWorkflow`).

Layer: ``bot.workflow`` (platform-neutral). A sanction is recorded (``pending``), the member is notified (before a
kick or ban, while the bot still shares a server with them), carried out, recorded ``applied`` or ``failed`` with the
platform's reason, and then earns its strike (a warning counts even when its DM cannot be delivered).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.core.errors import StoreError
from bot.core.models import MAX_SENT_TIMEOUT_S, MAX_TIMEOUT_S, Action, ActionKind, Case, CaseStatus
from bot.core.policy import Policy
from bot.core.ports import ActionResult
from bot.core.records import StepCase, StepReview
from bot.core.storable import storable_text
from bot.workflow.authz import Actor, Permission, Refused, Said, Sentence, authorize
from bot.workflow.cases import MAX_REASON
from bot.workflow.common import (
    EXPIRY_HORIZON,
    LIFT_HOLD_S,
    LIFT_TRIES,
    NOT_RECORDED,
    UNBAN_RETRY_S,
    WITHHELD_STEP,
    CaseOutcome,
    Result,
    WorkflowParts,
    dur,
    record_outcome,
    short_refusal,
)
from bot.workflow.ports import NOT_BANNED, Capability, MemberInfo, MemberLookupError, MemberNotice
from bot.workflow.sanction_kinds import REGISTRY, SanctionKind, there
from bot.workflow.views import LogEntry

log = logging.getLogger(__name__)


#: Seconds a temporary ban's end timer sleeps at most before it looks at the clock again (:meth:`_unban_at`).
END_CHECK_S = 600.0


def _timeout_end(case: Case) -> datetime:
    """When timeout ``case`` ends: its recorded end, else an hour after it was opened (what is sent without a
    duration)."""
    return case.expires_at or case.created_at + timedelta(seconds=3600)


def _entry(kind: ActionKind) -> SanctionKind:
    """The registry entry named after member sanction ``kind`` (timeout, kick, ban)."""
    entry = REGISTRY.of_action(kind)
    if entry is None:
        raise LookupError(f"no sanction kind {kind.label!r} in the registry")
    return entry


class SanctionsMixin(WorkflowParts):
    """Sanctions, strikes, pardons and temporary bans."""

    async def target(self, server_id: str, member_id: str) -> MemberInfo | None:
        """The member acted on (``None``: not in the server). A platform that cannot answer refuses the action
        instead of letting it skip the role-hierarchy check."""
        try:
            return await self.enforcer.member(server_id, member_id)
        except MemberLookupError as exc:
            raise Refused(f"The platform did not answer about <@{member_id}> ({exc}); try again. Nothing was "
                          "changed.") from None

    async def capable(self, kind: SanctionKind, server_id: str, channel_id: str | None = None) -> bool:
        """Whether this platform carries out registry entry ``kind`` in ``server_id`` (``channel_id``: the
        message's channel, where a channel stand-in such as Slack's "remove from channel" acts). A stand-in the
        platform refuses in that channel (:meth:`~bot.workflow.ports.Enforcer.channel_refusals`: Slack's
        #general) is not offered there."""
        can = self.enforcer.capabilities
        if not REGISTRY.capable(kind, can, channel_id):
            return False
        if channel_id and REGISTRY.by_channel(kind, can):
            return REGISTRY.capable(kind, can - await self.enforcer.channel_refusals(server_id, channel_id),
                                    channel_id)
        return True

    async def _sanction_on_platform(self, policy: Policy, case: Case, duration_s: int | None,
                                    channel_id: str | None = None) -> ActionResult:
        """Carry out a case's member sanction with its notice: the DM goes BEFORE a kick or ban (while the bot
        still shares a server with the member) and after a timeout; a warning IS the DM, and it counts even when
        the DM cannot be delivered (the reason is returned in ``extra["dm"]``). A kick or ban the platform then
        refuses is followed by a correction DM (:attr:`MemberNotice.correction`: it did not go through), so the
        member does not keep a notice of a sanction that never happened; ``extra["dm"]`` says so."""
        kind = case.action
        sid, uid = case.server_id, case.member_id
        action = Action(kind, case.reason, duration_s)
        notice = MemberNotice(server_id=sid, server_name="", case_number=case.number, action=kind,
                              reason=case.reason, duration_s=duration_s)
        extra: dict[str, str] = {}

        async def dm() -> bool:
            if not self.can(Capability.DM):
                extra["dm"] = "this platform has no private messages"
                return False
            res = await self.enforcer.notify(uid, notice)
            if not res.ok:
                extra["dm"] = f"not delivered: {res.reason}"
            return res.ok

        send_dm = policy.server.warn_dm if kind is ActionKind.WARN else policy.server.notify_sanctions
        if kind is ActionKind.WARN:
            if send_dm:
                await dm()
            return ActionResult(action, True, "", extra)
        if kind < ActionKind.TIMEOUT:  # not carried out on the member (a delete is its own step)
            return ActionResult(action, True, "", extra)
        entry = _entry(kind)
        remove = REGISTRY.by_channel(entry, self.enforcer.capabilities) and bool(channel_id)
        if not await self.capable(entry, sid, channel_id):
            return ActionResult(action, False, f"this platform cannot {kind.label} members"
                                f"{there(entry, self.enforcer.capabilities, channel_id)}", extra)
        told = send_dm and kind in (ActionKind.KICK, ActionKind.BAN) and await dm()
        if kind is ActionKind.TIMEOUT:
            seconds = int(duration_s or 3600)
            if seconds > MAX_SENT_TIMEOUT_S:
                extra["cap"] = (f"timeout capped at {MAX_SENT_TIMEOUT_S // 86400} d {MAX_SENT_TIMEOUT_S % 86400 // 3600} h (asked "
                                f"{dur(seconds)}): Discord "
                                "refuses more than 28 days from its own clock; 1 h is kept for clock skew")
                seconds = MAX_SENT_TIMEOUT_S
            longer = await self._timed_out_longer(case, seconds)
            if longer is not None:  # sending it would cut the member's longer timeout short
                extra["kept"] = longer
                res = ActionResult(action, True, "")
            else:
                res = await self.enforcer.timeout(sid, uid, seconds, case.reason)
        elif remove:
            assert channel_id is not None
            res = await self.enforcer.remove_from_channel(sid, channel_id, uid)
        elif kind is ActionKind.KICK:
            res = await self.enforcer.kick(sid, uid, case.reason)
        else:
            res = await self.enforcer.ban(sid, uid, case.reason)
        if res.ok and send_dm and kind is ActionKind.TIMEOUT:
            await dm()
        if told and not res.ok:  # the member was told it was done: say it was not
            what = "removal from the channel" if remove else kind.label
            fixed = await self.enforcer.notify(uid, replace(
                notice, appealable=False, correction=True, duration_s=None,
                reason=f"The {what} of case #{case.number} did not go through: please disregard the message that "
                       "said it was done."))
            extra["dm"] = (f"sent before the {what}, which failed; "
                           + ("a correction was sent" if fixed.ok else f"the correction was not delivered: {fixed.reason}"))
        return ActionResult(action, res.ok, res.reason, {**res.extra, **extra})

    async def _timed_out_longer(self, case: Case, seconds: int) -> str | None:
        """Why timeout ``case`` (``seconds`` from now) is not sent: the platform says its member is timed out until
        later already (a moderator's week, or a timeout set by hand), and a member holds one timeout, which a new
        one replaces: a ladder step's hour crossed by a Delete on an old card, or a card's 10 minutes, ended a
        moderator's week-long timeout. The case still counts (strike and all); the note says why nothing was sent.
        ``None``: send it (not timed out, timed out until earlier, or the platform cannot say)."""
        try:
            member = await self.enforcer.member(case.server_id, case.member_id)
        except MemberLookupError:
            return None
        until = member.timed_out_until if member is not None else None
        if until is None or until <= self.clock() + timedelta(seconds=seconds):
            return None
        standing = max(await self._running_timeouts(case), key=_timeout_end, default=None)
        by = f" (case #{standing.number})" if standing is not None else ""
        when = f"{until.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
        return (f"timeout not sent: the member is timed out longer already, until {when}{by}; a member holds one "
                "timeout, and this one would have cut it short")

    async def _running_timeouts(self, case: Case) -> list[Case]:
        """The member's other timeouts the mod log holds in force: applied, not lifted, not over."""
        now = self.clock()
        cases = await self.store.list_cases(self.platform, case.server_id, case.member_id, limit=200)
        return [c for c in cases if c.number != case.number and c.action is ActionKind.TIMEOUT
                and c.status is CaseStatus.APPLIED and c.lifted_at is None and _timeout_end(c) > now]

    async def sanction(self, actor: Actor, server_id: str, member_id: str, kind: ActionKind, reason: str, *,
                       duration_s: int | None = None, message_id: str | None = None,
                       channel_id: str | None = None, source: str = "moderator", quiet: bool = False,
                       earns_strike: bool = True, case: Case | None = None) -> Result:
        """A moderator's warn, timeout, kick or ban (temporary when ``duration_s`` is given for a ban).

        Opens a case (``pending``), notifies the member, acts, records the outcome, adds the strike (a warning
        counts even when its DM fails) and escalates. ``message_id``/``channel_id``: the message the sanction is
        about; it is deleted too (for a review decision). ``case``: the case already opened ``pending`` for it (a
        review decision opens it with its claim); ``None``: opened here.

        Raises:
            Refused: the actor may not do this to this member, or a moderator's reason is longer than
                :data:`MAX_REASON` characters (nothing recorded; before, it was cut silently).

        A NUL or a lone surrogate in ``reason`` is recorded (and sent) as U+FFFD (:func:`~bot.core.storable.storable_text`),
        as in message text: PostgreSQL cannot store a NUL, so both backends store the same.
        """
        reason = storable_text(reason)
        if source == "moderator" and len(reason) > MAX_REASON:
            raise Refused(f"The reason has {len(reason):,} characters; at most {MAX_REASON:,}. Nothing was changed.")
        if duration_s is not None and (duration_s < 1 or (kind is ActionKind.TIMEOUT and duration_s > MAX_TIMEOUT_S)):
            # the platform caps a timeout at 28 days; the case would have said longer, or ended before it began
            raise Refused(f"A duration of {duration_s} s is not possible: give 1 s to "
                          f"{dur(MAX_TIMEOUT_S) if kind is ActionKind.TIMEOUT else 'any length'}. Nothing was changed.")
        target = await self.target(server_id, member_id)
        authorize(actor, kind, target, bot=await self.enforcer.bot_member(server_id))
        if target is None and kind in (ActionKind.WARN, ActionKind.TIMEOUT, ActionKind.KICK):
            raise Refused(f"<@{member_id}> is not in this server; nothing was changed (a ban still works).")
        if kind >= ActionKind.TIMEOUT and not await self.capable(_entry(kind), server_id, channel_id):
            raise Refused(f"This platform cannot {kind.label} members"
                          f"{there(_entry(kind), self.enforcer.capabilities, channel_id)}. Nothing was changed.")
        policy = await self.policies.get(self.platform, server_id)
        now = self.clock()
        expires = now + timedelta(seconds=duration_s) if duration_s and kind in (ActionKind.TIMEOUT,
                                                                                  ActionKind.BAN) else None
        try:
            if case is None:
                case = await self.store.open_case(self.platform, server_id, member_id, kind, reason[:MAX_REASON],
                                                  moderator_id=actor.id, message_id=message_id, expires_at=expires,
                                                  now=now)
        except StoreError as exc:  # nothing recorded: the caller hands a claimed review decision back
            log.warning("mod log refused the case of a %s of %s: %s", kind.label, member_id, exc)
            raise Refused(NOT_RECORDED) from exc
        notes: list[str] = []
        if message_id and channel_id and kind > ActionKind.DELETE and self.can(Capability.DELETE):
            # removing the message acts on that channel's content: the moderator needs Manage Messages THERE
            try:
                here = await self.actor_in_channel(actor, server_id, channel_id)
            except Refused as exc:
                here, why = None, str(exc).replace(" Nothing was changed.", "")
            else:
                why = f"not deleted: you lack Manage Messages in <#{channel_id}>"
            if here is None or not here.has(Permission.MANAGE_MESSAGES):
                notes.append(f"delete: {why}")
            else:
                res = await self._delete(server_id, channel_id, message_id)
                if not res.ok:
                    notes.append(f"delete: {res.reason}")
        res = await self._sanction_on_platform(policy, case, duration_s, channel_id)
        if res.extra.get("dm"):
            notes.append(f"dm: {res.extra['dm']}")
        if res.extra.get("cap"):
            notes.append(res.extra["cap"])
        if res.extra.get("kept"):
            notes.append(res.extra["kept"])
        failure = None if res.ok else res.reason
        outcome = (CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                   "; ".join(([failure] if failure else []) + notes) or None)
        escalation = ""
        if res.ok and earns_strike:  # not for a withheld ladder step decided on its card: it is the step itself
            # the case's outcome and its strike in one write (a failed write leaves it pending for recover()), then
            # a crossed ladder step; a ban crosses no step stronger than itself, so its own steps below may follow
            escalation = await self.strike(policy, server_id, member_id, kind, reason, case_number=case.number,
                                           duration_s=duration_s, message_id=message_id, at=now, actor=actor,
                                           outcome=outcome)
        else:
            await record_outcome(f"case #{case.number}", lambda: self.store.set_case_status(
                self.platform, server_id, case.number, outcome[0], failure=outcome[1]))
        if res.ok and kind is ActionKind.BAN:
            # a later ban supersedes the member's earlier temporary bans: their end must not lift this one
            await self.lift_temporary_bans(server_id, member_id, before=case.number,
                                           why=f"superseded by case #{case.number}")
            if expires is not None:
                self.schedule_unban(replace(case, status=CaseStatus.APPLIED))
        length = f" for {dur(duration_s)}" if duration_s else ""
        text = f"Case #{case.number}: {kind.label} <@{member_id}>{length}" + (" done." if res.ok else
                                                                           f" FAILED: {failure}")
        extra_lines = notes + ([escalation] if escalation else [])
        if extra_lines:
            text += "\n" + "\n".join(extra_lines)
        if not quiet:
            await self.desk.post_mod_log(server_id, LogEntry(
                title=f"Case #{case.number}: {kind.label}" + ("" if res.ok else " (FAILED)"),
                lines=(f"Member: {member_id}", f"Moderator: {actor.id}", Sentence("Reason: ", Said(reason)),
                       *([f"Duration: {dur(duration_s)}"] if duration_s else []), *extra_lines),
                member_id=member_id, moderator_id=actor.id, case_number=case.number, failed=not res.ok, kind="case"))
        log.info("case %s: %s by %s (%s)", case.number, kind.label, actor.id, "ok" if res.ok else failure,
                 extra={"server": server_id, "source": source})
        return Result(text, res.ok, case.number, failure=failure, notes=tuple(extra_lines))

    async def strike(self, policy: Policy, server_id: str, member_id: str, kind: ActionKind, reason: str, *,
                     case_number: int | None, duration_s: int | None = None, message_id: str | None = None,
                     at: datetime | None = None, actor: Actor | None = None,
                     outcome: CaseOutcome | None = None) -> str:
        """Add the strike a moderator's sanction earns and carry out a crossed ladder step.

        ``outcome``: ``(status, failure)`` of case ``case_number`` (the sanction just carried out), written in the
        same transaction as the strike (or alone when the sanction earns none), so the mod log never holds the case
        ``applied`` without its strike: when that write fails the case stays ``pending`` for :meth:`recover`, the
        in-memory ledger (which counted the strike) reloads the member from the mod log, and the store error is
        raised.

        A message already struck (by automod) is raised to this sanction's points instead of struck again, so a
        ban decided on a card counts a ban's points (``policy.strikes.points``; the registry's
        ``SanctionKind.strike_points``).

        ``actor``: the moderator whose decision earned the strike. A step they could not take themselves (a
        helper's Delete on a card crossing a timeout step; a member ranked at or above them) is not carried out:
        the strike counts, and a review card (with a mod-log entry) asks a moderator who may to decide it (else a
        helper's deletes timed out a member they may not even warn). Recovery passes the absent moderator with no
        permissions, so their case's step always goes to a card.

        A step carried out is recorded ``pending`` in the strike's own transaction (``step=`` of ``add_strike`` /
        ``raise_strike``), then carried out and recorded ``applied`` or ``failed``: a failed write leaves neither
        (the sanction's case stays ``pending``), a stop after it leaves the step to :meth:`recover`. A step the
        moderator may not take has its review item opened in the strike's transaction the same way (``step=``
        :class:`~bot.core.records.StepReview`); its card is posted after.

        Returns:
            A note for the moderator (``""`` when nothing escalated).
        """
        at = at or self.clock()
        if outcome is not None and case_number is None:
            raise ValueError("an outcome needs its case_number")
        status, failure = outcome if outcome is not None else (None, None)
        decision = await self.ledger.add(policy, platform=self.platform, server_id=server_id, member_id=member_id,
                                         message_id=message_id, action=kind, at=at, reason=reason,
                                         raise_existing=True)
        steps = [s for s in decision.escalation if s.kind > kind or (
            s.kind is ActionKind.TIMEOUT and kind is ActionKind.TIMEOUT and (s.duration_s or 0) > (duration_s or 0))]
        step = max(steps, key=lambda a: (a.kind, a.duration_s or 0)) if steps and decision.strike else None
        withheld: Refused | None = None
        if step is not None and actor is not None:
            try:
                authorize(actor, step.kind, await self.target(server_id, member_id),
                          bot=await self.enforcer.bot_member(server_id))
            except Refused as exc:
                withheld = exc
        why = ""
        timed = False
        expires: datetime | None = None
        draft: StepCase | StepReview | None = None
        length = ""
        if step is not None:
            why = (f"escalation after case #{case_number}: {step.reason}" if case_number
                   else f"escalation: {step.reason}")
            timed = step.kind in (ActionKind.TIMEOUT, ActionKind.BAN) and bool(step.duration_s)
            expires = at + timedelta(seconds=step.duration_s or 0) if timed else None
            length = f" ({dur(step.duration_s)})" if step.duration_s else ""
            if withheld is not None:
                assert actor is not None
                # a review item a moderator who may can act on (the ladder steps only when points cross it, so
                # nothing later would bring it back), opened in the strike's own transaction: a stop or a failed
                # write after the strike left nobody asked to decide the step
                draft = StepReview(member_id, f"{WITHHELD_STEP}: {step.kind.label}{length} ({step.reason}); "
                                              f"<@{actor.id}> may not {step.kind.label} this member"[:1000], at)
            elif case_number is not None:
                # recorded (pending) in the strike's own transaction: never the strike without the step it earned
                draft = StepCase(member_id, step.kind, why, at, expires)
        try:
            # the platform acted already: the write is tried again while the mod log is busy (record_outcome)
            what = f"case #{case_number}'s strike"
            if decision.strike is None:
                if status is not None:
                    assert case_number is not None
                    await record_outcome(what, lambda: self.store.set_case_status(
                        self.platform, server_id, case_number, status, failure=failure))
                return ""
            strike = decision.strike
            if decision.raised:
                await record_outcome(what, lambda: self.store.raise_strike(
                    self.platform, server_id, message_id or "", strike.points, case_number, case_status=status,
                    failure=failure, step=draft))
            else:
                await record_outcome(what, lambda: self.store.add_strike(
                    self.platform, server_id, member_id, strike.points, strike.expires_at, reason=reason,
                    message_id=message_id, case_number=case_number, now=at, case_status=status, failure=failure,
                    step=draft))
        except BaseException:
            # the ledger counted a strike the mod log does not hold: read the member from the mod log again
            self.ledger.forget(self.platform, server_id, member_id)
            raise
        if step is None:
            return ""
        if withheld is not None:
            assert actor is not None and isinstance(draft, StepReview)
            # the refusal may quote the member's display name: its pieces stay typed, escaped where shown
            note = Sentence(f"escalation to {step.kind.label}{length} not carried out: ",
                            *(p if isinstance(p, Said) else p.replace(" Nothing was changed.", "")
                              for p in withheld.parts),
                            " A moderator who may should decide it (review card posted).")
            item = await self.store.step_review(self.platform, server_id, draft)
            card = await self.review_card(item.id, server_id=server_id) if item is not None else None
            if card is not None:
                await self._show_card(card)
            await self.desk.post_mod_log(server_id, LogEntry(
                title=f"Escalation needs a moderator: {step.kind.label}{length}",
                lines=(f"Member: {member_id}", *([f"After case #{case_number}"] if case_number else []),
                       f"Ladder: {step.reason}", f"Decided by: {actor.id}, who may not {step.kind.label} them"),
                member_id=member_id, moderator_id=actor.id, case_number=case_number, failed=True,
                kind="problem"))
            return note
        case = None
        if draft is not None:
            assert case_number is not None
            case = next((c for c in reversed(await self.store.escalations_of(self.platform, server_id, case_number))
                         if c.status is CaseStatus.PENDING and c.action is step.kind), None)
        if case is None:
            case = await self.store.open_case(self.platform, server_id, member_id, step.kind, why, expires_at=expires,
                                              now=at, escalated_from=case_number)
        res = await self._sanction_on_platform(policy, case, step.duration_s)
        step_case = case
        await record_outcome(f"ladder step case #{case.number}", lambda: self.store.set_case_status(
            self.platform, server_id, step_case.number, CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
            failure=res.extra.get("kept") if res.ok else res.reason))
        if res.ok and step.kind is ActionKind.BAN:  # as a moderator's ban: supersedes, and ends when it is timed
            await self.lift_temporary_bans(server_id, member_id, before=case.number,
                                           why=f"superseded by case #{case.number}")
            if expires is not None:  # a ladder step "ban" with duration_s is a temporary ban (it was permanent)
                self.schedule_unban(replace(case, status=CaseStatus.APPLIED))
        text = f"escalation: case #{case.number} {step.kind.label}"
        if timed:
            text += f" ({dur(step.duration_s or 0)})"
        if res.extra.get("kept"):
            text += f": {res.extra['kept']}"
        return text + (f" FAILED: {res.reason}" if not res.ok else "")

    async def pardon(self, actor: Actor, server_id: str, case_number: int) -> Result:
        """Pardon a case's strikes (Manage Messages), checked as the warn that gives a strike is: never a case about
        the moderator themselves (also one naming their pseudonym after ``/mydata forget``), and, while its member
        is in the server, only of a member ranking below the moderator (role hierarchy; not the owner, not the
        bot).

        Raises:
            Refused: without the permission, no such case, a case about the moderator, the member ranks at or
                above them, or the platform could not say who the member is now (nothing changed).
        """
        authorize(actor, ActionKind.REVIEW)
        case = await self.store.get_case(self.platform, server_id, case_number)
        if case is None:
            raise Refused(f"There is no case #{case_number} in this server.")
        if case.member_id in await self.store.member_ids(self.platform, server_id, actor.id):
            raise Refused("You cannot pardon a case about yourself. Nothing was changed.")
        authorize(actor, ActionKind.WARN, await self.target(server_id, case.member_id),
                  bot=await self.enforcer.bot_member(server_id))
        n = await self.store.pardon(self.platform, server_id, case_number=case_number, moderator_id=actor.id)
        self.ledger.forget(self.platform, server_id, case.member_id)
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Case #{case_number} pardoned", lines=(f"Moderator: {actor.id}", f"{n} strike(s) pardoned"),
            member_id=case.member_id, moderator_id=actor.id, case_number=case_number, kind="case"))
        return Result(f"Case #{case_number} pardoned ({n} strike(s)).", True, case_number)

    async def unban(self, actor: Actor, server_id: str, member_id: str, reason: str) -> Result:
        """Lift a ban (Ban Members), recorded as a ``log`` case once the platform answered: ``applied`` (the member's
        bans are marked lifted in the mod log, their timers cancelled), or ``failed`` with the platform's reason, as
        every refused sanction is; either way posted in the mod log. (A stop before the answer records nothing: the
        moderator saw no answer and asks again; unbanning twice does no harm.)

        Returns:
            The moderator's answer (``ok`` False and ``failure`` set when the platform refused), with the case.

        Raises:
            Refused: missing Ban Members, a platform without bans, or a reason longer than :data:`MAX_REASON`
                characters, as a sanction's (nothing recorded; before, the case kept a cut one).
        """
        authorize(actor, ActionKind.BAN)
        if not self.can(Capability.UNBAN):
            raise Refused("This platform has no bans to lift.")
        reason = storable_text(reason)  # a NUL as U+FFFD, as a sanction's reason
        if len(reason) > MAX_REASON:
            raise Refused(f"The reason has {len(reason):,} characters; at most {MAX_REASON:,}. Nothing was changed.")
        res = await self.enforcer.unban(server_id, member_id, reason)
        case = await self.store.open_case(self.platform, server_id, member_id, ActionKind.LOG,
                                          f"unban: {reason}", moderator_id=actor.id,
                                          status=CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                          failure=None if res.ok else res.reason[:1000])
        if not res.ok:
            await self.desk.post_mod_log(server_id, LogEntry(
                title=f"Case #{case.number}: unban (FAILED)",
                lines=(f"Member: {member_id}", f"Moderator: {actor.id}", Sentence("Reason: ", Said(reason)),
                       f"Refused: {res.reason}"),
                member_id=member_id, moderator_id=actor.id, case_number=case.number, failed=True, kind="case"))
            log.info("case %s: unban by %s (%s)", case.number, actor.id, res.reason, extra={"server": server_id})
            return Result(f"Unban failed: {res.reason} (case #{case.number}).", False, case.number,
                          failure=res.reason)
        await self.lift_temporary_bans(server_id, member_id, before=case.number, why=f"unbanned by case #{case.number}",
                                       unbanned=True)
        await self.desk.post_mod_log(server_id, LogEntry(
            title="Unban", lines=(f"Member: {member_id}", f"Moderator: {actor.id}", Sentence("Reason: ", Said(reason))),
            member_id=member_id, moderator_id=actor.id, case_number=case.number, kind="case"))
        return Result(f"Unbanned <@{member_id}> (case #{case.number}).", True, case.number)

    async def member_unbanned(self, server_id: str, member_id: str) -> list[int]:
        """The platform says member ``member_id`` was unbanned from ``server_id``, whoever did it: a moderator by
        hand in the platform's own interface (Discord: ``GUILD_BAN_REMOVE``), or the bot itself (its own unbans send
        the same event). Their applied bans are marked lifted in the mod log, their end-of-ban timers cancelled and
        their owed unbans settled, as the bot's own :meth:`unban` does, so neither a temporary ban's end nor an owed
        lift acts on a member no longer banned. A timer whose try is under way (most likely the bot's own unban that
        sent this event) finishes and records its outcome.

        Nothing is posted in the mod log nor noted on the cases: the event does not say who unbanned (the platform's
        audit log does), and the bot's own unbans, recorded already, send it too. Slack has no bans (no
        :attr:`Capability.UNBAN`): nothing to do there, and this returns ``[]``.

        Returns:
            The numbers of the ban cases lifted now (``[]``: none was in force in the mod log).
        """
        if not self.can(Capability.UNBAN):
            return []
        done = await self.lift_temporary_bans(server_id, member_id, before=None, why="unbanned on the platform",
                                              unbanned=True)
        if done:
            log.info("member %s unbanned on the platform: ban case(s) %s lifted", member_id,
                     ", ".join(f"#{n}" for n in done), extra={"server": server_id})
        return done

    async def lift_temporary_bans(self, server_id: str, member_id: str, *, before: int | None, why: str,
                                  unbanned: bool = False) -> list[int]:
        """Mark the member's temporary bans older than case ``before`` lifted (an unban, or a later ban that
        supersedes them) and cancel their timers, so their end never unbans the member; the same for an overturned
        ban whose refused unban is still owed, and (``unbanned``: case ``before`` is an unban) for their permanent
        bans not lifted yet. ``before`` ``None``: all of them (the member was unbanned on the platform). Returns
        their numbers."""
        done = []
        for old in await self.store.due_expiries(self.platform, self.clock() + EXPIRY_HORIZON):
            if (old.server_id != server_id or old.member_id != member_id
                    or (before is not None and old.number >= before)):
                continue
            self.cancel_unban(server_id, old.number)
            await self.store.mark_lifted(self.platform, server_id, old.number)
            log.info("temporary ban of case %s: %s", old.number, why, extra={"server": server_id})
            done.append(old.number)
        if unbanned:
            # an unban lifts the member's permanent bans too: overturning one later owes no unban (the platform
            # would refuse it: Discord answers 404 Unknown Ban)
            for old in await self.store.list_cases(self.platform, server_id, member_id, limit=200):
                if (old.action is ActionKind.BAN and old.status is CaseStatus.APPLIED and old.expires_at is None
                        and old.lifted_at is None and (before is None or old.number < before)):
                    await self.store.mark_lifted(self.platform, server_id, old.number)
                    done.append(old.number)
        for owed in await self.store.owed_lifts(self.platform, LIFT_TRIES):
            # an overturned ban still owing its unban: this unban (or a later ban) settles it; never retried after
            if (owed.server_id != server_id or owed.member_id != member_id
                    or (before is not None and owed.number >= before)):
                continue
            self.cancel_unban(server_id, owed.number)
            await self.store.mark_lifted(self.platform, server_id, owed.number)
            done.append(owed.number)
        return done

    async def lift_overturned_ban(self, case: Case, reason: str) -> str:
        """Unban the member of ban ``case``, just overturned (on appeal, or its review dismissed).

        The unban is recorded as owed before it is tried, so a refusal (or a stop in between) is tried again every
        :data:`UNBAN_RETRY_S` seconds and at each start (:meth:`retry_owed_lifts`), at most :data:`LIFT_TRIES`
        times in all; each refusal is noted on the case. Every try is claimed in the mod log first
        (``claim_lift``), so two processes on one mod log never call the platform for the same try. Returns the
        note for the card and the mod log."""
        other = await self.standing_ban(case)
        if other is not None:  # another ban of the member stands: it keeps them banned, nothing is lifted
            self.cancel_unban(case.server_id, case.number)
            await self.store.mark_lifted(self.platform, case.server_id, case.number)
            note = self._still_banned(case, other)
            await self._note_on_case(case.server_id, case.number, note)
            return note
        await self.store.owe_lift(self.platform, case.server_id, case.number)
        held = self._lift_holds.pop((case.server_id, case.number), None)
        if held is not None:
            # this process's own wait before the next try (a temporary ban's end refused): overturning tries now
            await self.store.release_lift(self.platform, case.server_id, case.number, held)
        claim = await self.store.claim_lift(self.platform, case.server_id, case.number, LIFT_TRIES,
                                            hold_s=LIFT_HOLD_S)
        if claim.tries is None:
            if claim.held_until is None:
                now = await self.store.get_case(self.platform, case.server_id, case.number)
                if now is not None and now.lifted_at is None:
                    # a temporary ban whose end's unban was refused LIFT_TRIES times: the count is shared
                    note = (f"ban not lifted: the unban was refused {LIFT_TRIES} times already (at the ban's end); "
                            "not tried again, unban the member by hand")
                    await self._note_on_case(case.server_id, case.number, note)
                    return f"could not lift the ban: FAILED: {note}"
                return "not unbanned: the ban was lifted already"  # its end came, or a moderator's unban
            self._schedule_lift(case, self._until(claim.held_until))
            if (case.server_id, case.number) in self._lift_trying:  # this process's unban at the ban's end
                return "ban lift owed: the unban at the ban's end is under way (its outcome is posted in the mod log)"
            # another process of the bot started meanwhile and is trying it: it notes the outcome on the case
            return "ban lift owed: another process of the bot is trying the unban"
        res = await self._unban_owed(case, reason)
        if res.ok:
            await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
            self.cancel_unban(case.server_id, case.number)
            return "ban lifted"
        if await self._lifted_meanwhile(case, res):
            self.cancel_unban(case.server_id, case.number)
            return self._unbanned_meanwhile(res.reason)
        return f"could not lift the ban: FAILED: {await self._lift_refused(case, res.reason, claim.tries)}"

    async def lift_overturned_timeout(self, case: Case, reason: str) -> str:
        """Remove the timeout of case ``case``, just overturned (its review dismissed, on appeal, or a ladder step
        overturned with its cause). The overturn's transaction owed the removal (``lift_tries`` 0); the platform's
        answer settles it (:meth:`~bot.core.store_port.CaseStore.end_lift_try`: removed, or refused: counted and
        noted on the case, not tried again), so a stop or a failed write before the answer is recorded leaves it to
        :meth:`retry_owed_timeouts` at the next start. Removing a timeout twice does no harm (nothing is left to
        remove). A timeout over already (its end passed: an appeal decided, or a card dismissed, after it ran out)
        has its debt settled without calling the platform: the member's timeout then, if any, is another one (set
        by hand on the platform), which the removal lifted. A timeout superseded since (:meth:`superseding_sanction`: a later timeout or a standing ban of the
        member) has its debt settled without calling the platform, and the case notes why: removing "the" timeout
        would lift that later one. Returns the note for the card and the mod log."""
        end = _timeout_end(case)
        if end <= self.clock():
            # over on its own: nothing of it is left to remove, and "the" member's timeout now is another (set by
            # hand on the platform, or by another bot), which a removal would lift
            await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
            return f"timeout not removed: it was over already ({end.astimezone(UTC):%Y-%m-%d %H:%M} UTC)"
        later = await self.superseding_sanction(case)
        if later is not None:  # a member has one timeout: the platform holds the later one's, not this one's
            await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
            if later.action is ActionKind.TIMEOUT and later.number < case.number:
                note = f"timeout not removed: case #{later.number} times them out longer"
            else:
                did = "timed them out" if later.action is ActionKind.TIMEOUT else "banned them"
                note = f"timeout not removed: case #{later.number} {did} since"
            await self._note_on_case(case.server_id, case.number, note)
            return note
        # a shorter timeout of the member still in force (not sent while this longer one ran): it is what is left
        shorter = max(await self._running_timeouts(case), key=_timeout_end, default=None)
        if shorter is not None:
            left = max(1, int((_timeout_end(shorter) - self.clock()).total_seconds()))
            res = await self.enforcer.timeout(case.server_id, case.member_id, left, reason)
            done = f"timeout shortened to case #{shorter.number}'s, which still runs ({dur(left)} left)"
        else:
            res = await self.enforcer.remove_timeout(case.server_id, case.member_id, reason)
            done = "timeout lifted"
        await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=res.ok)
        if res.ok:
            return done
        await self._note_on_case(case.server_id, case.number, f"timeout not lifted: {res.reason}")
        return f"could not lift the timeout: FAILED: {res.reason}"

    async def retry_owed_timeouts(self) -> list[str]:
        """At startup: remove the timeouts of overturned cases whose removal a stop (or a failed write) cut off
        after the overturn was committed (``store.owed_timeout_lifts``); one already over only has its debt settled
        (nothing to lift); one superseded since is settled without the platform (:meth:`lift_overturned_timeout`).
        Each removal is claimed in the mod log first (``claim_lift``, one try: a refused removal is not tried
        again), so of processes starting together on one mod log one removes it, posts it and, when refused, counts
        and notes the refusal once (each did before); a process that stops mid-try leaves a hold that runs out.
        Each outcome is posted in the mod log. Returns one line per case tried or superseded."""
        lines: list[str] = []
        if not self.can(Capability.TIMEOUT):
            return lines
        now = self.clock()
        for case in await self.store.owed_timeout_lifts(self.platform):
            if not self.owns(case.server_id):  # another shard process's guild: removed there
                continue
            claim = await self.store.claim_lift(self.platform, case.server_id, case.number, 1, hold_s=LIFT_HOLD_S)
            if claim.tries is None:  # another process is removing it (or has settled it since)
                continue
            end = case.expires_at or case.created_at + timedelta(seconds=MAX_TIMEOUT_S)
            if end <= now:  # over on its own since
                await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
                continue
            note = await self.lift_overturned_timeout(case, f"case #{case.number} overturned (removed after a "
                                                            "restart)")
            if note == "timeout lifted":
                note += " (after a restart)"
            await self.desk.post_mod_log(case.server_id, LogEntry(
                title=f"Case #{case.number}: overturned timeout", lines=(f"Member: {case.member_id}", note),
                member_id=case.member_id, case_number=case.number, failed="FAILED" in note, kind="case"))
            lines.append(f"case #{case.number}: {note}")
        return lines

    async def _lifted_meanwhile(self, case: Case, res: ActionResult) -> bool:
        """Whether the refused unban ``res`` of ban ``case`` found the member unbanned already: the platform says
        they are not banned (:data:`NOT_BANNED`: unbanned by hand while the bot was stopped, or by a try that a
        stop cut off before it was recorded), or the mod log says the ban was lifted while this process's try was
        under way (:meth:`member_unbanned`, a moderator's unban by hand). Then the refusal is no failure to count,
        note or retry, and the case is marked lifted."""
        now = await self.store.get_case(self.platform, case.server_id, case.number)
        if now is not None and now.lifted_at is not None:
            return True
        if not res.extra.get(NOT_BANNED):
            return False
        await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
        return True

    @staticmethod
    def _unbanned_meanwhile(why: str) -> str:
        """The note for an unban refused because the member was unbanned on the platform meanwhile."""
        return f"unbanned meanwhile on the platform (the bot's own unban was answered: {short_refusal(why)})"

    async def _unban_owed(self, case: Case, reason: str) -> ActionResult:
        """The platform's unban for an owed lift of ``case`` (overturned, or a temporary ban's end); an error raised instead of a refusal (a dropped
        connection, a timeout) is a refusal with the error as its reason, so the try is counted, noted and retried
        like one."""
        try:
            return await self.enforcer.unban(case.server_id, case.member_id, reason)
        except Exception as exc:  # noqa: BLE001 - any platform error is one more refused try, never a lost retry
            log.warning("owed unban of case %s raised %s", case.number, type(exc).__name__,
                        extra={"server": case.server_id})
            return ActionResult(Action(ActionKind.BAN), False, f"{type(exc).__name__}: {exc}"[:300])

    def _until(self, when: datetime) -> float:
        """Seconds from now (wall clock, as the mod log's holds are written) to ``when``; at least 0.05."""
        return max((when - datetime.now(UTC)).total_seconds(), 0.05)

    async def _lift_refused(self, case: Case, why: str, tries: int) -> str:
        """Try ``tries`` (claimed) at the owed unban of overturned ban ``case`` was refused: see
        :meth:`_refusal_counted`. Returns the note."""
        return await self._refusal_counted(case, why, tries, lead="ban not lifted", on_case="",
                                           retry=self._schedule_lift)

    async def _refusal_counted(self, case: Case, why: str, tries: int, *, lead: str, on_case: str,
                               retry: Callable[[Case, float], None]) -> str:
        """Refused try ``tries`` (claimed) at lifting ban ``case``: count it in the mod log, note it on the case
        (``on_case`` + the note) and hold the next try :data:`UNBAN_RETRY_S` seconds for this process's timer
        (``retry``), or give up after :data:`LIFT_TRIES`. The platform's reason is quoted shortened
        (:func:`short_refusal`). Returns the note (``lead``: how it starts)."""
        why = short_refusal(why)
        if tries >= LIFT_TRIES:
            await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=False)
            note = f"{lead}: {why} (try {tries} of {LIFT_TRIES}; not tried again, unban the member by hand)"
        else:
            held = await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=False,
                                                 hold_s=UNBAN_RETRY_S)
            note = (f"{lead}: {why} (try {tries} of {LIFT_TRIES}; tried again in {UNBAN_RETRY_S // 60} minutes and "
                    "at the next start)")
            retry(case, UNBAN_RETRY_S)
            if held is not None:
                self._lift_holds[(case.server_id, case.number)] = held
        await self._note_on_case(case.server_id, case.number, on_case + note)
        return note

    def _schedule_lift(self, case: Case, delay_s: float) -> None:
        """Try the owed unban of overturned ban ``case`` again in ``delay_s`` seconds (its end-of-ban timer, if
        any, is replaced: an overturned ban has no end left to reach)."""
        key = (case.server_id, case.number)
        old = self._timers.pop(key, None)
        if old is not None and old is not asyncio.current_task() and key not in self._lift_trying:
            old.cancel()  # a try under way (the platform called) is left to finish and record its outcome
        self._timers[key] = asyncio.ensure_future(self._lift_later(case, delay_s))

    async def _lift_later(self, case: Case, delay_s: float) -> None:
        key = (case.server_id, case.number)
        cancelled = trying = False
        try:
            await asyncio.sleep(delay_s)
            if self._stopping:  # woke while the process stops: the next start tries it
                raise asyncio.CancelledError
            trying = True  # cancel_unban lets this try finish and record its outcome
            self._lift_trying.add(key)
            await self.retry_lift(case)
        except asyncio.CancelledError:
            cancelled = True  # a stop: a hold this process wrote stays in _lift_holds so close() hands it back
            raise
        except Exception:
            log.exception("retrying the unban of overturned case %s failed", case.number,
                          extra={"server": case.server_id})
        finally:
            self._timer_done(key, trying=trying, cancelled=cancelled)

    def _timer_done(self, key: tuple[str, int], *, trying: bool, cancelled: bool) -> None:
        """The end of a ban-lift timer (a temporary ban's end, or an owed unban's retry) of case ``key``: its try is
        no longer under way, and it leaves ``_timers`` unless a newer timer replaced it; a hold it wrote is dropped
        unless a stop cancelled it (then :meth:`release_lifts` hands the hold back)."""
        if trying:
            self._lift_trying.discard(key)
        if self._timers.get(key) is asyncio.current_task():
            del self._timers[key]
            if not cancelled:
                self._lift_holds.pop(key, None)

    async def release_lifts(self) -> None:
        """At a clean stop: hand back the next try of every owed unban this process holds (refused here, its timer
        pending), so the next start (of this process or another) tries it at once; a hold another process took
        since is left alone."""
        for (server_id, number), held in sorted(self._lift_holds.items()):
            await self.store.release_lift(self.platform, server_id, number, held)
        self._lift_holds.clear()

    async def retry_owed_lifts(self) -> list[str]:
        """At startup: try again every owed unban of an overturned ban (:meth:`lift_overturned_ban`); one held by
        another process (a try under way, or its timer's next try) is tried when the hold ends, if still owed.
        Returns one line per case tried."""
        lines: list[str] = []
        if not self.can(Capability.UNBAN):
            return lines
        for case in await self.store.owed_lifts(self.platform, LIFT_TRIES):
            if not self.owns(case.server_id):  # another shard process's guild: tried there
                continue
            note = await self.retry_lift(case)
            if note:
                lines.append(f"case #{case.number}: {note}")
        return lines

    async def retry_lift(self, case: Case) -> str:
        """One more try at the owed unban of overturned ban ``case``, claimed in the mod log first: nothing is done
        when it was lifted since (or is no longer owed); while another process holds the try, it is looked at
        again when the hold ends; a later applied ban of the member cancels it. The outcome is noted on the case
        and posted in the mod log. Returns the note (``""``: nothing done here)."""
        claim = await self.store.claim_lift(self.platform, case.server_id, case.number, LIFT_TRIES,
                                            hold_s=LIFT_HOLD_S)
        if claim.tries is None:
            if claim.held_until is not None:
                self._schedule_lift(case, self._until(claim.held_until))
            return ""
        other = await self.standing_ban(case)
        if other is not None:
            await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
            note = self._still_banned(case, other)
            await self._note_on_case(case.server_id, case.number, note)
            failed = False
        else:
            res = await self._unban_owed(case, f"case #{case.number} overturned (unban tried again)")
            if res.ok:
                await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
                note = "ban lifted (tried again)"
                await self._note_on_case(case.server_id, case.number, note)
                failed = False
            elif await self._lifted_meanwhile(case, res):
                note = self._unbanned_meanwhile(res.reason)
                await self._note_on_case(case.server_id, case.number, note)  # after the refusals noted before
                failed = False
            else:
                note = await self._lift_refused(case, res.reason, claim.tries)
                failed = True
        await self.desk.post_mod_log(case.server_id, LogEntry(
            title=f"Case #{case.number}: overturned ban", lines=(f"Member: {case.member_id}", note),
            member_id=case.member_id, case_number=case.number, failed=failed, kind="case"))
        return note

    def cancel_unban(self, server_id: str, number: int) -> None:
        """Cancel the end-of-ban timer (or owed-unban retry) of case ``number``, if one is scheduled; one whose try
        is under way (its platform call sent or about to be) is left to finish and record the outcome (a later try
        re-reads the mod log, where the case is lifted by then, and does nothing)."""
        key = (server_id, number)
        self._lift_holds.pop(key, None)
        if key in self._lift_trying:
            return
        timer = self._timers.pop(key, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()

    async def superseding_ban(self, case: Case) -> Case | None:
        """The later ban of the same member that supersedes temporary ban ``case``, read from the mod log: a ban
        case opened after it and applied (a permanent ban, or a temporary one with its own timer). ``None``: the
        temporary ban still stands on its own."""
        later = await self.store.list_cases(self.platform, case.server_id, case.member_id, limit=200)
        return next((c for c in later if c.number > case.number and c.action is ActionKind.BAN
                     and c.status is CaseStatus.APPLIED), None)

    async def superseding_sanction(self, case: Case) -> Case | None:
        """The case of the same member that supersedes timeout ``case``, read from the mod log: a timeout applied
        after it that ends no earlier (a member has one timeout on the platform, so that one replaced ``case``'s,
        whether it still runs or not), another timeout in force that ends later (a shorter ``case`` was not sent
        while it ran: :meth:`_timed_out_longer`), or a ban applied after it that still stands (not lifted,
        permanent or not ended). ``None``: the platform holds ``case``'s timeout (a later shorter one was not sent
        while it ran; it is left standing by :meth:`lift_overturned_timeout`)."""
        now = self.clock()
        end = _timeout_end(case)
        cases = await self.store.list_cases(self.platform, case.server_id, case.member_id, limit=200)
        return next((c for c in cases if c.number != case.number and c.status is CaseStatus.APPLIED
                     and ((c.action is ActionKind.TIMEOUT and _timeout_end(c) >= end
                           and (c.number > case.number or (c.lifted_at is None and _timeout_end(c) > now)))
                          or (c.action is ActionKind.BAN and c.number > case.number and c.lifted_at is None
                              and (c.expires_at is None or c.expires_at > now)))), None)

    async def standing_ban(self, case: Case) -> Case | None:
        """Another ban of the member of ban ``case`` that keeps them banned, read from the mod log: a later applied
        ban (:meth:`superseding_ban`), or an earlier one still applied and not lifted (a permanent ban, or a
        temporary one not ended). ``None``: lifting ``case`` unbans the member."""
        later = await self.superseding_ban(case)
        if later is not None:
            return later
        now = self.clock()
        cases = await self.store.list_cases(self.platform, case.server_id, case.member_id, limit=200)
        return next((c for c in cases if c.number < case.number and c.action is ActionKind.BAN
                     and c.status is CaseStatus.APPLIED and c.lifted_at is None
                     and (c.expires_at is None or c.expires_at > now)), None)

    @staticmethod
    def _still_banned(case: Case, other: Case) -> str:
        """The note for an overturned ban not lifted because ban case ``other`` stands."""
        if other.number > case.number:
            return f"not unbanned: case #{other.number} banned them since"
        return f"not unbanned: case #{other.number} still bans them"

    async def _still_due(self, case: Case) -> bool:
        """Whether temporary ban ``case`` is still applied and not lifted in the mod log (an unban, an overturned
        appeal or a superseding ban lifts it). Reads this one case: reading every temporary ban to find it made a
        start after a downtime quadratic in the bans that ended meanwhile (each end read them all: 1,000 took 14 s
        before catch-up could begin)."""
        now = await self.store.get_case(self.platform, case.server_id, case.number)
        return (now is not None and now.action is ActionKind.BAN and now.status is CaseStatus.APPLIED
                and now.expires_at is not None and now.lifted_at is None)

    def schedule_unban(self, case: Case) -> None:
        """Lift a temporary ban at ``case.expires_at`` (rescheduled from the store after a restart)."""
        if case.action is not ActionKind.BAN or case.expires_at is None:
            return
        key = (case.server_id, case.number)
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._lift_holds.pop(key, None)
        self._timers[key] = asyncio.ensure_future(self._unban_at(case))

    async def _unban_at(self, case: Case) -> None:
        """At temporary ban ``case``'s end: unban the member, unless the mod log says the ban was lifted since or a
        later ban supersedes it.

        The unban is then owed like an overturned ban's (:meth:`lift_overturned_ban`): each try is claimed in the
        mod log first (``claim_lift``, so two processes on one mod log never call the platform for the same try),
        a refusal is counted in the case's ``lift_tries`` (kept across restarts), noted on the case and posted in
        the mod log, and tried again every :data:`UNBAN_RETRY_S` seconds and at each start, at most
        :data:`LIFT_TRIES` refused tries in all; the last note says it is not tried again and to unban by hand."""
        key = (case.server_id, case.number)
        cancelled = trying = False
        try:
            assert case.expires_at is not None
            # the end is a time of the clock (the mod log's): asyncio sleeps on the monotonic clock, which a wall
            # clock set back or forward (NTP stepping it) and a suspended host or paused VM (Linux's monotonic clock
            # stops) leave behind, so the timer looks at the clock again at least every END_CHECK_S seconds; one
            # sleep unbanned an hour early after the clock was set back an hour, a day late after a day's pause
            delay = (case.expires_at - self.clock()).total_seconds()
            while delay > 0:
                await asyncio.sleep(min(delay, END_CHECK_S))
                delay = (case.expires_at - self.clock()).total_seconds()
            if self._stopping:  # woke while the process stops: the next start looks at it again
                raise asyncio.CancelledError
            # re-check against the mod log at expiry: lifted since (unban, overturned appeal) or superseded by a
            # later ban of the same member means there is nothing to lift
            if not await self._still_due(case):
                return
            later = await self.superseding_ban(case)
            if later is not None:
                await self.store.mark_lifted(self.platform, case.server_id, case.number)
                await self.desk.post_mod_log(case.server_id, LogEntry(
                    title=f"Case #{case.number}: temporary ban ended",
                    lines=(f"Member: {case.member_id}", f"not unbanned: case #{later.number} banned them since"),
                    member_id=case.member_id, case_number=case.number, kind="case"))
                return
            await self.store.owe_lift(self.platform, case.server_id, case.number)
            claim = await self.store.claim_lift(self.platform, case.server_id, case.number, LIFT_TRIES,
                                                hold_s=LIFT_HOLD_S)
            if claim.tries is None:
                # another process holds the try (looked at again when its hold ends), or the refused tries are
                # used up (the last one said so and asked for an unban by hand)
                if claim.held_until is not None:
                    self._retry_end(case, self._until(claim.held_until))
                return
            trying = True  # from here cancel_unban lets this try finish (a hand unban's event may come meanwhile)
            self._lift_trying.add(key)
            res = await self._unban_owed(case, f"temporary ban of case #{case.number} ended")
            failed = False
            if res.ok:
                await self.store.end_lift_try(self.platform, case.server_id, case.number, lifted=True)
                note = "unbanned"
                if claim.tries > 1:
                    await self._note_on_case(case.server_id, case.number, "unbanned at the ban's end (tried again)")
            elif await self._lifted_meanwhile(case, res):
                note = self._unbanned_meanwhile(res.reason)
                if claim.tries > 1:  # after the refusals noted before
                    await self._note_on_case(case.server_id, case.number, f"ban's end: {note}")
            else:
                note = await self._end_refused(case, res.reason, claim.tries)
                failed = True
            await self.desk.post_mod_log(case.server_id, LogEntry(
                title=f"Case #{case.number}: temporary ban ended", lines=(f"Member: {case.member_id}", note),
                member_id=case.member_id, case_number=case.number, failed=failed, kind="case"))
        except asyncio.CancelledError:
            cancelled = True  # a stop: a hold this process wrote stays in _lift_holds so close() hands it back
            raise
        except Exception:
            log.exception("lifting temporary ban of case %s failed", case.number, extra={"server": case.server_id})
        finally:
            self._timer_done(key, trying=trying, cancelled=cancelled)

    def _retry_end(self, case: Case, delay_s: float) -> None:
        """Look at temporary ban ``case``'s end again in ``delay_s`` seconds (its timer replaced)."""
        self._timers.pop((case.server_id, case.number), None)  # the running timer ends on its own
        self.schedule_unban(replace(case, expires_at=self.clock() + timedelta(seconds=delay_s)))

    async def _end_refused(self, case: Case, why: str, tries: int) -> str:
        """Try ``tries`` (claimed) at the unban at temporary ban ``case``'s end was refused: see
        :meth:`_refusal_counted`. Returns the note (also the mod log's line)."""
        return await self._refusal_counted(case, why, tries, lead="unban FAILED", on_case="ban's end: ",
                                           retry=self._retry_end)
