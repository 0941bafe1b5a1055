"""Review queue, member reports and appeals (mixin of :class:`bot.store.sqlite.SqliteStore`).

A review item is decided once. ``investigating`` is the only decision that may be followed by another; a second
decision otherwise raises :class:`~bot.core.errors.ReviewAlreadyDecided` (two moderators clicking the same card).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from bot.core.errors import (
    AppealAlreadyDecided,
    AppealAlreadyOpen,
    AppealError,
    AppealNotFound,
    CaseNotFound,
    NotCaseMember,
    ReviewAlreadyDecided,
    ReviewNotFound,
)
from bot.core.models import ActionKind, Case, CaseStatus, ReviewDecision, ReviewItem
from bot.core.records import Appeal, CaseDraft, StepReview
from bot.store.base import Row, StoreBase, case_from_row, is_case_number, review_from_row
from bot.store.privacy import pseudonym_of
from bot.store.schema import from_db_time, req_db_time, to_db_time, utcnow

#: Review decision recorded on an appeal's review item when the appeal is upheld, by the case's action.
_UPHELD_DECISION = {
    ActionKind.DELETE: ReviewDecision.DELETED,
    ActionKind.WARN: ReviewDecision.WARNED,
    ActionKind.TIMEOUT: ReviewDecision.TIMED_OUT,
    ActionKind.KICK: ReviewDecision.KICKED,
    ActionKind.BAN: ReviewDecision.BANNED,
}


def _scope_sql(platform: str | None, server_id: str | None) -> tuple[str, tuple[str, ...]]:
    if (platform is None) != (server_id is None):
        raise ValueError("give both platform and server_id, or neither")
    return ("", ()) if platform is None else (" AND platform = ? AND server_id = ?", (platform, server_id or ""))


def _appeal_from_row(row: Row) -> Appeal:
    return Appeal(
        id=row["id"],
        platform=row["platform"],
        server_id=row["server_id"],
        case_number=row["case_number"],
        member_id=row["member_id"],
        text=row["text"],
        status=row["status"],
        created_at=req_db_time(row["created_at"]),
        moderator_id=row["moderator_id"],
        decided_at=from_db_time(row["decided_at"]),
        review_id=row["review_id"],
    )


class ReviewMixin(StoreBase):
    """Review items, reports and appeals."""

    async def get_review(
        self, review_id: int, platform: str | None = None, server_id: str | None = None
    ) -> ReviewItem | None:
        """A review item by id; with ``platform``/``server_id`` given, ``None`` unless it belongs to that server."""
        scope, params = _scope_sql(platform, server_id)
        row = await self._read_one(f"SELECT * FROM review_items WHERE id = ?{scope}", (review_id, *params))
        return review_from_row(row) if row else None

    async def review_for_case(self, platform: str, server_id: str, case_number: int) -> ReviewItem | None:
        """The latest review item linked to a case of this server, or ``None`` (also for a number no case can have,
        :func:`~bot.store.base.is_case_number`)."""
        if not is_case_number(case_number):
            return None
        row = await self._read_one(
            "SELECT * FROM review_items WHERE platform = ? AND server_id = ? AND case_number = ? "
            "ORDER BY id DESC LIMIT 1",
            (platform, server_id, case_number),
        )
        return review_from_row(row) if row else None

    async def step_review(self, platform: str, server_id: str, step: StepReview) -> ReviewItem | None:
        """The open review item that ladder step ``step`` opened with its strike (``add_strike`` /
        ``raise_strike``: same member, reason and time; the newest such), or ``None`` (decided since, or none)."""
        row = await self._read_one(
            "SELECT * FROM review_items WHERE platform = ? AND server_id = ? AND member_id = ? AND source = 'automod' "
            "AND reason = ? AND created_at = ? AND decision IN ('open', 'investigating') ORDER BY id DESC LIMIT 1",
            (platform, server_id, step.member_id, step.reason, to_db_time(step.created_at)),
        )
        return review_from_row(row) if row else None

    async def case_channel(self, platform: str, server_id: str, case_number: int) -> str | None:
        """The channel of the message case ``case_number`` of this server is about, or ``None`` (a case about a
        member, not a message: a manual warn, a ban from a command, a case with no such channel on record).

        Looked up, in order, from the recorded message (``messages``), the case's own review items (automod's,
        which name the channel) and the review items of the case's message (a report of it). ``None`` for a number
        no case can have (:func:`~bot.store.base.is_case_number`)."""
        if not is_case_number(case_number):
            return None
        row = await self._read_one(
            "SELECT COALESCE("
            "(SELECT m.channel_id FROM cases c JOIN messages m ON m.platform = c.platform "
            "AND m.server_id = c.server_id AND m.message_id = c.message_id "
            "WHERE c.platform = ? AND c.server_id = ? AND c.number = ?), "
            "(SELECT r.channel_id FROM review_items r WHERE r.platform = ? AND r.server_id = ? "
            "AND r.case_number = ? AND r.channel_id IS NOT NULL ORDER BY r.id LIMIT 1), "
            "(SELECT r.channel_id FROM cases c JOIN review_items r ON r.platform = c.platform "
            "AND r.server_id = c.server_id AND r.message_id = c.message_id "
            "WHERE c.platform = ? AND c.server_id = ? AND c.number = ? AND r.channel_id IS NOT NULL "
            "ORDER BY r.id LIMIT 1))",
            (platform, server_id, case_number) * 3,
        )
        return str(row[0]) if row is not None and row[0] is not None else None

    async def review_by_card(self, platform: str, server_id: str, card_message_id: str) -> ReviewItem | None:
        """The review item whose queue card is ``card_message_id`` (for button and reaction handlers)."""
        row = await self._read_one(
            "SELECT * FROM review_items WHERE card_message_id = ? AND platform = ? AND server_id = ?",
            (card_message_id, platform, server_id),
        )
        return review_from_row(row) if row else None

    async def open_reviews(self, platform: str, server_id: str, limit: int = 25) -> list[ReviewItem]:
        """Undecided (``open`` or ``investigating``) items of a server, oldest first."""
        rows = await self._read_all(
            "SELECT * FROM review_items WHERE platform = ? AND server_id = ? "
            "AND decision IN ('open', 'investigating') ORDER BY id LIMIT ?",
            (platform, server_id, limit),
        )
        return [review_from_row(r) for r in rows]

    async def open_review(
        self,
        platform: str,
        server_id: str,
        member_id: str,
        source: str,
        reason: str,
        case_number: int | None = None,
        message_id: str | None = None,
        channel_id: str | None = None,
        scores: Mapping[str, float | None] | None = None,
        now: datetime | None = None,
    ) -> ReviewItem:
        """Put something in the review queue (``source``: ``"automod"``, ``"report"`` or ``"appeal"``).

        Raises:
            ValueError: unknown source.
            sqlite3.IntegrityError: ``case_number`` is not a case of this server.
        """
        async with self._tx():
            return await self._insert_review(
                platform,
                server_id,
                member_id,
                source,
                reason,
                now or utcnow(),
                case_number=case_number,
                message_id=message_id,
                channel_id=channel_id,
                scores=scores,
            )

    async def decide_review(
        self,
        review_id: int,
        decision: ReviewDecision,
        moderator_id: str,
        now: datetime | None = None,
        *,
        platform: str | None = None,
        server_id: str | None = None,
    ) -> ReviewItem:
        """Record a moderator's decision; returns the updated item.

        Args:
            platform, server_id: When given, an item of another server is treated as not found.

        Raises:
            ValueError: ``decision`` is ``OPEN``.
            ReviewNotFound: no such item (in that server).
            ReviewAlreadyDecided: the item already has a final decision (only ``INVESTIGATING`` may be replaced).
        """
        if decision is ReviewDecision.OPEN:
            raise ValueError("OPEN is not a decision")
        async with self._tx():
            row = await self._claim_review(review_id, decision, moderator_id, to_db_time(now or utcnow()),
                                           platform, server_id)
        return review_from_row(row)

    async def decide_review_opening(
        self,
        review_id: int,
        decision: ReviewDecision,
        case: CaseDraft,
        now: datetime | None = None,
        *,
        platform: str,
        server_id: str,
    ) -> tuple[ReviewItem, Case]:
        """:meth:`decide_review` (by ``case.moderator_id``) and open the case of the sanction it carries out,
        ``pending``, in ONE transaction: a stop before the sanction is carried out leaves the case to the next
        start (``pending_cases``), never the card decided with nothing recorded and nothing done.

        Returns:
            ``(item, case)``: the item as decided and the case opened.

        Raises:
            ValueError: ``decision`` is ``OPEN``.
            ReviewNotFound: no such item in that server.
            ReviewAlreadyDecided: the item already has a final decision (nothing written).
        """
        if decision is ReviewDecision.OPEN:
            raise ValueError("OPEN is not a decision")
        async with self._tx():
            row = await self._claim_review(review_id, decision, case.moderator_id, to_db_time(now or utcnow()),
                                           platform, server_id)
            opened = await self._insert_case(platform, server_id, case.member_id, case.action, case.reason,
                                             CaseStatus.PENDING, case.created_at, moderator_id=case.moderator_id,
                                             message_id=case.message_id, expires_at=case.expires_at)
        return review_from_row(row), opened

    async def dismiss_review(
        self,
        review_id: int,
        moderator_id: str,
        now: datetime | None = None,
        *,
        platform: str,
        server_id: str,
        steps: Sequence[int] = (),
    ) -> tuple[ReviewItem, Case | None]:
        """Dismiss review item ``review_id`` of this server (a false positive) and overturn its case, in ONE
        transaction: the item's decision becomes ``dismissed`` (claimed as :meth:`decide_review` claims it) and,
        when it has a case, that case's strikes are pardoned, its status becomes ``overturned`` and what it still
        does on the platform is owed its lift (:meth:`~bot.store.base.StoreBase._overturn_in_tx`: an applied ban's
        unban, an applied timeout's removal), as :meth:`decide_appeal` overturns; so are the ladder steps
        ``steps`` (case numbers) the case's strike crossed, those still applied and not lifted
        (:meth:`~bot.store.base.StoreBase._overturn_steps_in_tx`). A failed write or a stop leaves none of it: the
        item stays open (Dismiss can be clicked again), never dismissed while its case or its step still counts.

        Returns:
            ``(item, case)``: the item as decided, and its case as it was BEFORE the dismissal (``None``: the item
            has no case, or it is gone: then only the decision is recorded).

        Raises:
            ReviewNotFound: no such item in this server.
            ReviewAlreadyDecided: the item already has a final decision (nothing written).
        """
        when = to_db_time(now or utcnow())
        async with self._tx():
            row = await self._claim_review(review_id, ReviewDecision.DISMISSED, moderator_id, when, platform,
                                           server_id)
            case = None
            if row["case_number"] is not None:
                found = await self._one(
                    "SELECT * FROM cases WHERE platform = ? AND server_id = ? AND number = ?",
                    (platform, server_id, row["case_number"]),
                )
                if found is not None:
                    case = case_from_row(found)
                    await self._overturn_in_tx(platform, server_id, case.number, moderator_id, when)
                    await self._overturn_steps_in_tx(platform, server_id, case.number, steps, moderator_id, when)
        return review_from_row(row), case

    async def _claim_review(self, review_id: int, decision: ReviewDecision, moderator_id: str, when: str,
                            platform: str | None, server_id: str | None) -> Row:
        """Inside a transaction: record ``decision`` on an undecided item (a conditional update: of two moderators
        deciding one item exactly one gets it); returns the updated row.

        Raises:
            ReviewNotFound: no such item (in that server, when given).
            ReviewAlreadyDecided: the item already has a final decision.
        """
        scope, params = _scope_sql(platform, server_id)
        row = await self._one(
            "UPDATE review_items SET decision = ?, moderator_id = ?, decided_at = ? "
            f"WHERE id = ? AND decision IN ('open', 'investigating'){scope} RETURNING *",
            (decision.value, moderator_id, when, review_id, *params),
        )
        if row is None:
            old = await self._one(f"SELECT * FROM review_items WHERE id = ?{scope}", (review_id, *params))
            if old is None:
                raise ReviewNotFound(f"review item {review_id} not found")
            raise ReviewAlreadyDecided(review_id, old["decision"], old["moderator_id"])
        return row

    async def reopen_review(self, review_id: int, decision: ReviewDecision, moderator_id: str) -> bool:
        """Undo a claimed decision that could not be carried out (the member left meanwhile): back to ``open``,
        only if the item still holds exactly that decision by that moderator. Returns whether it was reopened."""
        async with self._tx():
            cur = await self._db.execute(
                "UPDATE review_items SET decision = 'open', moderator_id = NULL, decided_at = NULL "
                "WHERE id = ? AND decision = ? AND moderator_id = ?", (review_id, decision.value, moderator_id))
            n = cur.rowcount
            await cur.close()
        return n == 1

    async def set_review_card(self, review_id: int, card_message_id: str) -> None:
        """Remember the message id of the card posted for a review item.

        Raises:
            ReviewNotFound: no such item.
        """
        async with self._tx():
            cur = await self._db.execute(
                "UPDATE review_items SET card_message_id = ? WHERE id = ?", (card_message_id, review_id)
            )
            changed = cur.rowcount
            await cur.close()
        if changed != 1:
            raise ReviewNotFound(f"review item {review_id} not found")

    async def add_report(
        self,
        platform: str,
        server_id: str,
        reporter_id: str,
        member_id: str,
        reason: str,
        message_id: str | None = None,
        channel_id: str | None = None,
        now: datetime | None = None,
    ) -> ReviewItem:
        """Record a member's report and queue it (``source="report"``).

        A reporter reporting the same message again gets the existing review item back; nothing new is written.
        Several reporters of one message share that message's open review item (automod's or an earlier
        report's), and one reporter's repeated reports about a member share their open item, so a hostile member
        cannot flood the review queue; every other report is still recorded (``reports``). The same report arriving
        on two connections at once (two bot processes) is recorded once, both answered with its review item; one
        reporter's two reports about a member (no message) at once are both recorded and share one open item, as
        one after the other.
        """
        when = now or utcnow()
        async with self._tx():
            if message_id is not None:
                row = await self._one(
                    "SELECT r.* FROM reports p JOIN review_items r ON r.id = p.review_id WHERE p.platform = ? "
                    "AND p.server_id = ? AND p.reporter_id = ? AND p.message_id = ?",
                    (platform, server_id, reporter_id, message_id),
                )
                if row is not None:
                    return review_from_row(row)
                shared = await self._one(
                    "SELECT * FROM review_items WHERE platform = ? AND server_id = ? AND message_id = ? "
                    "AND decision IN ('open', 'investigating') ORDER BY id LIMIT 1",
                    (platform, server_id, message_id),
                )
            else:
                # No unique index states this rule (it is about OPEN items, and an item decided then reopened
                # after a refused sanction may stand beside a newer one): under PostgreSQL's READ COMMITTED two
                # processes filing this reporter's report about this member at once would both read "none open"
                # and open two items. The key makes the second wait for the first's commit, then read its item.
                await self._hold_key("report", platform, server_id, reporter_id, member_id)
                shared = await self._one(
                    "SELECT r.* FROM reports p JOIN review_items r ON r.id = p.review_id WHERE p.platform = ? "
                    "AND p.server_id = ? AND p.reporter_id = ? AND p.member_id = ? AND p.message_id IS NULL "
                    "AND r.decision IN ('open', 'investigating') ORDER BY r.id LIMIT 1",
                    (platform, server_id, reporter_id, member_id),
                )
            if shared is not None:
                item = review_from_row(shared)
                await self._db.execute(
                    "INSERT INTO reports (platform, server_id, reporter_id, member_id, message_id, channel_id, "
                    "reason, review_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (platform, server_id, reporter_id, member_id, message_id, channel_id, reason, item.id,
                     to_db_time(when)),
                )
                return item
            # The report row first, then its review item: the checks above are reads, and under PostgreSQL's READ
            # COMMITTED the same reporter's report of this message may be filed by another process between them and
            # here (an interaction delivered twice). The unique index reports_once_per_reporter keeps it once; the
            # loser's insert waits for the winner's commit, inserts nothing and answers with the winner's item.
            cur = await self._db.execute(
                "INSERT INTO reports (platform, server_id, reporter_id, member_id, message_id, channel_id, reason, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (platform, server_id, reporter_id, member_id, message_id, channel_id, reason, to_db_time(when)),
            )
            report_id = cur.lastrowid if cur.rowcount == 1 else None
            await cur.close()
            if report_id is None:
                row = await self._one(
                    "SELECT r.* FROM reports p JOIN review_items r ON r.id = p.review_id WHERE p.platform = ? "
                    "AND p.server_id = ? AND p.reporter_id = ? AND p.message_id = ?",
                    (platform, server_id, reporter_id, message_id),
                )
                assert row is not None  # the winner wrote its report and review item in one transaction
                return review_from_row(row)
            item = await self._insert_review(
                platform, server_id, member_id, "report", reason, when, message_id=message_id, channel_id=channel_id
            )
            await self._db.execute("UPDATE reports SET review_id = ? WHERE id = ?", (item.id, report_id))
        return item

    async def open_appeal(
        self,
        platform: str,
        server_id: str,
        case_number: int,
        member_id: str,
        text: str,
        now: datetime | None = None,
    ) -> int:
        """File an appeal of a case by its member and queue it (``source="appeal"``); returns the appeal id.

        Raises:
            CaseNotFound: no such case in this server (:func:`~bot.store.base.is_case_number`).
            NotCaseMember: ``member_id`` is not the case's member.
            AppealAlreadyOpen: the case already has an open appeal (also one filed by another process at the same
                moment: nothing of this one is recorded).
            AppealError: the case was already overturned, an appeal of it was already upheld (one appeal per case),
                or it only records a note (action ``log`` with no strike: a moderator's note, an unban, a reason
                change), which sanctions nothing.
        """
        when = now or utcnow()
        if not is_case_number(case_number):
            raise CaseNotFound(f"case #{case_number} not found in this server")
        async with self._tx():
            case = await self._one(
                "SELECT member_id, status, action FROM cases WHERE platform = ? AND server_id = ? AND number = ?",
                (platform, server_id, case_number),
            )
            if case is None:
                raise CaseNotFound(f"case #{case_number} not found in this server")
            if case["member_id"] != member_id:
                # after /mydata forget the case names the member's keyed pseudonym: it is still theirs to appeal
                salt = await self._one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
                if salt is None or case["member_id"] != pseudonym_of(salt[0], platform, server_id, member_id):
                    raise NotCaseMember(f"only the member of case #{case_number} can appeal it")
                member_id = case["member_id"]
            if case["status"] == "overturned":
                raise AppealError(f"case #{case_number} was already overturned")
            if case["action"] == ActionKind.LOG.label and not await self._one(
                "SELECT 1 FROM strikes WHERE platform = ? AND server_id = ? AND case_number = ?",
                (platform, server_id, case_number),
            ):  # a moderator's note, an unban or a reason change on record: nothing to overturn
                raise AppealError(f"case #{case_number} only records a note (no sanction, no strike): there is "
                                  "nothing to appeal")
            if await self._one(
                "SELECT 1 FROM appeals WHERE platform = ? AND server_id = ? AND case_number = ? AND status = 'open'",
                (platform, server_id, case_number),
            ):
                raise AppealAlreadyOpen(f"case #{case_number} already has an open appeal")
            if await self._one(
                "SELECT 1 FROM appeals WHERE platform = ? AND server_id = ? AND case_number = ? AND status = 'upheld'",
                (platform, server_id, case_number),
            ):  # one appeal per case: a moderator already looked at it and upheld it
                raise AppealError(f"case #{case_number} was appealed already and the appeal was upheld")
            item = await self._insert_review(
                platform, server_id, member_id, "appeal", text, when, case_number=case_number
            )
            # The check above is a read: under PostgreSQL's READ COMMITTED another process may file an appeal of
            # this case between it and this insert. The unique index appeals_one_open (one open appeal per case,
            # migration 0001 of both schemas) keeps the second one out; ON CONFLICT DO NOTHING makes the loser wait
            # for the winner's commit and insert nothing, answered as the check answers (and its review item is
            # rolled back with the transaction).
            cur = await self._db.execute(
                "INSERT INTO appeals (platform, server_id, case_number, member_id, text, review_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (platform, server_id, case_number, member_id, text, item.id, to_db_time(when)),
            )
            appeal_id = cur.lastrowid if cur.rowcount == 1 else None
            await cur.close()
            if appeal_id is None:
                raise AppealAlreadyOpen(f"case #{case_number} already has an open appeal")
        return appeal_id

    async def get_appeal(self, appeal_id: int) -> Appeal | None:
        """An appeal by id, or ``None``."""
        row = await self._read_one("SELECT * FROM appeals WHERE id = ?", (appeal_id,))
        return _appeal_from_row(row) if row else None

    async def decide_appeal(
        self, appeal_id: int, upheld: bool, moderator_id: str, now: datetime | None = None, *,
        steps: Sequence[int] = (),
    ) -> Appeal:
        """Decide an open appeal.

        Overturning sets the case's status to ``overturned`` and pardons its strikes (an applied ban or timeout not
        lifted yet is marked as owing its lift: :meth:`~bot.store.base.StoreBase._overturn_in_tx`), and overturns
        the same way, in the same transaction, the ladder steps ``steps`` (case numbers) its strike crossed, those
        still applied and not lifted (:meth:`~bot.store.base.StoreBase._overturn_steps_in_tx`); upholding leaves
        the case (``steps`` unused).
        The appeal's review item, if still undecided, is closed: ``dismissed`` when overturned, the decision
        matching the case's sanction (``warned``, ``timed_out``...; ``warned`` for non-sanctions) when upheld.

        Raises:
            AppealNotFound: no such appeal.
            AppealAlreadyDecided: it was already decided.
        """
        when = to_db_time(now or utcnow())
        status = "upheld" if upheld else "overturned"
        async with self._tx():
            row = await self._one("SELECT * FROM appeals WHERE id = ?", (appeal_id,))
            if row is None:
                raise AppealNotFound(f"appeal {appeal_id} not found")
            if row["status"] != "open":
                raise AppealAlreadyDecided(f"appeal {appeal_id} was already decided: {row['status']}")
            platform, server_id, number = row["platform"], row["server_id"], row["case_number"]
            # conditional: under PostgreSQL's READ COMMITTED another process may decide it between the read above
            # and this update (this one then waits for its row lock and sees its decision: no row, refused)
            updated = await self._one(
                "UPDATE appeals SET status = ?, moderator_id = ?, decided_at = ? WHERE id = ? AND status = 'open' "
                "RETURNING *",
                (status, moderator_id, when, appeal_id),
            )
            if updated is None:
                now_row = await self._one("SELECT status FROM appeals WHERE id = ?", (appeal_id,))
                raise AppealAlreadyDecided(f"appeal {appeal_id} was already decided: "
                                           f"{now_row['status'] if now_row else 'gone'}")
            case = await self._one(
                "SELECT action FROM cases WHERE platform = ? AND server_id = ? AND number = ?",
                (platform, server_id, number),
            )
            if upheld:
                action = ActionKind.parse(case["action"]) if case else ActionKind.NONE
                decision = _UPHELD_DECISION.get(action, ReviewDecision.WARNED)
            else:
                decision = ReviewDecision.DISMISSED
                # an applied ban or timeout overturned owes its lift from this commit on: a stop before the bot's
                # unban (or timeout removal) leaves it for the next start
                await self._overturn_in_tx(platform, server_id, number, moderator_id, when)
                await self._overturn_steps_in_tx(platform, server_id, number, steps, moderator_id, when)
            if row["review_id"] is not None:
                await self._db.execute(
                    "UPDATE review_items SET decision = ?, moderator_id = ?, decided_at = ? "
                    "WHERE id = ? AND decision IN ('open', 'investigating')",
                    (decision.value, moderator_id, when, row["review_id"]),
                )
        assert updated is not None
        return _appeal_from_row(updated)

    async def open_appeals(self, platform: str, server_id: str, member_id: str | None = None) -> list[Appeal]:
        """Open appeals of a server (optionally of one member), oldest first.

        A member's appeals include those stored under their keyed pseudonym (``/mydata forget``: an appeal filed
        before it was pseudonymised with it, one filed after it is filed under it, :meth:`open_appeal`), as
        :meth:`~bot.store.cases.CasesMixin.active_strikes` counts their strikes."""
        sql = "SELECT * FROM appeals WHERE platform = ? AND server_id = ? AND status = 'open'"
        params: tuple[str, ...] = (platform, server_id)
        async with self._guard():
            if member_id is not None:
                salt = await self._one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
                sql += " AND member_id IN (?, ?)"
                params += (member_id, pseudonym_of(salt[0], platform, server_id, member_id) if salt else member_id)
            rows = await self._all(sql + " ORDER BY id", params)
        return [_appeal_from_row(r) for r in rows]
