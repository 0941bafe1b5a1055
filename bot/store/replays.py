"""Verdict sets per policy version: what a replay needs (mixin of :class:`bot.store.sqlite.SqliteStore`).

A message's first verdict stays in ``verdicts`` (the mod log the bots use; its ``policy_version`` says which
policy judged it). A ``scan`` of already-recorded messages under another policy version re-judges them from their
stored scores and keeps that second set in ``replay_verdicts``, one row per ``(platform, server_id, message_id,
policy_version)`` (migration ``0005_replays.sql``). The verdict set of version V for a message is its ``verdicts``
row when that row was judged under V, else its ``replay_verdicts`` row for V.

Stored scores are combined scores (per label the highest over the whole text and its sentences, rounded to 4
decimals as ``Scores.as_dict`` writes them); ``policy_versions`` records which scoring plan (``[scoring] pieces``)
each policy version used, so a score is reused only for the same plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.core.models import LABELS, Scores, Verdict
from bot.core.records import MessageKey, SetVerdict
from bot.store.base import KEY_CHUNK, StoreBase
from bot.store.privacy import erased_hits, pseudonym_of
from bot.store.schema import dump_json, load_json, to_db_time, utcnow


def stored_scores_to_scores(stored: Mapping[str, float | None], model_name: str) -> Scores:
    """Rebuild :class:`Scores` from a stored ``{label: score or None}`` (``None`` = a label the model lacks)."""
    values = {label: float(v) for label, v in stored.items() if v is not None}
    missing = tuple(label for label in LABELS if stored.get(label) is None)
    return Scores(values=values, missing=missing, model=model_name)


def _set_verdict(key: MessageKey, row: Any) -> SetVerdict:
    hits = load_json(row["rule_hits"], [])
    scores = load_json(row["scores"], None) if row["scores"] is not None else None
    return SetVerdict(
        key=key, policy_version=row["policy_version"], flagged=bool(row["flagged"]),
        labels=tuple(load_json(row["labels"], [])), action=row["action"],
        rules=tuple(dict.fromkeys(str(h.get("rule")) for h in hits)), scores=scores,
        model_name=row["model_name"], model_version=row["model_version"],
    )


def _hits_json(v: Verdict, *, erased: bool) -> str:
    """``v``'s rule hits as stored (JSON ``[{"rule", "detail", "label", "action"}]``), the quotes of its message's
    text erased when ``erased``."""
    hits = dump_json([{"rule": h.rule, "detail": h.detail, "label": h.label, "action": h.action}
                      for h in v.rule_hits])
    return erased_hits(hits)[0] if erased else hits


_COLUMNS = "message_id, policy_version, flagged, labels, action, rule_hits, scores, model_name, model_version"


class ReplayMixin(StoreBase):
    """Verdict sets per policy version, stored scores for re-judging, and replay rows."""

    async def _by_keys(self, table: str, keys: Iterable[MessageKey], where: str = "",
                       params: tuple[Any, ...] = ()) -> list[tuple[MessageKey, Any]]:
        return await self._rows_by_keys(table, _COLUMNS.removeprefix("message_id, "), keys, where, params)

    async def recorded_verdicts(self, keys: Iterable[MessageKey]) -> dict[MessageKey, SetVerdict]:
        """The first verdict set: each known key's ``verdicts`` row (unknown keys are absent)."""
        return {key: _set_verdict(key, row) for key, row in await self._by_keys("verdicts", keys)}

    async def stored_scores(self, keys: Iterable[MessageKey], model_name: str,
                            model_version: str | None) -> dict[MessageKey, tuple[str, Scores]]:
        """Scores of ``model_name`` / ``model_version`` already stored for ``keys`` (in ``verdicts``, else in any
        replay): ``{key: (policy version that scored it, Scores)}``; keys without such scores are absent."""
        keys = list(keys)
        found: dict[MessageKey, tuple[str, Scores]] = {}
        for table in ("verdicts", "replay_verdicts"):
            rest = [k for k in keys if k not in found]
            if not rest:
                break
            for key, row in await self._by_keys(table, rest, " AND scores IS NOT NULL AND model_name = ? "
                                                "AND model_version IS NOT DISTINCT FROM ?", (model_name, model_version)):
                if key not in found:
                    found[key] = (row["policy_version"], stored_scores_to_scores(load_json(row["scores"], {}),
                                                                                 row["model_name"]))
        return found

    async def _replay_members(self, verdicts: Sequence[Verdict]) -> tuple[dict[MessageKey, str], set[MessageKey]]:
        """Inside a transaction: the member id each replayed message's row names, by message key, and the keys
        whose member id is a forgotten member's pseudonym. A recorded message: its ``verdicts`` row's (the
        pseudonym once its member was forgotten, :meth:`forget_member`); one not recorded: its author's pseudonym
        when that member of that server was forgotten, else the author id."""
        out = {v.message.key: v.message.author.id for v in verdicts}
        pseudonymous: set[MessageKey] = set()
        by_server: dict[tuple[str, str], list[str]] = {}
        for platform, server_id, message_id in out:
            by_server.setdefault((platform, server_id), []).append(message_id)
        salt = await self._one("SELECT value FROM store_meta WHERE key = 'pseudonym_salt'")
        for (platform, server_id), ids in by_server.items():
            forgotten: set[str] = set()
            if salt is not None:
                forgotten = {r[0] for r in await self._all(
                    "SELECT pseudonym FROM member_pseudonyms WHERE platform = ? AND server_id = ?",
                    (platform, server_id))}
                for message_id in ids if forgotten else ():
                    key = (platform, server_id, message_id)
                    pseudonym = pseudonym_of(salt[0], platform, server_id, out[key])
                    if pseudonym in forgotten:
                        out[key] = pseudonym
            for start in range(0, len(ids), KEY_CHUNK):
                chunk = ids[start : start + KEY_CHUNK]
                for row in await self._all(
                    "SELECT message_id, member_id FROM verdicts WHERE platform = ? AND server_id = ? "
                    f"AND message_id IN ({','.join('?' * len(chunk))})", (platform, server_id, *chunk)):
                    out[(platform, server_id, row[0])] = row[1]
            pseudonymous.update(k for k in ((platform, server_id, m) for m in ids) if out[k] in forgotten)
        return out, pseudonymous

    async def _erased_texts(self, keys: Iterable[MessageKey]) -> set[MessageKey]:
        """Inside a transaction: the keys of recorded messages whose text was erased (retention, forgetting)."""
        by_server: dict[tuple[str, str], list[str]] = {}
        for platform, server_id, message_id in dict.fromkeys(keys):
            by_server.setdefault((platform, server_id), []).append(message_id)
        out: set[MessageKey] = set()
        for (platform, server_id), ids in by_server.items():
            for start in range(0, len(ids), KEY_CHUNK):
                chunk = ids[start : start + KEY_CHUNK]
                out.update((platform, server_id, r[0]) for r in await self._all(
                    "SELECT message_id FROM messages WHERE platform = ? AND server_id = ? AND purged_at IS NOT NULL "
                    f"AND message_id IN ({','.join('?' * len(chunk))})", (platform, server_id, *chunk)))
        return out

    async def record_replay(self, verdicts: Sequence[Verdict], *, model_version: str | None) -> int:
        """Store ``verdicts`` (judged in a replay) as their policy version's set, replacing that version's earlier
        rows for the same messages (a replay of a replay is idempotent). One transaction; returns rows written.

        A row's ``member_id`` is the one the mod log already holds for that message (:meth:`_replay_members`), not
        the export's author id: after ``/mydata forget`` the replay keeps the member's pseudonym and never writes
        their real id next to it. Of a message whose text was erased, and of any message whose row names a
        forgotten member's pseudonym (recorded or not: the mod log keeps no words of theirs), the rule hits' quotes
        of it are erased too (:func:`bot.store.privacy.erased_hits`), as retention and forgetting erased them in its
        verdict."""
        now = to_db_time(utcnow())
        async with self._tx():
            members, pseudonymous = await self._replay_members(verdicts)
            erased = pseudonymous | await self._erased_texts(v.message.key for v in verdicts)
            rows = [
                (*v.message.key, v.policy_version, members[v.message.key], v.message.channel.id,
                 dump_json(v.scores.as_dict()) if v.scores else None,
                 _hits_json(v, erased=v.message.key in erased),
                 dump_json(list(v.labels)), int(v.flagged), v.action.label, v.strike_points, v.exempt,
                 v.scores.model if v.scores else "", model_version, int(v.raid_mode), now)
                for v in verdicts
            ]
            await self._db.executemany(
                "INSERT INTO replay_verdicts (platform, server_id, message_id, policy_version, member_id, "
                "channel_id, scores, rule_hits, labels, flagged, action, strike_points, exempt, model_name, "
                "model_version, raid_mode, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (platform, server_id, message_id, policy_version) DO UPDATE SET "
                "member_id = excluded.member_id, channel_id = excluded.channel_id, scores = excluded.scores, "
                "rule_hits = excluded.rule_hits, labels = excluded.labels, flagged = excluded.flagged, "
                "action = excluded.action, strike_points = excluded.strike_points, exempt = excluded.exempt, "
                "model_name = excluded.model_name, model_version = excluded.model_version, "
                "raid_mode = excluded.raid_mode, judged_at = excluded.judged_at",
                rows,
            )
        return len(rows)

    async def note_policy_versions(self, pieces: Mapping[str, str]) -> None:
        """Remember each policy version's ``[scoring] pieces`` (``{version: "sentences" | "whole"}``)."""
        now = to_db_time(utcnow())
        async with self._tx():
            await self._db.executemany(
                "INSERT INTO policy_versions (version, scoring_pieces, first_seen) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [(v, p, now) for v, p in pieces.items()],
            )

    async def policy_pieces(self, versions: Iterable[str]) -> dict[str, str]:
        """``{version: scoring pieces}`` for the versions recorded by :meth:`note_policy_versions`."""
        versions = list(dict.fromkeys(versions))
        if not versions:
            return {}
        rows = await self._read_all(
            f"SELECT version, scoring_pieces FROM policy_versions WHERE version IN ({','.join('?' * len(versions))})",
            versions,
        )
        return {r[0]: r[1] for r in rows}
