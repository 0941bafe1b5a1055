"""Per-server effective policies: default file < server file < runtime overrides stored in the mod log.

Layer: ``bot.core``. The override store is a port (:class:`OverrideStore`), implemented by ``SqliteStore``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any, Protocol

from bot.core.policy import (
    DEFAULT_POLICY_PATH,
    Policy,
    PolicyError,
    load_policy,
    server_of_policy_file,
    server_policy_path,
)

log = logging.getLogger(__name__)

#: A Discord guild id (snowflake: 17-20 digits), as a DiscordChatExporter export records it.
_SNOWFLAKE = re.compile(r"\d{17,20}")
#: A Slack team id: ``T`` (a workspace) or ``E`` (an Enterprise Grid organization, as an org-wide export records
#: it) then upper-case letters and digits.
_SLACK_TEAM = re.compile(r"[TE][A-Z0-9]{2,}")

#: Scope under which policy overrides are stored; the key is the dotted path into the policy document.
OVERRIDE_SCOPE = "policy"


class OverrideStore(Protocol):
    """Where runtime policy overrides live (with an audit trail)."""

    async def list_policy_overrides(self, platform: str, server_id: str) -> dict[str, Any]:
        """``{dotted key: value}`` of a server's runtime overrides."""
        ...

    async def set_policy_override(
        self, platform: str, server_id: str, scope: str, key: str, value: Any, moderator_id: str | None
    ) -> None:
        """Store (``value`` not ``None``) or remove (``None``) an override and audit the change."""
        ...


class PolicyRegistry:
    """Loads, caches and changes the effective policy of each server.

    Args:
        default_path: The default policy file (``bot/config/default.toml``).
        servers_dir: Folder of per-server override files (``config/servers``); may not exist.
        store: Runtime override store, or ``None`` for file-only policies (``scan --policy``).
        extra_files: Further files layered after the default for every server (``--policy FILE``).

    Raises:
        PolicyError: at construction, when the default (plus extra files) is invalid: config errors are fatal at
            startup, not warnings at run time.
    """

    def __init__(
        self,
        default_path: Path = DEFAULT_POLICY_PATH,
        servers_dir: Path | None = None,
        store: OverrideStore | None = None,
        extra_files: tuple[Path, ...] = (),
    ) -> None:
        self.default_path = Path(default_path)
        self.servers_dir = servers_dir
        self.store = store
        self.extra_files = tuple(Path(p) for p in extra_files)
        self.base = load_policy(self.default_path, *self.extra_files)
        self._cache: dict[tuple[str, str], Policy] = {}
        self._lock = asyncio.Lock()

    def server_file(self, platform: str, server_id: str) -> Path | None:
        """The server's own policy file in ``servers_dir``, or ``None``: ``<platform>-<server id>.toml``; for a
        chat export (platform ``"export"``) whose id is a Discord snowflake, i.e. a DiscordChatExporter export of
        that guild, ``discord-<guild id>.toml`` when there is no ``export-<id>.toml``, so a scan of a guild's export
        is judged by the same file as the bot in that guild; likewise ``slack-<team id>.toml`` for a Slack export
        recorded under its team id (``T``, or ``E`` for an Enterprise Grid organization, then upper-case letters and
        digits)."""
        if self.servers_dir is None:
            return None
        p = server_policy_path(self.servers_dir, platform, server_id)
        if p.exists():
            return p
        if platform == "export" and _SNOWFLAKE.fullmatch(server_id):
            p = server_policy_path(self.servers_dir, "discord", server_id)
            if p.exists():
                return p
        if platform == "export" and _SLACK_TEAM.fullmatch(server_id):
            p = server_policy_path(self.servers_dir, "slack", server_id)
            if p.exists():
                return p
        return None

    def _files_for(self, platform: str, server_id: str) -> list[Path]:
        own = self.server_file(platform, server_id)
        return [self.default_path, *self.extra_files, *([own] if own is not None else [])]

    def validate_servers(self, platform: str | None = None) -> int:
        """Load every server file (``<platform>-<server id>.toml``) in ``servers_dir`` and check it for its server;
        called at startup so a bad file stops the bot with a clear error instead of failing on the first message.

        Returns:
            The number of server files checked.

        Raises:
            PolicyError: naming the file, the key and the reason (e.g. ``moderator_roles`` holding the server id).
        """
        if self.servers_dir is None or not self.servers_dir.is_dir():
            return 0
        n = 0
        for path in sorted(self.servers_dir.glob("*.toml")):
            named = server_of_policy_file(path)
            if named is None or (platform is not None and named[0] != platform):
                continue
            plat, server_id = named
            load_policy(*self._files_for(plat, server_id)).check_for_server(server_id, str(path))
            n += 1
        return n

    async def get(self, platform: str, server_id: str) -> Policy:
        """The effective policy of a server (cached until changed): its files, then its stored overrides (an
        override the files no longer accept is logged and left out).

        Raises:
            PolicyError: a policy file is invalid, naming the file, the key and the reason.
        """
        key = (platform, server_id)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        async with self._lock:
            if key in self._cache:
                return self._cache[key]
            overrides = await self.store.list_policy_overrides(platform, server_id) if self.store else {}
            files = self._files_for(platform, server_id)
            policy = load_policy(*files)  # a bad file is the caller's error (PolicyError names it), never a guess
            if overrides:
                try:
                    policy = load_policy(*files, overrides=overrides)
                    policy.check_for_server(server_id, "override")
                except PolicyError as exc:
                    log.error("invalid stored override for %s/%s (%s); using the policy files only", platform,
                              server_id, exc)
                    policy = load_policy(*files)
            policy.check_for_server(server_id, str(files[-1]))
            self._cache[key] = policy
            return policy

    async def set_override(
        self, platform: str, server_id: str, key: str, value: Any, moderator_id: str | None
    ) -> Policy:
        """Validate and store a runtime override (``value=None`` resets the key to the file's value).

        Returns:
            The new effective policy.

        Raises:
            PolicyError: the key or value is invalid; nothing is stored.
            RuntimeError: there is no override store.
        """
        if self.store is None:
            raise RuntimeError("this policy registry has no override store")
        overrides = await self.store.list_policy_overrides(platform, server_id)
        if value is None:
            overrides.pop(key, None)
        else:
            overrides[key] = value
        policy = load_policy(*self._files_for(platform, server_id), overrides=overrides)
        policy.check_for_server(server_id, f"override {key}")
        await self.store.set_policy_override(platform, server_id, OVERRIDE_SCOPE, key, value, moderator_id)
        self._cache[(platform, server_id)] = policy
        return policy

    def invalidate(self, platform: str | None = None, server_id: str | None = None) -> None:
        """Forget cached policies (all, or one server's)."""
        if platform is None or server_id is None:
            self._cache.clear()
        else:
            self._cache.pop((platform, server_id), None)
