"""The moderation workflow: what happens to a verdict, a moderator's sanction, a review decision, an appeal and a
pardon. Written once; the Discord and Slack adapters only translate events in and render views out.

Layer: ``bot.workflow`` (platform-neutral: ``bot.core`` and the standard library only). Talks to the platform
through :class:`~bot.workflow.ports.Enforcer` (with declared capabilities), to moderators through
:class:`~bot.workflow.ports.ModDesk`, and to the mod log through :class:`~bot.core.store_port.ModStore`.

The class is split by subject: :mod:`bot.workflow.sanctions` (sanctions, strikes, pardons, temporary bans),
:mod:`bot.workflow.reviews` (cards, decisions, reports, appeals), :mod:`bot.workflow.raids` (the raid response);
this module holds the lifecycle, automod verdicts, purge and lookups.

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
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from bot.core.errors import StoreRefused
from bot.core.escalation import StrikeLedger
from bot.core.models import (
    MAX_CASE_NUMBER,
    Action,
    ActionKind,
    Case,
    CaseStatus,
    Message,
    ReviewDecision,
    Strike,
)
from bot.core.policy import Policy
from bot.core.ports import GONE, ActionResult
from bot.core.records import Appeal, ModStats
from bot.core.rules.accounts import is_new_member
from bot.core.service import Outcome
from bot.core.storable import storable_text
from bot.core.store_port import ModStore
from bot.workflow.authz import Actor, Refused, authorize
from bot.workflow.cases import MAX_REASON
from bot.workflow.common import (
    ALREADY_GONE,
    DECISIONS,
    EXPIRY_HORIZON,
    OUTCOME_UNKNOWN,
    PENDING_HOLD_S,
    RECOVER_WITHIN_S,
    TIMEOUT_MATCH_S,
    Observer,
    PolicySource,
    Result,
    dur,
    record_outcome,
)
from bot.workflow.names import NameWatch
from bot.workflow.policy_admin import authorize_change
from bot.workflow.ports import Capability, ChannelGone, Enforcer, MemberLookupError, ModDesk, RaidControl
from bot.workflow.raids import RaidResponse
from bot.workflow.reviews import ReviewsMixin
from bot.workflow.sanctions import SanctionsMixin
from bot.workflow.views import LogEntry

#: Notes that do not make a case failed.
_HARMLESS_NOTES = ("dm:", "timeout capped", "timeout not sent", ALREADY_GONE)

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Seconds :meth:`ModerationWorkflow.close` waits for unban tries under way to record their outcome (a platform
#: call has its own timeout; this bounds a stop).
TRY_FINISH_S = 10.0


class ModerationWorkflow(SanctionsMixin, ReviewsMixin, RaidResponse):
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
        owns: Whether this process answers for a server id (default: every server); a Discord process that runs
            some of the bot's shards passes :func:`bot.adapters.discord.client.shard_owner`'s predicate.
    """

    def __init__(self, *, platform: str, store: ModStore, enforcer: Enforcer, desk: ModDesk,
                 policies: PolicySource, ledger: StrikeLedger, raid_control: RaidControl | None = None,
                 clock: Callable[[], datetime] | None = None, owns: Callable[[str], bool] | None = None) -> None:
        self.platform = platform
        #: Whether this process answers for a server (a server id -> bool); default every server. A Discord
        #: process running some shards owns only their guilds: start-up recovery (:meth:`recover`: pending cases,
        #: temporary-ban ends, owed unbans, raid mode) leaves the others to the process that runs their shard, so
        #: nothing is done twice when several shard processes share one mod log.
        self.owns: Callable[[str], bool] = owns or (lambda _server_id: True)
        self.store = store
        self.enforcer = enforcer
        self.desk = desk
        self.policies = policies
        self.ledger = ledger
        self.raid_control = raid_control
        self.clock = clock or (lambda: datetime.now(UTC))
        self._inflight: set[asyncio.Task[Any]] = set()
        self._timers: dict[tuple[str, int], asyncio.Task[None]] = {}
        #: Pending cases another process held at this one's start, looked at again when the hold ends.
        self._pending_checks: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._lift_holds: dict[tuple[str, int], datetime] = {}
        self._lift_trying: set[tuple[str, int]] = set()
        #: Set when :meth:`close` begins: a ban-lift timer that wakes after it starts no new try (a try started
        #: while close drained the queue was counted as a third refused try of a case that had two).
        self._stopping = False
        self._card_locks: dict[int, asyncio.Lock] = {}
        RaidResponse.__init__(self)
        self.names = NameWatch(self)  # members' names and nicknames (bot/workflow/names.py)

    def can(self, capability: Capability) -> bool:
        """Whether the platform lets the bot do ``capability``."""
        return capability in self.enforcer.capabilities

    # ------------------------------------------------------------------ lifecycle
    def track(self, coro: Awaitable[_T]) -> asyncio.Task[_T]:
        """Run ``coro`` as a task that :meth:`drain` waits for (used for verdicts being carried out)."""
        task = asyncio.ensure_future(coro)
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        return task

    async def drain(self) -> None:
        """Wait until every tracked task (verdicts being carried out, raid flushes) has finished. Queued raid
        deletes go out at once meanwhile (one bulk request per channel, as at the end of their window): nothing
        waits out the rest of :data:`~bot.workflow.raids.FLUSH_S`."""
        self._flush_at_once += 1
        try:
            while self._inflight:
                self.wake_raid_flushes()
                await asyncio.gather(*list(self._inflight), return_exceptions=True)
            await self.flush_raids()
        finally:
            self._flush_at_once -= 1

    async def moderate(self, message: Message, observers: Iterable[Observer] = ()) -> Outcome | None:
        """Judge one platform message (translated to a core ``Message``) and carry out its outcome: the one path
        every adapter's message listener takes. Runs as a tracked task, so :meth:`shutdown` waits for it.

        Returns:
            The :class:`~bot.core.service.Outcome`, or ``None`` when judging failed (logged; the bot goes on).
        """
        return await self.track(self._moderate(message, tuple(observers)))

    async def _moderate(self, message: Message, observers: tuple[Observer, ...]) -> Outcome | None:
        try:
            if self.raid_control is None:
                raise RuntimeError("this workflow has no judging pipeline (raid_control)")
            outcome = await self.raid_control.handle(message)
        except StoreRefused:  # the mod log refuses writes for good: the service logged it once and stops the bot
            return None
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
        """Drain, then cancel timers (temporary-ban expiries are rescheduled from the store at the next start; the
        owed unbans this process was to retry are handed back in the mod log, so the next start tries them).

        A timer whose unban try is under way (its platform call sent or about to be) is first left up to
        :data:`TRY_FINISH_S` seconds to record its outcome: cancelled between the platform's answer and the mod
        log's write, the refused try was not counted (the case's ``lift_tries``), so the next start allowed one try
        more than ``LIFT_TRIES``, and the half-written transaction was rolled back at the stop."""
        self._stopping = True
        await self.drain()
        under_way = [t for key, t in self._timers.items() if key in self._lift_trying and not t.done()]
        if under_way:
            await asyncio.wait(under_way, timeout=TRY_FINISH_S)
        checks = list(self._pending_checks.values())
        for task in [*self._timers.values(), *self.raid_tasks(), *checks]:
            task.cancel()
        await asyncio.gather(*self._timers.values(), *self.raid_tasks(), *checks, return_exceptions=True)
        self._timers.clear()
        self._pending_checks.clear()
        try:
            await self.release_lifts()
        except Exception:  # the mod log is gone: the holds run out on their own (UNBAN_RETRY_S)
            log.exception("handing back the owed unbans at the stop failed")

    async def recover(self) -> list[str]:
        """At startup: carry out cases a stop left ``pending`` (or mark them failed), reschedule temporary-ban
        expiries, try again the refused unbans of overturned bans, remove the timeouts of overturned cases a stop
        cut off before their removal and restore raid mode. Returns one line per thing
        done (also posted in the mod log)."""
        self._stopping = False  # a start (again, after a close of this object) runs its timers
        now = self.clock()
        lines: list[str] = []
        raided = {(r.server_id, r.channel_id) for r in await self.store.raid_modes(self.platform)
                  if r.until is None or r.until > now}  # channels whose flagged messages stay on the raid card
        for case in await self.store.pending_cases(self.platform):
            if not self.owns(case.server_id):
                continue
            line = await self._recover_pending(case, raided)
            if line is not None:
                lines.append(line)
        for case in await self.store.due_expiries(self.platform, now + EXPIRY_HORIZON):
            if not self.owns(case.server_id):
                continue
            later = await self.superseding_ban(case)
            if later is not None:  # a later ban of the member stands: this one's end must not lift it
                await self.store.mark_lifted(self.platform, case.server_id, case.number)
                lines.append(f"case #{case.number}: temporary ban superseded by case #{later.number}; not unbanned")
                continue
            self.schedule_unban(case)
        lines += await self.retry_owed_lifts()
        lines += await self.retry_owed_timeouts()
        lines += await self.restore_raid_modes()
        return lines

    async def _recover_pending(self, case: Case, raided: set[tuple[str, str]]) -> str | None:
        """At startup (or when another process's hold on it ran out): carry out pending ``case`` (or mark it failed
        when older than :data:`RECOVER_WITHIN_S`), once it is claimed in the mod log (``store.claim_pending``): of
        two processes starting on one mod log only one carries it out (both did: two timeouts, two notices and two
        strikes for one warning). A case another starting process holds is looked at again when the hold ends
        (:meth:`_recheck_pending`): one that stopped while holding it leaves it to this one. ``raided``:
        the channels in raid mode. Returns the line posted in the mod log, or ``None`` when another process has
        it."""
        claimed, until = await self.store.claim_pending(self.platform, case.server_id, case.number,
                                                        hold_s=PENDING_HOLD_S)
        if not claimed:
            if until is not None:
                self._recheck_pending(case, until)
            return None
        now = self.clock()
        policy = await self.policies.get(self.platform, case.server_id)
        if (now - case.created_at).total_seconds() > RECOVER_WITHIN_S:
            text = await self._settle_late(policy, case, now)
        else:
            ok, notes = await self._carry_case(policy, case)
            text = f"case #{case.number} ({case.action.label}) carried out after a restart" + (
                "" if ok else f": FAILED: {'; '.join(notes)}")
            item = await self.store.review_for_case(self.platform, case.server_id, case.number)
            if (item is not None and item.decision is ReviewDecision.OPEN and item.source == "automod"
                    and not await self.store.card_of_review(item.id)
                    and (case.server_id, item.channel_id) not in raided):
                # the stop came before the case's card was posted (a message delivered again is a duplicate,
                # so nothing else posts it); a raider's message stays on the raid card, as carry_out keeps it
                card = await self.review_card(item.id, server_id=case.server_id)
                if card is not None and await self._show_card(card):
                    text += f"; its review card #{item.id} posted"
        await self.desk.post_mod_log(case.server_id, LogEntry(
            title="Recovered after a restart", lines=(text,), member_id=case.member_id,
            case_number=case.number,
            failed="FAILED" in text or "marked failed" in text or OUTCOME_UNKNOWN in text, kind="problem"))
        return text

    async def _settle_late(self, policy: Policy, case: Case, now: datetime) -> str:
        """Record pending ``case``, older than :data:`RECOVER_WITHIN_S`, without acting late. It was left pending by
        a stop before the platform was asked, or after the platform acted but before its answer was recorded (the
        write busy past every try): marking it failed said "not done" of a timeout or ban the platform had carried
        out. So the platform's state decides where the enforcer shows it (:meth:`_platform_shows`): done, it is
        recorded ``applied`` (a moderator's with its strike, as carried out live); not done, ``failed``; else
        ``failed`` with :data:`OUTCOME_UNKNOWN` and what a moderator should check. Returns the mod-log line."""
        ago = dur(int((now - case.created_at).total_seconds()) // 60 * 60) or "long"
        shown = await self._platform_shows(case, now)
        label = case.action.label
        if shown is True:
            note = "recorded after a restart: the platform shows it carried out (its answer was never recorded)"
            if case.moderator_id is not None and case.action >= ActionKind.DELETE:
                step = await self.strike(policy, case.server_id, case.member_id, case.action, case.reason,
                                         case_number=case.number, message_id=case.message_id, at=case.created_at,
                                         actor=Actor(case.moderator_id), outcome=(CaseStatus.APPLIED, note))
                note += f"; {step}" if step else ""
            else:
                await record_outcome(f"case #{case.number}", lambda: self.store.set_case_status(
                    self.platform, case.server_id, case.number, CaseStatus.APPLIED, failure=note))
            return f"case #{case.number} ({label}) {note}"
        if shown is False:
            seen = "not timed out" if case.action is ActionKind.TIMEOUT else "still in the server"
            reason = (f"the bot stopped before carrying this out, {ago} ago (the platform shows the member {seen}); "
                      "not done late")
            await self.store.set_case_status(self.platform, case.server_id, case.number, CaseStatus.FAILED,
                                             failure=reason)
            return f"case #{case.number} ({label}) marked failed: {reason}"
        check = {ActionKind.BAN: "if the member is banned, this ban is not on record and will not end on its own",
                 ActionKind.KICK: "the member is no longer in the server",
                 ActionKind.TIMEOUT: "the platform shows no timeout of this case in force"}.get(
            case.action, "whether it was done (a notice sent, a message deleted) cannot be checked")
        reason = (f"{OUTCOME_UNKNOWN}: the bot stopped, or could not record the platform's answer, {ago} ago; "
                  f"not done again late; {check}")
        await self.store.set_case_status(self.platform, case.server_id, case.number, CaseStatus.FAILED,
                                         failure=reason)
        return f"case #{case.number} ({label}) {reason}; a moderator should check the member"

    async def _platform_shows(self, case: Case, now: datetime) -> bool | None:
        """Whether the platform shows pending ``case``'s sanction carried out, as far as the enforcer can tell:
        ``True`` (the member is timed out until the case's end), ``False`` (the member is still in the server, not
        kicked or banned; not timed out while the case's timeout would still run) or ``None`` (it cannot tell: a
        warning, a delete, a member no longer in the server, another timeout in force, a lookup that failed)."""
        if case.action not in (ActionKind.TIMEOUT, ActionKind.KICK, ActionKind.BAN):
            return None
        try:
            member = await self.enforcer.member(case.server_id, case.member_id)
        except MemberLookupError:
            return None
        if member is None:  # banned, kicked or left: the platform does not say which
            return None
        if case.action is not ActionKind.TIMEOUT:
            return False
        until = member.timed_out_until
        if until is not None and case.expires_at is not None:
            return True if abs((until - case.expires_at).total_seconds()) <= TIMEOUT_MATCH_S else None
        if until is None and case.expires_at is not None and case.expires_at > now:
            return False  # it would still run: not carried out (or removed by hand since)
        return None

    def _recheck_pending(self, case: Case, until: datetime) -> None:
        """Look at pending ``case`` again when another process's hold on it ends at ``until`` (the mod log's clock,
        real UTC time): still pending then, it is claimed and carried out here."""
        key = (case.server_id, case.number)
        old = self._pending_checks.pop(key, None)
        if old is not None:
            old.cancel()

        async def recheck() -> None:
            try:
                await asyncio.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
                if self._stopping:
                    return
                now = self.clock()
                raided = {(r.server_id, r.channel_id) for r in await self.store.raid_modes(self.platform)
                          if r.until is None or r.until > now}
                fresh = await self.store.get_case(self.platform, case.server_id, case.number)
                if fresh is not None and fresh.status is CaseStatus.PENDING:
                    await self._recover_pending(fresh, raided)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("carrying out pending case %s failed", case.number, extra={"server": case.server_id})
            finally:
                if self._pending_checks.get(key) is task:
                    del self._pending_checks[key]

        task = asyncio.ensure_future(recheck())
        self._pending_checks[key] = task

    async def _carry_case(self, policy: Policy, case: Case) -> tuple[bool, list[str]]:
        """Carry out a recorded case's action (recovery): delete its message, then the sanction."""
        notes: list[str] = []
        ok = True
        if case.message_id and case.action >= ActionKind.DELETE:
            where = await self.store.message_excerpt(self.platform, case.server_id, case.message_id)
            if where is not None:
                res = await self._delete(case.server_id, where[0], case.message_id)
                if res.ok or res.extra.get(GONE):  # gone: deleted before the stop (or by its author since)
                    if not res.ok:
                        notes.append(ALREADY_GONE)
                else:
                    notes.append(f"delete: {res.reason}")
                    ok = ok and case.action > ActionKind.DELETE
        if case.action > ActionKind.DELETE:
            seconds = int((case.expires_at - case.created_at).total_seconds()) if case.expires_at else None
            res = await self._sanction_on_platform(policy, case, seconds)
            if not res.ok:
                ok = False
                notes.append(f"{case.action.label}: {res.reason}")
            elif res.extra.get("kept"):  # not sent: the member's longer timeout stands (the case says why)
                notes.append(res.extra["kept"])
        if ok and case.moderator_id is not None and case.action >= ActionKind.DELETE:
            # a moderator's sanction adds its strike after it is carried out, in the write that records it applied
            # (automod's is recorded with the verdict). The moderator is not here to ask: their permissions are
            # unknown, so a ladder step it crosses goes to a moderator who may (a review card) instead of being
            # carried out on their behalf
            note = await self.strike(policy, case.server_id, case.member_id, case.action, case.reason,
                                     case_number=case.number, message_id=case.message_id, at=case.created_at,
                                     actor=Actor(case.moderator_id), outcome=(CaseStatus.APPLIED, None))
            if note:
                notes.append(note)
        else:
            # a timeout not sent because the member's longer one stands says so, as a case carried out live does
            kept = [n for n in notes if n.startswith("timeout not sent")]
            await record_outcome(f"case #{case.number}", lambda: self.store.set_case_status(
                self.platform, case.server_id, case.number, CaseStatus.APPLIED if ok else CaseStatus.FAILED,
                failure=("; ".join(notes) if not ok else "; ".join(kept)) or None))
        return ok, notes

    # ------------------------------------------------------------------ automod verdicts
    async def carry_out(self, outcome: Outcome) -> list[str]:
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
                failed = [n for n in notes if not n.startswith(_HARMLESS_NOTES)]
                number = outcome.case_number
                await record_outcome(f"case #{number}", lambda: self.store.set_case_status(
                    self.platform, sid, number, CaseStatus.FAILED if failed else CaseStatus.APPLIED,
                    failure="; ".join(notes) or None))
        review_id = outcome.review_id
        if fallback_review and review_id is None and outcome.case_number is not None:
            item = await self.store.open_review(self.platform, sid, msg.author.id, "automod",
                                                "; ".join(notes)[:1000], case_number=outcome.case_number,
                                                message_id=msg.id, channel_id=msg.channel.id,
                                                scores=verdict.scores.as_dict() if verdict.scores else {})
            review_id = item.id
        if board is not None:
            board.note_message(msg.author.id, held_for_review=review_id is not None)
            if policy.rules.raid.timeout_raiders and is_new_member(msg, policy.rules.raid, msg.event_time):
                await self.timeout_raiders(board, [msg.author.id], new_only=True)
            if board.until is not None:  # raid mode lasts raid_mode_duration_s after the raid's last message
                later = self.clock() + timedelta(seconds=policy.rules.raid.raid_mode_duration_s)
                if later > board.until:
                    board.until = later
                    await self.save_raid_end(board)
            self.refresh_raid_card(board)
            return notes
        if outcome.case_number is not None and verdict.action > ActionKind.REVIEW:
            await self.desk.post_mod_log(sid, self._automod_entry(outcome, done, notes))
        if review_id is not None:
            card = await self.review_card(review_id, verdict=verdict, notes=tuple(notes))
            if card is not None:
                await self._show_card(card, updated=bool(getattr(outcome, "review_updated", False)))
        return notes

    async def _automod_action(self, policy: Policy, msg: Message, action: Action,
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
            if not res.ok and res.extra.get(GONE):  # its author (or another moderator) deleted it first
                return True, ALREADY_GONE, False
            return res.ok, "" if res.ok else f"delete: {res.reason}", not res.ok
        case = Case(server_id=sid, number=case_number, member_id=msg.author.id, action=kind,
                    reason=action.reason, status=CaseStatus.PENDING, created_at=msg.event_time or self.clock(),
                    message_id=msg.id, platform=self.platform)
        res = await self._sanction_on_platform(policy, case, action.duration_s, msg.channel.parent_id or msg.channel.id)
        if res.ok and kind is ActionKind.BAN:
            # as a moderator's ban: it supersedes the member's earlier temporary bans, and a ban with a duration (a
            # ladder step crossed by this message) ends then (it was recorded and kept for good)
            await self.lift_temporary_bans(sid, msg.author.id, before=case_number,
                                           why=f"superseded by case #{case_number}")
            stored = await self.store.get_case(self.platform, sid, case_number)
            if stored is not None and stored.expires_at is not None:
                self.schedule_unban(replace(stored, status=CaseStatus.APPLIED))
        if res.ok:
            note = "; ".join(n for n in (f"dm: {res.extra['dm']}" if res.extra.get("dm") else "",
                                         res.extra.get("cap", ""), res.extra.get("kept", "")) if n)
            return True, note, False
        return False, f"{kind.label}: {res.reason}", True

    def _automod_entry(self, outcome: Outcome, done: list[str], notes: list[str]) -> LogEntry:
        v = outcome.verdict
        failed = any(not n.startswith(_HARMLESS_NOTES) for n in notes)
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

    async def actor_in_channel(self, actor: Actor, server_id: str, channel_id: str | None) -> Actor:
        """``actor`` with their permissions in ``channel_id`` (the channel whose content is acted on), as the
        platform computes them (Discord: roles plus the channel's permission overwrites). Unchanged where the
        platform has no per-channel permissions (its enforcer has no ``member_permissions``), no channel is
        concerned, or the platform says the channel was deleted (:class:`ChannelGone`: no overwrite applies in
        it any more, so the server-wide permissions decide; an appeal of a case in it can still be decided).

        Raises:
            Refused: the platform cannot say (lookup failed): nothing is done on a guess.
        """
        lookup = getattr(self.enforcer, "member_permissions", None)
        if lookup is None or not channel_id or actor.is_owner:
            return actor
        try:
            held = await lookup(server_id, channel_id, actor.id)
        except ChannelGone:
            return actor
        if held is None:
            raise Refused(f"Your permissions in <#{channel_id}> could not be read; try again. Nothing was changed.")
        return actor.in_channel(held)

    # ------------------------------------------------------------------ platform steps
    async def _delete(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        return await self.enforcer.delete_message(server_id, channel_id, message_id)

    async def purge(self, actor: Actor, server_id: str, channel_id: str, message_ids: list[tuple[str, datetime]],
                    *, member_id: str | None = None) -> Result:
        """Delete recent messages a moderator picked (``/purge``): in bulk, 100 per request; messages older than 14
        days are not deleted and the answer says so (Discord refuses them). Recorded as one case in the mod log.

        Args:
            message_ids: ``(message id, posting time UTC)`` newest first, already limited to the count asked.
        """
        actor = await self.actor_in_channel(actor, server_id, channel_id)
        authorize(actor, ActionKind.DELETE)
        if not self.can(Capability.BULK_DELETE) and not self.can(Capability.DELETE):
            raise Refused("This platform does not let the bot delete members' messages.")
        cutoff = self.clock() - timedelta(days=14)
        young = [m for m, at in message_ids if at > cutoff]
        old = len(message_ids) - len(young)
        deleted, failed, failures = 0, 0, []
        for start in range(0, len(young), 100):
            chunk = young[start:start + 100]
            result = await self.enforcer.bulk_delete(server_id, channel_id, chunk)
            deleted += len(result.deleted)
            failed += len(result.failed)
            failures += sorted(set(result.failed.values()))
        text = f"Deleted {deleted} message(s)."
        if old:
            text += f" {old} older than 14 days were left: Discord does not let bots bulk delete them."
        if failures:
            text += " Failed: " + "; ".join(dict.fromkeys(failures))
        # the record says what was done and what was refused; anything refused makes the case ``failed`` with a
        # failure text that says whether it was partly applied (no status of its own for "partly")
        refused = [f"{old} refused (older than 14 days)"] if old else []
        if failed:
            refused.append(f"{failed} refused ({'; '.join(dict.fromkeys(failures))})"[:300])
        record = f"purge in channel {channel_id}: {deleted} deleted" + "".join(f", {r}" for r in refused)
        failure = None
        if refused:
            failure = ("partially applied: " if deleted else "not applied: ") + f"{deleted} of " \
                f"{len(message_ids)} deleted, " + ", ".join(refused)
        case = await self.store.open_case(self.platform, server_id, member_id or "-", ActionKind.DELETE,
                                          record[:1000], moderator_id=actor.id,
                                          status=CaseStatus.FAILED if refused else CaseStatus.APPLIED)
        if failure:
            await self.store.set_case_status(self.platform, server_id, case.number, CaseStatus.FAILED,
                                             failure=failure)
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Case #{case.number}: purge", lines=(f"Channel: {channel_id}", f"Moderator: {actor.id}", text),
            moderator_id=actor.id, case_number=case.number, failed=bool(refused), kind="case"))
        return Result(text, not failures, case.number, failure=failure)

    # ------------------------------------------------------------------ case lookups (moderators)
    async def note(self, actor: Actor, server_id: str, member_id: str, text: str) -> Result:
        """A moderator's note about a member: a case with no action (Manage Messages).

        Raises:
            Refused: no Manage Messages, or a note longer than a case's reason holds (:data:`MAX_REASON`;
                nothing recorded, as a sanction's reason: before, it was cut silently).

        A NUL or a lone surrogate in ``text`` is recorded as U+FFFD, as in a sanction's reason.
        """
        authorize(actor, ActionKind.LOG)
        text = storable_text(text)
        if len(text) > MAX_REASON:
            raise Refused(f"The note has {len(text):,} characters; at most {MAX_REASON:,}. Nothing was changed.")
        case = await self.store.open_case(self.platform, server_id, member_id, ActionKind.LOG, text[:1000],
                                          moderator_id=actor.id, status=CaseStatus.APPLIED)
        return Result(f"Note saved as case #{case.number}.", True, case.number)

    async def case(self, actor: Actor, server_id: str, number: int) -> Case:
        """One case of this server (Manage Messages). Raises :class:`Refused` for another server's or no case."""
        authorize(actor, ActionKind.LOG)
        found = await self.store.get_case(self.platform, server_id, number) if 1 <= number <= MAX_CASE_NUMBER else None
        if found is None:
            raise Refused(f"There is no case #{number} in this server.")
        return found

    async def stats(self, actor: Actor, server_id: str, since: datetime) -> ModStats:
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
    async def member_status(self, server_id: str, member_id: str) -> tuple[list[Strike], list[Appeal]]:
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
        escalation ladder does not start over. The review cards posted about their messages are edited to say
        the text was erased (:meth:`erase_card_texts`). Moderators' notes and typed reasons stay as written (any id
        or name they quote included): they are the mod log's record of decisions, not the member's data (README,
        "Members' data"); the answer says so."""
        pseudonym = await self.store.forget_member(self.platform, server_id, member_id)
        self.ledger.forget(self.platform, server_id, member_id)
        # the review cards already posted about their messages stop quoting them too (now filed under the pseudonym)
        await self.erase_card_texts(server_id, member_id=pseudonym)
        return Result(f"Done. Your stored message text was erased and your records now read `{pseudonym}`. What "
                      "enforcement needs stays: your active strikes and case history still count if rules are "
                      "broken again, and moderators' notes and reasons stay as they wrote them (their record of what was "
                      "decided and why).", True)

    # ------------------------------------------------------------------ policy
    async def authorize_policy_change(self, actor: Actor) -> None:
        """Changing the policy needs Manage Server (:func:`bot.workflow.policy_admin.authorize_change`). Raises
        :class:`Refused`."""
        authorize_change(actor)


__all__ = ["DECISIONS", "RECOVER_WITHIN_S", "ModerationWorkflow", "Refused", "Result"]
