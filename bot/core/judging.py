"""Judging one message in arrival order: the member facts, the in-order rules, the policy decision and the raid
windows, as one function (:func:`judge`) the moderation service calls for each message of a batch.

Layer: ``bot.core``. No I/O, no clock: time is message time. :func:`judge` and :func:`replay` change only the
:class:`ServerState` they are given (the spam and raid windows, the member history), so the same messages in the
same order give the same judgements. The strike and escalation a decision earns (:func:`bot.core.judge.sanction`,
which reads the strike ledger) and the records written are the service's.

Also here, for the service's worker thread: :func:`content_hits` (the stateless rules on a message and the further
parts of a long one) and :func:`read_limits` (how far the model reads a message: ``"truncated"``,
``"unsupported_language"``), called once the scoring plan is made.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.core.judge import Decision, decide, effective_tiers, raid_tiers_apply
from bot.core.language import message_parts, unsupported
from bot.core.models import Message, RaidAlert, RuleHit, Scores
from bot.core.normalize import Normalized, normalize
from bot.core.pieces import is_truncated, read_chars, visible_chars
from bot.core.policy import Policy
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.raid import RaidDetector
from bot.core.rules.registry import RuleSet
from bot.core.rules.settings import RaidSettings, SpamSettings
from bot.core.rules.spam import SpamTracker

#: Members whose message count is remembered per server (least recently active forgotten first): the history that
#: makes a member established (``rules.raid.established_min_messages``).
HISTORY_MEMBERS = 100_000


@dataclass
class ServerState:
    """What the service remembers of one server between messages: its spam and raid windows (built from the
    settings they were made with) and the members it has seen.

    Attributes:
        history: Member id -> messages (not edits) seen from them in this server, least recently active first
            (at most :data:`HISTORY_MEMBERS`).
        first_event: Time of the first message seen in this server.
    """

    spam: SpamTracker
    raid: RaidDetector
    spam_settings: SpamSettings
    raid_settings: RaidSettings
    seen_authors: set[str] = field(default_factory=set)
    first_event: datetime | None = None
    history: OrderedDict[str, int] = field(default_factory=OrderedDict)

    @classmethod
    def for_policy(cls, policy: Policy) -> ServerState:
        """A fresh state with the policy's spam and raid settings."""
        return cls(spam=SpamTracker(policy.rules.spam), raid=RaidDetector(policy.rules.raid),
                   spam_settings=policy.rules.spam, raid_settings=policy.rules.raid)

    def follow(self, policy: Policy) -> None:
        """Take a changed policy's settings: new spam settings start new spam windows; the raid windows are kept
        under the new raid settings."""
        if self.spam_settings != policy.rules.spam:
            self.spam, self.spam_settings = SpamTracker(policy.rules.spam), policy.rules.spam
        if self.raid_settings != policy.rules.raid:
            self.raid.settings = policy.rules.raid
            self.raid_settings = policy.rules.raid

    def seen(self, m: Message) -> bool:
        """Note the message's author and time; True if it is the author's first message (the adapter's
        ``is_first_message`` when it knows, else the first seen by this state)."""
        if self.first_event is None and m.created_at is not None:
            self.first_event = m.created_at
        first = m.is_first_message if m.is_first_message is not None else m.author.id not in self.seen_authors
        self.seen_authors.add(m.author.id)
        if m.edited_at is None:
            self.history[m.author.id] = self.history.get(m.author.id, 0) + 1
            self.history.move_to_end(m.author.id)
            while len(self.history) > HISTORY_MEMBERS:
                self.history.popitem(last=False)
        return first


def is_new_member(m: Message, policy: Policy, st: ServerState, first: bool) -> bool:
    """New member: joined (or account created) within ``rules.raid.new_member_age_s`` of the message; when neither
    is known, a first message seen after the service has watched the server for that long; never for a message
    without a time (no age can be measured)."""
    age = timedelta(seconds=policy.rules.raid.new_member_age_s)
    if m.created_at is None:
        return False
    if m.author.joined_at is not None:
        return m.created_at - m.author.joined_at <= age
    if m.author.created_at is not None:
        return m.created_at - m.author.created_at <= age
    return first and st.first_event is not None and m.created_at - st.first_event >= age


def is_established(m: Message, policy: Policy, new_member: bool, earlier: int) -> bool:
    """Established member: not a new member (:func:`is_new_member`) and at least
    ``rules.raid.established_min_messages`` earlier messages in the server seen by this service (``earlier``,
    counted before this message; an adapter's ``is_first_message=False`` counts as one)."""
    if m.is_first_message is False:
        earlier = max(earlier, 1)
    return not new_member and earlier >= policy.rules.raid.established_min_messages


def content_hits(rules: RuleSet, m: Message, norm: Normalized, more: Sequence[Normalized], *,
                 extra_terms: Sequence[str] = (), allow_terms: Sequence[str] = (),
                 raid_mode: bool = False) -> list[RuleHit]:
    """The ``CONTENT`` stage on the message (``norm``: its normalised first 4,000 characters), then the ``PART``
    stage on each further part (``more``), a hit already listed (same rule and detail) not listed again.

    Args:
        rules: The server's rules.
        m: The message.
        norm: ``normalize(m.text)``; more: the normalised chunks past it (:func:`bot.core.pieces.chunks`).
        extra_terms, allow_terms: The channel's blocked and allowed terms (overrides).
        raid_mode: Raid mode is on in the channel (as the batch was prepared).
    """
    hits = rules.check(Stage.CONTENT, RuleContext(message=m, norm=norm, extra_terms=extra_terms,
                                                  allow_terms=allow_terms, raid_mode=raid_mode))
    seen = {(h.rule, h.detail) for h in hits}
    for part in more:
        for hit in rules.check(Stage.PART, RuleContext(message=m, norm=part, extra_terms=extra_terms,
                                                       allow_terms=allow_terms)):
            if (hit.rule, hit.detail) not in seen:
                seen.add((hit.rule, hit.detail))
                hits.append(hit)
    return hits


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """How far the model reads a message.

    Attributes:
        score_status: ``"ok"``, ``"truncated"`` (past ``[scoring] max_chars``) or ``"unsupported_language"``.
        language: The unsupported language found (ISO 639-1), else ``None``.
        hits: Signal-only hits saying so: ``long_text`` then ``language``.
    """

    score_status: str = "ok"
    language: str | None = None
    hits: tuple[RuleHit, ...] = ()


def read_limits(text: str, policy: Policy, languages: Sequence[str] | None) -> ReadLimits:
    """How far the model reads ``text``: ``"truncated"`` past ``[scoring] max_chars`` (visible characters:
    zero-width padding does not count), or ``"unsupported_language"`` when the whole text or one of its lines or
    sentences is confidently in a language outside ``languages`` (the languages of the model that scores this
    text; ``None`` or empty: not checked). Each adds a signal-only rule hit (``long_text`` / ``language``) so the
    mod log, scan report and review card show it."""
    status, language, hits = "ok", None, []
    limit = policy.scoring.max_chars
    if is_truncated(text, limit):
        status = "truncated"
        hits.append(RuleHit(
            rule="long_text", detail=f"read {read_chars(text, limit):,} of {visible_chars(text):,} characters"))
    cfg = policy.languages
    if cfg.detect and languages:
        found = unsupported(message_parts(text), languages, min_letters=cfg.min_letters,
                            min_confidence=cfg.min_confidence)
        if found is not None:
            status, language = "unsupported_language", found.language
            hits.append(RuleHit(
                rule="language", detail=f"{found.language} ({found.confidence:.2f}): the model reads "
                + ", ".join(languages)))
    return ReadLimits(status, language, tuple(hits))


@dataclass(frozen=True, slots=True)
class Judgement:
    """The judgement of one message before strikes and escalation.

    Attributes:
        hits: Every rule hit: the content hits given, then the in-order rules' (registry order).
        decision: The policy's decision (:func:`bot.core.judge.decide`).
        new_member: The author counts as a new member (:func:`is_new_member`).
        raid: The raid alert this message completed, if any.
        score_status: ``Verdict.score_status``: ``"scorer_error"``, ``"not_scored"`` or the reading's status.
    """

    hits: tuple[RuleHit, ...]
    decision: Decision
    new_member: bool
    raid: RaidAlert | None
    score_status: str


def judge(
    m: Message,
    policy: Policy,
    rules: RuleSet,
    st: ServerState,
    *,
    exempt: bool = False,
    content_hits: Sequence[RuleHit] = (),
    norm: Normalized | None = None,
    more: Sequence[Normalized] = (),
    scores: Scores | None = None,
    scorer_failed: bool = False,
    score_status: str = "ok",
    stateful: bool = True,
) -> Judgement | None:
    """Judge one message in arrival order.

    Args:
        m: The message.
        policy: The server's effective policy.
        rules: The server's rules, built from ``policy.rules`` (the ``ORDERED`` stage runs here).
        st: The server's state; the member is noted in it, and (``stateful``, not an edit) the message is counted
            in its spam and raid windows.
        exempt: The message is exempt: the member is noted and nothing is judged (returns ``None``).
        content_hits: Hits of the ``CONTENT`` / ``PART`` stages and the reading (from the worker thread).
        norm: ``normalize(m.text)``; more: the normalised parts past its first 4,000 characters.
        scores: The model's scores (``None``: not scored or the scorer failed).
        scorer_failed: The scorer raised on this message's batch.
        score_status: How far the model read it (:func:`read_limits`).
        stateful: False judges the message on its own: no spam or raid windows.

    Returns:
        The :class:`Judgement`, or ``None`` for an exempt message.
    """
    earlier = st.history.get(m.author.id, 0)
    first = st.seen(m)
    if exempt:
        return None
    at = m.event_time
    is_edit = m.edited_at is not None
    raid_on = at is not None and st.raid.raid_mode(m.server.id, m.channel.id, at, parent_id=m.channel.parent_id)
    new_member = is_new_member(m, policy, st, first)
    established = is_established(m, policy, new_member, earlier)
    strict = raid_tiers_apply(policy, raid_on, established)
    tiers = policy.thresholds_for(m.channel)
    ctx = RuleContext(
        message=m, norm=norm if norm is not None else normalize(m.text), raid_mode=strict, policy=policy,
        parts=(norm, *more) if norm is not None else (), scores=scores,
        tiers=effective_tiers(policy, tiers, strict), established=established,
        spam=st.spam if not is_edit and stateful and norm is not None else None, at=at,
    )
    ordered = rules.check(Stage.ORDERED, ctx)
    hits = (*content_hits, *ordered)
    status = "scorer_error" if scorer_failed else (score_status if scores is not None else "not_scored")
    decision = decide(policy, tiers, scores, hits, raid_mode=raid_on, new_member=new_member,
                      scorer_failed=scorer_failed, untargeted=any(h.rule == "identity_target" for h in ordered),
                      established=established, score_status=status)
    raid = None if is_edit or not stateful else st.raid.observe(m, flagged=decision.flagged,
                                                                is_new_member=new_member and first)
    return Judgement(hits=hits, decision=decision, new_member=new_member, raid=raid, score_status=status)


def replay(m: Message, policy: Policy, st: ServerState, *, flagged: bool, exempt: bool = False) -> None:
    """Feed a message judged by an earlier run into the spam and raid windows (as :func:`judge` would have, with its
    recorded ``flagged``); no verdict, alert, case or strike comes of it."""
    earlier = st.history.get(m.author.id, 0)
    first = st.seen(m)  # as judge does, exempt messages included
    if exempt or m.edited_at is not None:
        return
    at = m.event_time
    raid_on = at is not None and st.raid.raid_mode(m.server.id, m.channel.id, at, parent_id=m.channel.parent_id)
    new_member = is_new_member(m, policy, st, first)
    established = is_established(m, policy, new_member, earlier)
    st.spam.observe(m, normalize(m.text), raid_mode=raid_tiers_apply(policy, raid_on, established),
                    established=established)
    st.raid.observe(m, flagged=flagged, is_new_member=new_member and first)
