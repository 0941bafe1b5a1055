"""The moderation workflow: what happens to a verdict, a moderator's sanction, a review decision, an appeal and a
pardon. Written once; the Discord and Slack adapters only translate events in and render views out.

Layer: ``bot.workflow`` (platform-neutral: ``bot.core`` and the standard library only). Talks to the platform
through :class:`~bot.workflow.ports.Enforcer` (with declared capabilities), to moderators through
:class:`~bot.workflow.ports.ModDesk`, and to the mod log through :class:`~bot.workflow.ports.WorkflowStore`.

Rules that hold for every entry point:

* **Authorize first** (:func:`bot.workflow.authz.authorize`), server-side, on every interaction.
* **Claim, then act.** A review decision or an appeal decision is recorded with a conditional update before any
  platform call, so of two moderators deciding one card exactly one acts; the other is told who decided.
* **Record, then act, then record the outcome.** A case is opened ``pending`` before the platform call and set
  ``applied`` or ``failed`` (with the platform's reason) after it; a case still ``pending`` at startup was cut off
  by a stop and is carried out or marked failed (:meth:`ModerationWorkflow.recover`).
* **Fall back, never fail silently.** An action the platform cannot do (:class:`Capability`) becomes a note on the
  case and a review item; a refused action is recorded on the case and shown in the mod log.
* **Strikes follow the sanction.** A warning counts even when its DM cannot be delivered; a sanction decided on a
  card counts that sanction's points (a message already struck by automod is raised to them, never struck twice);
  crossing a ladder step carries out that step's action once, as its own case.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from bot.core.errors import (
    AppealAlreadyOpen,
    AppealError,
    CaseNotFound,
    NotCaseMember,
    ReviewAlreadyDecided,
)
from bot.core.escalation import StrikeLedger
from bot.core.models import MAX_TIMEOUT_S, Action, ActionKind, Case, CaseStatus, ReviewDecision, ReviewItem
from bot.core.policy import Policy
from bot.core.ports import ActionResult
from bot.workflow.authz import Actor, Permission, Refused, authorize
from bot.workflow.ports import Capability, Enforcer, MemberNotice, ModDesk, WorkflowStore
from bot.workflow.raids import RaidResponse
from bot.workflow.views import Evidence, LogEntry, ReviewCard

log = logging.getLogger(__name__)

#: A case left ``pending`` by a stop is carried out at startup only if it is younger than this (seconds); an older
#: one is marked failed: acting an hour late surprises members and moderators more than it helps.
RECOVER_WITHIN_S = 3600

#: Seconds before a refused unban at a temporary ban's end is tried again.
UNBAN_RETRY_S = 600

#: Card decision -> (review decision, action carried out, past-tense outcome).
DECISIONS: dict[str, tuple[ReviewDecision, ActionKind, str]] = {
    "dismiss": (ReviewDecision.DISMISSED, ActionKind.NONE, "dismissed (false positive)"),
    "delete": (ReviewDecision.DELETED, ActionKind.DELETE, "message deleted"),
    "warn": (ReviewDecision.WARNED, ActionKind.WARN, "warned"),
    "timeout": (ReviewDecision.TIMED_OUT, ActionKind.TIMEOUT, "timed out"),
    "kick": (ReviewDecision.KICKED, ActionKind.KICK, "kicked"),
    "ban": (ReviewDecision.BANNED, ActionKind.BAN, "banned"),
    "investigating": (ReviewDecision.INVESTIGATING, ActionKind.NONE, "investigating"),
}


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


def _dur(seconds: int | None) -> str:
    if not seconds:
        return ""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds} s"


class ModerationWorkflow(RaidResponse):
    """Carries out verdicts and moderators' decisions on one platform.

    Args:
        platform: ``"discord"`` or ``"slack"`` (the store's platform key).
        store: The mod log.
        enforcer: The platform's enforcer (with ``capabilities``).
        desk: Where moderators read (mod log, review channel).
        policies: Per-server policies.
        ledger: The strike ledger shared with the judging pipeline (one total per member).
        raid_control: The judging pipeline (``ModerationService``): judges messages for :meth:`moderate` and
            switches raid mode; ``None`` in tests that only decide.
        clock: Returns the current UTC time (tests pass a fixed clock).
    """

    def __init__(self, *, platform: str, store: WorkflowStore, enforcer: Enforcer, desk: ModDesk,
                 policies: PolicySource, ledger: StrikeLedger, raid_control: Any = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.platform = platform
        self.store = store
        self.enforcer = enforcer
        self.desk = desk
        self.policies = policies
        self.ledger = ledger
        self.raid_control = raid_control
        self.clock = clock or (lambda: datetime.now(UTC))
        self._inflight: set[asyncio.Task[Any]] = set()
        self._timers: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._card_locks: dict[int, asyncio.Lock] = {}
        RaidResponse.__init__(self)

    def can(self, capability: Capability) -> bool:
        """Whether the platform lets the bot do ``capability``."""
        return capability in self.enforcer.capabilities

    # ------------------------------------------------------------------ lifecycle
    def track(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` as a task that :meth:`drain` waits for (used for verdicts being carried out)."""
        task = asyncio.ensure_future(coro)
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        return task

    async def drain(self) -> None:
        """Wait until every tracked task (verdicts being carried out, raid flushes) has finished."""
        while self._inflight:
            await asyncio.gather(*list(self._inflight), return_exceptions=True)
        await self.flush_raids()

    async def moderate(self, message: Any, observers: Any = ()) -> Any:
        """Judge one platform message (translated to a core ``Message``) and carry out its outcome: the one path
        every adapter's message listener takes. Runs as a tracked task, so :meth:`shutdown` waits for it.

        Returns:
            The :class:`~bot.core.service.Outcome`, or ``None`` when judging failed (logged; the bot goes on).
        """
        return await self.track(self._moderate(message, tuple(observers)))

    async def _moderate(self, message: Any, observers: tuple[Any, ...]) -> Any:
        try:
            outcome = await self.raid_control.handle(message)
        except Exception:
            log.exception("judging message %s failed", message.id, extra={"server": message.server.id})
            return None
        if not outcome.duplicate:
            try:
                await self.carry_out(outcome)
            except Exception:
                log.exception("carrying out the verdict on %s failed", message.id)
        for observe in observers:
            observe(outcome)
        return outcome

    async def shutdown(self) -> None:
        """Before a bot closes its platform session: let the judging pipeline finish what it was given and carry
        those verdicts out (at most 30 s each), then stop timers. What still did not get done stays ``pending`` in
        the mod log and is handled by :meth:`recover` at the next start."""
        try:
            if self.raid_control is not None:
                await asyncio.wait_for(self.raid_control.drain(), 30)
            await asyncio.wait_for(self.close(), 30)
        except Exception:
            log.exception("draining before shutdown did not finish")

    async def close(self) -> None:
        """Drain, then cancel timers (temporary-ban expiries are rescheduled from the store at the next start)."""
        await self.drain()
        for task in [*self._timers.values(), *self.raid_tasks()]:
            task.cancel()
        await asyncio.gather(*self._timers.values(), *self.raid_tasks(), return_exceptions=True)
        self._timers.clear()

    async def recover(self) -> list[str]:
        """At startup: carry out cases a stop left ``pending`` (or mark them failed), reschedule temporary-ban
        expiries and restore raid mode. Returns one line per thing done (also posted in the mod log)."""
        now = self.clock()
        lines: list[str] = []
        for case in await self.store.pending_cases(self.platform):
            policy = await self.policies.get(self.platform, case.server_id)
            if (now - case.created_at).total_seconds() > RECOVER_WITHIN_S:
                reason = (f"the bot stopped before carrying this out, {_dur(int((now - case.created_at).total_seconds()) // 60 * 60) or 'long'} "
                          "ago; not done late")
                await self.store.set_case_status(self.platform, case.server_id, case.number, CaseStatus.FAILED,
                                                 failure=reason)
                text = f"case #{case.number} ({case.action.label}) marked failed: {reason}"
            else:
                ok, notes = await self._carry_case(policy, case)
                text = f"case #{case.number} ({case.action.label}) carried out after a restart" + (
                    "" if ok else f": FAILED: {'; '.join(notes)}")
            lines.append(text)
            await self.desk.post_mod_log(case.server_id, LogEntry(
                title="Recovered after a restart", lines=(text,), member_id=case.member_id,
                case_number=case.number, failed="FAILED" in text or "marked failed" in text, kind="problem"))
        for case in await self.store.due_expiries(self.platform, now + timedelta(days=3650)):
            self.schedule_unban(case)
        lines += await self.restore_raid_modes()
        return lines

    async def _carry_case(self, policy: Policy, case: Case) -> tuple[bool, list[str]]:
        """Carry out a recorded case's action (recovery): delete its message, then the sanction."""
        notes: list[str] = []
        ok = True
        if case.message_id and case.action >= ActionKind.DELETE:
            where = await self.store.message_excerpt(self.platform, case.server_id, case.message_id)
            if where is not None:
                res = await self._delete(case.server_id, where[0], case.message_id)
                if not res.ok:
                    notes.append(f"delete: {res.reason}")
                    ok = ok and case.action > ActionKind.DELETE
        if case.action > ActionKind.DELETE:
            seconds = int((case.expires_at - case.created_at).total_seconds()) if case.expires_at else None
            res = await self._sanction_on_platform(policy, case, seconds)
            if not res.ok:
                ok = False
                notes.append(f"{case.action.label}: {res.reason}")
        await self.store.set_case_status(self.platform, case.server_id, case.number,
                                         CaseStatus.APPLIED if ok else CaseStatus.FAILED,
                                         failure="; ".join(notes) or None)
        if ok and case.moderator_id is not None and case.action >= ActionKind.DELETE:
            # a moderator's sanction adds its strike after it is carried out (automod's is recorded with the verdict)
            note = await self.strike(policy, case.server_id, case.member_id, case.action, case.reason,
                                     case_number=case.number, message_id=case.message_id, at=case.created_at)
            if note:
                notes.append(note)
        return ok, notes

    # ------------------------------------------------------------------ automod verdicts
    async def carry_out(self, outcome: Any) -> list[str]:
        """Carry out an automod :class:`~bot.core.service.Outcome`: raid response, actions (unless shadow), the
        case's status, one mod-log entry and the review card (a re-flagged edit updates its card).

        Returns:
            Notes about refused or impossible actions (also recorded on the case).
        """
        verdict = outcome.verdict
        msg = verdict.message
        sid = msg.server.id
        if outcome.duplicate:
            return []
        policy = await self.policies.get(self.platform, sid)
        if verdict.raid is not None and outcome.raid_id is not None:
            joined = self.open_join_raid(sid, policy)
            if joined is not None:  # the accounts that just joined are now posting: the same raid, one alert
                await self.raid_spread(joined, verdict.raid, outcome.raid_id, msg)
            else:
                await self.raid_started(verdict.raid, outcome.raid_id, msg)
        board = self.board_for(msg) if verdict.flagged else None
        notes: list[str] = []
        done: list[str] = []
        fallback_review = False
        if not verdict.shadow and outcome.case_number is not None:
            deferred_delete = False
            for action in verdict.actions:
                if action.kind <= ActionKind.REVIEW:
                    continue
                if action.kind is ActionKind.DELETE and board is not None and self.can(Capability.BULK_DELETE):
                    board.queue_delete(msg.channel.id, msg.id, outcome.case_number)
                    deferred_delete = True
                    continue
                ok, note, fallback = await self._automod_action(policy, msg, action, outcome.case_number)
                fallback_review = fallback_review or fallback
                if ok:
                    done.append(action.kind.label)
                if note:
                    notes.append(note)
            if verdict.action > ActionKind.REVIEW and not deferred_delete:
                failed = [n for n in notes if not n.startswith("dm:")]
                await self.store.set_case_status(self.platform, sid, outcome.case_number,
                                                 CaseStatus.FAILED if failed else CaseStatus.APPLIED,
                                                 failure="; ".join(notes) or None)
        review_id = outcome.review_id
        if fallback_review and review_id is None and outcome.case_number is not None:
            item = await self.store.open_review(self.platform, sid, msg.author.id, "automod",
                                                "; ".join(notes)[:1000], case_number=outcome.case_number,
                                                message_id=msg.id, channel_id=msg.channel.id,
                                                scores=verdict.scores.as_dict() if verdict.scores else {})
            review_id = item.id
        if board is not None:
            board.note_message(msg.author.id, held_for_review=review_id is not None)
            if board.until is not None:  # raid mode lasts raid_mode_duration_s after the raid's last message
                board.until = max(board.until, self.clock() + timedelta(seconds=policy.rules.raid.raid_mode_duration_s))
            self.refresh_raid_card(board)
            return notes
        if outcome.case_number is not None and verdict.action > ActionKind.REVIEW:
            await self.desk.post_mod_log(sid, self._automod_entry(outcome, done, notes))
        if review_id is not None:
            card = await self.review_card(review_id, verdict=verdict, notes=tuple(notes))
            if card is not None:
                await self._show_card(card, updated=bool(getattr(outcome, "review_updated", False)))
        return notes

    async def _automod_action(self, policy: Policy, msg: Any, action: Action,
                              case_number: int) -> tuple[bool, str, bool]:
        """One automod action; returns ``(ok, note, needs_review_fallback)``."""
        sid = msg.server.id
        kind = action.kind
        if kind is ActionKind.DELETE:
            if not self.can(Capability.DELETE):
                if self.can(Capability.EPHEMERAL):  # the author learns it was seen, privately
                    await self.enforcer.notify_in_channel(
                        sid, msg.channel.id, msg.author.id,
                        f"Your message was flagged by the moderation bot and sent to the moderators for review "
                        f"(case #{case_number}). Deleting it needs a workspace admin.")
                return False, "delete: needs an admin (this platform does not let the bot delete members' " \
                    "messages)", True
            res = await self._delete(sid, msg.channel.id, msg.id)
            return res.ok, "" if res.ok else f"delete: {res.reason}", not res.ok
        case = Case(server_id=sid, number=case_number, member_id=msg.author.id, action=kind,
                    reason=action.reason, status=CaseStatus.PENDING, created_at=msg.event_time,
                    message_id=msg.id, platform=self.platform)
        res = await self._sanction_on_platform(policy, case, action.duration_s, msg.channel.parent_id or msg.channel.id)
        if res.ok:
            note = f"dm: {res.extra['dm']}" if res.extra.get("dm") else ""
            return True, note, False
        return False, f"{kind.label}: {res.reason}", True

    def _automod_entry(self, outcome: Any, done: list[str], notes: list[str]) -> LogEntry:
        v = outcome.verdict
        failed = any(not n.startswith("dm:") for n in notes)
        title = f"Case #{outcome.case_number}: {v.action.label}" + (" (FAILED)" if failed else "")
        if v.shadow:
            title += " [shadow mode: not carried out]"
        why = ", ".join(v.labels) or ", ".join(h.rule for h in v.rule_hits) or "-"
        lines = [f"Member: {v.message.author.id}", f"Channel: {v.message.channel.id}", f"Why: {why}"]
        if done:
            lines.append("Done: " + ", ".join(done))
        lines += [f"Note: {n}" for n in notes]
        return LogEntry(title=title, lines=tuple(lines), member_id=v.message.author.id,
                        case_number=outcome.case_number, failed=failed, kind="case")

    # ------------------------------------------------------------------ platform steps
    async def _delete(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        return await self.enforcer.delete_message(server_id, channel_id, message_id)

    def _kick_capable(self, channel_id: str | None) -> bool:
        """Kick is possible: a real kick, or (Slack) removing the member from the message's channel."""
        return self.can(Capability.KICK) or (self.can(Capability.REMOVE_FROM_CHANNEL) and bool(channel_id))

    async def _sanction_on_platform(self, policy: Policy, case: Case, duration_s: int | None,
                                    channel_id: str | None = None) -> ActionResult:
        """Carry out a case's member sanction with its notice: the DM goes BEFORE a kick or ban (while the bot
        still shares a server with the member) and after a timeout; a warning IS the DM, and it counts even when
        the DM cannot be delivered (the reason is returned in ``extra["dm"]``)."""
        kind = case.action
        sid, uid = case.server_id, case.member_id
        action = Action(kind, case.reason, duration_s)
        notice = MemberNotice(server_id=sid, server_name="", case_number=case.number, action=kind,
                              reason=case.reason, duration_s=duration_s)
        extra: dict[str, str] = {}

        async def dm() -> None:
            if not self.can(Capability.DM):
                extra["dm"] = "this platform has no private messages"
                return
            res = await self.enforcer.notify(uid, notice)
            if not res.ok:
                extra["dm"] = f"not delivered: {res.reason}"

        send_dm = policy.server.warn_dm if kind is ActionKind.WARN else policy.server.notify_sanctions
        if kind is ActionKind.WARN:
            if send_dm:
                await dm()
            return ActionResult(action, True, "", extra)
        cap = {ActionKind.TIMEOUT: Capability.TIMEOUT, ActionKind.KICK: Capability.KICK,
               ActionKind.BAN: Capability.BAN}.get(kind)
        if cap is None:
            return ActionResult(action, True, "", extra)
        remove = kind is ActionKind.KICK and not self.can(Capability.KICK) and self._kick_capable(channel_id)
        if not self.can(cap) and not remove:
            return ActionResult(action, False, f"this platform cannot {kind.label} members", extra)
        if send_dm and kind in (ActionKind.KICK, ActionKind.BAN):
            await dm()
        if kind is ActionKind.TIMEOUT:
            res = await self.enforcer.timeout(sid, uid, min(int(duration_s or 3600), MAX_TIMEOUT_S), case.reason)
        elif remove:
            assert channel_id is not None
            res = await self.enforcer.remove_from_channel(sid, channel_id, uid)
        elif kind is ActionKind.KICK:
            res = await self.enforcer.kick(sid, uid, case.reason)
        else:
            res = await self.enforcer.ban(sid, uid, case.reason)
        if res.ok and send_dm and kind is ActionKind.TIMEOUT:
            await dm()
        return ActionResult(action, res.ok, res.reason, {**res.extra, **extra})

    # ------------------------------------------------------------------ moderator sanctions
    async def sanction(self, actor: Actor, server_id: str, member_id: str, kind: ActionKind, reason: str, *,
                       duration_s: int | None = None, message_id: str | None = None,
                       channel_id: str | None = None, source: str = "moderator", quiet: bool = False) -> Result:
        """A moderator's warn, timeout, kick or ban (temporary when ``duration_s`` is given for a ban).

        Opens a case (``pending``), notifies the member, acts, records the outcome, adds the strike (a warning
        counts even when its DM fails) and escalates. ``message_id``/``channel_id``: the message the sanction is
        about; it is deleted too (for a review decision).

        Raises:
            Refused: the actor may not do this to this member (nothing recorded).
        """
        target = await self.enforcer.member(server_id, member_id)
        authorize(actor, kind, target, bot=await self.enforcer.bot_member(server_id))
        if target is None and kind in (ActionKind.WARN, ActionKind.TIMEOUT, ActionKind.KICK):
            raise Refused(f"<@{member_id}> is not in this server; nothing was changed (a ban still works).")
        cap = {ActionKind.TIMEOUT: Capability.TIMEOUT, ActionKind.KICK: Capability.KICK,
               ActionKind.BAN: Capability.BAN}.get(kind)
        if cap is not None and not self.can(cap) and not (kind is ActionKind.KICK and self._kick_capable(channel_id)):
            raise Refused(f"This platform cannot {kind.label} members. Nothing was changed.")
        policy = await self.policies.get(self.platform, server_id)
        now = self.clock()
        expires = now + timedelta(seconds=duration_s) if duration_s and kind in (ActionKind.TIMEOUT,
                                                                                  ActionKind.BAN) else None
        case = await self.store.open_case(self.platform, server_id, member_id, kind, reason[:1000],
                                          moderator_id=actor.id, message_id=message_id, expires_at=expires, now=now)
        notes: list[str] = []
        if message_id and channel_id and kind > ActionKind.DELETE and self.can(Capability.DELETE):
            res = await self._delete(server_id, channel_id, message_id)
            if not res.ok:
                notes.append(f"delete: {res.reason}")
        res = await self._sanction_on_platform(policy, case, duration_s, channel_id)
        if res.extra.get("dm"):
            notes.append(f"dm: {res.extra['dm']}")
        failure = None if res.ok else res.reason
        await self.store.set_case_status(self.platform, server_id, case.number,
                                         CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                         failure="; ".join(([failure] if failure else []) + notes) or None)
        if res.ok and kind is ActionKind.BAN and expires is not None:
            self.schedule_unban(replace(case, status=CaseStatus.APPLIED))
        escalation = ""
        if res.ok:
            escalation = await self.strike(policy, server_id, member_id, kind, reason, case_number=case.number,
                                           duration_s=duration_s, message_id=message_id, at=now)
        dur = f" for {_dur(duration_s)}" if duration_s else ""
        text = f"Case #{case.number}: {kind.label} <@{member_id}>{dur}" + (" done." if res.ok else
                                                                           f" FAILED: {failure}")
        extra_lines = notes + ([escalation] if escalation else [])
        if extra_lines:
            text += "\n" + "\n".join(extra_lines)
        if not quiet:
            await self.desk.post_mod_log(server_id, LogEntry(
                title=f"Case #{case.number}: {kind.label}" + ("" if res.ok else " (FAILED)"),
                lines=(f"Member: {member_id}", f"Moderator: {actor.id}", f"Reason: {reason}",
                       *([f"Duration: {_dur(duration_s)}"] if duration_s else []), *extra_lines),
                member_id=member_id, moderator_id=actor.id, case_number=case.number, failed=not res.ok, kind="case"))
        log.info("case %s: %s by %s (%s)", case.number, kind.label, actor.id, "ok" if res.ok else failure,
                 extra={"server": server_id, "source": source})
        return Result(text, res.ok, case.number, failure=failure, notes=tuple(extra_lines))

    async def strike(self, policy: Policy, server_id: str, member_id: str, kind: ActionKind, reason: str, *,
                     case_number: int | None, duration_s: int | None = None, message_id: str | None = None,
                     at: datetime | None = None) -> str:
        """Add the strike a moderator's sanction earns and carry out a crossed ladder step.

        A message already struck (by automod) is raised to this sanction's points instead of struck again, so a
        ban decided on a card counts a ban's points (``policy.strikes.points``: config/default.toml).

        Returns:
            A note for the moderator (``""`` when nothing escalated).
        """
        at = at or self.clock()
        decision = await self.ledger.add(policy, platform=self.platform, server_id=server_id, member_id=member_id,
                                         message_id=message_id, action=kind, at=at, reason=reason,
                                         raise_existing=True)
        if decision.strike is None:
            return ""
        if decision.raised:
            await self.store.raise_strike(self.platform, server_id, message_id or "", decision.strike.points,
                                          case_number)
        else:
            await self.store.add_strike(self.platform, server_id, member_id, decision.strike.points,
                                        decision.strike.expires_at, reason=reason, message_id=message_id,
                                        case_number=case_number, now=at)
        steps = [s for s in decision.escalation if s.kind > kind or (
            s.kind is ActionKind.TIMEOUT and kind is ActionKind.TIMEOUT and (s.duration_s or 0) > (duration_s or 0))]
        if not steps:
            return ""
        step = max(steps, key=lambda a: (a.kind, a.duration_s or 0))
        why = f"escalation after case #{case_number}: {step.reason}" if case_number else f"escalation: {step.reason}"
        expires = at + timedelta(seconds=step.duration_s) if step.kind is ActionKind.TIMEOUT and step.duration_s \
            else None
        case = await self.store.open_case(self.platform, server_id, member_id, step.kind, why, expires_at=expires,
                                          now=at)
        res = await self._sanction_on_platform(policy, case, step.duration_s)
        await self.store.set_case_status(self.platform, server_id, case.number,
                                         CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                         failure=None if res.ok else res.reason)
        text = f"escalation: case #{case.number} {step.kind.label}"
        if step.duration_s and step.kind is ActionKind.TIMEOUT:
            text += f" ({_dur(step.duration_s)})"
        return text + (f" FAILED: {res.reason}" if not res.ok else "")

    async def pardon(self, actor: Actor, server_id: str, case_number: int) -> Result:
        """Pardon a case's strikes (Manage Messages). Raises :class:`Refused` without the permission."""
        authorize(actor, ActionKind.REVIEW)
        case = await self.store.get_case(self.platform, server_id, case_number)
        if case is None:
            raise Refused(f"There is no case #{case_number} in this server.")
        if case.member_id == actor.id:
            raise Refused("You cannot pardon a case about yourself. Nothing was changed.")
        n = await self.store.pardon(self.platform, server_id, case_number=case_number, moderator_id=actor.id)
        self.ledger.forget(self.platform, server_id, case.member_id)
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Case #{case_number} pardoned", lines=(f"Moderator: {actor.id}", f"{n} strike(s) pardoned"),
            member_id=case.member_id, moderator_id=actor.id, case_number=case_number, kind="case"))
        return Result(f"Case #{case_number} pardoned ({n} strike(s)).", True, case_number)

    async def unban(self, actor: Actor, server_id: str, member_id: str, reason: str) -> Result:
        """Lift a ban (Ban Members), recorded as a case."""
        authorize(actor, ActionKind.BAN)
        if not self.can(Capability.UNBAN):
            raise Refused("This platform has no bans to lift.")
        res = await self.enforcer.unban(server_id, member_id, reason)
        if not res.ok:
            return Result(f"Unban failed: {res.reason}", False)
        case = await self.store.open_case(self.platform, server_id, member_id, ActionKind.LOG,
                                          f"unban: {reason}"[:1000], moderator_id=actor.id,
                                          status=CaseStatus.APPLIED)
        await self.desk.post_mod_log(server_id, LogEntry(
            title="Unban", lines=(f"Member: {member_id}", f"Moderator: {actor.id}", f"Reason: {reason}"),
            member_id=member_id, moderator_id=actor.id, case_number=case.number, kind="case"))
        return Result(f"Unbanned <@{member_id}> (case #{case.number}).", True, case.number)

    # ------------------------------------------------------------------ temporary bans
    def schedule_unban(self, case: Case) -> None:
        """Lift a temporary ban at ``case.expires_at`` (rescheduled from the store after a restart)."""
        if case.action is not ActionKind.BAN or case.expires_at is None:
            return
        key = (case.server_id, case.number)
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = asyncio.ensure_future(self._unban_at(case))

    async def _unban_at(self, case: Case) -> None:
        try:
            assert case.expires_at is not None
            delay = (case.expires_at - self.clock()).total_seconds()
            if delay > 0:
                await asyncio.sleep(delay)
            res = await self.enforcer.unban(case.server_id, case.member_id, f"temporary ban of case #{case.number} "
                                            "ended")
            if res.ok:
                await self.store.mark_lifted(self.platform, case.server_id, case.number)
            await self.desk.post_mod_log(case.server_id, LogEntry(
                title=f"Case #{case.number}: temporary ban ended",
                lines=(f"Member: {case.member_id}", "unbanned" if res.ok else
                       f"unban FAILED: {res.reason}; tried again in {UNBAN_RETRY_S // 60} minutes and at the next "
                       "start"),
                member_id=case.member_id, case_number=case.number, failed=not res.ok, kind="case"))
            if not res.ok:  # still banned and still due: try again later (the case stays not lifted)
                retry = replace(case, expires_at=self.clock() + timedelta(seconds=UNBAN_RETRY_S))
                self._timers.pop((case.server_id, case.number), None)
                self.schedule_unban(retry)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("lifting temporary ban of case %s failed", case.number, extra={"server": case.server_id})
        finally:
            if self._timers.get((case.server_id, case.number)) is asyncio.current_task():
                del self._timers[(case.server_id, case.number)]

    # ------------------------------------------------------------------ review queue
    async def review_card(self, review_id: int, *, verdict: Any = None, notes: tuple[str, ...] = (),
                          server_id: str | None = None) -> ReviewCard | None:
        """The card of a review item, with the member's standing and the evidence (``None``: no such item)."""
        item = await self.store.get_review(review_id, *((self.platform, server_id) if server_id else ()))
        if item is None:
            return None
        member = await self.enforcer.member(item.server_id, item.member_id)
        strikes = await self.ledger.active(self.platform, item.server_id, item.member_id, self.clock())
        text = ""
        evidence = Evidence()
        if verdict is not None:
            text = verdict.message.text
            evidence = Evidence(
                text=text, scores=verdict.scores.as_dict() if verdict.scores else {},
                tiers=dict(verdict.tiers), raid_mode=verdict.raid_mode, score_status=verdict.score_status,
                rules=tuple(f"{h.rule}: {h.detail}" if h.detail else h.rule for h in verdict.rule_hits))
        else:
            if item.message_id:
                found = await self.store.message_excerpt(self.platform, item.server_id, item.message_id)
                text = found[1] if found else ""
            evidence = Evidence(text=text, scores=dict(item.scores))
        missing = frozenset(name for name, cap in (("delete", Capability.DELETE), ("timeout", Capability.TIMEOUT),
                                                   ("ban", Capability.BAN)) if not self.can(cap))
        if not self._kick_capable(item.channel_id):
            missing |= {"kick"}
        return ReviewCard(
            review_id=item.id, server_id=item.server_id, source=item.source, member_id=item.member_id,
            member_name=member.name if member else "", member_joined_at=member.joined_at if member else None,
            member_created_at=member.created_at if member else None, channel_id=item.channel_id,
            message_id=item.message_id, evidence=evidence, reason=item.reason, case_number=item.case_number,
            strikes=len(strikes), points=sum(s.points for s in strikes), notes=notes,
            capabilities_missing=missing, decision=None if item.decision is ReviewDecision.OPEN else
            item.decision.value, decided_by=item.moderator_id, decided_at=item.decided_at,
            final=item.decision not in (ReviewDecision.OPEN, ReviewDecision.INVESTIGATING))

    async def _show_card(self, card: ReviewCard, *, updated: bool = False) -> bool:
        """Post a card, or replace the item's existing card (a re-flagged edit never adds a second card; one lock
        per item, so an edit racing its original cannot post two). A card that was deleted is posted again.
        Returns False when the review channel cannot be reached (moderators are told in the mod log)."""
        lock = self._card_locks.setdefault(card.review_id, asyncio.Lock())
        async with lock:
            try:
                return await self._show_card_locked(card, updated)
            finally:
                if not lock._waiters:  # noqa: SLF001 - drop the lock once nobody waits for it
                    self._card_locks.pop(card.review_id, None)

    async def _show_card_locked(self, card: ReviewCard, updated: bool) -> bool:
        existing = await self.store.card_of_review(card.review_id)
        if existing and (updated or card.decision is not None):
            if await self.desk.update_review(card, existing):
                return True
        elif existing:
            return True
        posted = await self.desk.post_review(card)
        if posted:
            await self.store.set_review_card(card.review_id, posted)
            return True
        else:
            await self.desk.post_mod_log(card.server_id, LogEntry(
                title=f"Review #{card.review_id} could not be posted",
                lines=("The review channel is not set or cannot be reached; set `server.review_channel`.",),
                member_id=card.member_id, case_number=card.case_number, failed=True, kind="problem"))
            return False

    async def decide_review(self, actor: Actor, server_id: str, review_id: int, choice: str, *,
                            duration_s: int | None = None) -> Result:
        """A moderator's decision on a review card (``choice``: a key of :data:`DECISIONS`).

        The decision is claimed in the mod log first (a conditional update), so of two moderators deciding one
        card exactly one acts; the other gets "already decided by ...". Dismissing an automatic timeout lifts it.

        Raises:
            Refused: unknown item, missing permission, hierarchy, a target who left, or already decided.
        """
        if choice not in DECISIONS:
            raise Refused(f"Unknown decision {choice!r}.")
        rdecision, kind, outcome = DECISIONS[choice]
        item = await self.store.get_review(review_id, self.platform, server_id)
        if item is None:
            raise Refused(f"Review item #{review_id} does not exist in this server.")
        if kind is ActionKind.TIMEOUT and not (duration_s and 60 <= duration_s <= MAX_TIMEOUT_S):
            raise Refused("Pick a timeout duration between 1 minute and 28 days.")
        if item.member_id == actor.id:
            raise Refused("You cannot decide a review item about yourself. Nothing was changed.")
        target = await self.enforcer.member(server_id, item.member_id)
        authorize(actor, kind if kind is not ActionKind.NONE else ActionKind.REVIEW, target,
                  bot=await self.enforcer.bot_member(server_id))
        if rdecision is ReviewDecision.DISMISSED and item.case_number is not None:
            # dismissing lifts an automatic timeout or ban: that needs the permission to lift it
            case = await self.store.get_case(self.platform, server_id, item.case_number)
            if case is not None and case.status is CaseStatus.APPLIED and case.action in (ActionKind.TIMEOUT,
                                                                                          ActionKind.BAN):
                authorize(actor, case.action)
        cap = {ActionKind.TIMEOUT: Capability.TIMEOUT, ActionKind.BAN: Capability.BAN}.get(kind)
        if (cap is not None and not self.can(cap)) or (kind is ActionKind.KICK
                                                       and not self._kick_capable(item.channel_id)):
            raise Refused(f"This platform cannot {kind.label} members. Nothing was changed.")
        if item.decision not in (ReviewDecision.OPEN, ReviewDecision.INVESTIGATING):
            raise Refused(f"Review #{review_id} was already decided ({item.decision.value} by "
                          f"<@{item.moderator_id}>). Nothing was done.")
        if kind in (ActionKind.WARN, ActionKind.TIMEOUT, ActionKind.KICK) and target is None:
            raise Refused(f"<@{item.member_id}> is no longer in this server; nothing was changed (Ban still works).")
        try:
            decided = await self.store.decide_review(review_id, rdecision, actor.id, self.clock(),
                                                     platform=self.platform, server_id=server_id)
        except ReviewAlreadyDecided as exc:
            raise Refused(f"Review #{review_id} was already decided ({exc.decision} by <@{exc.moderator_id}>). "
                          "Nothing was done.") from None
        try:
            note = await self._act_on_review(actor, decided, kind, duration_s)
        except Refused:
            # refused after the claim (the member left meanwhile): nothing was done, so the item is open again
            await self.store.reopen_review(review_id, rdecision, actor.id)
            raise
        if kind is ActionKind.TIMEOUT:
            outcome += f" for {_dur(duration_s)}"
        card = await self.review_card(review_id, server_id=server_id)
        assert card is not None
        card = replace(card, decision=outcome, decided_by=actor.id, notes=(note,) if note else ())
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Review #{review_id}: {outcome}", lines=(f"Member: {item.member_id}", f"Moderator: {actor.id}",
                                                             *([note] if note else [])),
            member_id=item.member_id, moderator_id=actor.id, case_number=item.case_number,
            failed="FAILED" in note, kind="review"))
        return Result(f"Review #{review_id}: {outcome}." + (f" {note}" if note else ""), "FAILED" not in note,
                      card=card)

    async def _act_on_review(self, actor: Actor, item: ReviewItem, kind: ActionKind, seconds: int | None) -> str:
        sid = item.server_id
        policy = await self.policies.get(self.platform, sid)
        if item.decision is ReviewDecision.DISMISSED:
            return await self._overturn_case(actor, sid, item.case_number, item.member_id, "dismissed")
        if kind is ActionKind.NONE:
            return ""
        if kind is ActionKind.DELETE:
            if not item.message_id or not item.channel_id:
                return "no message to delete"
            if not self.can(Capability.DELETE):
                return "delete FAILED: this platform does not let the bot delete members' messages"
            case_number = item.case_number
            if case_number is None:  # a report: the delete is the moderator's own case (appealable, with its strike)
                case = await self.store.open_case(self.platform, sid, item.member_id, ActionKind.DELETE,
                                                  f"review #{item.id}: {item.reason}"[:1000], moderator_id=actor.id,
                                                  message_id=item.message_id)
                case_number = case.number
            res = await self._delete(sid, item.channel_id, item.message_id)
            if item.case_number is None:
                await self.store.set_case_status(self.platform, sid, case_number,
                                                 CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                                 failure=None if res.ok else f"delete: {res.reason}")
            if not res.ok:
                return f"delete FAILED: {res.reason}"
            more = await self.strike(policy, sid, item.member_id, kind, f"review #{item.id}: {item.reason}"[:400],
                                     case_number=case_number, message_id=item.message_id)
            return "; ".join(x for x in (f"case #{case_number}" if item.case_number is None else "", more) if x)
        result = await self.sanction(actor, sid, item.member_id, kind, f"review #{item.id}: {item.reason}"[:400],
                                     duration_s=seconds, message_id=item.message_id, channel_id=item.channel_id,
                                     source="review")
        note = f"case #{result.case_number}" + ("" if result.ok else f" FAILED: {result.failure}")
        return "; ".join([note, *result.notes])

    async def _overturn_case(self, actor: Actor, server_id: str, case_number: int | None, member_id: str,
                             how: str, case: Case | None = None) -> str:
        """Pardon a case's strikes, mark it overturned and lift what can be lifted (timeout, ban).

        ``case``: the case as it was before the decision (an appeal's decision already marked it overturned).
        """
        if case_number is None:
            return ""
        case = case or await self.store.get_case(self.platform, server_id, case_number)
        try:
            if how == "dismissed":
                await self.store.pardon(self.platform, server_id, case_number=case_number, moderator_id=actor.id)
                await self.store.set_case_status(self.platform, server_id, case_number, CaseStatus.OVERTURNED)
        except CaseNotFound:
            return ""
        self.ledger.forget(self.platform, server_id, member_id)
        if case is None or case.status is not CaseStatus.APPLIED:
            return ""
        reason = f"case #{case_number} {how}"
        if case.action is ActionKind.TIMEOUT and self.can(Capability.TIMEOUT):
            res = await self.enforcer.remove_timeout(server_id, member_id, reason)
            return "timeout lifted" if res.ok else f"could not lift the timeout: FAILED: {res.reason}"
        if case.action is ActionKind.BAN and self.can(Capability.UNBAN):
            res = await self.enforcer.unban(server_id, member_id, reason)
            if res.ok:
                await self.store.mark_lifted(self.platform, server_id, case_number)
            return "ban lifted" if res.ok else f"could not lift the ban: FAILED: {res.reason}"
        return ""

    # ------------------------------------------------------------------ reports and appeals
    async def report(self, reporter_id: str, server_id: str, member_id: str, reason: str, *,
                     message_id: str | None = None, channel_id: str | None = None, excerpt: str = "") -> Result:
        """A member's report: recorded once per reporter and message, and put in the review queue with a card."""
        if member_id == reporter_id:
            raise Refused("You cannot report yourself.")
        item = await self.store.add_report(self.platform, server_id, reporter_id, member_id, reason[:1000],
                                           message_id=message_id, channel_id=channel_id)
        shown = True
        if item.decision is ReviewDecision.OPEN:
            card = await self.review_card(item.id)
            if card is not None:
                if excerpt and not card.evidence.text:
                    card = replace(card, evidence=replace(card.evidence, text=excerpt))
                shown = await self._show_card(card)
        if not shown:
            return Result(f"Your report (review #{item.id}) was recorded, but the moderators' review channel cannot "
                          "be reached right now; they were alerted. You can also contact a moderator directly.",
                          True)
        return Result(f"Thanks. Your report (review #{item.id}) was sent to the moderators.", True)

    async def appeal(self, member_id: str, server_id: str, case_number: int, text: str) -> Result:
        """A member's appeal of one of their own cases, queued with an appeal card.

        Raises:
            Refused: no such case, another member's case, already overturned or already appealed.
        """
        try:
            appeal_id = await self.store.open_appeal(self.platform, server_id, case_number, member_id, text[:1500])
        except CaseNotFound:
            raise Refused(f"There is no case #{case_number} in that server.") from None
        except NotCaseMember:
            raise Refused(f"Case #{case_number} is not about you; you can only appeal your own cases.") from None
        except AppealAlreadyOpen:
            raise Refused(f"Case #{case_number} already has an open appeal.") from None
        except AppealError as exc:
            raise Refused(f"Case #{case_number} cannot be appealed: {exc}") from None
        appeal = await self.store.get_appeal(appeal_id)
        case = await self.store.get_case(self.platform, server_id, case_number)
        if appeal is not None and appeal.review_id is not None:
            card = await self.review_card(appeal.review_id)
            if card is not None:
                await self._show_card(replace(card, appeal_id=appeal_id, evidence=Evidence(text=text),
                                              case_action=case.action if case else None,
                                              reason=case.reason if case else card.reason))
        return Result(f"Your appeal of case #{case_number} was filed (appeal #{appeal_id}). A moderator will look "
                      "at it.", True, case_number)

    async def decide_appeal(self, actor: Actor, server_id: str, appeal_id: int, uphold: bool) -> Result:
        """Uphold or overturn an appeal; overturning pardons the strikes and lifts a timeout or ban.

        Overturning a ban needs Ban Members, a timeout Moderate Members; upholding needs Manage Messages.

        Raises:
            Refused: unknown appeal, missing permission, or already decided (by whom).
        """
        appeal = await self.store.get_appeal(appeal_id)
        if appeal is None or appeal.server_id != server_id or appeal.platform != self.platform:
            raise Refused(f"Appeal #{appeal_id} does not exist in this server.")
        if appeal.member_id == actor.id:
            raise Refused("You cannot decide an appeal about yourself. Nothing was changed.")
        case = await self.store.get_case(self.platform, server_id, appeal.case_number)
        kind = case.action if case is not None and not uphold and case.action in (ActionKind.TIMEOUT,
                                                                                  ActionKind.BAN) else ActionKind.REVIEW
        authorize(actor, kind)
        if appeal.status != "open":
            raise Refused(f"Appeal #{appeal_id} was already decided ({appeal.status} by <@{appeal.moderator_id}>).")
        try:
            decided = await self.store.decide_appeal(appeal_id, uphold, actor.id)
        except AppealError as exc:
            again = await self.store.get_appeal(appeal_id)
            who = f" by <@{again.moderator_id}>" if again is not None and again.moderator_id else ""
            raise Refused(f"Appeal #{appeal_id}: {exc}{who}. Nothing was done.") from None
        note = "" if uphold else await self._overturn_case(actor, server_id, decided.case_number, decided.member_id,
                                                           "overturned on appeal", case)
        outcome = "upheld" if uphold else "overturned"
        card = None
        if decided.review_id is not None:
            card = await self.review_card(decided.review_id, server_id=server_id)
            if card is not None:
                card = replace(card, appeal_id=appeal_id, decision=outcome, decided_by=actor.id, final=True,
                               evidence=Evidence(text=decided.text), case_action=case.action if case else None,
                               notes=(note,) if note else ())
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Appeal #{appeal_id} of case #{decided.case_number}: {outcome}",
            lines=(f"Member: {decided.member_id}", f"Moderator: {actor.id}", *([note] if note else [])),
            member_id=decided.member_id, moderator_id=actor.id, case_number=decided.case_number, kind="appeal"))
        return Result(f"Appeal #{appeal_id}: {outcome}." + (f" {note}" if note else ""), True, card=card)

    # ------------------------------------------------------------------ purge
    async def purge(self, actor: Actor, server_id: str, channel_id: str, message_ids: list[tuple[str, datetime]],
                    *, member_id: str | None = None) -> Result:
        """Delete recent messages a moderator picked (``/purge``): in bulk, 100 per request; messages older than 14
        days are not deleted and the answer says so (Discord refuses them). Recorded as one case in the mod log.

        Args:
            message_ids: ``(message id, posting time UTC)`` newest first, already limited to the count asked.
        """
        authorize(actor, ActionKind.DELETE)
        if not self.can(Capability.BULK_DELETE) and not self.can(Capability.DELETE):
            raise Refused("This platform does not let the bot delete members' messages.")
        cutoff = self.clock() - timedelta(days=14)
        young = [m for m, at in message_ids if at > cutoff]
        old = len(message_ids) - len(young)
        deleted, failures = 0, []
        for start in range(0, len(young), 100):
            chunk = young[start:start + 100]
            result = await self.enforcer.bulk_delete(server_id, channel_id, chunk)
            deleted += len(result.deleted)
            failures += sorted(set(result.failed.values()))
        text = f"Deleted {deleted} message(s)."
        if old:
            text += f" {old} older than 14 days were left: Discord does not let bots bulk delete them."
        if failures:
            text += " Failed: " + "; ".join(dict.fromkeys(failures))
        case = await self.store.open_case(self.platform, server_id, member_id or "-", ActionKind.DELETE,
                                          f"purge of {len(message_ids)} message(s) in channel {channel_id}",
                                          moderator_id=actor.id,
                                          status=CaseStatus.FAILED if failures else CaseStatus.APPLIED)
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Case #{case.number}: purge", lines=(f"Channel: {channel_id}", f"Moderator: {actor.id}", text),
            moderator_id=actor.id, case_number=case.number, failed=bool(failures), kind="case"))
        return Result(text, not failures, case.number)

    # ------------------------------------------------------------------ case lookups (moderators)
    async def note(self, actor: Actor, server_id: str, member_id: str, text: str) -> Result:
        """A moderator's note about a member: a case with no action (Manage Messages)."""
        authorize(actor, ActionKind.LOG)
        case = await self.store.open_case(self.platform, server_id, member_id, ActionKind.LOG, text[:1000],
                                          moderator_id=actor.id, status=CaseStatus.APPLIED)
        return Result(f"Note saved as case #{case.number}.", True, case.number)

    async def case(self, actor: Actor, server_id: str, number: int) -> Case:
        """One case of this server (Manage Messages). Raises :class:`Refused` for another server's or no case."""
        authorize(actor, ActionKind.LOG)
        found = await self.store.get_case(self.platform, server_id, number) if 1 <= number <= 10**9 else None
        if found is None:
            raise Refused(f"There is no case #{number} in this server.")
        return found

    async def cases(self, actor: Actor, server_id: str, member_id: str | None = None, limit: int = 20) -> list[Case]:
        """Newest cases of this server, optionally of one member (Manage Messages)."""
        authorize(actor, ActionKind.LOG)
        return await self.store.list_cases(self.platform, server_id, member_id, limit=limit)

    async def stats(self, actor: Actor, server_id: str, since: datetime) -> Any:
        """Flags, decisions, false positives and overturns since ``since`` (Manage Messages)."""
        authorize(actor, ActionKind.LOG)
        return await self.store.modstats(self.platform, server_id, since)

    async def first_seen(self, server_id: str, member_id: str, *, at: datetime, joined: bool = False
                         ) -> datetime | None:
        """When the member was seen joining (a platform without account ages uses this as the new-member signal).
        ``joined``: this event IS a join, remembered at ``at``. ``None`` when never seen joining."""
        if joined:
            return await self.store.note_join(self.platform, server_id, member_id, at)
        return await self.store.joined_at(self.platform, server_id, member_id)

    # ------------------------------------------------------------------ members' own records
    async def member_status(self, server_id: str, member_id: str) -> tuple[list[Any], list[Any]]:
        """A member's active strikes (oldest first) and open appeals, for ``/mystatus``."""
        strikes = await self.store.active_strikes(self.platform, server_id, member_id, self.clock())
        appeals = await self.store.open_appeals(self.platform, server_id, member_id)
        return strikes, appeals

    async def export_member(self, server_id: str, member_id: str) -> dict[str, Any]:
        """Everything stored about a member in this server (``/mydata export``)."""
        return await self.store.member_record(self.platform, server_id, member_id)

    async def forget_member(self, server_id: str, member_id: str) -> Result:
        """``/mydata forget``: the member's message text and report / appeal texts are erased and their id is
        replaced by a keyed pseudonym; active strikes and case history stay (linked by that pseudonym), so the
        escalation ladder does not start over."""
        pseudonym = await self.store.forget_member(self.platform, server_id, member_id)
        self.ledger.forget(self.platform, server_id, member_id)
        return Result(f"Done. Your stored message text was erased and your records now read `{pseudonym}`. What "
                      "enforcement needs stays: your active strikes and case history still count if rules are "
                      "broken again.", True)

    # ------------------------------------------------------------------ policy
    async def authorize_policy_change(self, actor: Actor) -> None:
        """Changing the policy needs Manage Server. Raises :class:`Refused`."""
        authorize(actor, ActionKind.REVIEW, permission=Permission.MANAGE_SERVER)


__all__ = ["DECISIONS", "RECOVER_WITHIN_S", "ModerationWorkflow", "Refused", "Result"]
