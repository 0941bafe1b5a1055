"""The review queue: cards, moderators' decisions, reports, appeals and their decisions (a mixin of
:class:`bot.workflow.workflow.ModerationWorkflow`).

Layer: ``bot.workflow`` (platform-neutral). Every decision is authorized, then claimed with a conditional update
(of two moderators deciding one card exactly one acts), then carried out; a sanction refused after the claim
reopens the item.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from datetime import timedelta

from bot.core.errors import (
    AppealAlreadyOpen,
    AppealError,
    CaseNotFound,
    NotCaseMember,
    ReviewAlreadyDecided,
    ReviewNotFound,
    StoreError,
)
from bot.core.models import (
    MAX_TIMEOUT_S,
    ActionKind,
    Case,
    CaseStatus,
    ReviewDecision,
    ReviewItem,
    Verdict,
    review_reason,
)
from bot.core.ports import GONE
from bot.core.records import CaseDraft
from bot.core.storable import storable_text
from bot.workflow.authz import Actor, Refused, Said, Sentence, authorize, joined
from bot.workflow.cases import MAX_REASON
from bot.workflow.common import (
    ALREADY_GONE,
    DECISIONS,
    NOT_RECORDED,
    WITHHELD_STEP,
    Result,
    WorkflowParts,
    dur,
    fit_notes,
    short_refusal,
)
from bot.workflow.confirm import Confirmation, asks_first, check_reason, review_confirmation
from bot.workflow.ports import Capability, MemberLookupError, MemberNotice
from bot.workflow.sanction_kinds import REGISTRY, there
from bot.workflow.views import Evidence, LogEntry, ReviewCard

log = logging.getLogger(__name__)

#: Tries (one per purge, :data:`bot.workflow.retention.RETENTION_INTERVAL_S` apart) to edit a card whose message's
#: text was erased before it is left as it is (the card deleted, its channel gone).
CARD_ERASE_TRIES = 3


@dataclass(frozen=True)
class StepPlan:
    """The ladder steps of a case about to be overturned (:meth:`ReviewsMixin._plan_steps`): per step still
    standing, ``None`` when it is overturned with the case (in the decision's own transaction), else the note saying
    why it stands."""

    entries: tuple[tuple[Case, str | None], ...] = ()

    @property
    def numbers(self) -> tuple[int, ...]:
        """The numbers of the steps overturned with the case."""
        return tuple(step.number for step, stands in self.entries if stands is None)


def _decided(decision: ReviewDecision) -> str:
    """A decided item's outcome in the card's words (the registry's: "timed out", "dismissed (false positive)"),
    as the decision stamped it, for a card rebuilt from the mod log; the stored value for one no kind words."""
    return next((k.outcome for k in REGISTRY if k.decision is decision), decision.value)


class ReviewsMixin(WorkflowParts):
    """Review cards and decisions, reports and appeals."""

    async def review_card(self, review_id: int, *, verdict: Verdict | None = None, notes: tuple[str, ...] = (),
                          server_id: str | None = None) -> ReviewCard | None:
        """The card of a review item, with the member's standing and the evidence (``None``: no such item)."""
        item = await self.store.get_review(review_id, *((self.platform, server_id) if server_id else ()))
        if item is None:
            return None
        try:
            member = await self.enforcer.member(item.server_id, item.member_id)
        except MemberLookupError:
            member = None  # the card still shows the evidence; only the member's details are missing
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
            # rebuilt after it was posted (a decision, a deletion): the rules and the scorer's reading come from
            # the stored verdict; the tiers that applied were not recorded, so none are claimed (empty)
            rules: tuple[str, ...] = ()
            status = "ok"
            erased = False
            if item.message_id:
                found = await self.store.message_excerpt(self.platform, item.server_id, item.message_id)
                text = found[1] if found else ""
                erased = not text and await self.store.message_text_erased(self.platform, item.server_id,
                                                                           item.message_id)
                stored = await self.store.get_verdict(self.platform, item.server_id, item.message_id)
                if stored is not None:
                    rules = tuple(f"{h.get('rule')}: {h['detail']}" if h.get("detail") else str(h.get("rule"))
                                  for h in stored.rule_hits)
                    status = stored.score_status
            evidence = Evidence(text=text, scores=dict(item.scores), rules=rules, score_status=status, erased=erased)
        # a delete needs a message: a report of a member names none, so its card offers no Delete
        missing = frozenset([k.key for k in REGISTRY if not await self.capable(k, item.server_id, item.channel_id)
                             or (k.action is ActionKind.DELETE and not (item.message_id and item.channel_id))])
        return ReviewCard(
            review_id=item.id, server_id=item.server_id, source=item.source, member_id=item.member_id,
            member_name=member.name if member else "", member_joined_at=member.joined_at if member else None,
            member_created_at=member.created_at if member else None,
            member_home_server=member.home_server if member else None, channel_id=item.channel_id,
            message_id=item.message_id, evidence=evidence, reason=item.reason, case_number=item.case_number,
            strikes=len(strikes), points=sum(s.points for s in strikes), notes=notes,
            capabilities_missing=missing, decision=None if item.decision is ReviewDecision.OPEN else
            _decided(item.decision), decided_by=item.moderator_id, decided_at=item.decided_at,
            final=item.decision not in (ReviewDecision.OPEN, ReviewDecision.INVESTIGATING),
            reports=tuple(await self.store.reports_of(item.id)))

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

    async def message_deleted(self, server_id: str, message_id: str) -> bool:
        """A message under review was deleted on the platform (by its author or someone else): its open card says
        so, and stays open (a moderator may still sanction). Returns whether a card was updated."""
        review_id = await self.store.open_review_for_message(self.platform, server_id, message_id)
        if review_id is None:
            return False
        card = await self.review_card(review_id, server_id=server_id)
        if card is None:
            return False
        card = replace(card, notes=(*card.notes, "the message was deleted on the platform since it was flagged"))
        return await self._show_card(card, updated=True)

    async def erase_card_texts(self, server_id: str, days: int | None = None, *, member_id: str | None = None) -> int:
        """Edit the posted review cards whose message's text the mod log erased (retention; ``/mydata forget``
        with ``member_id``, the member's pseudonym) so they no longer quote it: each card is rebuilt from the mod
        log (:meth:`review_card`: its text reads "text erased after ``days`` days", or the generic words when
        ``days`` is ``None``; member, scores, rules, reason, case and decision kept) and replaced through the desk,
        one card after another (the platform client waits out its rate limits). A card the platform refuses to
        edit (deleted, its channel gone or unreachable) is logged and tried again at the next purge, at most
        :data:`CARD_ERASE_TRIES` times in all; then it is left as it is (logged once more). Returns the cards
        edited."""
        edited = 0
        for review_id, card_id in await self.store.cards_of_erased_text(self.platform, server_id,
                                                                        member_id=member_id):
            lock = self._card_locks.setdefault(review_id, asyncio.Lock())
            async with lock:  # not interleaved with a decision's or an edit's card of the same item
                card = await self.review_card(review_id, server_id=server_id)
                ok = card is not None and await self.desk.update_review(
                    replace(card, evidence=replace(card.evidence, erased_after_days=days)), card_id)
            if not lock._waiters:  # noqa: SLF001 - drop the lock once nobody waits for it
                self._card_locks.pop(review_id, None)
            settled = await self.store.card_erasure_tried(review_id, edited=ok, max_tries=CARD_ERASE_TRIES,
                                                          now=self.clock())
            if ok:
                edited += 1
            elif settled:
                log.warning("review #%s: its card %s still shows the erased text: the platform refused the edit "
                            "%s times; not tried again", review_id, card_id, CARD_ERASE_TRIES,
                            extra={"server": server_id})
            else:
                log.warning("review #%s: its card %s could not be edited to erase its text; tried again at the "
                            "next purge", review_id, card_id, extra={"server": server_id})
        return edited

    async def confirm_review(self, actor: Actor, server_id: str, review_id: int, choice: str) -> Confirmation:
        """What to ask before decision ``choice`` on card ``review_id`` (one that :func:`asks_first`): the quick
        checks run now (the item is this server's and open, the moderator holds the permission, the platform can
        do it), so a member who may not act gets no modal; :meth:`decide_review` runs every check again at submit.

        Raises:
            Refused: a decision that does not ask first, unknown item, an appeal's item, missing permission, or
                already decided.
        """
        if not asks_first(choice):
            raise Refused("Decision ", Said(repr(choice)), " does not ask for a reason.")
        entry = REGISTRY.get(choice)
        assert entry is not None  # asks_first() only says yes for registered kinds
        kind = entry.action
        item = await self.store.get_review(review_id, self.platform, server_id)
        if item is None:
            raise Refused(f"Review item #{review_id} does not exist in this server.")
        self._check_not_appeal(item)
        if item.member_id in await self.store.member_ids(self.platform, server_id, actor.id):  # pseudonym too
            raise Refused("You cannot decide a review item about yourself. Nothing was changed.")
        authorize(actor, kind)
        await self._check_capable(choice, server_id, item.channel_id)
        self._check_open(item)
        return review_confirmation(kind, review_id, review_reason(item.id, item.reason),
                                   channel_only=REGISTRY.by_channel(entry, self.enforcer.capabilities))

    @staticmethod
    def _check_not_appeal(item: ReviewItem) -> None:
        """An appeal's review item is decided with Uphold / Overturn (:meth:`decide_appeal`), never as a review
        decision: ``mod:review:<its id>:dismiss`` overturned the case and pardoned its strikes while the appeal
        stayed open (a later Uphold then "upheld" an overturned case), and ``...:ban`` sanctioned the member for
        appealing, with the appeal's text as the reason.

        Raises:
            Refused: ``item`` is an appeal's.
        """
        if item.source == "appeal":
            raise Refused(f"Review #{item.id} is an appeal of case #{item.case_number}: decide it with Uphold or "
                          "Overturn on its card. Nothing was changed.")

    async def _check_capable(self, choice: str, server_id: str, channel_id: str | None) -> None:
        """A member sanction (timeout, kick, ban) this platform cannot carry out (anywhere, or in the item's
        channel: Slack removes nobody from #general) is refused before the claim (a delete it cannot do is
        reported on the card instead).

        Raises:
            Refused: the sanction is not possible there.
        """
        entry = REGISTRY.get(choice)
        if entry is not None and entry.action >= ActionKind.TIMEOUT and not await self.capable(entry, server_id,
                                                                                               channel_id):
            raise Refused(f"This platform cannot {entry.action.label} members"
                          f"{there(entry, self.enforcer.capabilities, channel_id)}. Nothing was changed.")

    @staticmethod
    def _check_open(item: ReviewItem) -> None:
        if item.decision not in (ReviewDecision.OPEN, ReviewDecision.INVESTIGATING):
            raise Refused(f"Review #{item.id} was already decided ({item.decision.value} by "
                          f"<@{item.moderator_id}>). Nothing was done.")

    async def decide_review(self, actor: Actor, server_id: str, review_id: int, choice: str, *,
                            duration_s: int | None = None, reason: str | None = None) -> Result:
        """A moderator's decision on a review card (``choice``: a key of :data:`DECISIONS`).

        The decision is claimed in the mod log first (a conditional update), so of two moderators deciding one
        card exactly one acts; the other gets "already decided by ...". Dismiss claims the item and overturns its
        case (strikes pardoned, status ``overturned``, a timeout's removal or a ban's unban owed) in one
        transaction (:meth:`~bot.store.reviews.ReviewMixin.dismiss_review`): a failed write leaves the item open
        to dismiss again; then the automatic timeout is lifted (or the ban), owed until the platform answers, so a
        stop before that leaves it to :meth:`recover`.
        ``reason``: the moderator's reason (:mod:`bot.workflow.confirm`), required for a decision that asks first
        (kick, ban); it becomes the case's reason as typed (otherwise the case says "review #N: <flag reason>").

        Raises:
            Refused: unknown decision or item, an appeal's item (decided with :meth:`decide_appeal`), a delete of
                an item that names no message (a report of a member), a missing, short or too long reason, missing
                permission, hierarchy, a target who left, or already decided.
        """
        if choice not in DECISIONS:
            raise Refused("Unknown decision ", Said(repr(choice)), ".")
        rdecision, kind, outcome = DECISIONS[choice]
        if asks_first(choice) or reason is not None:
            reason = check_reason(reason, kind.label.capitalize())
        item = await self.store.get_review(review_id, self.platform, server_id)
        if item is None:
            raise Refused(f"Review item #{review_id} does not exist in this server.")
        self._check_not_appeal(item)
        if kind is ActionKind.DELETE and not (item.message_id and item.channel_id):
            raise Refused(f"Review #{review_id} names no message to delete (a report of a member). Nothing was "
                          "changed.")
        if kind is ActionKind.TIMEOUT and not (duration_s and 60 <= duration_s <= MAX_TIMEOUT_S):
            raise Refused("Pick a timeout duration between 1 minute and 28 days.")
        if item.member_id in await self.store.member_ids(self.platform, server_id, actor.id):  # pseudonym too
            raise Refused("You cannot decide a review item about yourself. Nothing was changed.")
        if item.channel_id and item.message_id and (kind is ActionKind.DELETE or rdecision is ReviewDecision.DISMISSED):
            # deleting the message acts on that channel's content, and dismissing overturns what automod did about
            # it (as an appeal's overturn, which counts them there too): the moderator's permissions THERE count
            # (an overwrite may deny Manage Messages in it). Dismiss used the server-wide ones.
            actor = await self.actor_in_channel(actor, server_id, item.channel_id)
            if kind is ActionKind.DELETE:
                authorize(actor, ActionKind.DELETE)
        target = await self.target(server_id, item.member_id)
        authorize(actor, kind if kind is not ActionKind.NONE else ActionKind.REVIEW, target,
                  bot=await self.enforcer.bot_member(server_id))
        if rdecision is ReviewDecision.DISMISSED and item.case_number is not None:
            # dismissing lifts an automatic timeout or ban: that needs the permission to lift it
            case = await self.store.get_case(self.platform, server_id, item.case_number)
            if case is not None and case.status is CaseStatus.APPLIED and case.action in (ActionKind.TIMEOUT,
                                                                                          ActionKind.BAN):
                authorize(actor, case.action)
        await self._check_capable(choice, server_id, item.channel_id)
        self._check_open(item)
        if kind in (ActionKind.WARN, ActionKind.TIMEOUT, ActionKind.KICK) and target is None:
            raise Refused(f"<@{item.member_id}> is no longer in this server; nothing was changed (Ban still works).")
        before: Case | None = None
        opened: Case | None = None
        plan = StepPlan()
        try:
            if rdecision is ReviewDecision.DISMISSED:
                # the ladder steps its case's strike crossed are overturned in the dismissal's own transaction
                plan = await self._plan_steps(actor, server_id, item.case_number, item.member_id)
                decided, before = await self.store.dismiss_review(review_id, actor.id, self.clock(),
                                                                  platform=self.platform, server_id=server_id,
                                                                  steps=plan.numbers)
            elif (draft := self._decision_case(actor, item, kind, duration_s, reason)) is not None:
                # the sanction's case is opened (pending) in the claim's own transaction: a stop before it is
                # carried out leaves it to the next start, never the card decided with nothing done
                try:
                    decided, opened = await self.store.decide_review_opening(
                        review_id, rdecision, draft, self.clock(), platform=self.platform, server_id=server_id)
                except (ReviewAlreadyDecided, ReviewNotFound):
                    raise
                except StoreError as exc:  # nothing written: the card stays open, as when sanction's case fails
                    log.warning("mod log refused the decision on review #%d: %s", review_id, exc)
                    raise Refused(NOT_RECORDED) from exc
            else:
                decided = await self.store.decide_review(review_id, rdecision, actor.id, self.clock(),
                                                         platform=self.platform, server_id=server_id)
        except ReviewAlreadyDecided as exc:
            raise Refused(f"Review #{review_id} was already decided ({exc.decision} by <@{exc.moderator_id}>). "
                          "Nothing was done.") from None
        try:
            note = await self._act_on_review(actor, decided, kind, duration_s, reason, before, plan, opened)
        except Refused as exc:
            # refused after the claim (the member left meanwhile): nothing was done, so the item is open again
            await self.store.reopen_review(review_id, rdecision, actor.id)
            if opened is not None:  # its case says why it was not carried out (never left pending for a start)
                await self.store.set_case_status(self.platform, server_id, opened.number, CaseStatus.FAILED,
                                                 failure=f"not carried out: {short_refusal(str(exc))}")
            raise
        if kind is ActionKind.TIMEOUT:
            outcome += f" for {dur(duration_s)}"
        card = await self.review_card(review_id, server_id=server_id)
        assert card is not None
        card = replace(card, decision=outcome, decided_by=actor.id, notes=(note,) if note else ())
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Review #{review_id}: {outcome}", lines=(f"Member: {item.member_id}", f"Moderator: {actor.id}",
                                                             *([Sentence("Reason: ", Said(reason))] if reason else []),
                                                             *([note] if note else [])),
            member_id=item.member_id, moderator_id=actor.id, case_number=item.case_number,
            failed="FAILED" in note, kind="review"))
        return Result(f"Review #{review_id}: {outcome}." + (f" {note}" if note else ""), "FAILED" not in note,
                      card=card)

    def _sanction_reason(self, item: ReviewItem, reason: str | None) -> str:
        """The reason of the sanction a decision on ``item`` carries out: the moderator's ``reason``, else the
        card's (``review #N: <flag reason>``, cut to 400 characters)."""
        return reason if reason is not None else review_reason(item.id, item.reason)[:400]

    def _decision_case(self, actor: Actor, item: ReviewItem, kind: ActionKind, seconds: int | None,
                       reason: str | None) -> CaseDraft | None:
        """The case a decision on ``item`` opens for its sanction (warn, timeout, kick, ban), recorded with the
        claim (:meth:`~bot.core.store_port.ReviewStore.decide_review_opening`); ``None`` for the other decisions.
        The same case :meth:`sanction` would open."""
        if kind not in (ActionKind.WARN, ActionKind.TIMEOUT, ActionKind.KICK, ActionKind.BAN):
            return None
        now = self.clock()
        expires = now + timedelta(seconds=seconds) if seconds and kind in (ActionKind.TIMEOUT,
                                                                           ActionKind.BAN) else None
        return CaseDraft(item.member_id, kind, storable_text(self._sanction_reason(item, reason))[:MAX_REASON],
                         actor.id, item.message_id, now, expires)

    async def _act_on_review(self, actor: Actor, item: ReviewItem, kind: ActionKind, seconds: int | None,
                             reason: str | None = None, case: Case | None = None,
                             plan: StepPlan | None = None, opened: Case | None = None) -> str:
        """Carry out a claimed decision; ``reason``: the moderator's, else the case says the flag's. ``case``: for a
        dismissal, the item's case as it was before (the dismissal's transaction overturned it already), ``plan``
        its ladder steps (:meth:`_plan_steps`, overturned in that transaction too). ``opened``: the sanction's case,
        opened with the claim (:meth:`_decision_case`)."""
        sid = item.server_id
        why = reason or review_reason(item.id, item.reason)
        policy = await self.policies.get(self.platform, sid)
        if item.decision is ReviewDecision.DISMISSED:
            return await self._overturn_case(actor, sid, item.case_number, item.member_id, "dismissed", case,
                                             plan or StepPlan())
        if kind is ActionKind.NONE:
            return ""
        if kind is ActionKind.DELETE:
            if not item.message_id or not item.channel_id:
                return "no message to delete"
            if not self.can(Capability.DELETE):
                return "delete FAILED: this platform does not let the bot delete members' messages"
            case_number = item.case_number
            if case_number is None:  # a report: the delete is the moderator's own case (appealable, with its strike)
                try:
                    case = await self.store.open_case(self.platform, sid, item.member_id, ActionKind.DELETE,
                                                      why[:1000], moderator_id=actor.id,
                                                      message_id=item.message_id)
                except StoreError as exc:  # nothing recorded, nothing deleted: decide_review hands the item back
                    log.warning("mod log refused the case of review #%d: %s", item.id, exc)
                    raise Refused(NOT_RECORDED) from exc
                case_number = case.number
            res = await self._delete(sid, item.channel_id, item.message_id)
            gone = not res.ok and bool(res.extra.get(GONE))  # deleted already (its author, automod): done
            if not res.ok and not gone:
                if item.case_number is None:
                    await self.store.set_case_status(self.platform, sid, case_number, CaseStatus.FAILED,
                                                     failure=f"delete: {res.reason}")
                else:
                    await self._note_on_case(sid, case_number, f"delete: {res.reason}")
                return f"delete FAILED: {res.reason}"
            # the moderator's own case (a report's) is recorded applied in the write that adds its strike
            more = await self.strike(policy, sid, item.member_id, kind, why[:400],
                                     case_number=case_number, message_id=item.message_id, actor=actor,
                                     outcome=(CaseStatus.APPLIED, None) if item.case_number is None else None)
            return joined("; ", (f"case #{case_number}" if item.case_number is None else "",
                                 ALREADY_GONE if gone else "", more))
        result = await self.sanction(actor, sid, item.member_id, kind, self._sanction_reason(item, reason),
                                     duration_s=seconds, message_id=item.message_id, channel_id=item.channel_id,
                                     source="review", earns_strike=not item.reason.startswith(WITHHELD_STEP),
                                     case=opened)
        note = f"case #{result.case_number}" + ("" if result.ok else f" FAILED: {result.failure}")
        return joined("; ", [note, *result.notes])  # a note may quote a member's display name (Said)

    async def _overturn_case(self, actor: Actor, server_id: str, case_number: int | None, member_id: str,
                             how: str, case: Case | None, plan: StepPlan) -> str:
        """After a decision that overturned case ``case_number`` (a dismissal or an appeal's overturn: its
        transaction pardoned the strikes, marked the case overturned and owed the lift, and overturned the ladder
        steps of ``plan`` the same way), lift what can be lifted (timeout, ban) of the case, then of those steps
        (:meth:`_lift_steps`).

        ``case``: the case as it was before the decision (``None``: read now).
        """
        if case_number is None:
            return ""
        note = await self._overturn_one(actor, server_id, case_number, member_id, how, case, mark=False)
        steps = await self._lift_steps(actor, server_id, case_number, member_id, plan)
        return "; ".join(n for n in (note, *steps) if n)

    async def _plan_steps(self, actor: Actor, server_id: str, case_number: int | None,
                          member_id: str) -> StepPlan:
        """Before a decision overturns case ``case_number``: which ladder steps its strike crossed
        (``escalated_from``) are overturned with it, in the decision's own transaction (a stop or a failed write
        between two transactions left the case overturned while its step's timeout or ban stood, owed to nobody).
        A step is overturned when it still stands (applied, not lifted, a timeout not over yet), the moderator may
        lift it, and the member's other strikes (all active ones but this case's, which the decision pardons) do
        not reach a ladder rung of its action; otherwise it stands, with a note saying why."""
        plan = StepPlan()
        if case_number is None:
            return plan
        case = await self.store.get_case(self.platform, server_id, case_number)
        if case is None:
            return plan
        steps = await self.store.escalations_of(self.platform, server_id, case_number)
        if not steps:
            return plan
        now = self.clock()
        policy = await self.policies.get(self.platform, server_id)
        others = [s for s in await self.store.active_strikes(self.platform, server_id, member_id, now)
                  if s.case_number != case_number and not (case.message_id and s.message_id == case.message_id)]
        total = sum(s.points for s in others)
        entries: list[tuple[Case, str | None]] = []
        for step in steps:
            if step.status is not CaseStatus.APPLIED or step.lifted_at is not None:
                continue
            if step.action is ActionKind.TIMEOUT and step.expires_at is not None and step.expires_at <= now:
                continue  # already over
            try:  # lifting it is an unban or a timeout removal: the moderator needs that permission too
                authorize(actor, step.action)
            except Refused as exc:
                entries.append((step, f"ladder step case #{step.number} ({step.action.label}) stands: "
                                      + str(exc).replace(" Nothing was changed.", " to lift it.")))
                continue
            if any(r.points <= total and r.action == step.action.label for r in policy.strikes.ladder):
                entries.append((step, f"ladder step case #{step.number} ({step.action.label}) stands: the "
                                      f"member's other strikes still reach it ({total} points)"))
                continue
            entries.append((step, None))
        return StepPlan(tuple(entries))

    async def _lift_steps(self, actor: Actor, server_id: str, case_number: int, member_id: str,
                          plan: StepPlan) -> list[str]:
        """After the decision's transaction overturned the steps of ``plan`` (:meth:`_plan_steps`): lift each one's
        applied timeout (not over yet) or ban (a temporary one's timer too), owed from that commit on, so a stop
        before the platform's answer leaves it to the next start. Returns a note per step (those that stand
        too)."""
        notes = []
        for step, stands in plan.entries:
            if stands is not None:
                notes.append(stands)
                continue
            now = await self.store.get_case(self.platform, server_id, step.number)
            if now is None or now.status is not CaseStatus.OVERTURNED:
                continue  # changed before the decision's transaction (lifted, or overturned by another decision)
            note = await self._overturn_one(actor, server_id, step.number, member_id,
                                            f"overturned with case #{case_number}", step, mark=False)
            notes.append(f"ladder step case #{step.number} ({step.action.label}) overturned with it"
                         + (f": {note}" if note else ""))
        return notes

    async def _overturn_one(self, actor: Actor, server_id: str, case_number: int, member_id: str,
                            how: str, case: Case | None, *, mark: bool) -> str:
        """:meth:`_overturn_case` for one case, without its ladder steps. ``mark``: overturn the case here, in one
        transaction (``store.overturn_case``: strikes pardoned, status ``overturned``, the lift owed); a decision's
        own transaction has done it already for the decided case and its planned steps. ``case``: the case as it
        was before."""
        case = case or await self.store.get_case(self.platform, server_id, case_number)
        try:
            if mark:
                await self.store.overturn_case(self.platform, server_id, case_number, moderator_id=actor.id)
        except CaseNotFound:
            return ""
        self.ledger.forget(self.platform, server_id, member_id)
        if case is None or case.status is not CaseStatus.APPLIED:
            return ""
        reason = f"case #{case_number} {how}"
        if case.action is ActionKind.TIMEOUT and self.can(Capability.TIMEOUT):
            return await self.lift_overturned_timeout(case, reason)
        if case.action is ActionKind.BAN and self.can(Capability.UNBAN):
            return await self.lift_overturned_ban(case, reason)
        return ""

    async def _note_on_case(self, server_id: str, case_number: int, note: str) -> None:
        """Record on a case a platform refusal that came after it was decided (``note``, after the case's earlier
        notes; its status is kept): a timeout or ban not lifted when it was overturned (the case said only
        "overturned", as if the sanction had ended), or a moderator's Delete refused on its card (the case said
        nothing, the card "message deleted"). The field keeps at most :data:`MAX_NOTES` characters
        (:func:`fit_notes`)."""
        now = await self.store.get_case(self.platform, server_id, case_number)
        if now is None:
            return
        await self.store.set_case_status(self.platform, server_id, case_number, now.status,
                                         failure=fit_notes(now.failure or "", note))

    async def report(self, reporter_id: str, server_id: str, member_id: str, reason: str, *,
                     message_id: str | None = None, channel_id: str | None = None, excerpt: str = "") -> Result:
        """A member's report: recorded once per reporter and message, and put in the review queue with a card.
        A NUL or a lone surrogate in ``reason`` is recorded as U+FFFD, as in a moderator's reason."""
        if member_id == reporter_id:
            raise Refused("You cannot report yourself.")
        reason = storable_text(reason)
        item = await self.store.add_report(self.platform, server_id, reporter_id, member_id, reason[:1000],
                                           message_id=message_id, channel_id=channel_id)
        shown = True
        if item.decision in (ReviewDecision.OPEN, ReviewDecision.INVESTIGATING):
            card = await self.review_card(item.id)
            if card is not None:
                if excerpt and not card.evidence.text:
                    card = replace(card, evidence=replace(card.evidence, text=excerpt))
                # a report joining another reporter's item shows on its card (an automod card is left as it is:
                # rebuilt from the mod log it would lose the verdict's rules and tiers it shows)
                shown = await self._show_card(card, updated=item.source == "report")
        if not shown:
            return Result(f"Your report (review #{item.id}) was recorded, but the moderators' review channel cannot "
                          "be reached right now; they were alerted. You can also contact a moderator directly.",
                          True)
        return Result(f"Thanks. Your report (review #{item.id}) was sent to the moderators.", True)

    async def appeal(self, member_id: str, server_id: str, case_number: int, text: str) -> Result:
        """A member's appeal of one of their own cases, queued with an appeal card.

        A NUL or a lone surrogate in ``text`` is recorded as U+FFFD, as in a moderator's reason.

        Raises:
            Refused: no such case or another member's case (one answer for both: a member learns nothing about
                other members' cases, not even which numbers exist), already overturned or already appealed.
        """
        text = storable_text(text)
        try:
            appeal_id = await self.store.open_appeal(self.platform, server_id, case_number, member_id, text[:1500])
        except (CaseNotFound, NotCaseMember):
            raise Refused(f"You have no case #{case_number} in that server: you can only appeal your own "
                          "cases.") from None
        except AppealAlreadyOpen:
            # its card never reached the review channel: appealing again sends it (it is decided only there)
            unsent = None
            for open_one in await self.store.open_appeals(self.platform, server_id, member_id):
                if (open_one.case_number == case_number and open_one.review_id is not None
                        and not await self.store.card_of_review(open_one.review_id)):
                    unsent = open_one
            if unsent is None:
                raise Refused(f"Case #{case_number} already has an open appeal.") from None
            if not await self._show_appeal_card(server_id, unsent.id):
                return Result(f"Your appeal of case #{case_number} (appeal #{unsent.id}) is recorded, but the "
                              "moderators' review channel still cannot be reached; they were alerted. Try again "
                              "later, or contact a moderator directly.", False, case_number)
            return Result(f"Your appeal of case #{case_number} (appeal #{unsent.id}) was sent to the moderators.",
                          True, case_number)
        except AppealError as exc:
            raise Refused(f"Case #{case_number} cannot be appealed: {exc}") from None
        if not await self._show_appeal_card(server_id, appeal_id):
            return Result(f"Your appeal of case #{case_number} was recorded (appeal #{appeal_id}), but the "
                          "moderators' review channel cannot be reached right now; they were alerted. Appeal again "
                          "later to send it, or contact a moderator directly.", True, case_number)
        return Result(f"Your appeal of case #{case_number} was filed (appeal #{appeal_id}). A moderator will look "
                      "at it.", True, case_number)

    async def _show_appeal_card(self, server_id: str, appeal_id: int) -> bool:
        """Post appeal ``appeal_id``'s card (the appeal's text, the appealed case's action and reason); False when
        the review channel cannot be reached."""
        appeal = await self.store.get_appeal(appeal_id)
        if appeal is None or appeal.review_id is None:
            return True
        case = await self.store.get_case(self.platform, server_id, appeal.case_number)
        card = await self.review_card(appeal.review_id)
        if card is None:
            return True
        return await self._show_card(replace(card, appeal_id=appeal_id, evidence=Evidence(text=appeal.text),
                                             case_action=case.action if case else None,
                                             reason=case.reason if case else card.reason))

    async def _tell_appeal_outcome(self, server_id: str, member_id: str, case_number: int, action: ActionKind,
                                   outcome: str) -> str:
        """DM the member how their appeal of ``case_number`` was decided (``outcome``: ``"upheld"`` or
        ``"overturned"``), as a sanction's notice is sent (``server.notify_sanctions``, a platform with DMs).
        Returns why it was not delivered (``""``: delivered, or not sent by the policy)."""
        policy = await self.policies.get(self.platform, server_id)
        if not policy.server.notify_sanctions or not self.can(Capability.DM):
            return ""
        said = (f"Your appeal was accepted: case #{case_number} is overturned." if outcome == "overturned" else
                f"Your appeal was reviewed and declined: case #{case_number} stands.")
        res = await self.enforcer.notify(member_id, MemberNotice(
            server_id=server_id, server_name="", case_number=case_number, action=action, reason=said,
            appealable=False, appeal=outcome))
        return "" if res.ok else f"not delivered: {res.reason}"

    async def decide_appeal(self, actor: Actor, server_id: str, appeal_id: int, uphold: bool) -> Result:
        """Uphold or overturn an appeal; overturning pardons the strikes and lifts a timeout or ban.

        Overturning a ban needs Ban Members, a timeout Moderate Members; upholding (and overturning anything else)
        needs Manage Messages. As a review decision on a flagged message counts the moderator's permissions in
        the message's channel, these count IN the channel of the appealed case's message
        (:meth:`~bot.store.reviews.ReviewMixin.case_channel`; Discord: roles plus that channel's overwrites, so a
        moderator denied Manage Messages there by an overwrite is refused wherever the appeal card is). A case with
        no channel (about a member, not a message: a manual warn, a ban from a command), a case whose channel was
        deleted since, and a platform without per-channel permissions (Slack) keep the server-wide check.

        Raises:
            Refused: unknown appeal, missing permission (in the case's channel), the moderator's permissions in
                that channel could not be read (nothing is decided on a guess), or already decided (by whom).
        """
        appeal = await self.store.get_appeal(appeal_id)
        if appeal is None or appeal.server_id != server_id or appeal.platform != self.platform:
            raise Refused(f"Appeal #{appeal_id} does not exist in this server.")
        if appeal.member_id in await self.store.member_ids(self.platform, server_id, actor.id):  # pseudonym too
            raise Refused("You cannot decide an appeal about yourself. Nothing was changed.")
        case = await self.store.get_case(self.platform, server_id, appeal.case_number)
        kind = case.action if case is not None and not uphold and case.action in (ActionKind.TIMEOUT,
                                                                                  ActionKind.BAN) else ActionKind.REVIEW
        if case is not None:
            channel_id = await self.store.case_channel(self.platform, server_id, case.number)
            actor = await self.actor_in_channel(actor, server_id, channel_id)
        authorize(actor, kind)
        if appeal.status != "open":
            raise Refused(f"Appeal #{appeal_id} was already decided ({appeal.status} by <@{appeal.moderator_id}>).")
        # overturning: the ladder steps the case's strike crossed are overturned in the decision's own transaction
        plan = StepPlan() if uphold else await self._plan_steps(actor, server_id, appeal.case_number, appeal.member_id)
        try:
            decided = await self.store.decide_appeal(appeal_id, uphold, actor.id, steps=plan.numbers)
        except AppealError as exc:
            again = await self.store.get_appeal(appeal_id)
            who = f" by <@{again.moderator_id}>" if again is not None and again.moderator_id else ""
            raise Refused(f"Appeal #{appeal_id}: {exc}{who}. Nothing was done.") from None
        note = "" if uphold else await self._overturn_case(actor, server_id, decided.case_number, decided.member_id,
                                                           "overturned on appeal", case, plan)
        outcome = "upheld" if uphold else "overturned"
        told = await self._tell_appeal_outcome(server_id, decided.member_id, decided.case_number,
                                               case.action if case else ActionKind.LOG, outcome)
        card = None
        if decided.review_id is not None:
            card = await self.review_card(decided.review_id, server_id=server_id)
            if card is not None:
                card = replace(card, appeal_id=appeal_id, decision=outcome, decided_by=actor.id, final=True,
                               evidence=Evidence(text=decided.text), case_action=case.action if case else None,
                               notes=(note,) if note else ())
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Appeal #{appeal_id} of case #{decided.case_number}: {outcome}",
            lines=(f"Member: {decided.member_id}", f"Moderator: {actor.id}", *([note] if note else []),
                   *([f"DM to the member: {told}"] if told else [])),
            member_id=decided.member_id, moderator_id=actor.id, case_number=decided.case_number,
            failed="FAILED" in note, kind="appeal"))
        return Result(f"Appeal #{appeal_id}: {outcome}." + (f" {note}" if note else ""), "FAILED" not in note,
                      card=card)
