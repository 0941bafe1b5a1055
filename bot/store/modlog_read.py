"""Read queries of the live mod-log report (``python -m bot report``): every server, case, review item, appeal,
strike and raid of the mod log, read-only (mixin of :class:`bot.store.sqlite.SqliteStore`).

Each method reads one server's whole history in one query (20,000 cases, 5,000 strikes: 0.7 s in all on a 2-core
AMD EPYC, ``python -m bench.modlog_report``); nothing here writes. Times come back as UTC-aware datetimes.
"""

from __future__ import annotations

from datetime import datetime

from bot.core.models import RaidAlert, ReviewItem, Strike
from bot.core.records import Appeal, CaseRecord, VerdictPoint
from bot.store.base import StoreBase, case_from_row, review_from_row, strike_from_row
from bot.store.reviews import _appeal_from_row
from bot.store.schema import from_db_time, load_json, req_db_time


class ModLogReadMixin(StoreBase):
    """Whole-history reads for the live mod-log report."""

    async def modlog_servers(self) -> list[tuple[str, str]]:
        """``(platform, server id)`` of every server with a verdict, a case or a review item, sorted."""
        rows = await self._read_all(
            "SELECT platform, server_id FROM verdicts UNION SELECT platform, server_id FROM cases "
            "UNION SELECT platform, server_id FROM review_items ORDER BY 1, 2")
        return [(r[0], r[1]) for r in rows]

    async def modlog_cases(self, platform: str, server_id: str) -> list[CaseRecord]:
        """Every case of a server, oldest first, with the labels and rules of its message's latest verdict."""
        rows = await self._read_all(
            "SELECT c.*, v.labels AS v_labels, v.rule_hits AS v_rules, v.channel_id AS v_channel FROM cases c "
            "LEFT JOIN verdicts v ON v.id = (SELECT MAX(id) FROM verdicts x WHERE x.platform = c.platform "
            " AND x.server_id = c.server_id AND x.message_id = c.message_id) "
            "WHERE c.platform = ? AND c.server_id = ? ORDER BY c.number",
            (platform, server_id))
        out = []
        for r in rows:
            hits = load_json(r["v_rules"], [])
            out.append(CaseRecord(case=case_from_row(r), labels=tuple(load_json(r["v_labels"], [])),
                                  rules=tuple(dict.fromkeys(str(h.get("rule", "?")) for h in hits)),
                                  channel_id=r["v_channel"]))
        return out

    async def modlog_reviews(self, platform: str, server_id: str) -> list[ReviewItem]:
        """Every review item of a server (open and decided), oldest first."""
        rows = await self._read_all(
            "SELECT * FROM review_items WHERE platform = ? AND server_id = ? ORDER BY id", (platform, server_id))
        return [review_from_row(r) for r in rows]

    async def modlog_review_times(self, platform: str, server_id: str) -> dict[int, datetime]:
        """When each review item of a server was opened: ``{review id: created_at}``."""
        rows = await self._read_all(
            "SELECT id, created_at FROM review_items WHERE platform = ? AND server_id = ?", (platform, server_id))
        return {r[0]: req_db_time(r[1]) for r in rows}

    async def modlog_appeals(self, platform: str, server_id: str) -> list[Appeal]:
        """Every appeal of a server (open, upheld, overturned), oldest first."""
        rows = await self._read_all(
            "SELECT * FROM appeals WHERE platform = ? AND server_id = ? ORDER BY id", (platform, server_id))
        return [_appeal_from_row(r) for r in rows]

    async def modlog_strikes(self, platform: str, server_id: str) -> list[Strike]:
        """Every strike of a server (pardoned and expired ones too), oldest first."""
        rows = await self._read_all(
            "SELECT * FROM strikes WHERE platform = ? AND server_id = ? ORDER BY created_at, id",
            (platform, server_id))
        return [strike_from_row(r) for r in rows]

    async def modlog_verdict_points(self, platform: str, server_id: str) -> list[VerdictPoint]:
        """When each message of a server was judged and whether it was flagged (the charts over time)."""
        rows = await self._read_all(
            "SELECT judged_at, flagged FROM verdicts WHERE platform = ? AND server_id = ? ORDER BY judged_at",
            (platform, server_id))
        return [VerdictPoint(t, bool(r[1])) for r in rows if (t := from_db_time(r[0])) is not None]

    async def modlog_raids(self, platform: str, server_id: str) -> list[tuple[int, RaidAlert, tuple[str, ...]]]:
        """Every raid alert of a server, oldest first: ``(raid id, alert, raiders)``. ``raiders``: the alert's
        members (the burst window) and then every other author of a flagged message in the raid's channel posted
        from the alert's start until the channel's next alert (a burst window holds only the first few)."""
        rows = await self._read_all(
            "SELECT * FROM raids WHERE platform = ? AND server_id = ? ORDER BY started_at, id", (platform, server_id))
        out = []
        for i, r in enumerate(rows):
            nxt = next((x["started_at"] for x in rows[i + 1:] if x["channel_id"] == r["channel_id"]), None)
            until, params = ("", ()) if nxt is None else (" AND m.created_at < ?", (nxt,))  # typed on PostgreSQL
            authors = await self._read_all(
                "SELECT v.member_id, MIN(m.created_at) AS first_at FROM verdicts v JOIN messages m ON m.platform = "
                "v.platform AND m.server_id = v.server_id AND m.message_id = v.message_id WHERE v.platform = ? AND "
                f"v.server_id = ? AND v.channel_id = ? AND v.flagged = 1 AND m.created_at >= ?{until} "
                "GROUP BY v.member_id ORDER BY first_at",
                (platform, server_id, r["channel_id"], r["started_at"], *params))
            members = tuple(load_json(r["members"], []))
            raiders = tuple(dict.fromkeys([*members, *(a[0] for a in authors)]))
            out.append((r["id"], RaidAlert(server_id=r["server_id"], channel_id=r["channel_id"],
                                           started_at=req_db_time(r["started_at"]), members=members,
                                           count=r["count"], reason=r["reason"]), raiders))
        return out
