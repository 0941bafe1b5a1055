"""Per-server policy overrides with an audit trail (mixin of :class:`bot.store.sqlite.SqliteStore`).

An override is ``(scope, key) -> JSON value`` for one server. ``scope`` is ``"server"`` or ``"<kind>:<id>"`` with
kind ``channel``, ``category`` or ``role``. Every set and reset writes a ``policy_changes`` row (who, when, old,
new) in the same transaction. Validating keys and values against the policy schema is the policy module's job.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bot.core.records import PolicyChange, PolicyOverride
from bot.store.base import Row, StoreBase
from bot.store.schema import dump_json, load_json, req_db_time, to_db_time, utcnow

_SCOPE = re.compile(r"^(server|(channel|category|role):[^\s:]+)$")


def check_scope(scope: str) -> str:
    """Return ``scope`` if valid (``"server"``, ``"channel:<id>"``, ``"category:<id>"``, ``"role:<id>"``).

    Raises:
        ValueError: anything else.
    """
    if not _SCOPE.match(scope):
        raise ValueError(
            f"invalid policy scope {scope!r} (use 'server', 'channel:<id>', 'category:<id>' or 'role:<id>')"
        )
    return scope


def _override(row: Row) -> PolicyOverride:
    return PolicyOverride(
        platform=row["platform"],
        server_id=row["server_id"],
        scope=row["scope"],
        key=row["key"],
        value=load_json(row["value"]),
        updated_by=row["updated_by"],
        updated_at=req_db_time(row["updated_at"]),
    )


def _change(row: Row) -> PolicyChange:
    return PolicyChange(
        id=row["id"],
        platform=row["platform"],
        server_id=row["server_id"],
        scope=row["scope"],
        key=row["key"],
        old=load_json(row["old_value"]),
        new=load_json(row["new_value"]),
        action=row["action"],
        moderator_id=row["moderator_id"],
        changed_at=req_db_time(row["changed_at"]),
    )


class PolicyMixin(StoreBase):
    """Policy override storage."""

    async def get_policy_override(self, platform: str, server_id: str, scope: str, key: str) -> Any | None:
        """The override's JSON value, or ``None`` when not overridden."""
        row = await self._read_one(
            "SELECT value FROM policy_overrides WHERE platform = ? AND server_id = ? AND scope = ? AND key = ?",
            (platform, server_id, check_scope(scope), key),
        )
        return load_json(row[0]) if row else None

    async def list_policy_overrides(
        self, platform: str, server_id: str, scope: str | None = None
    ) -> list[PolicyOverride]:
        """All overrides of a server (optionally one scope), ordered by scope then key."""
        sql = "SELECT * FROM policy_overrides WHERE platform = ? AND server_id = ?"
        params: tuple[str, ...] = (platform, server_id)
        if scope is not None:
            sql += " AND scope = ?"
            params += (check_scope(scope),)
        rows = await self._read_all(sql + " ORDER BY scope, key", params)
        return [_override(r) for r in rows]

    async def set_policy_override(
        self,
        platform: str,
        server_id: str,
        scope: str,
        key: str,
        value: Any,
        moderator_id: str | None,
        now: datetime | None = None,
    ) -> PolicyChange:
        """Set an override (any JSON-serialisable ``value``) and audit it; returns the audit row.

        Raises:
            ValueError: invalid scope.
            TypeError: ``value`` is not JSON-serialisable.
        """
        check_scope(scope)
        new = dump_json(value)
        when = to_db_time(now or utcnow())
        async with self._tx():
            # The old value is read, then the new one written: under PostgreSQL's READ COMMITTED another process's
            # set or reset of this key may commit in between, and the audit row would name a value already replaced
            # (two changes at once both "from" the value before them). The key keeps the other waiting until this
            # transaction ends, so it reads what this one wrote (SQLite: BEGIN IMMEDIATE already does).
            await self._hold_key("policy", platform, server_id, scope, key)
            old = await self._one(
                "SELECT value FROM policy_overrides WHERE platform = ? AND server_id = ? AND scope = ? AND key = ?",
                (platform, server_id, scope, key),
            )
            await self._db.execute(
                "INSERT INTO policy_overrides (platform, server_id, scope, key, value, updated_by, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (platform, server_id, scope, key) DO UPDATE SET "
                "value = excluded.value, "
                "updated_by = excluded.updated_by, updated_at = excluded.updated_at",
                (platform, server_id, scope, key, new, moderator_id, when),
            )
            row = await self._audit(
                platform, server_id, scope, key, old[0] if old else None, new, "set", moderator_id, when
            )
        return _change(row)

    async def reset_policy_override(
        self,
        platform: str,
        server_id: str,
        scope: str,
        key: str,
        moderator_id: str | None,
        now: datetime | None = None,
    ) -> PolicyChange | None:
        """Remove an override (back to the config default) and audit it; ``None`` when there was none."""
        check_scope(scope)
        when = to_db_time(now or utcnow())
        async with self._tx():
            await self._hold_key("policy", platform, server_id, scope, key)  # see set_policy_override
            old = await self._one(
                "DELETE FROM policy_overrides WHERE platform = ? AND server_id = ? AND scope = ? AND key = ? "
                "RETURNING value",
                (platform, server_id, scope, key),
            )
            if old is None:
                return None
            row = await self._audit(platform, server_id, scope, key, old[0], None, "reset", moderator_id, when)
        return _change(row)

    async def policy_changes(
        self, platform: str, server_id: str, key: str | None = None, limit: int = 50
    ) -> list[PolicyChange]:
        """Audit trail of a server's overrides, newest first (optionally of one key)."""
        sql = "SELECT * FROM policy_changes WHERE platform = ? AND server_id = ?"
        params: tuple[str, ...] = (platform, server_id)
        if key is not None:
            sql += " AND key = ?"
            params += (key,)
        rows = await self._read_all(sql + " ORDER BY id DESC LIMIT ?", (*params, limit))
        return [_change(r) for r in rows]

    async def _audit(
        self,
        platform: str,
        server_id: str,
        scope: str,
        key: str,
        old: str | None,
        new: str | None,
        action: str,
        moderator_id: str | None,
        when: str,
    ) -> Row:
        row = await self._one(
            "INSERT INTO policy_changes (platform, server_id, scope, key, old_value, new_value, action, "
            "moderator_id, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
            (platform, server_id, scope, key, old, new, action, moderator_id, when),
        )
        assert row is not None
        return row
