"""Changing a case's reason after the fact, audited (mixin of :class:`bot.store.sqlite.SqliteStore`).

Cases are an append-only record of what was done; the reason is the one field a moderator may correct later
(``/case reason N``). The change and its audit record are one transaction: the case's reason is replaced and a
``log`` case ("note") about the same member records the old and the new reason and who changed them, so the
history of the change stays in the mod log like every other moderator action.
"""

from __future__ import annotations

from datetime import datetime

from bot.core.errors import CaseNotFound
from bot.core.models import ActionKind, Case, CaseStatus
from bot.store.base import StoreBase, case_from_row, is_case_number
from bot.store.schema import to_db_time, utcnow


class CaseEditsMixin(StoreBase):
    """Audited edits of a case."""

    async def set_case_reason(self, platform: str, server_id: str, number: int, reason: str, moderator_id: str,
                              now: datetime | None = None) -> tuple[Case, Case]:
        """Replace case ``number``'s reason and record the change as a ``log`` case of the same member (its reason
        ``reason of case #N changed from OLD to NEW``, OLD the reason this edit replaced: of two edits at once, the
        second names the first one's reason, on both backends).

        Returns:
            ``(updated case, audit note case)``.

        Raises:
            CaseNotFound: no such case in this server (another server's case included; any for a number no case can
                have, :func:`~bot.store.base.is_case_number`); nothing is changed.
        """
        when = now or utcnow()
        if not is_case_number(number):
            raise CaseNotFound(f"case #{number} not found in this server")
        async with self._tx():
            # The old reason is read by an UPDATE that changes nothing, so it is read under the row's lock: a second
            # edit of the same case waits for this one's commit and reads the reason it wrote (PostgreSQL's READ
            # COMMITTED re-reads the row an UPDATE waited for; a plain SELECT would read the reason both edits
            # replace). SQLite: BEGIN IMMEDIATE already keeps the second edit waiting.
            old = await self._one("UPDATE cases SET reason = reason WHERE platform = ? AND server_id = ? "
                                  "AND number = ? RETURNING reason", (platform, server_id, number))
            if old is None:
                raise CaseNotFound(f"case #{number} not found in this server")
            row = await self._one(
                "UPDATE cases SET reason = ?, updated_at = ? WHERE platform = ? AND server_id = ? AND number = ? "
                "RETURNING *", (reason, to_db_time(when), platform, server_id, number))
            assert row is not None
            updated = case_from_row(row)
            note = await self._insert_case(
                platform, server_id, updated.member_id, ActionKind.LOG,
                f"reason of case #{number} changed from {old[0]!r} to {reason!r}", CaseStatus.APPLIED, when,
                moderator_id=moderator_id)
        return updated, note
