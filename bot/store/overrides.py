"""Runtime policy overrides as the policy registry wants them (mixin-free adapter over :class:`SqliteStore`).

Layer: ``bot.store``. Used by every bot process (Discord, Slack) through the composition root.
"""

from __future__ import annotations

from typing import Any


class OverrideBridge:
    """Adapts ``SqliteStore``'s override API to the ``OverrideStore`` port ``PolicyRegistry`` expects.

    The store returns ``list[PolicyOverride]`` and accepts scopes ``server``/``channel:<id>``...; the registry
    wants ``{dotted key: value}`` and removes with ``value=None``. Overrides are kept under scope ``"server"``
    (the dotted key itself names channels: ``channels.<id>.thresholds...``).
    """

    SCOPE = "server"

    def __init__(self, store: Any) -> None:
        self.store = store

    async def list_policy_overrides(self, platform: str, server_id: str) -> dict[str, Any]:
        """``{dotted key: value}`` of a server's overrides."""
        rows = await self.store.list_policy_overrides(platform, server_id, self.SCOPE)
        return {r.key: r.value for r in rows}

    async def set_policy_override(self, platform: str, server_id: str, scope: str, key: str, value: Any,
                                  moderator_id: str | None) -> None:
        """Store (or, for ``None``, remove) an override; the store audits both."""
        if value is None:
            await self.store.reset_policy_override(platform, server_id, self.SCOPE, key, moderator_id)
        else:
            await self.store.set_policy_override(platform, server_id, self.SCOPE, key, value, moderator_id)
