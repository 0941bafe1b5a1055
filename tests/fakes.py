"""Test doubles that implement the core's ports (never patches of our own functions)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.models import LABELS, Scores


class FakeScorer:
    """A Scorer whose scores come from keyword rules: ``{"keyword": {label: score}}``.

    A text gets, per label, the highest score of the keywords it contains (case-insensitive), else ``base``.
    ``fail_on`` makes ``score_batch`` raise when a text contains it (to test ``on_scorer_error``). ``languages``
    declares the languages it reads (``("en",)`` like the embedded model), or ``None`` for an undeclared scorer.
    ``record_calls`` keeps every batch's texts in :attr:`calls` (for tests that check what was scored); off, as
    in ``bench.scan_memory``, the fake holds nothing per message (recording keeps every scored text: about 260
    bytes per message of that bench, which is what its RSS slope measured).
    """

    name = "fake"
    version = "1"
    labels = LABELS

    def __init__(self, rules: dict[str, dict[str, float]] | None = None, base: float = 0.01,
                 fail_on: str | None = None, languages: tuple[str, ...] | None = None,
                 record_calls: bool = True) -> None:
        self.languages = languages  # None: the scorer does not declare its languages (no language check)
        self.rules = {k.lower(): v for k, v in (rules or {}).items()}
        self.base = base
        self.fail_on = fail_on
        self.record_calls = record_calls
        self.calls: list[list[str]] = []

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        if self.record_calls:
            self.calls.append(list(texts))
        if self.fail_on and any(self.fail_on in t for t in texts):
            raise RuntimeError("fake scorer failure")
        out = []
        for t in texts:
            low = t.lower()
            vals = {label: self.base for label in LABELS}
            for kw, scores in self.rules.items():
                if kw in low:
                    for label, s in scores.items():
                        vals[label] = max(vals[label], s)
            out.append(Scores(values=vals, model=self.name))
        return out


ABUSE = {
    "freak": {"toxicity": 0.95, "identity_attack": 0.97, "insult": 0.9},
    "vermin": {"toxicity": 0.9, "identity_attack": 0.88},
    "idiot": {"toxicity": 0.86, "insult": 0.88},
}


# ---------------------------------------------------------------------------------------------------------------
# The workflow's ports (bot.workflow.ports): a platform that records what it was asked to do.

import asyncio  # noqa: E402
import itertools  # noqa: E402
from dataclasses import dataclass, field, replace  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402

from bot.core.models import Action, ActionKind  # noqa: E402
from bot.core.ports import GONE, ActionResult  # noqa: E402
from bot.workflow.ports import BulkResult, Capability, MemberInfo, MemberNotice  # noqa: E402

ALL_CAPABILITIES = frozenset(Capability)


@dataclass
class Call:
    """One enforcer call: the method name and its arguments."""

    method: str
    args: tuple


class FakeEnforcer:
    """Implements :class:`bot.workflow.ports.Enforcer` in memory.

    ``members``: member id -> :class:`MemberInfo` (absent: not in the server). ``refuse``: method name -> reason
    (that call fails with it). ``dms_closed``: members whose DMs fail. ``refused_in``: channel id -> capabilities
    the platform refuses there (:meth:`channel_refusals`). ``delay_s``: every call waits this long (to overlap
    concurrent decisions).
    """

    def __init__(self, capabilities: frozenset[Capability] = ALL_CAPABILITIES, *, bot_rank: int = 50) -> None:
        self.capabilities = capabilities
        self.members: dict[str, MemberInfo] = {}
        self.bot = MemberInfo("bot", "ModBot", rank=bot_rank, is_bot=True)
        self.calls: list[Call] = []
        self.refuse: dict[str, str] = {}
        self.deleted: set[str] = set()  # message ids deleted (a second delete answers Unknown Message)
        self.dms_closed: set[str] = set()
        self.delay_s = 0.0
        self.slowmode: dict[str, int] = {}
        self.bulk_sizes: list[int] = []
        self.refused_in: dict[str, frozenset[Capability]] = {}  # channel id -> capabilities refused there

    def add(self, member_id: str, *, rank: int = 0, owner: bool = False, name: str = "") -> MemberInfo:
        info = MemberInfo(member_id, name or member_id, rank=rank, is_owner=owner)
        self.members[member_id] = info
        return info

    def called(self, method: str) -> list[tuple]:
        return [c.args for c in self.calls if c.method == method]

    async def _do(self, method: str, *args: object) -> ActionResult:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        self.calls.append(Call(method, args))
        reason = self.refuse.get(method)
        return ActionResult(Action(ActionKind.LOG, method), reason is None, reason or "")

    async def member(self, server_id: str, member_id: str) -> MemberInfo | None:
        return self.members.get(member_id)

    async def bot_member(self, server_id: str) -> MemberInfo | None:
        return self.bot

    async def delete_message(self, server_id: str, channel_id: str, message_id: str) -> ActionResult:
        """As Discord: a message deleted once is gone, and deleting it again fails with Unknown Message (10008),
        marked ``extra[GONE]``."""
        gone = message_id in self.deleted
        res = await self._do("delete_message", channel_id, message_id)
        if gone and res.ok:
            return ActionResult(res.action, False, "Unknown Message (already deleted) (10008)", {GONE: "1"})
        if res.ok:
            self.deleted.add(message_id)
        return res

    async def bulk_delete(self, server_id: str, channel_id: str, message_ids) -> BulkResult:
        self.bulk_sizes.append(len(message_ids))
        res = await self._do("bulk_delete", channel_id, tuple(message_ids))
        if not res.ok:
            return BulkResult(failed={m: res.reason for m in message_ids})
        return BulkResult(deleted=tuple(message_ids))

    async def notify(self, member_id: str, notice: MemberNotice) -> ActionResult:
        if member_id in self.dms_closed:
            self.calls.append(Call("notify_failed", (member_id, notice)))
            return ActionResult(Action(ActionKind.LOG), False, "cannot send messages to this user (50007)")
        return await self._do("notify", member_id, notice)

    async def timeout(self, server_id: str, member_id: str, seconds: int, reason: str) -> ActionResult:
        """As Discord: a member timed out shows it (``timed_out_until``, the new timeout replacing any other)."""
        res = await self._do("timeout", member_id, seconds)
        info = self.members.get(member_id)
        if res.ok and info is not None:
            self.members[member_id] = replace(info, timed_out_until=datetime.now(UTC) + timedelta(seconds=seconds))
        return res

    async def remove_timeout(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        res = await self._do("remove_timeout", member_id)
        info = self.members.get(member_id)
        if res.ok and info is not None:
            self.members[member_id] = replace(info, timed_out_until=None)
        return res

    async def kick(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        res = await self._do("kick", member_id)
        if res.ok:
            self.members.pop(member_id, None)
        return res

    async def ban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        res = await self._do("ban", member_id)
        if res.ok:
            self.members.pop(member_id, None)
        return res

    async def unban(self, server_id: str, member_id: str, reason: str) -> ActionResult:
        return await self._do("unban", member_id)

    async def set_slowmode(self, server_id: str, channel_id: str, seconds: int) -> ActionResult:
        res = await self._do("set_slowmode", channel_id, seconds)
        if res.ok:
            self.slowmode[channel_id] = seconds
        return res

    async def remove_from_channel(self, server_id: str, channel_id: str, member_id: str) -> ActionResult:
        return await self._do("remove_from_channel", channel_id, member_id)

    async def pause_invites(self, server_id: str, until: datetime | None) -> ActionResult:
        return await self._do("pause_invites", until)

    async def notify_in_channel(self, server_id: str, channel_id: str, member_id: str, text: str) -> ActionResult:
        return await self._do("notify_in_channel", channel_id, member_id, text)

    async def channel_refusals(self, server_id: str, channel_id: str) -> frozenset[Capability]:
        """What :attr:`refused_in` names for ``channel_id`` (as Slack's #general refuses removals)."""
        return self.refused_in.get(channel_id, frozenset())


@dataclass
class FakeDesk:
    """Implements :class:`bot.workflow.ports.ModDesk`: records what moderators would see."""

    reachable: bool = True
    log: list = field(default_factory=list)
    reviews: list = field(default_factory=list)
    review_updates: list = field(default_factory=list)
    raids: list = field(default_factory=list)
    raid_updates: list = field(default_factory=list)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1000))

    async def post_mod_log(self, server_id: str, entry) -> bool:
        self.log.append(entry)
        return self.reachable

    async def post_review(self, card) -> str | None:
        if not self.reachable:
            return None
        self.reviews.append(card)
        return str(next(self._ids))

    async def update_review(self, card, card_message_id: str) -> bool:
        self.review_updates.append((card_message_id, card))
        return self.reachable

    async def post_raid(self, card) -> str | None:
        self.raids.append(card)
        return str(next(self._ids)) if self.reachable else None

    async def update_raid(self, card, card_message_id: str) -> bool:
        self.raid_updates.append((card_message_id, card))
        return self.reachable
