"""The raid response: one raid card, deletes in bulk, slowmode where the raid is, raid mode that survives a restart,
join bursts, and bulk actions on the raiders.

Layer: ``bot.workflow`` (platform-neutral). A mixin of :class:`bot.workflow.workflow.ModerationWorkflow`.

What a 50-account raid produces (instead of 50 single deletes, 50 cards and 51 mod-log posts): one raid card in
the review channel, kept up to date (members, messages, deletes), whose buttons act on every raider at once; the
raid's automatic deletes go out in bulk (:data:`FLUSH_S` seconds or 100 messages per request, Discord's limit);
one mod-log entry when raid mode starts and one when it ends. Slowmode is set on the thread itself when the raid is
in a thread, and lifted when raid mode ends, also across a restart (raid mode and its end time are in the store).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.core.models import ActionKind, CaseStatus, Message, RaidAlert
from bot.core.policy import Policy
from bot.core.records import RaidModeRow
from bot.core.rules.raid import place_of
from bot.workflow.authz import Actor, ChannelPermissions, Permission, Refused, Said, Sentence, authorize
from bot.workflow.common import WorkflowParts
from bot.workflow.confirm import Confirmation, check_reason, raid_asks_first, raid_confirmation
from bot.workflow.ports import Capability, MemberLookupError
from bot.workflow.sanction_kinds import REGISTRY, SanctionKind, there
from bot.workflow.views import LogEntry, RaidCard

log = logging.getLogger(__name__)


def _raid_kind(action: str) -> SanctionKind | None:
    """The registry entry of raid card bulk action ``action`` (``None``: not a bulk sanction)."""
    entry = REGISTRY.get(action)
    return entry if entry is not None and entry.raid_label else None

#: Seconds a raid's automatic deletes wait to be sent together (one bulk request per channel).
FLUSH_S = 1.0
#: Discord's bulk-delete limit per request.
BULK_MAX = 100
#: Seconds between two edits of a raid card (its counts change with every raider's message).
CARD_REFRESH_S = 1.5
#: Slowmode (seconds between a member's messages) set where a raid happens, when raid mode switches on.
RAID_SLOWMODE_S = 30
#: How long "pause invites" lasts (Discord's incident actions allow at most 24 hours).
PAUSE_INVITES_S = 24 * 3600
#: Seconds a process that claimed the end of raid mode holds it (lifting the slowmode, deleting the saved rows):
#: another process owning the server ends it only once the hold is over (the first stopped mid-end).
RAID_END_HOLD_S = 120


@dataclass
class RaidBoard:
    """A raid in progress, in memory (its durable parts are in the store: ``raids`` and ``raid_modes``)."""

    raid_id: int
    server_id: str
    place: str
    channel_id: str
    reason: str
    started_at: datetime
    until: datetime | None
    members: list[str] = field(default_factory=list)
    messages: int = 0
    deleted: int = 0
    held: int = 0
    slowmode_s: int = 0
    invites_paused: bool = False
    notes: list[str] = field(default_factory=list)
    card_id: str | None = None
    closed: bool = False
    #: Every channel raid mode was switched on in (a join raid that spreads reaches several): channel id ->
    #: ``(place, slowmode seconds set there)``; ended together.
    channels: dict[str, tuple[str, int]] = field(default_factory=dict)
    pending: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)
    flush_task: asyncio.Task[None] | None = None
    refresh_task: asyncio.Task[None] | None = None
    end_task: asyncio.Task[None] | None = None
    #: Set to send the queued deletes now instead of at the end of their :data:`FLUSH_S` wait (drain, shutdown).
    flush_now: asyncio.Event = field(default_factory=asyncio.Event)

    def queue_delete(self, channel_id: str, message_id: str, case_number: int | None) -> None:
        """Queue an automatic delete to go out in the next bulk request."""
        self.pending.setdefault(channel_id, []).append((message_id, case_number))

    def note_message(self, member_id: str, *, held_for_review: bool) -> None:
        """Count a flagged message of the raid (its author joins the raiders)."""
        self.messages += 1
        self.held += int(held_for_review)
        if member_id not in self.members:
            self.members.append(member_id)


class RaidResponse(WorkflowParts):
    """Mixin: raid boards, bulk deletes, raid cards, raid mode persistence and join bursts (the ports and the
    steps of the other parts it uses are declared in :class:`~bot.workflow.common.WorkflowParts`)."""

    def __init__(self) -> None:
        self._boards: dict[tuple[str, str], RaidBoard] = {}
        #: Drains running: while above 0, a raid's queued deletes are sent without waiting out :data:`FLUSH_S`.
        self._flush_at_once = 0
        self._raid_locks: dict[int, asyncio.Lock] = {}
        self._raid_acted: dict[tuple[int, ActionKind], set[str]] = {}
        self._joins: dict[str, deque[tuple[datetime, str]]] = {}
        self._join_quiet: dict[str, datetime] = {}
        self._join_locks: dict[str, asyncio.Lock] = {}
        #: Tries again at ending raid modes whose end another process held (:meth:`_end_after_hold`).
        self._raid_end_checks: set[asyncio.Task[None]] = set()

    def raid_tasks(self) -> list[asyncio.Task[None]]:
        """Timers of open raids (cancelled at shutdown)."""
        return [*(t for b in self._boards.values() for t in (b.refresh_task, b.end_task) if t is not None),
                *self._raid_end_checks]

    def raid_board(self, server_id: str, raid_id: int) -> RaidBoard | None:
        """The in-memory board of raid ``raid_id`` of this server (open or closed), if this process holds it."""
        return next((b for (sid, _), b in self._boards.items() if sid == server_id and b.raid_id == raid_id), None)

    def board_for(self, msg: Message) -> RaidBoard | None:
        """The open raid where ``msg`` was posted (a thread counts toward its parent), if any."""
        board = self._boards.get((msg.server.id, place_of(msg)))
        if board is None or board.closed:
            return None
        at = msg.event_time
        if board.until is not None and at is not None and at > board.until:
            return None
        return board

    # ------------------------------------------------------------------ start
    async def raid_started(self, alert: RaidAlert, raid_id: int, msg: Message | None) -> RaidBoard:
        """One raid card, one mod-log entry, slowmode where the raid is (the thread itself for a thread) and raid
        mode saved with its end time."""
        policy = await self.policies.get(self.platform, alert.server_id)
        settings = policy.rules.raid
        now = self.clock()
        where = msg.channel.id if msg is not None else alert.channel_id
        # a channel a moderator put in raid mode by hand keeps it until switched off: this raid's does not end it
        held = bool(settings.raid_mode and where and await self._held_by_hand(alert.server_id, where))
        until = now + timedelta(seconds=settings.raid_mode_duration_s) if settings.raid_mode and not held else None
        board = RaidBoard(raid_id=raid_id, server_id=alert.server_id, place=alert.channel_id, channel_id=where,
                          reason=alert.reason, started_at=alert.started_at, until=until, members=list(alert.members),
                          messages=alert.count)
        self._boards[(alert.server_id, alert.channel_id)] = board
        if settings.raid_mode and where:
            thread = msg is not None and msg.channel.is_thread
            cap = Capability.THREAD_SLOWMODE if thread else Capability.SLOWMODE
            able = self.can(cap)
            # recorded before the platform is asked: a stop (or a failed write) between the two left the channel
            # slowed with no raid mode on record, and no start lifted it (lifting a slowmode never set is harmless)
            await self.store.save_raid_mode(self.platform, alert.server_id, where, until,
                                            RAID_SLOWMODE_S if able else 0, raid_id)
            if able:
                res = await self.enforcer.set_slowmode(alert.server_id, where, RAID_SLOWMODE_S)
                if res.ok:
                    board.slowmode_s = RAID_SLOWMODE_S
                else:
                    board.notes.append(f"slowmode FAILED: {res.reason}")
                    await self.store.save_raid_mode(self.platform, alert.server_id, where, until, 0, raid_id)
            else:
                board.notes.append("slowmode: not available on this platform")
            board.channels[where] = (alert.channel_id, board.slowmode_s)
            if until is not None:
                board.end_task = asyncio.ensure_future(self._end_when_due(board))
        await self.timeout_raiders(board, list(alert.members), new_only=True)
        card = await self.raid_view(board)
        board.card_id = await self.desk.post_raid(card)
        if board.card_id:
            await self.store.set_raid_state(self.platform, alert.server_id, raid_id, card_message_id=board.card_id,
                                            thread_id=where)
        await self.desk.post_mod_log(alert.server_id, LogEntry(
            title="Raid alert" + (": raid mode on" if settings.raid_mode else ""),
            lines=(f"{alert.count} messages from {len(alert.members)} member(s) in {where} "
                   f"({alert.reason.replace('_', ' ')})", *board.notes), kind="raid"))
        return board

    def open_join_raid(self, server_id: str, policy: Policy) -> RaidBoard | None:
        """An open join-burst raid of this server, started less than ``rules.raid.cooldown_s`` ago, if any."""
        now = self.clock()
        for (sid, _), board in self._boards.items():
            if sid == server_id and board.reason == "join_burst" and not board.closed and \
                    (now - board.started_at).total_seconds() <= max(policy.rules.raid.cooldown_s, 60):
                return board
        return None

    async def raid_spread(self, board: RaidBoard, alert: RaidAlert, raid_id: int, msg: Message | None) -> None:
        """A burst of flagged messages from a server already under a join raid: the same raid. Its channel gets raid
        mode (slowmode, saved), its members join the raid card; no second card or alert. The burst's own ``raids``
        row is closed as part of the join raid."""
        policy = await self.policies.get(self.platform, alert.server_id)
        settings = policy.rules.raid
        where = msg.channel.id if msg is not None else alert.channel_id
        board.place, board.channel_id = alert.channel_id, where
        self._boards[(alert.server_id, alert.channel_id)] = board
        for m in alert.members:
            if m not in board.members:
                board.members.append(m)
        board.messages += alert.count
        board.notes.append(f"flagged messages from the raiders in {where}")
        if settings.raid_mode:
            # held already (it reached a channel in raid mode by hand, or /raidmode on was run during it: no end,
            # its channels saved without one), or held by this channel: either way it lasts until switched off
            held = (board.until is None and bool(board.channels)) or (
                bool(where) and await self._held_by_hand(alert.server_id, where))
            board.until = None if held else self.clock() + timedelta(seconds=settings.raid_mode_duration_s)
            thread = msg is not None and msg.channel.is_thread
            cap = Capability.THREAD_SLOWMODE if thread else Capability.SLOWMODE
            if where not in board.channels:  # each channel the raid reaches is slowed (and recorded) once
                slowed = 0
                if self.can(cap):  # recorded before the platform is asked, as in raid_started
                    await self.store.save_raid_mode(self.platform, alert.server_id, where, board.until,
                                                    RAID_SLOWMODE_S, board.raid_id)
                    res = await self.enforcer.set_slowmode(alert.server_id, where, RAID_SLOWMODE_S)
                    slowed = RAID_SLOWMODE_S if res.ok else 0
                    if not res.ok:
                        board.notes.append(f"slowmode FAILED in {where}: {res.reason}")
                board.channels[where] = (alert.channel_id, slowed)
                board.slowmode_s = max(board.slowmode_s, slowed)
            await self.store.save_raid_mode(self.platform, alert.server_id, where, board.until,
                                            board.channels[where][1], board.raid_id)
            if held:  # it reached a channel in raid mode by hand: the raid lasts until switched off
                await self._hold_board(board, alert.server_id)
            elif board.end_task is None:
                board.end_task = asyncio.ensure_future(self._end_when_due(board))
        await self.store.set_raid_state(self.platform, alert.server_id, raid_id, closed=True)
        await self.store.set_raid_state(self.platform, alert.server_id, board.raid_id, members=board.members,
                                        thread_id=where)
        await self.timeout_raiders(board, list(alert.members), new_only=True)
        self.refresh_raid_card(board)

    async def raid_view(self, board: RaidBoard) -> RaidCard:
        """The card of a raid, with the bulk actions this platform supports in the raid's channel."""
        offered = [k.key for k in REGISTRY.raid_kinds()
                   if await self.capable(k, board.server_id, board.channel_id or None)]
        if self.can(Capability.PAUSE_INVITES):
            offered.append("pause_invites")
        return RaidCard(raid_id=board.raid_id, server_id=board.server_id, channel_id=board.channel_id,
                        reason=board.reason, started_at=board.started_at, members=tuple(board.members),
                        messages=board.messages, deleted=board.deleted, raid_mode_until=board.until,
                        slowmode_s=board.slowmode_s, invites_paused=board.invites_paused, notes=tuple(board.notes),
                        actions_offered=(*offered, "end"), closed=board.closed)

    def refresh_raid_card(self, board: RaidBoard) -> None:
        """Edit the raid card soon (at most every :data:`CARD_REFRESH_S` seconds)."""
        if board.flush_task is None and board.pending:
            board.flush_task = self.track(self._flush_later(board))
        if board.refresh_task is None or board.refresh_task.done():
            board.refresh_task = asyncio.ensure_future(self._refresh_later(board))

    async def _refresh_later(self, board: RaidBoard) -> None:
        await asyncio.sleep(CARD_REFRESH_S)
        if board.card_id and not board.closed:
            await self.desk.update_raid(await self.raid_view(board), board.card_id)

    async def _flush_later(self, board: RaidBoard) -> None:
        try:
            total = sum(len(v) for v in board.pending.values())
            if total < BULK_MAX and not self._flush_at_once:
                try:  # the bulk window, cut short by wake_raid_flushes
                    await asyncio.wait_for(board.flush_now.wait(), FLUSH_S)
                except TimeoutError:
                    pass
            await self._flush(board)
        finally:
            board.flush_task = None
            board.flush_now.clear()

    def wake_raid_flushes(self) -> None:
        """Send the queued raid deletes now rather than at the end of their :data:`FLUSH_S` window (the workflow's
        drain: a shutdown, or a caller waiting for what is in flight, need not wait out the window). Deletes queued
        while :attr:`_flush_at_once` is above 0 (a drain is running) go out at once too."""
        for board in self._boards.values():
            if board.flush_task is not None:
                board.flush_now.set()

    async def flush_raids(self) -> None:
        """Send every queued raid delete now (shutdown, tests)."""
        for board in list(self._boards.values()):
            if board.pending:
                await self._flush(board)

    async def _flush(self, board: RaidBoard) -> None:
        """Bulk-delete queued messages per channel (100 per request) and record each case's outcome."""
        pending, board.pending = board.pending, {}
        for channel_id, items in pending.items():
            refused = await self._bot_may_not_delete(board.server_id, channel_id)
            if refused is not None:  # nothing is sent; each case records why
                for _message_id, case_number in items:
                    if case_number is not None:
                        await self.store.set_case_status(self.platform, board.server_id, case_number,
                                                         CaseStatus.FAILED, failure=f"delete: {refused}")
                board.notes.append(f"{len(items)} delete(s) not sent: {refused}"[:300])
                continue
            for start in range(0, len(items), BULK_MAX):
                chunk = items[start:start + BULK_MAX]
                result = await self.enforcer.bulk_delete(board.server_id, channel_id, [m for m, _ in chunk])
                board.deleted += len(result.deleted)
                for message_id, case_number in chunk:
                    if case_number is None:
                        continue
                    failure = result.failed.get(message_id)
                    await self.store.set_case_status(self.platform, board.server_id, case_number,
                                                     CaseStatus.FAILED if failure else CaseStatus.APPLIED,
                                                     failure=f"delete: {failure}" if failure else None)
                if result.failed:
                    reasons = sorted(set(result.failed.values()))
                    board.notes.append(f"{len(result.failed)} delete(s) FAILED: {'; '.join(reasons)}"[:300])

    async def _bot_may_not_delete(self, server_id: str, channel_id: str) -> str | None:
        """Why the bot may not delete members' messages IN ``channel_id`` (its roles plus the channel's permission
        overwrites, as the platform computes them), or ``None`` when it may, or when the platform has no
        per-channel permissions (its enforcer has no ``member_permissions``) or cannot name the bot's member.
        A lookup that fails is a reason too: nothing is deleted on a guess."""
        lookup = getattr(self.enforcer, "member_permissions", None)
        if lookup is None:
            return None
        bot = await self.enforcer.bot_member(server_id)
        if bot is None:
            return None
        held = await lookup(server_id, channel_id, bot.id)
        if held is None:
            return f"the bot's permissions in <#{channel_id}> could not be read"
        if Permission.MANAGE_MESSAGES not in (held.held if isinstance(held, ChannelPermissions) else held):
            return f"the bot lacks Manage Messages in <#{channel_id}> (a channel permission overwrite?)"
        return None

    # ------------------------------------------------------------------ end
    async def save_raid_end(self, board: RaidBoard) -> None:
        """Record raid mode's end ``board.until``, extended while the raid goes on, in every channel of the raid, so
        a restart restores it until then: only the end set when it began was saved, so a start after that end (the
        raid still going on) lifted the slowmode and switched raid mode off."""
        if board.closed or board.until is None:
            return
        for channel_id, (_place, slowed) in board.channels.items():
            await self.store.save_raid_mode(self.platform, board.server_id, channel_id, board.until, slowed,
                                            board.raid_id or None)

    async def _end_when_due(self, board: RaidBoard) -> None:
        """Sleep until raid mode's end (extended while the burst goes on), then end it."""
        try:
            while board.until is not None:
                delay = (board.until - self.clock()).total_seconds()
                if delay <= 0:
                    break
                await asyncio.sleep(delay)
            if not board.closed:
                await self.end_raid(board, by=None)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("ending raid mode failed", extra={"server": board.server_id})

    async def end_raid(self, board: RaidBoard, *, by: str | None) -> str | None:
        """End raid mode where the raid was: slowmode lifted, raid mode off (also in the store), card closed.

        The end is claimed in the mod log first (``store.claim_raid_end``, held :data:`RAID_END_HOLD_S`): of
        processes owning one server (two shards, a restart overlapping the old process) that end it at once, one
        lifts the slowmode and posts "Raid mode off" (each did). Another drops its copy of the raid (its stricter
        tiers off, its timers cancelled); where the end is held by a process still at it, it looks again when the
        hold ends, so an end cut off by a stop is still carried out. Returns the note on the slowmode's lift
        (``""``: nothing to note), or ``None`` when another process ended it (or is ending it)."""
        # every channel the raid reached (a spreading join raid: several), else the one it was in
        channels = dict(board.channels) or {board.channel_id: (board.place, board.slowmode_s)}
        claimed, held = await self.store.claim_raid_end(self.platform, board.server_id, board.raid_id or None,
                                                        list(channels), hold_s=RAID_END_HOLD_S)
        if not claimed:
            self._drop_board(board, channels, recheck=held)
            return None
        board.closed = True
        for task in (board.end_task, board.refresh_task):  # the final card edit below is the last one
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        await self.flush_raids()
        notes: list[str] = []
        still = 0
        for channel_id, (place, slowed) in channels.items():
            if slowed:
                res = await self.enforcer.set_slowmode(board.server_id, channel_id, 0)
                where = f" in {channel_id}" if len(channels) > 1 else ""
                notes.append(f"slowmode lifted{where}" if res.ok else
                             f"slowmode could not be lifted{where}: FAILED: {res.reason}")
                still = still if res.ok else max(still, slowed)
                board.channels[channel_id] = (place, 0 if res.ok else slowed)
            await self.store.end_raid_mode(self.platform, board.server_id, channel_id)
            if self.raid_control is not None:
                self.raid_control.set_raid_mode(self.platform, board.server_id, place, False, self.clock())
        note = "; ".join(notes)
        if note:
            board.notes.append(note)
        board.slowmode_s = still
        await self.store.set_raid_state(self.platform, board.server_id, board.raid_id, closed=True)
        if self.raid_control is not None and board.place not in {p for p, _ in channels.values()}:
            self.raid_control.set_raid_mode(self.platform, board.server_id, board.place, False, self.clock())
        if board.card_id:
            await self.desk.update_raid(await self.raid_view(board), board.card_id)
        await self.desk.post_mod_log(board.server_id, LogEntry(
            title="Raid mode off", lines=(f"raid #{board.raid_id} in {board.channel_id}",
                                          f"ended by {by}" if by else "ended automatically", *([note] if note else [])),
            moderator_id=by, failed="FAILED" in note, kind="raid"))
        return note

    def _drop_board(self, board: RaidBoard, channels: dict[str, tuple[str, int]], *,
                    recheck: datetime | None) -> None:
        """Another process ended ``board``'s raid mode, or holds its end until ``recheck`` (the mod log's clock,
        real UTC time; ``None``: ended): here its stricter tiers go off and its timers stop; with a hold, its end
        is tried again when the hold is over (the other process may have stopped mid-end: the claim then falls to
        this one)."""
        board.closed = True
        for task in (board.end_task, board.refresh_task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        board.end_task = None
        if self.raid_control is not None:
            for place in {board.place, *(p for p, _ in channels.values())}:
                self.raid_control.set_raid_mode(self.platform, board.server_id, place, False, self.clock())
        if recheck is not None:
            task = asyncio.ensure_future(self._end_after_hold(board, recheck))
            self._raid_end_checks.add(task)
            task.add_done_callback(self._raid_end_checks.discard)

    async def _end_after_hold(self, board: RaidBoard, until: datetime) -> None:
        """Try to end ``board``'s raid mode again once another process's hold on its end is over at ``until``: ended
        there meanwhile, the claim finds nothing to end; cut off by a stop there, it is ended here."""
        try:
            await asyncio.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
            await self.end_raid(board, by=None)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("ending raid mode failed", extra={"server": board.server_id})

    async def restore_raid_modes(self) -> list[str]:
        """At startup: raid mode still due goes back on (and ends on time); one that ended while the bot was down
        has its slowmode lifted now."""
        lines = []
        now = self.clock()
        # one board per raid: a join raid that spread has a row per channel, ended together
        groups: dict[tuple[str, int | str], list[RaidModeRow]] = {}
        for row in await self.store.raid_modes(self.platform):
            if not self.owns(row.server_id):  # another shard process's guild: restored there
                continue
            groups.setdefault((row.server_id, row.raid_id or f"channel:{row.channel_id}"), []).append(row)
        for rows in groups.values():
            row = rows[0]
            untils = [r.until for r in rows]
            until = None if any(u is None for u in untils) else max(u for u in untils if u is not None)
            board = RaidBoard(raid_id=row.raid_id or 0, server_id=row.server_id, place=row.channel_id,
                              channel_id=row.channel_id, reason="restored", started_at=row.started_at,
                              until=until, slowmode_s=max(r.slowmode_s for r in rows),
                              channels={r.channel_id: (r.channel_id, r.slowmode_s) for r in rows})
            raid = await self.store.get_raid(self.platform, row.server_id, row.raid_id) if row.raid_id else None
            if raid is not None:
                board.members = list(raid.members)
                board.reason = raid.reason
                board.card_id = raid.card_message_id
                board.place = raid.channel_id
            where = ", ".join(r.channel_id for r in rows)
            if until is not None and until <= now:
                if await self.end_raid(board, by=None) is not None:  # None: another process ended it
                    lines.append(f"raid mode in {where} ended while the bot was stopped; slowmode lifted")
                continue
            for key in {board.place, *(r.channel_id for r in rows)}:
                self._boards[(row.server_id, key)] = board
                if self.raid_control is not None:
                    self.raid_control.set_raid_mode(self.platform, row.server_id, key, True, now)
            if until is not None:
                board.end_task = asyncio.ensure_future(self._end_when_due(board))
            lines.append(f"raid mode in {where} restored until {until.isoformat() if until else 'switched off'}")
        return lines

    # ------------------------------------------------------------------ moderators' raid actions
    async def confirm_raid(self, actor: Actor, server_id: str, raid_id: int, action: str) -> Confirmation:
        """What to ask before bulk action ``action`` (one that :func:`raid_asks_first`) on raid ``raid_id``: the
        quick checks run now (the raid is this server's, the moderator holds the permission, the platform can do
        it); :meth:`raid_action` checks each raider again at submit.

        Raises:
            Refused: an action that does not ask first, unknown raid, missing permission or capability.
        """
        entry = _raid_kind(action)
        if entry is None or not raid_asks_first(action):
            raise Refused("Raid action ", Said(repr(action)), " does not ask for a reason.")
        kind = entry.action
        raid = await self.store.get_raid(self.platform, server_id, raid_id)
        if raid is None:
            raise Refused(f"Raid #{raid_id} does not exist in this server.")
        authorize(actor, kind)
        board = self.raid_board(server_id, raid_id)
        channel = (board.channel_id if board else raid.thread_id or raid.channel_id) or None
        if not await self.capable(entry, server_id, channel):
            raise Refused(f"This platform cannot {kind.label} members"
                          f"{there(entry, self.enforcer.capabilities, channel)}. Nothing was changed.")
        members = board.members if board else list(raid.members)
        kinds = {"join_burst": "join burst", "flagged_burst": "flagged messages", "new_member_burst": "new members"}
        return raid_confirmation(kind, raid_id, len(members),
                                 f"raid #{raid_id} ({kinds.get(raid.reason, raid.reason)})",
                                 channel_only=REGISTRY.by_channel(entry, self.enforcer.capabilities))

    async def raid_action(self, actor: Actor, server_id: str, raid_id: int, action: str, *,
                          duration_s: int = 3600, reason: str | None = None) -> str:
        """A raid card button: ``"timeout"``, ``"kick"`` or ``"ban"`` every raider; ``"pause_invites"``;
        ``"end"`` raid mode. Each member is authorized on their own (a raider ranked above the moderator is
        skipped, with the reason). Returns the summary shown to the moderator: for a bulk sanction a
        :class:`~bot.workflow.authz.Sentence` whose skipped raiders' refusals keep their typed pieces (a display
        name), so a platform escapes those and keeps the summary's own mentions; the card's note and the mod-log
        line are the same sentence.

        ``reason``: the moderator's reason (:mod:`bot.workflow.confirm`), required for the bulk sanctions (they
        ask first); each raider's case gets it as typed.

        Raises:
            Refused: unknown raid, a missing, short or too long reason, or missing permission.
        """
        if raid_asks_first(action) or reason is not None:
            entry = _raid_kind(action)
            reason = check_reason(reason, f"{entry.action.label.capitalize() if entry else action} all")
        raid = await self.store.get_raid(self.platform, server_id, raid_id)
        if raid is None:
            raise Refused(f"Raid #{raid_id} does not exist in this server.")
        # the raid's own board, wherever it is kept (a join burst's is kept under ``join:<raid id>``, a spread
        # raid's under each of its channels): a copy would act on the stored members only and end nothing
        board = self.raid_board(server_id, raid_id)
        if board is None:
            board = RaidBoard(raid_id=raid_id, server_id=server_id, place=raid.channel_id,
                              channel_id=raid.thread_id or raid.channel_id, reason=raid.reason,
                              started_at=raid.started_at, until=None, members=list(raid.members),
                              card_id=raid.card_message_id)
        if action == "end":
            # ending lifts the raid's slowmode, which the platform reserves to Manage Channels (as /raidmode off)
            await self._authorize_ending(actor, server_id, board)
            note = await self.end_raid(board, by=actor.id)
            if note is None:
                return "Raid mode was already ended."
            return "Raid mode ended." + (f" {note}." if note else "")
        if action == "pause_invites":
            authorize(actor, ActionKind.REVIEW, permission=Permission.MANAGE_SERVER)
            if not self.can(Capability.PAUSE_INVITES):
                raise Refused("This platform cannot pause invites.")
            res = await self.enforcer.pause_invites(server_id, self.clock() + timedelta(seconds=PAUSE_INVITES_S))
            board.invites_paused = res.ok
            text = "Invites paused for 24 hours." if res.ok else f"Pausing invites FAILED: {res.reason}"
            board.notes.append(text)
            if board.card_id:
                await self.desk.update_raid(await self.raid_view(board), board.card_id)
            return text
        bulk = _raid_kind(action)
        if bulk is None:
            raise Refused("Unknown raid action ", Said(repr(action)), ".")
        kind = bulk.action
        authorize(actor, kind)
        # one bulk action per raid at a time; a raider already given this sanction in this raid is not given it
        # again (a double click or two moderators pressing "Ban all")
        async with self._raid_locks.setdefault(raid_id, asyncio.Lock()):
            acted = self._raid_acted.setdefault((raid_id, kind), set())
            done, already = 0, 0
            skipped: list[tuple[str, ...]] = []  # each raider's refusal, its typed pieces (a name) kept
            for member_id in list(board.members):
                if member_id in acted or await self._sanctioned_since(server_id, member_id, kind, raid.started_at):
                    acted.add(member_id)
                    already += 1
                    continue
                try:
                    result = await self.sanction(actor, server_id, member_id, kind, reason or f"raid #{raid_id}",
                                                 duration_s=duration_s if kind is ActionKind.TIMEOUT else None,
                                                 channel_id=board.channel_id or None, source="raid", quiet=True)
                except Refused as exc:
                    skipped.append((f"<@{member_id}>: ", *(p if isinstance(p, Said) else
                                                             p.replace(" Nothing was changed.", "")
                                                             for p in exc.parts)))
                    continue
                if result.ok:
                    done += 1
                    acted.add(member_id)
                else:
                    skipped.append((f"<@{member_id}>: FAILED {result.failure or ''}".strip(),))
        parts = [f"{kind.label}: {done} of {len(board.members)} raider(s)."]
        if already:
            parts.append(f" {already} already done before.")
        if skipped:
            parts.append(" Not done: ")
            for i, refusal in enumerate(skipped):
                parts += ["; "] * bool(i) + list(refusal)
        text = Sentence(*parts)  # a skipped raider's name stays a typed piece: each platform escapes it
        board.notes.append(text[:300])
        # one mod-log summary for the whole bulk action (not one post per raider: the channel's rate limit would
        # hold the raid response back)
        await self.desk.post_mod_log(server_id, LogEntry(
            title=f"Raid #{raid_id}: {kind.label} all", lines=(f"Moderator: {actor.id}",
                                                               *([Sentence("Reason: ", Said(reason))] if reason else []), text),
            moderator_id=actor.id, failed=bool(skipped), kind="raid"))
        if board.card_id:
            await self.desk.update_raid(await self.raid_view(board), board.card_id)
        return text

    async def _held_by_hand(self, server_id: str, channel_id: str) -> bool:
        """Whether raid mode in ``channel_id`` is saved with no end: a moderator's ``/raidmode on`` (until switched
        off), or a raid held open by one."""
        return any(r.server_id == server_id and r.channel_id == channel_id and r.until is None
                   for r in await self.store.raid_modes(self.platform))

    async def _hold_board(self, board: RaidBoard, server_id: str, *, but: str | None = None) -> None:
        """Keep ``board``'s raid mode on until switched off (``/raidmode off``, End raid mode): no end time, its
        timer cancelled, its saved channels (``but`` one, saved by the caller) without an end either."""
        board.until = None
        if board.end_task is not None and board.end_task is not asyncio.current_task():
            board.end_task.cancel()
        board.end_task = None
        for other, (_, slowed) in board.channels.items():
            if other != but:
                await self.store.save_raid_mode(self.platform, server_id, other, None, slowed, board.raid_id)

    async def _authorize_ending(self, actor: Actor, server_id: str, board: RaidBoard) -> None:
        """Check that ``actor`` may end ``board``'s raid mode: lifting its slowmode needs Manage Channels (where the
        platform has slowmode) IN each channel it is set in (Discord: a channel's overwrite may deny it there), as
        Discord counts it; without slowmode, Manage Messages.

        Raises:
            Refused: missing permission (in one of the raid's channels), or it could not be read there.
        """
        slowed = [c for c, (_, s) in board.channels.items() if s and c]
        if not slowed and board.slowmode_s and board.channel_id:
            slowed = [board.channel_id]
        need = Permission.MANAGE_CHANNELS if slowed and self.can(Capability.SLOWMODE) else None
        authorize(actor, ActionKind.REVIEW, permission=need)
        for channel_id in slowed if need else ():
            authorize(await self.actor_in_channel(actor, server_id, channel_id), ActionKind.REVIEW, permission=need)

    async def _sanctioned_since(self, server_id: str, member_id: str, kind: ActionKind, since: datetime) -> bool:
        """Whether a moderator gave ``member_id`` a ``kind`` case (carried out, or pending: carried out at the
        next start) since the raid began, as the mod log says: the in-memory record of this raid's bulk actions
        is lost at a restart, and "Ban all" pressed again then banned every raider a second time (a second case
        and a second ban's strike points each)."""
        for case in await self.store.list_cases(self.platform, server_id, member_id, limit=50):
            if case.created_at < since:
                break  # newest first: the rest are older still
            if case.action is kind and case.moderator_id is not None and case.status in (CaseStatus.APPLIED,
                                                                                         CaseStatus.PENDING):
                return True
        return False

    async def manual_raid_mode(self, actor: Actor, server_id: str, channel_id: str, on: bool) -> str:
        """``/raidmode on|off`` in one channel: stricter tiers and slowmode until switched off (saved, so a restart
        keeps it); ``off`` ends an automatic raid there too. Returns the answer for the moderator.

        Needs Manage Channels where the platform has slowmode (Discord reserves slowmode to it), else Manage
        Messages, counted IN that channel (:meth:`actor_in_channel`: Discord's overwrites there apply); ``off``
        that ends a raid also in each other channel whose slowmode it lifts."""
        # slowmode is set (or lifted) IN that channel: the moderator's permissions there count (Discord: roles plus
        # the channel's overwrites, which may deny Manage Channels in it), as Discord would count them
        authorize(await self.actor_in_channel(actor, server_id, channel_id), ActionKind.REVIEW,
                  permission=Permission.MANAGE_CHANNELS if self.can(Capability.SLOWMODE) else None)
        board = self._boards.get((server_id, channel_id))
        if not on and board is not None and not board.closed:
            await self._authorize_ending(actor, server_id, board)  # it ends in every channel the raid reached
        now = self.clock()
        if self.raid_control is not None:
            self.raid_control.set_raid_mode(self.platform, server_id, channel_id, on, now)
        if not on:
            if board is not None and not board.closed:
                note = await self.end_raid(board, by=actor.id)
                if note is None:
                    return "Raid mode was already off."
                return "Raid mode off." + (f" {note}." if note else "")
            rows = await self.store.end_raid_mode(self.platform, server_id, channel_id)
            note = ""
            if any(r.slowmode_s for r in rows) or not rows:
                res = await self.enforcer.set_slowmode(server_id, channel_id, 0) if self.can(Capability.SLOWMODE) \
                    else None
                note = "" if res is None or res.ok else f" (slowmode could not be lifted: {res.reason})"
            await self.desk.post_mod_log(server_id, LogEntry(title="Raid mode off", lines=(
                f"Channel: {channel_id}", f"Moderator: {actor.id}"), moderator_id=actor.id, kind="raid"))
            return f"Raid mode off in <#{channel_id}>{note}."
        if board is not None and not board.closed and board.until is not None:
            # an automatic raid mode there: "on" means until switched off, so its timer must not end it (it lifted
            # the slowmode, deleted this saved raid mode and switched the stricter tiers off when its time was up)
            await self._hold_board(board, server_id, but=channel_id)
        note = ""
        slow = 0
        if self.can(Capability.SLOWMODE):
            res = await self.enforcer.set_slowmode(server_id, channel_id, RAID_SLOWMODE_S)
            slow = RAID_SLOWMODE_S if res.ok else 0
            note = "" if res.ok else f" (slowmode failed: {res.reason})"
        await self.store.save_raid_mode(self.platform, server_id, channel_id, None, slow, None)
        await self.desk.post_mod_log(server_id, LogEntry(title="Raid mode on", lines=(
            f"Channel: {channel_id}", f"Moderator: {actor.id}", *([note.strip(" ()")] if note else [])),
            moderator_id=actor.id, kind="raid"))
        return f"Raid mode on in <#{channel_id}>{note}."

    # ------------------------------------------------------------------ automatic raider timeouts
    async def timeout_raiders(self, board: RaidBoard, member_ids: list[str], *, new_only: bool = False
                              ) -> list[str]:
        """``rules.raid.timeout_raiders``: time out new-member raiders of an open raid for ``raider_timeout_s``,
        each as an automod case (``pending``, carried out, then ``applied`` or ``failed`` with the platform's
        reason). A raider already timed out in this raid (automatically or by "Timeout all") is skipped, so nothing
        is done twice. ``new_only``: only members the platform says joined (or, if unknown, whose account was
        created) less than ``rules.raid.new_member_age_s`` ago (a join burst's accounts are new by definition).
        Returns one line per raider not timed out (also in the raid card's notes)."""
        policy = await self.policies.get(self.platform, board.server_id)
        settings = policy.rules.raid
        if not settings.timeout_raiders or board.closed or not self.can(Capability.TIMEOUT):
            return []
        acted = self._raid_acted.setdefault((board.raid_id, ActionKind.TIMEOUT), set())
        bot = await self.enforcer.bot_member(board.server_id)
        problems: list[str] = []
        async with self._raid_locks.setdefault(board.raid_id, asyncio.Lock()):
            for member_id in member_ids:
                if member_id in acted:
                    continue
                acted.add(member_id)
                try:
                    target = await self.enforcer.member(board.server_id, member_id)
                except MemberLookupError as exc:  # the platform did not answer: said on the card, not guessed
                    problems.append(f"<@{member_id}>: not timed out ({exc})")
                    continue
                if target is None:
                    continue  # left (or was banned) already
                since = target.joined_at or target.created_at
                if new_only and (since is None or (self.clock() - since).total_seconds()
                                 >= settings.new_member_age_s):
                    continue  # a regular answering the raid, or unknown: not a new-member raider
                if target.is_owner or (bot is not None and target.rank >= bot.rank):
                    problems.append(f"<@{member_id}>: not timed out (ranked at or above the bot)")
                    continue
                now = self.clock()
                reason = f"raid #{board.raid_id}: raider timed out automatically (rules.raid.timeout_raiders)"
                case = await self.store.open_case(
                    self.platform, board.server_id, member_id, ActionKind.TIMEOUT, reason,
                    expires_at=now + timedelta(seconds=settings.raider_timeout_s), now=now)
                res = await self._sanction_on_platform(policy, case, settings.raider_timeout_s)
                await self.store.set_case_status(self.platform, board.server_id, case.number,
                                                 CaseStatus.APPLIED if res.ok else CaseStatus.FAILED,
                                                 failure=res.extra.get("kept") if res.ok else res.reason)
                if not res.ok:
                    problems.append(f"<@{member_id}>: timeout FAILED: {res.reason}")
        if problems:
            board.notes.append(("automatic timeouts: " + "; ".join(problems))[:300])
        return problems

    # ------------------------------------------------------------------ join bursts
    async def member_joined(self, server_id: str, member_id: str, at: datetime) -> RaidBoard | None:
        """Count a join; ``rules.raid.join_burst`` joins within ``join_window_s`` seconds raise one raid alert
        (``"join_burst"``), whose card offers pausing invites and bulk actions on the joiners.

        Joins of one server are counted one at a time: a join arriving while the alert is still being recorded
        must land on that raid, not be dropped."""
        async with self._join_locks.setdefault(server_id, asyncio.Lock()):
            return await self._member_joined(server_id, member_id, at)

    async def _member_joined(self, server_id: str, member_id: str, at: datetime) -> RaidBoard | None:
        policy = await self.policies.get(self.platform, server_id)
        s = policy.rules.raid
        if not s.enabled or s.join_burst <= 0:
            return None
        joins = self._joins.setdefault(server_id, deque(maxlen=max(s.join_burst * 8, 64)))
        joins.append((at, member_id))
        while joins and (at - joins[0][0]).total_seconds() > s.join_window_s:
            joins.popleft()
        quiet = self._join_quiet.get(server_id)
        joined = [b for (sid, _), b in self._boards.items() if sid == server_id and b.reason == "join_burst"]
        if quiet is not None and at < quiet and joined and all(b.closed for b in joined):
            # the moderators ended the join raid: joins from now on are counted afresh, so a wave that goes on
            # is alerted as a new raid (each join used to push the quiet period on, and it never ended)
            del self._join_quiet[server_id]
            joins.clear()
            joins.append((at, member_id))
            quiet = None
        if quiet is not None and at < quiet:
            self._join_quiet[server_id] = at + timedelta(seconds=s.cooldown_s)
            board = next((b for b in joined if not b.closed), None)
            if board is not None and member_id not in board.members:
                board.members.append(member_id)
                # saved on the raid, so a bulk action after a restart reaches the later joiners too
                await self.store.set_raid_state(self.platform, server_id, board.raid_id, members=board.members)
                await self.timeout_raiders(board, [member_id])
                self.refresh_raid_card(board)
            return None
        members = list(dict.fromkeys(m for _, m in joins))
        if len(members) < s.join_burst:
            return None
        self._join_quiet[server_id] = at + timedelta(seconds=s.cooldown_s)
        alert = RaidAlert(server_id=server_id, channel_id="", started_at=joins[0][0], members=tuple(members),
                          count=len(joins), reason="join_burst")
        raid_id = await self.store.record_raid(self.platform, alert)
        if raid_id is None:  # another process recorded this burst first: it carries the alert out
            return None
        board = RaidBoard(raid_id=raid_id, server_id=server_id, place="", channel_id="", reason="join_burst",
                          started_at=alert.started_at, until=None, members=members, messages=0)
        self._boards[(server_id, f"join:{raid_id}")] = board
        await self.timeout_raiders(board, members)
        board.card_id = await self.desk.post_raid(await self.raid_view(board))
        if board.card_id:
            await self.store.set_raid_state(self.platform, server_id, raid_id, card_message_id=board.card_id)
        await self.desk.post_mod_log(server_id, LogEntry(
            title="Raid alert: join burst",
            lines=(f"{len(members)} accounts joined within {int(s.join_window_s)} s",), kind="raid"))
        return board


__all__ = ["BULK_MAX", "FLUSH_S", "RAID_SLOWMODE_S", "RaidBoard", "RaidResponse"]
