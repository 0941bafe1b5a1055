"""Turning scores and rule hits into a decision under a server's policy.

Layer: ``bot.core``. Pure functions: no I/O, no clock (times come from the message).

Decision rules (see ``bot/config/default.toml``):
- a label at or above its ``review`` tier flags the message and sends it to review;
- a label at or above its ``act`` tier asks for its ``label_actions`` action;
- an automod rule hit asks for the rule's configured action (``None`` = signal only, recorded but no action);
- a message that names no identity (``untargeted``, :mod:`bot.core.identity_terms`) is judged on
  ``identity_attack`` against the policy's ``identity_target.untargeted`` tiers instead of the label's own;
- in raid mode thresholds are multiplied by ``rules.raid.threshold_factor`` for members who are not established
  (``rules.raid.established_min_messages``; ``strict_for_established`` extends it to everyone) and messages from new
  members go to review;
- a rule hit that supports a label (the slur list's ``identity_attack``) and the model's score of that label at or
  above its review tier agree: with ``agreement.act`` they ask for the label's action;
- a message the model did not fully read (``score_status`` ``"unsupported_language"`` or ``"truncated"``) may go
  to review by ``languages.unsupported`` / ``scoring.on_truncated``;
- the strongest action wins (``ActionKind`` order); a sanction of ``delete`` or stronger also removes the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.core.escalation import StrikeLedger
from bot.core.models import LABELS, MAX_TIMEOUT_S, Action, ActionKind, Message, RuleHit, Scores, Strike, hit_reason
from bot.core.policy import Policy, Tier


@dataclass(frozen=True, slots=True)
class Decision:
    """The policy's answer for one message before strikes and escalation.

    Attributes:
        labels: Labels at or above their review tier.
        flagged: True when anything asks for review or stronger.
        actions: Actions asked for, deduplicated per kind, strongest first.
        strongest: The strongest action kind (``NONE`` when clean).
        tiers: The tiers applied per label, ``(review, act)`` after the untargeted tier and raid mode.
        raid_tiers: Raid mode's stricter tiers were applied (raid mode on and the author not exempt from them).
    """

    labels: tuple[str, ...]
    flagged: bool
    actions: tuple[Action, ...]
    strongest: ActionKind
    tiers: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    raid_tiers: bool = False


def raid_tiers_apply(policy: Policy, raid_mode: bool, established: bool) -> bool:
    """Whether raid mode's stricter tiers and count limits apply to a member: raid mode is on and the member is not
    established, or ``rules.raid.strict_for_established`` is set."""
    return raid_mode and (not established or policy.rules.raid.strict_for_established)


def effective_tiers(policy: Policy, tiers: dict[str, Tier], raid_mode: bool) -> dict[str, Tier]:
    """Apply raid mode's stricter thresholds (multiplied by ``rules.raid.threshold_factor``)."""
    if not raid_mode:
        return tiers
    f = policy.rules.raid.threshold_factor
    return {
        label: Tier(
            review=None if t.review is None else round(t.review * f, 4),
            act=None if t.act is None else round(t.act * f, 4),
        )
        for label, t in tiers.items()
    }


def decide(
    policy: Policy,
    tiers: dict[str, Tier],
    scores: Scores | None,
    hits: Sequence[RuleHit],
    *,
    raid_mode: bool = False,
    new_member: bool = False,
    scorer_failed: bool = False,
    untargeted: bool = False,
    established: bool = False,
    score_status: str = "ok",
) -> Decision:
    """Decide what the policy asks for one message.

    Args:
        policy: The server's effective policy.
        tiers: Thresholds for the message's channel (``Policy.thresholds_for``), before raid mode.
        scores: Model scores, or ``None`` when the message was not scored.
        hits: Automod rule hits.
        raid_mode: Raid mode is on in this channel.
        new_member: The author is a new member (by the raid settings' ``new_member_age_s`` or first message).
        scorer_failed: The model failed on this message (``on_scorer_error`` decides).
        untargeted: The message names no identity; with ``identity_target.required`` its ``identity_attack`` is
            judged against ``identity_target.untargeted`` (raid mode still applies).
        established: The author is an established member (``rules.raid.established_min_messages``): raid mode's
            stricter tiers skip them unless ``rules.raid.strict_for_established``.
        score_status: How far the model read the message (:attr:`bot.core.models.Verdict.score_status`);
            ``"unsupported_language"`` and ``"truncated"`` may add a review (``languages.unsupported``,
            ``scoring.on_truncated``).
    """
    if untargeted and policy.identity_target.required:
        tiers = {**tiers, "identity_attack": policy.identity_target.untargeted}
    raid_tiers = raid_tiers_apply(policy, raid_mode, established)
    tiers = effective_tiers(policy, tiers, raid_tiers)
    labels: list[str] = []
    asked: list[Action] = []
    if scores is not None:
        for label in LABELS:
            score = scores.get(label)
            tier = tiers.get(label)
            if score is None or tier is None:
                continue
            if tier.review is not None and score >= tier.review:
                labels.append(label)
            if tier.act is not None and score >= tier.act and label in policy.label_actions:
                spec = policy.label_actions[label]
                asked.append(
                    Action(
                        kind=spec.kind,
                        duration_s=spec.duration_s,
                        source=label,
                        reason=f"{label} {score:.2f} >= {tier.act:.2f}",
                    )
                )
    if labels:
        worst = max(labels, key=lambda lb: scores.get(lb) or 0.0) if scores else labels[0]
        asked.append(Action(kind=ActionKind.REVIEW, source=worst, reason=f"{', '.join(labels)} above review threshold"))
    for hit in hits:
        if hit.action:
            kind = ActionKind.parse(hit.action)
            asked.append(Action(kind=kind, source=hit.rule, reason=hit_reason(hit.rule, hit.detail)))
    if policy.agreement.act and scores is not None:
        asked += _agreements(policy, tiers, scores, hits)
    asked += _status_review(policy, score_status, scores, hits)
    if raid_mode and new_member and policy.rules.raid.review_new_members:
        asked.append(Action(kind=ActionKind.REVIEW, source="raid", reason="raid mode: message from a new member"))
    if scorer_failed and policy.on_scorer_error == "review":
        asked.append(Action(kind=ActionKind.REVIEW, source="scorer_error", reason="the model failed on this message"))
    actions = union(asked)
    strongest = actions[0].kind if actions else ActionKind.NONE
    applied = {label: (t.review, t.act) for label, t in tiers.items()}
    return Decision(tuple(labels), strongest >= ActionKind.REVIEW, actions, strongest, applied, raid_tiers)


#: Rule hits that record how a message was read rather than what it says (see :func:`_status_review`).
STATUS_RULES = frozenset({"language", "long_text"})


def _agreements(policy: Policy, tiers: dict[str, Tier], scores: Scores, hits: Sequence[RuleHit]) -> list[Action]:
    """The label actions asked for because a labelled rule hit and the model's score agree (``agreement.act``)."""
    out: list[Action] = []
    done: set[str] = set()
    for hit in hits:
        label = hit.label
        if label is None or label in done or label not in policy.label_actions:
            continue
        score, tier = scores.get(label), tiers.get(label)
        if score is None or tier is None or tier.review is None or score < tier.review:
            continue
        done.add(label)
        spec = policy.label_actions[label]
        out.append(
            Action(
                kind=spec.kind,
                duration_s=spec.duration_s,
                source=label,
                reason=f"{hit.rule} ({hit.detail}) and the model's {label} {score:.2f} >= {tier.review:.2f} agree",
            )
        )
    return out


def _status_review(policy: Policy, status: str, scores: Scores | None, hits: Sequence[RuleHit]) -> list[Action]:
    """A review asked for a message the model did not fully read, as ``languages`` / ``scoring`` say."""
    if status == "truncated" and policy.scoring.on_truncated == "review":
        return [Action(kind=ActionKind.REVIEW, source="long_text",
                       reason=f"the model read only the first {policy.scoring.max_chars} characters")]
    if status != "unsupported_language":
        return []
    cfg = policy.languages
    if cfg.unsupported == "allow":
        return []
    if cfg.unsupported == "review":
        return [Action(kind=ActionKind.REVIEW, source="language",
                       reason="written in a language the model does not read")]
    signals = [h.rule for h in hits if h.rule not in STATUS_RULES]
    top = max(scores.values.values(), default=0.0) if scores is not None else 0.0
    if signals or top >= cfg.suspect_score:
        why = f"rule {signals[0]}" if signals else f"a score of {top:.2f}"
        return [Action(kind=ActionKind.REVIEW, source="language",
                       reason=f"written in a language the model does not read, with {why}")]
    return []


def union(actions: Sequence[Action]) -> tuple[Action, ...]:
    """Merge actions so each kind runs once (python-discord's ``merge_actions``), strongest first.

    Of several member sanctions (warn, timeout, kick, ban) only the strongest is kept; of several timeouts the
    longest (capped at 28 days). ``delete`` is added when any sanction is present, so the message is removed.
    """
    by_kind: dict[ActionKind, Action] = {}
    for a in actions:
        if a.kind == ActionKind.TIMEOUT:
            dur = min(a.duration_s or 3600, MAX_TIMEOUT_S)
            a = Action(kind=a.kind, reason=a.reason, duration_s=dur, source=a.source, delete_message=a.delete_message)
            prev = by_kind.get(a.kind)
            if prev is not None and (prev.duration_s or 0) >= dur:
                continue
        elif a.kind in by_kind:
            continue
        by_kind[a.kind] = a
    sanctions = [k for k in (ActionKind.BAN, ActionKind.KICK, ActionKind.TIMEOUT, ActionKind.WARN) if k in by_kind]
    for weaker in sanctions[1:]:
        del by_kind[weaker]
    if sanctions and ActionKind.DELETE not in by_kind:
        top = by_kind[sanctions[0]]
        by_kind[ActionKind.DELETE] = Action(kind=ActionKind.DELETE, source=top.source, reason=top.reason)
    by_kind.pop(ActionKind.NONE, None)
    if any(k > ActionKind.REVIEW for k in by_kind):
        by_kind.pop(ActionKind.LOG, None)
    return tuple(sorted(by_kind.values(), key=lambda a: a.kind, reverse=True))


@dataclass(frozen=True, slots=True)
class Sanction:
    """What an automatic verdict does to its author, after :func:`decide`.

    Attributes:
        actions: The decision's actions with a crossed ladder step merged in (strongest first).
        strongest: The strongest of them.
        strike: The strike to record (``None``: no sanction, shadow mode, strikes off, or the message already has
            one, an edit judged again).
        points: Its points (0 for none).
        open_case: A case is opened (anything flagged).
        open_review: A review item is opened (review asked for, or an automatic action while
            ``server.review_auto_actions``).
    """

    actions: tuple[Action, ...]
    strongest: ActionKind
    strike: Strike | None
    points: int
    open_case: bool
    open_review: bool


async def sanction(policy: Policy, decision: Decision, ledger: StrikeLedger, message: Message, *,
                   stateful: bool = True) -> Sanction:
    """The strike an automatic sanction earns and the escalation it triggers (Red's warnings idea, as data).

    A verdict of ``delete`` or stronger earns ``policy.strikes.points[action]`` points (by default
    :data:`bot.core.policy.DEFAULT_STRIKE_POINTS`: delete 1, warn 1, timeout 2, kick 3, ban 5) unless the policy is in shadow mode, the judging is stateless (``score``),
    or the message already has a strike, or has no time (a strike expires by time); a ladder step crossed by it is
    merged into the actions (the strongest wins,
    :func:`union`). Moderators' strikes are the workflow's (``bot.workflow``), through the same ledger.
    """
    actions, strongest = decision.actions, decision.strongest
    strike: Strike | None = None
    at = message.event_time
    if strongest >= ActionKind.DELETE and not policy.shadow_mode and stateful and at is not None:
        m = message
        sd = await ledger.add(policy, platform=m.server.platform, server_id=m.server.id, member_id=m.author.id,
                              message_id=m.id, action=strongest, at=at, reason=actions[0].reason)
        strike = sd.strike
        if sd.escalation:
            actions = union([*actions, *sd.escalation])
            strongest = actions[0].kind
    open_review = ActionKind.REVIEW in {a.kind for a in actions} or (
        strongest >= ActionKind.DELETE and policy.server.review_auto_actions)
    return Sanction(actions=actions, strongest=strongest, strike=strike, points=strike.points if strike else 0,
                    open_case=decision.flagged, open_review=open_review and decision.flagged)
