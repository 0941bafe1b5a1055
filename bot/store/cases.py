"""Cases and strikes: per-server numbered cases, manual strikes and pardons (mixin of
:class:`bot.store.sqlite.SqliteStore`)."""

from __future__ import annotations

from datetime import datetime

from bot.core.models import ActionKind, Case, CaseStatus, Strike
from bot.core.records import StepCase, StepReview
from bot.store.base import StoreBase, case_from_row, is_case_number, strike_from_row
from bot.store.privacy import pseudonym_of
from bot.store.schema import to_db_time, utcnow


class CasesMixin(StoreBase):
    """Case and strike operations."""

    async def active_strikes(self, platform: str, server_id: str, member_id: str, now: datetime) -> list[Strike]:
        """Unpardoned strikes of a member whose ``expires_at`` is after ``now``, oldest first.

        Strikes recorded before the member used ``/mydata forget`` (stored under their keyed pseudonym) count too:
        forgetting erases a member's text, not their standing, so a re-offence escalates as before.
        """
        async with self._guard():
            salt = await self._one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
            ids = [member_id]
            if salt is not None:
                ids.append(pseudonym_of(salt[0], platform, server_id, member_id))
            rows = await self._all(
                "SELECT * FROM strikes WHERE platform = ? AND server_id = ? AND member_id IN (?, ?) "
                "AND pardoned_at IS NULL AND expires_at > ? ORDER BY created_at, id",
                (platform, server_id, ids[0], ids[-1], to_db_time(now)),
            )
        return [strike_from_row(r) for r in rows]

    async def open_case(
        self,
        platform: str,
        server_id: str,
        member_id: str,
        action: ActionKind,
        reason: str,
        moderator_id: str | None = None,
        message_id: str | None = None,
        status: CaseStatus = CaseStatus.PENDING,
        expires_at: datetime | None = None,
        now: datetime | None = None,
        escalated_from: int | None = None,
        failure: str | None = None,
    ) -> Case:
        """Open a case with the server's next number (1, 2, ... per ``(platform, server_id)``).

        Args:
            expires_at: End of a timeout, if any.
            now: Creation time (default: now, UTC).
            escalated_from: For a ladder step, the number of the case whose strike crossed it.
            failure: The platform's refusal, for a case recorded once the platform answered (``FAILED``).
        """
        async with self._tx():
            return await self._insert_case(
                platform,
                server_id,
                member_id,
                action,
                reason,
                status,
                now or utcnow(),
                moderator_id=moderator_id,
                message_id=message_id,
                expires_at=expires_at,
                escalated_from=escalated_from,
                failure=failure,
            )

    async def escalations_of(self, platform: str, server_id: str, case_number: int) -> list[Case]:
        """The ladder steps case ``case_number``'s strike crossed (cases naming it in ``escalated_from``), oldest
        first; ``[]`` for a number no case can have (:func:`~bot.store.base.is_case_number`)."""
        if not is_case_number(case_number):
            return []
        rows = await self._read_all(
            "SELECT * FROM cases WHERE platform = ? AND server_id = ? AND escalated_from = ? ORDER BY number",
            (platform, server_id, case_number),
        )
        return [case_from_row(r) for r in rows]

    async def get_case(self, platform: str, server_id: str, number: int) -> Case | None:
        """Case ``number`` of this server, or ``None`` (another server's case is never returned; nor is any for a
        number no case can have, :func:`~bot.store.base.is_case_number`)."""
        if not is_case_number(number):
            return None
        row = await self._read_one(
            "SELECT * FROM cases WHERE platform = ? AND server_id = ? AND number = ?", (platform, server_id, number)
        )
        return case_from_row(row) if row else None

    async def list_cases(
        self, platform: str, server_id: str, member_id: str | None = None, limit: int = 25
    ) -> list[Case]:
        """Newest-first cases of a server, optionally of one member; at most ``limit``."""
        sql = "SELECT * FROM cases WHERE platform = ? AND server_id = ?"
        params: list[object] = [platform, server_id]
        if member_id is not None:
            sql += " AND member_id = ?"
            params.append(member_id)
        rows = await self._read_all(sql + " ORDER BY number DESC LIMIT ?", (*params, limit))
        return [case_from_row(r) for r in rows]

    async def set_case_status(
        self,
        platform: str,
        server_id: str,
        number: int,
        status: CaseStatus,
        failure: str | None = None,
        now: datetime | None = None,
    ) -> Case:
        """Record the platform outcome of a case (``failure`` is the refusal reason for ``FAILED``).

        Raises:
            CaseNotFound: no such case in this server (:func:`~bot.store.base.is_case_number`).
        """
        async with self._tx():
            row = await self._set_case_status(platform, server_id, number, status, failure,
                                              to_db_time(now or utcnow()))
        return case_from_row(row)

    async def add_strike(
        self,
        platform: str,
        server_id: str,
        member_id: str,
        points: int,
        expires_at: datetime,
        reason: str = "",
        message_id: str | None = None,
        case_number: int | None = None,
        now: datetime | None = None,
        *,
        case_status: CaseStatus | None = None,
        failure: str | None = None,
        step: StepCase | StepReview | None = None,
    ) -> bool:
        """Add a (manual) strike; ``message_id=None`` is allowed any number of times.

        Args:
            case_status: Also set case ``case_number``'s status (and ``failure``: the platform's refusal or notes)
                in the same transaction: a moderator's sanction carried out is recorded ``applied`` together with
                its strike, never one without the other (a failed write leaves the case as it was, ``pending``).
            step: The ladder step this strike crosses: its case is opened ``pending`` (``escalated_from``
                ``case_number``) in the same transaction, so the strike is never recorded without it; a step the
                moderator may not take (:class:`~bot.core.records.StepReview`, ``case_number`` not needed): its
                review item, opened in the same transaction.

        Returns:
            False when ``message_id`` already has a strike (no strike written; ``case_status`` still is).

        Raises:
            ValueError: ``case_status`` or a :class:`~bot.core.records.StepCase` ``step`` without ``case_number``.
            CaseNotFound: ``case_status`` given and ``case_number`` is not a case of this server (nothing written).
        """
        if (case_status is not None or isinstance(step, StepCase)) and case_number is None:
            raise ValueError("case_status and step need case_number")
        when = now or utcnow()
        strike = Strike(server_id, member_id, points, when, expires_at, reason, message_id, case_number)
        async with self._tx():
            if case_status is not None:
                assert case_number is not None
                await self._set_case_status(platform, server_id, case_number, case_status, failure,
                                            to_db_time(utcnow()))
            added = await self._insert_strike(platform, strike)
            if step is not None:
                await self._insert_step(platform, server_id, step, case_number)
            return added

    async def pardon(
        self,
        platform: str,
        server_id: str,
        *,
        case_number: int | None = None,
        member_id: str | None = None,
        moderator_id: str | None = None,
        now: datetime | None = None,
    ) -> int:
        """Pardon the strikes of one case (and mark it ``pardoned``) or all active strikes of one member.

        Give exactly one of ``case_number`` and ``member_id``. Returns the number of strikes pardoned.

        Raises:
            CaseNotFound: ``case_number`` is not a case of this server (:func:`~bot.store.base.is_case_number`).
            ValueError: neither or both selectors given.
        """
        if (case_number is None) == (member_id is None):
            raise ValueError("pardon needs exactly one of case_number or member_id")
        when = to_db_time(now or utcnow())
        async with self._tx():
            if case_number is not None:
                return await self._pardon_case(platform, server_id, case_number, moderator_id, when, "pardoned")
            cur = await self._db.execute(
                "UPDATE strikes SET pardoned_at = ?, pardoned_by = ? WHERE platform = ? AND server_id = ? "
                "AND member_id = ? AND pardoned_at IS NULL AND expires_at > ?",
                (when, moderator_id, platform, server_id, member_id, when),
            )
            count = cur.rowcount
            await cur.close()
            return count

    async def overturn_case(
        self,
        platform: str,
        server_id: str,
        number: int,
        moderator_id: str | None = None,
        now: datetime | None = None,
    ) -> int:
        """Overturn case ``number`` in one transaction: its strikes pardoned, its status ``overturned``, and what it
        still does on the platform owed its lift (an applied ban's unban, an applied timeout's removal:
        :meth:`~bot.store.base.StoreBase._overturn_in_tx`). Used for a ladder step overturned with the case whose
        strike crossed it. Returns the number of strikes pardoned.

        Raises:
            CaseNotFound: no such case in this server (nothing written).
        """
        async with self._tx():
            return await self._overturn_in_tx(platform, server_id, number, moderator_id, to_db_time(now or utcnow()))
