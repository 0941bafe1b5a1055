"""Mod-log operations of the moderation workflow (mixin of :class:`bot.store.sqlite.SqliteStore`): cases left
pending by a stop, raised strikes, review cards, temporary-ban expiries, raids and raid mode.

See :class:`bot.core.store_port.ModStore` for the port these implement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Unpack

from bot.core.models import Case, CaseStatus
from bot.core.records import LiftClaim, RaidChanges, RaidModeRow, StepCase, StepReview, StoredRaid
from bot.store.base import StoreBase, case_from_row
from bot.store.privacy import pseudonym_of
from bot.store.schema import dump_json, from_db_time, load_json, opt_db_time, req_db_time, to_db_time, utcnow


class WorkflowMixin(StoreBase):
    """Operations the workflow needs beyond cases, strikes and reviews."""

    async def pending_cases(self, platform: str) -> list[Case]:
        """Cases still ``pending`` (a stop cut them off between being recorded and carried out), oldest first."""
        rows = await self._read_all(
            "SELECT * FROM cases WHERE platform = ? AND status = 'pending' ORDER BY created_at, id", (platform,)
        )
        return [case_from_row(r) for r in rows]

    async def claim_pending(self, platform: str, server_id: str, number: int, *,
                            hold_s: float) -> tuple[bool, datetime | None]:
        """Claim pending case ``number`` for carrying it out (a start's recovery): one conditional update holds it
        ``hold_s`` seconds (``pending_held_until``), taken only while the case is still ``pending`` and no other
        process holds it, so of two processes claiming at once exactly one gets it
        (SQLite: the write lock; PostgreSQL: the row lock, the second update re-checking the row the first
        committed).

        Returns:
            ``(True, None)``: claimed; ``(False, until)``: still pending, held by another process until then;
            ``(False, None)``: not pending any more (carried out or marked failed meanwhile), or no such case.
        """
        now = utcnow()
        async with self._tx():
            cur = await self._db.execute(
                "UPDATE cases SET pending_held_until = ? WHERE platform = ? AND server_id = ? AND number = ? "
                "AND status = 'pending' AND (pending_held_until IS NULL OR pending_held_until <= ?)",
                (to_db_time(now + timedelta(seconds=hold_s)), platform, server_id, number, to_db_time(now)),
            )
            claimed = cur.rowcount == 1
            await cur.close()
            row = None if claimed else await self._one(
                "SELECT status, pending_held_until FROM cases WHERE platform = ? AND server_id = ? AND number = ?",
                (platform, server_id, number))
        if claimed:
            return True, None
        if row is None or row[0] != "pending" or row[1] is None:
            return False, None
        return False, from_db_time(row[1])

    async def raise_strike(
        self, platform: str, server_id: str, message_id: str, points: int, case_number: int | None, *,
        case_status: CaseStatus | None = None, failure: str | None = None,
        step: StepCase | StepReview | None = None,
    ) -> int:
        """Raise the strike of a message to ``points`` (never lower it); links ``case_number`` when it had none.

        Args:
            case_status: Also set case ``case_number``'s status (and ``failure``) in the same transaction (a
                moderator's sanction carried out, recorded with its strike: see ``add_strike``).
            step: The ladder step the raised strike crosses, its case opened ``pending`` (or, withheld from the
                moderator, its review item opened) in the same transaction (see ``add_strike``).

        Returns:
            The number of strikes changed (0 or 1).

        Raises:
            ValueError: ``case_status`` or a :class:`~bot.core.records.StepCase` ``step`` without ``case_number``.
            CaseNotFound: ``case_status`` given and ``case_number`` is not a case of this server (nothing written).
        """
        if (case_status is not None or isinstance(step, StepCase)) and case_number is None:
            raise ValueError("case_status and step need case_number")
        async with self._tx():
            if case_status is not None:
                assert case_number is not None
                await self._set_case_status(platform, server_id, case_number, case_status, failure,
                                            to_db_time(utcnow()))
            cur = await self._db.execute(
                "UPDATE strikes SET points = ?, case_number = COALESCE(case_number, ?) WHERE platform = ? "
                "AND server_id = ? AND message_id = ? AND points < ? AND pardoned_at IS NULL",
                (points, case_number, platform, server_id, message_id, points),
            )
            n = cur.rowcount
            await cur.close()
            if step is not None:
                await self._insert_step(platform, server_id, step, case_number)
        return n

    async def card_of_review(self, review_id: int) -> str | None:
        """The message id of a review item's card, or ``None`` when none was posted."""
        row = await self._read_one("SELECT card_message_id FROM review_items WHERE id = ?", (review_id,))
        return row[0] if row else None

    async def reports_of(self, review_id: int) -> list[tuple[str, str]]:
        """``(reporter id, reason)`` of the reports joined to review item ``review_id``, oldest first."""
        rows = await self._read_all("SELECT reporter_id, reason FROM reports WHERE review_id = ? ORDER BY id",
                                    (review_id,))
        return [(r[0], r[1]) for r in rows]

    async def cards_of_erased_text(self, platform: str, server_id: str, *,
                                   member_id: str | None = None) -> list[tuple[int, str]]:
        """``(review id, card message id)`` of the server's posted review cards (an appeal's excepted: it shows the
        appeal's text) whose message's text was erased from the mod log (retention, forgetting) and whose card is
        still owed the edit that says so (:meth:`card_erasure_tried`), by review id; ``member_id``: that member's
        items only (after forgetting: their pseudonym)."""
        who = " AND r.member_id = ?" if member_id is not None else ""
        rows = await self._read_all(
            "SELECT r.id, r.card_message_id FROM review_items r JOIN messages m ON m.platform = r.platform "
            "AND m.server_id = r.server_id AND m.message_id = r.message_id WHERE r.platform = ? AND r.server_id = ? "
            "AND r.card_message_id IS NOT NULL AND r.card_erased_at IS NULL AND r.source != 'appeal' "
            f"AND m.excerpt IS NULL AND m.purged_at IS NOT NULL{who} ORDER BY r.id",
            (platform, server_id, *((member_id,) if member_id is not None else ())))
        return [(int(r[0]), str(r[1])) for r in rows]

    async def card_erasure_tried(self, review_id: int, *, edited: bool, max_tries: int,
                                 now: datetime | None = None) -> bool:
        """Record one try to edit review item ``review_id``'s card after its message's text was erased: ``edited``
        (the platform took the edit) settles it; a refusal counts a try, and the ``max_tries``-th settles it too
        (the card was deleted, its channel is gone: it is not tried again). Returns whether it is settled."""
        when = to_db_time(now or utcnow())
        async with self._tx():
            await self._db.execute(
                "UPDATE review_items SET card_erase_tries = card_erase_tries + ?, card_erased_at = CASE WHEN ? = 1 "
                "OR card_erase_tries + 1 >= ? THEN ? ELSE card_erased_at END WHERE id = ?",
                (0 if edited else 1, 1 if edited else 0, max_tries, when, review_id))
            row = await self._one("SELECT card_erased_at FROM review_items WHERE id = ?", (review_id,))
        return row is not None and row[0] is not None

    async def message_excerpt(self, platform: str, server_id: str, message_id: str) -> tuple[str, str] | None:
        """``(channel_id, text)`` of a recorded message (text ``""`` once erased), or ``None``."""
        row = await self._read_one(
            "SELECT channel_id, excerpt FROM messages WHERE platform = ? AND server_id = ? AND message_id = ?",
            (platform, server_id, message_id),
        )
        return (row[0], row[1] or "") if row else None

    async def message_text_erased(self, platform: str, server_id: str, message_id: str) -> bool:
        """Whether a recorded message's text was erased (its ``purged_at`` set by retention or forgetting, the
        excerpt gone); ``False`` for a message whose text is still kept or that is not recorded. (An empty
        message's excerpt, ``""``, is erased and marked like any other.)"""
        row = await self._read_one(
            "SELECT 1 FROM messages WHERE platform = ? AND server_id = ? AND message_id = ? AND excerpt IS NULL "
            "AND purged_at IS NOT NULL", (platform, server_id, message_id))
        return row is not None

    async def due_expiries(self, platform: str, before: datetime) -> list[Case]:
        """Applied temporary bans not yet lifted whose end is before ``before`` (UTC), soonest first."""
        rows = await self._read_all(
            "SELECT * FROM cases WHERE platform = ? AND action = 'ban' AND status = 'applied' "
            "AND expires_at IS NOT NULL AND lifted_at IS NULL AND expires_at < ? ORDER BY expires_at",
            (platform, to_db_time(before)),
        )
        return [case_from_row(r) for r in rows]

    async def mark_lifted(self, platform: str, server_id: str, number: int, now: datetime | None = None) -> None:
        """Record that a temporary ban (or timeout) was lifted."""
        async with self._tx():
            await self._db.execute(
                "UPDATE cases SET lifted_at = ?, updated_at = ? WHERE platform = ? AND server_id = ? AND number = ?",
                (to_db_time(now or utcnow()), to_db_time(now or utcnow()), platform, server_id, number),
            )

    async def owe_lift(self, platform: str, server_id: str, number: int) -> None:
        """Mark the unban of ban case ``number`` owed (overturned, or a temporary ban at its end): ``lift_tries`` 0;
        a case already lifted, or already owing, is unchanged. :meth:`owed_lifts` lists overturned bans only (a
        temporary ban's end is rescheduled from :meth:`due_expiries`)."""
        async with self._tx():
            await self._db.execute(
                "UPDATE cases SET lift_tries = COALESCE(lift_tries, 0), updated_at = ? WHERE platform = ? "
                "AND server_id = ? AND number = ? AND lifted_at IS NULL",
                (to_db_time(utcnow()), platform, server_id, number),
            )

    async def claim_lift(self, platform: str, server_id: str, number: int, max_tries: int, *,
                         hold_s: float) -> LiftClaim:
        """Claim the next try at the owed unban of case ``number``: one conditional update holds it ``hold_s``
        seconds (``lift_held_until``), taken only while the case still owes its unban, was refused fewer than
        ``max_tries`` times and has no hold in force, so of two processes claiming at once exactly one gets it
        (SQLite: the write lock; PostgreSQL: the row lock, the second update re-checking the row the first
        committed). The try is counted when it is refused (:meth:`end_lift_try`): a process that dies mid-try
        leaves a hold that runs out, not a try used up."""
        now = utcnow()
        async with self._tx():
            cur = await self._db.execute(
                "UPDATE cases SET lift_held_until = ?, updated_at = ? "
                "WHERE platform = ? AND server_id = ? AND number = ? AND lift_tries IS NOT NULL AND lift_tries < ? "
                "AND lifted_at IS NULL AND (lift_held_until IS NULL OR lift_held_until <= ?)",
                (to_db_time(now + timedelta(seconds=hold_s)), to_db_time(now), platform, server_id, number,
                 max_tries, to_db_time(now)),
            )
            claimed = cur.rowcount == 1
            await cur.close()
            row = await self._one("SELECT lift_tries, lift_held_until, lifted_at FROM cases WHERE platform = ? "
                                  "AND server_id = ? AND number = ?", (platform, server_id, number))
        if row is None:
            return LiftClaim(None, None)
        if claimed:
            return LiftClaim(int(row[0]) + 1, None)
        if row[2] is not None or row[0] is None or int(row[0]) >= max_tries or row[1] is None:
            return LiftClaim(None, None)
        return LiftClaim(None, from_db_time(row[1]))

    async def end_lift_try(self, platform: str, server_id: str, number: int, *, lifted: bool,
                           hold_s: float = 0) -> datetime | None:
        """End the claimed try at the owed unban of case ``number`` (or the owed removal of an overturned timeout,
        claimed only at a start's retry): ``lifted`` sets ``lifted_at``; else the try was refused: ``lift_tries`` counts it and the
        next try is held ``hold_s`` seconds from now (0: free for the next claim). Returns the hold written
        (``None``: none)."""
        now = utcnow()
        held = now + timedelta(seconds=hold_s) if not lifted and hold_s > 0 else None
        async with self._tx():
            if lifted:
                await self._db.execute(
                    "UPDATE cases SET lift_held_until = NULL, lifted_at = ?, updated_at = ? WHERE platform = ? "
                    "AND server_id = ? AND number = ?",
                    (to_db_time(now), to_db_time(now), platform, server_id, number),
                )
            else:
                await self._db.execute(
                    "UPDATE cases SET lift_tries = COALESCE(lift_tries, 0) + 1, lift_held_until = ?, updated_at = ? "
                    "WHERE platform = ? AND server_id = ? AND number = ? AND lifted_at IS NULL",
                    (opt_db_time(held), to_db_time(now), platform, server_id, number),
                )
        return held

    async def release_lift(self, platform: str, server_id: str, number: int, held_until: datetime) -> bool:
        """Hand back the next try at the owed unban of case ``number`` if it is still held until exactly
        ``held_until`` (the hold this process wrote: one another process took since is left alone). Returns
        whether it was released."""
        async with self._tx():
            cur = await self._db.execute(
                "UPDATE cases SET lift_held_until = NULL WHERE platform = ? AND server_id = ? AND number = ? "
                "AND lift_held_until = ? AND lifted_at IS NULL",
                (platform, server_id, number, to_db_time(held_until)),
            )
            n = cur.rowcount
            await cur.close()
        return n == 1

    async def owed_lifts(self, platform: str, max_tries: int) -> list[Case]:
        """Overturned bans whose unban is owed (refused so far, fewer than ``max_tries`` times, not lifted since),
        oldest case first."""
        rows = await self._read_all(
            "SELECT * FROM cases WHERE platform = ? AND action = 'ban' AND status = 'overturned' "
            "AND lift_tries IS NOT NULL AND lift_tries < ? AND lifted_at IS NULL ORDER BY created_at, id",
            (platform, max_tries),
        )
        return [case_from_row(r) for r in rows]

    async def owed_timeout_lifts(self, platform: str) -> list[Case]:
        """Overturned timeouts whose removal is owed and was never answered by the platform (``lift_tries`` 0, not
        lifted: a stop or a failed write came between the overturn's commit and the removal), oldest case first.
        A removal answered is settled with :meth:`end_lift_try` (``lifted``: done; else refused, counted, not owed
        any more)."""
        rows = await self._read_all(
            "SELECT * FROM cases WHERE platform = ? AND action = 'timeout' AND status = 'overturned' "
            "AND lift_tries = 0 AND lifted_at IS NULL ORDER BY created_at, id",
            (platform,),
        )
        return [case_from_row(r) for r in rows]

    async def open_review_for_message(self, platform: str, server_id: str, message_id: str) -> int | None:
        """The id of the message's open (or investigating) review item, if any."""
        row = await self._read_one(
            "SELECT id FROM review_items WHERE platform = ? AND server_id = ? AND message_id = ? "
            "AND decision IN ('open', 'investigating') ORDER BY id LIMIT 1", (platform, server_id, message_id))
        return int(row[0]) if row else None

    async def note_join(self, platform: str, server_id: str, member_id: str, at: datetime) -> datetime:
        """Remember when a member was first seen joining; returns that (earliest) time."""
        async with self._tx():
            await self._db.execute(
                "INSERT INTO member_joins (platform, server_id, member_id, joined_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING", (platform, server_id, member_id, to_db_time(at)))
            row = await self._one("SELECT joined_at FROM member_joins WHERE platform = ? AND server_id = ? "
                                  "AND member_id = ?", (platform, server_id, member_id))
        assert row is not None
        return req_db_time(row[0])

    async def joined_at(self, platform: str, server_id: str, member_id: str) -> datetime | None:
        """When the member was first seen joining, or ``None`` if never."""
        row = await self._read_one("SELECT joined_at FROM member_joins WHERE platform = ? AND server_id = ? "
                                   "AND member_id = ?", (platform, server_id, member_id))
        return req_db_time(row[0]) if row else None

    # -- raids --------------------------------------------------------------------------------------------------

    async def get_raid(self, platform: str, server_id: str, raid_id: int) -> StoredRaid | None:
        """A raid of this server, or ``None`` (another server's raid is never returned)."""
        r = await self._read_one(
            "SELECT * FROM raids WHERE platform = ? AND server_id = ? AND id = ?", (platform, server_id, raid_id)
        )
        if r is None:
            return None
        return StoredRaid(
            id=r["id"], platform=r["platform"], server_id=r["server_id"], channel_id=r["channel_id"],
            started_at=req_db_time(r["started_at"]), members=tuple(load_json(r["members"], [])), count=r["count"],
            reason=r["reason"], card_message_id=r["card_message_id"], thread_id=r["thread_id"],
            closed_at=from_db_time(r["closed_at"]),
        )

    async def set_raid_state(self, platform: str, server_id: str, raid_id: int, **changes: Unpack[RaidChanges]
                             ) -> None:
        """Update a raid: ``card_message_id``, ``thread_id``, ``members`` (list) or ``closed`` (bool).

        Raises:
            ValueError: another key (a caller the type checker did not see).
        """
        unknown = set(changes) - set(RaidChanges.__annotations__)
        if unknown:
            raise ValueError(f"unknown raid field {sorted(unknown)[0]!r}")
        sets: list[str] = []
        params: list[Any] = []
        for key in ("card_message_id", "thread_id"):
            if key in changes:
                sets.append(f"{key} = ?")
                params.append(changes[key])
        members = list(changes["members"]) if "members" in changes else None
        if "closed" in changes:
            sets.append("closed_at = ?")
            params.append(to_db_time(utcnow()) if changes["closed"] else None)
        if not sets and members is None:
            return
        async with self._tx():
            if members is not None:
                # a raider who ran /mydata forget during the raid stays a raider on the card (the board in memory
                # acts on their id), but the mod log keeps only their pseudonym, as forget_member wrote it
                sets.append("members = ?")
                params.append(dump_json(await self._pseudonymised(platform, server_id, members)))
            await self._db.execute(
                f"UPDATE raids SET {', '.join(sets)} WHERE platform = ? AND server_id = ? AND id = ?",
                (*params, platform, server_id, raid_id),
            )

    async def _pseudonymised(self, platform: str, server_id: str, member_ids: list[str]) -> list[str]:
        """Inside a transaction: ``member_ids`` with each forgotten member of this server (``/mydata forget``,
        :meth:`~bot.store.privacy.PrivacyMixin.forget_member`) as their pseudonym, in the same order."""
        salt = await self._one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
        if salt is None or not member_ids:
            return member_ids
        forgotten = {r[0] for r in await self._all(
            "SELECT pseudonym FROM member_pseudonyms WHERE platform = ? AND server_id = ?", (platform, server_id))}
        if not forgotten:
            return member_ids
        return [p if (p := pseudonym_of(salt[0], platform, server_id, m)) in forgotten else m for m in member_ids]

    async def save_raid_mode(
        self, platform: str, server_id: str, channel_id: str, until: datetime | None, slowmode_s: int,
        raid_id: int | None, now: datetime | None = None,
    ) -> None:
        """Record raid mode in a channel or thread (replacing an earlier row for it)."""
        async with self._tx():
            await self._db.execute(
                "INSERT INTO raid_modes (platform, server_id, channel_id, until, slowmode_s, raid_id, started_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (platform, server_id, channel_id) DO UPDATE SET "
                "until = excluded.until, slowmode_s = excluded.slowmode_s, raid_id = excluded.raid_id",
                (platform, server_id, channel_id, opt_db_time(until), slowmode_s, raid_id,
                 to_db_time(now or utcnow())),
            )

    async def end_raid_mode(self, platform: str, server_id: str, channel_id: str | None) -> list[RaidModeRow]:
        """Remove raid mode rows of a channel (or of the whole server with ``None``); returns the removed rows."""
        sql = "DELETE FROM raid_modes WHERE platform = ? AND server_id = ?"
        params: Sequence[Any] = (platform, server_id)
        if channel_id is not None:
            sql += " AND channel_id = ?"
            params = (*params, channel_id)
        async with self._tx():
            rows = await self._all(sql + " RETURNING *", params)
        return [_raid_mode(r) for r in rows]

    async def claim_raid_end(self, platform: str, server_id: str, raid_id: int | None, channel_ids: Sequence[str],
                             *, hold_s: float) -> tuple[bool, datetime | None]:
        """Claim the end of raid mode in ``channel_ids`` (raid ``raid_id``'s, or ``None`` for raid mode switched on
        by hand): one conditional update holds their saved rows ``hold_s`` seconds (``raid_modes.end_held_until``),
        taken only where no other process holds them, so of two processes ending one raid mode at once exactly one
        ends it (SQLite: the write lock; PostgreSQL: the row lock, the second update re-checking the rows the first
        committed). The raid is closed in the same transaction. With no row saved for those channels (raid mode
        never saved, or ended already) the claim is the raid's own close: taken only while the raid is open.

        Returns:
            ``(True, None)``: claimed (the caller lifts the slowmode, then deletes the rows); ``(False, until)``:
            another process holds the end until then; ``(False, None)``: ended already (or nothing to end).
        """
        now = utcnow()
        channels = list(dict.fromkeys(channel_ids))
        marks = ", ".join("?" for _ in channels) or "NULL"
        async with self._tx():
            cur = await self._db.execute(
                f"UPDATE raid_modes SET end_held_until = ? WHERE platform = ? AND server_id = ? AND channel_id IN "
                f"({marks}) AND (end_held_until IS NULL OR end_held_until <= ?)",
                (to_db_time(now + timedelta(seconds=hold_s)), platform, server_id, *channels, to_db_time(now)),
            )
            claimed = cur.rowcount
            await cur.close()
            if claimed:
                if raid_id is not None:
                    await self._db.execute(
                        "UPDATE raids SET closed_at = COALESCE(closed_at, ?) WHERE platform = ? AND server_id = ? "
                        "AND id = ?", (to_db_time(now), platform, server_id, raid_id))
                return True, None
            held = await self._all(
                f"SELECT end_held_until FROM raid_modes WHERE platform = ? AND server_id = ? AND channel_id IN "
                f"({marks})", (platform, server_id, *channels))
            if held:  # saved, and held by another process
                untils = [from_db_time(r[0]) for r in held if r[0] is not None]
                return False, max((u for u in untils if u is not None), default=None)
            if raid_id is None:
                return False, None
            cur = await self._db.execute(
                "UPDATE raids SET closed_at = ? WHERE platform = ? AND server_id = ? AND id = ? AND closed_at IS NULL",
                (to_db_time(now), platform, server_id, raid_id))
            closed = cur.rowcount == 1
            await cur.close()
        return closed, None

    async def raid_modes(self, platform: str) -> list[RaidModeRow]:
        """Every raid mode row of a platform (restored at startup)."""
        rows = await self._read_all("SELECT * FROM raid_modes WHERE platform = ? ORDER BY started_at", (platform,))
        return [_raid_mode(r) for r in rows]


def _raid_mode(r: Any) -> RaidModeRow:
    return RaidModeRow(platform=r["platform"], server_id=r["server_id"], channel_id=r["channel_id"],
                       until=from_db_time(r["until"]), slowmode_s=r["slowmode_s"], raid_id=r["raid_id"],
                       started_at=req_db_time(r["started_at"]))
