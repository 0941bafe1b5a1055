"""Members' display names and nicknames: judged on join and on every change, with the server's content rules and
policy (issue 25 item 16). Platform-neutral; the Discord cog (``cogs/names.py``) and the Slack handlers
(``bot/adapters/slack/names.py``) only translate member events into :meth:`NameWatch.name_seen`.

How a name is judged:

* The content rules (blocklists and slur lists, regex, links and invites) match the **bare normalised name**: a
  leet slur such as "n1gger" is matched there, where the model, reading it in a sentence, drops it to 0.03.
* The model reads the name in the neutral sentence ``[names] frame`` (default ``"My name is {name}."``): bare
  single names score very high ("Mohammed" toxicity 0.92 / identity_attack 0.94, "Tyrone" 0.72) while ten ordinary
  names score ~0.02 in the frame and hostile phrases stay high ("gas the jews" 0.90 / 0.86); figures from
  ``python -m bench.name_scores`` with the embedded model. A label at or above its ``[thresholds]`` review tier
  flags the name.
* A flagged name opens a ``review`` case and a review item (source ``automod``, no message) whose card shows the
  name and why; with ``[names] action = "none"`` only a mod-log note is posted. A name is never sanctioned
  automatically.
* The last judged name per member is remembered (in memory; the case in the mod log records it too), so an
  unchanged name is not judged twice. Name events are not messages: they never enter the spam or raid windows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from bot.core.models import ActionKind, CaseStatus, ChannelRef, MemberRef, Message, RuleHit, Scores, ServerRef, Verdict
from bot.core.normalize import normalize
from bot.core.policy import Policy
from bot.core.rules import ContentRules
from bot.core.store_port import ModStore
from bot.workflow.authz import Said, Sentence
from bot.workflow.common import PolicySource
from bot.workflow.ports import ModDesk, RaidControl
from bot.workflow.views import Evidence, LogEntry, ReviewCard

log = logging.getLogger(__name__)


class NamesHost(Protocol):
    """What :class:`NameWatch` uses of :class:`~bot.workflow.workflow.ModerationWorkflow` (which owns it)."""

    @property
    def platform(self) -> str: ...
    @property
    def store(self) -> ModStore: ...
    @property
    def desk(self) -> ModDesk: ...
    @property
    def policies(self) -> PolicySource: ...
    @property
    def raid_control(self) -> RaidControl | None: ...
    @property
    def clock(self) -> Callable[[], datetime]: ...

    async def review_card(self, review_id: int, *, verdict: Verdict | None = None, notes: tuple[str, ...] = (),
                          server_id: str | None = None) -> ReviewCard | None: ...

    async def _show_card(self, card: ReviewCard, *, updated: bool = False) -> bool: ...

#: Longest name judged, in characters (Discord nicknames are at most 32, Slack display names 80).
MAX_NAME_CHARS = 200
#: Members whose last judged name is remembered per workflow (oldest forgotten first).
REMEMBER = 100_000


def framed(name: str, policy: Policy) -> str:
    """The sentence the model reads a name in: ``[names] frame`` with ``{name}`` replaced by the name."""
    return policy.names.frame.replace("{name}", name)


def name_rule_hits(name: str, rules: ContentRules) -> list[RuleHit]:
    """The content rules on a bare name: blocklists, regex, links and invites match ``normalize(name)`` (the
    name itself, never the frame). Mention and emoji rules cannot fire (a name mentions nobody)."""
    stub = Message(server=ServerRef(platform="names", id=""), channel=ChannelRef(id=""), author=MemberRef(id=""),
                   id="", text=name, created_at=None)  # a name has no posting time
    return [h for h in rules.evaluate(stub, normalize(name)) if h.rule in ("blocklist", "regex", "invite", "link")]


def flagged_labels(scores: Scores | None, policy: Policy) -> list[str]:
    """``"label score >= review"`` for each label at or above its ``[thresholds]`` review tier (scores in [0, 1])."""
    if scores is None:
        return []
    out = []
    for label, tier in policy.thresholds.items():
        value = scores.get(label)
        if tier.review is not None and value is not None and value >= tier.review:
            out.append(f"{label} {value:.2f} >= {tier.review:.2f}")
    return out


@dataclass(frozen=True, slots=True)
class NameVerdict:
    """What was decided about one name.

    Attributes:
        name: The name judged (cut to :data:`MAX_NAME_CHARS`).
        kind: ``"nickname"``, ``"display name"``, ...: what the platform calls it (for the card).
        hits: ``"rule: detail"`` of every content rule that matched the bare name.
        labels: Model labels at or above their review tier, with the score (the model read the framed name).
        scores: The model's scores of the framed name (``None``: no scorer or it failed).
        case_number, review_id: The case and review item opened (``None``: not flagged, or ``action = "none"``).
    """

    name: str
    kind: str
    hits: tuple[str, ...]
    labels: tuple[str, ...]
    scores: Scores | None
    case_number: int | None = None
    review_id: int | None = None

    @property
    def flagged(self) -> bool:
        """A rule matched or a label reached its review tier."""
        return bool(self.hits or self.labels)

    @property
    def reason(self) -> str:
        """One line for the case and card: the name and why it was flagged."""
        why = "; ".join([*self.hits, *self.labels])
        return f"{self.kind} {self.name!r}: {why}"

    @property
    def reason_line(self) -> Sentence:
        """:attr:`reason` as a mod-log line: all of it a member's words (the name, and rule details quoting it),
        so each platform shows it as text (Slack escapes it, Discord escapes its markdown)."""
        return Sentence(Said(self.reason))


class NameWatch:
    """Judges members' names for one :class:`~bot.workflow.workflow.ModerationWorkflow` (``workflow.names``).

    The scorer is the judging pipeline's (``workflow.raid_control.score_aside``); without one, only the content
    rules judge names.
    """

    def __init__(self, workflow: NamesHost) -> None:
        self.wf = workflow
        self._last: dict[tuple[str, str], str] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._rules: dict[str, ContentRules] = {}

    def last_judged(self, server_id: str, member_id: str) -> str | None:
        """The member's last judged name here, or ``None``."""
        return self._last.get((server_id, member_id))

    async def name_seen(self, server_id: str, member_id: str, name: str | None, *, kind: str = "name",
                        is_bot: bool = False) -> NameVerdict | None:
        """A member joined or changed their name: judge ``name`` unless it was the last one judged.

        Args:
            server_id: Guild id / Slack team id.
            member_id: The member.
            name: The display name or nickname now shown (``None`` / blank: nothing to judge).
            kind: What the platform calls it, shown on the card (``"nickname"``, ``"display name"``).
            is_bot: Bots are not judged.

        Returns:
            The :class:`NameVerdict`, or ``None`` when nothing was judged (names off, a bot, blank, unchanged).
        """
        name = (name or "").strip()[:MAX_NAME_CHARS]
        if not name or is_bot:
            return None
        key = (server_id, member_id)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:  # a join and an update racing for one member judge the name once
            try:
                if self._last.get(key) == name or (key not in self._last
                                                   and await self._flagged_last(server_id, member_id, name, kind)):
                    self._last[key] = name
                    return None
                policy = await self.wf.policies.get(self.wf.platform, server_id)
                if not policy.names.enabled:
                    return None
                verdict = await self._judge(policy, name, kind)
                if verdict.flagged:
                    verdict = await self._flag(policy, server_id, member_id, verdict)
                self._last[key] = name
                while len(self._last) > REMEMBER:
                    self._last.pop(next(iter(self._last)))
                return verdict
            finally:
                if not lock._waiters:  # noqa: SLF001 - drop the lock once nobody waits for it
                    self._locks.pop(key, None)

    async def _flagged_last(self, server_id: str, member_id: str, name: str, kind: str) -> bool:
        """Whether the member's newest name case here (within their last 25 cases) flagged this very ``name``: what
        a restart forgot of :meth:`name_seen`'s memory (Slack sends ``user_change`` for every profile edit, a
        status too), so the same name does not open a second case and card. A name changed back to a flagged one
        while the bot was stopped is not judged again."""
        prefix = f"{kind} "
        for case in await self.wf.store.list_cases(self.wf.platform, server_id, member_id, limit=25):
            if case.action is ActionKind.REVIEW and case.reason.startswith((prefix + "'", prefix + '"')):
                return case.reason.startswith(f"{kind} {name!r}: ")
        return False

    async def _judge(self, policy: Policy, name: str, kind: str) -> NameVerdict:
        rules = self._rules.get(policy.version)
        if rules is None:
            rules = self._rules[policy.version] = ContentRules(policy.rules)
        hits = name_rule_hits(name, rules)
        scores: Scores | None = None
        service = self.wf.raid_control
        if service is not None and hasattr(service, "score_aside"):
            try:
                scores = await service.score_aside(framed(name, policy))
            except Exception:  # noqa: BLE001 - the rules still judge the name
                log.exception("scoring a member name failed")
        return NameVerdict(name=name, kind=kind, hits=tuple(f"{h.rule}: {h.detail}" if h.detail else h.rule
                                                            for h in hits),
                           labels=tuple(flagged_labels(scores, policy)), scores=scores)

    async def _flag(self, policy: Policy, server_id: str, member_id: str, verdict: NameVerdict) -> NameVerdict:
        wf = self.wf
        scores: dict[str, float | None] = verdict.scores.as_dict() if verdict.scores else {}
        if policy.names.action == "none" or policy.shadow_mode:
            await wf.desk.post_mod_log(server_id, LogEntry(
                title="Flagged name", lines=(verdict.reason_line,), member_id=member_id, kind="review"))
            return verdict
        case = await wf.store.open_case(wf.platform, server_id, member_id, ActionKind.REVIEW,
                                        verdict.reason[:1000], status=CaseStatus.APPLIED, now=wf.clock())
        item = await wf.store.open_review(wf.platform, server_id, member_id, "automod", verdict.reason[:1000],
                                          case_number=case.number, scores=scores, now=wf.clock())
        card = await wf.review_card(item.id)
        if card is not None:
            card = replace(card, evidence=Evidence(text=verdict.name, scores=scores, rules=verdict.hits
                                                   + verdict.labels))
            await wf._show_card(card)  # noqa: SLF001 - the one review card path, shared with the workflow
        await wf.desk.post_mod_log(server_id, LogEntry(
            title="Flagged name", lines=(verdict.reason_line,), member_id=member_id, case_number=case.number,
            kind="review"))
        return replace(verdict, case_number=case.number, review_id=item.id)
