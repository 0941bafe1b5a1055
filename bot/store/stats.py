"""Moderation statistics: ``/modstats`` and the scan summary (mixin of :class:`bot.store.sqlite.SqliteStore`).

Periods: verdict counts use the time the verdict was written (``judged_at``); cases, strikes and raids use their
own times (message event time for automod cases, ``started_at`` for raids).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from bot.core.records import MemberPoints, ModStats, ScanSummary, SignalStats
from bot.store.base import StoreBase
from bot.store.schema import load_json, to_db_time

_EPOCH = "0000"  # sorts before every stored time

_UNDECIDED = frozenset({None, "open", "investigating"})


class StatsMixin(StoreBase):
    """Aggregates over the mod log."""

    async def modstats(self, platform: str, server_id: str, since: datetime) -> ModStats:
        """Per-label and per-rule outcomes of flagged messages whose verdict was written at or after ``since``.

        For each label / rule: flags, moderator decisions on the message's latest ``automod`` review item,
        dismissals among them (false positives), cases opened for the message and how many were overturned.
        """
        rows = await self._read_all(
            "SELECT v.labels, v.rule_hits, "
            "(SELECT r.decision FROM review_items r WHERE r.platform = v.platform AND r.server_id = v.server_id "
            " AND r.message_id = v.message_id AND r.source = 'automod' ORDER BY r.id DESC LIMIT 1) AS decision, "
            "(SELECT COUNT(*) FROM cases c WHERE c.platform = v.platform AND c.server_id = v.server_id "
            " AND c.message_id = v.message_id) AS cases, "
            "(SELECT COUNT(*) FROM cases c WHERE c.platform = v.platform AND c.server_id = v.server_id "
            " AND c.message_id = v.message_id AND c.status = 'overturned') AS overturned "
            "FROM verdicts v WHERE v.platform = ? AND v.server_id = ? AND v.flagged = 1 AND v.judged_at >= ?",
            (platform, server_id, to_db_time(since)),
        )
        per_label: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
        per_rule: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
        for row in rows:
            decided = row["decision"] not in _UNDECIDED
            outcome = (1, int(decided), int(row["decision"] == "dismissed"), row["cases"], row["overturned"])
            names = [(per_label, label) for label in dict.fromkeys(load_json(row["labels"], []))]
            names += [(per_rule, rule) for rule in dict.fromkeys(h["rule"] for h in load_json(row["rule_hits"], []))]
            for table, name in names:
                counts = table[name]
                for i, value in enumerate(outcome):
                    counts[i] += value
        return ModStats(
            since=since,
            per_label={k: SignalStats(*v) for k, v in sorted(per_label.items())},
            per_rule={k: SignalStats(*v) for k, v in sorted(per_rule.items())},
        )

    async def summary(self, platform: str, server_id: str, since: datetime | None = None, top: int = 10) -> ScanSummary:
        """Counts of one server for dashboards; see :meth:`scan_summary`."""
        return await self.scan_summary([(platform, server_id)], since, top)

    async def scan_summary(
        self, servers: Sequence[tuple[str, str]], since: datetime | None = None, top: int = 10
    ) -> ScanSummary:
        """Counts for the scan summary over ``servers`` (``(platform, server_id)`` pairs), since ``since`` or ever.

        Verdicts, flagged verdicts per label, strongest actions, cases by status and raids summed over the servers,
        and the ``top`` members by unpardoned strike points, each member's points counted per server (as the
        escalation ladder counts them), never summed across servers.
        """
        start = to_db_time(since) if since else _EPOCH
        messages = flagged = raids = 0
        per_label: Counter[str] = Counter()
        actions: Counter[str] = Counter()
        cases: Counter[str] = Counter()
        points: Counter[tuple[str, str, str]] = Counter()  # (platform, server_id, member_id) -> points
        strikes: Counter[tuple[str, str, str]] = Counter()
        scope = "platform = ? AND server_id = ?"
        async with self._guard():
            for platform, server_id in dict.fromkeys(servers):
                server = (platform, server_id, start)
                totals = await self._one(
                    f"SELECT COUNT(*), COALESCE(SUM(flagged), 0) FROM verdicts WHERE {scope} AND judged_at >= ?",
                    server,
                )
                raid_row = await self._one(f"SELECT COUNT(*) FROM raids WHERE {scope} AND started_at >= ?", server)
                assert totals is not None and raid_row is not None
                messages, flagged, raids = messages + totals[0], flagged + totals[1], raids + raid_row[0]
                for row in await self._all(
                    "SELECT j.value, COUNT(*) FROM verdicts v, json_each(v.labels) j WHERE v.platform = ? "
                    "AND v.server_id = ? AND v.judged_at >= ? AND v.flagged = 1 GROUP BY j.value",
                    server,
                ):
                    per_label[row[0]] += row[1]
                for row in await self._all(
                    f"SELECT action, COUNT(*) FROM verdicts WHERE {scope} AND judged_at >= ? AND action != 'none' "
                    "GROUP BY action",
                    server,
                ):
                    actions[row[0]] += row[1]
                for row in await self._all(
                    f"SELECT status, COUNT(*) FROM cases WHERE {scope} AND created_at >= ? GROUP BY status", server
                ):
                    cases[row[0]] += row[1]
                for row in await self._all(
                    f"SELECT member_id, SUM(points), COUNT(*) FROM strikes WHERE {scope} AND created_at >= ? "
                    "AND pardoned_at IS NULL GROUP BY member_id",
                    server,
                ):
                    member = (platform, server_id, row[0])
                    points[member] += row[1]
                    strikes[member] += row[2]
        ranked = sorted(points, key=lambda m: (-points[m], -strikes[m], m))[:top]
        return ScanSummary(
            messages=messages,
            flagged=flagged,
            flagged_per_label=dict(sorted(per_label.items(), key=lambda kv: (-kv[1], kv[0]))),
            actions=dict(sorted(actions.items(), key=lambda kv: (-kv[1], kv[0]))),
            cases_by_status=dict(cases),
            raids=raids,
            top_members=tuple(MemberPoints(*m, points[m], strikes[m]) for m in ranked),
        )
