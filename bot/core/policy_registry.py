"""Per-server effective policies: default file < server file < runtime overrides stored in the mod log.

Layer: ``bot.core``. The override store is a port (:class:`OverrideStore`), implemented by ``SqliteStore``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from bot.core.policy import (
    DEFAULT_POLICY_PATH,
    Policy,
    PolicyError,
    check_replacement_default,
    load_policy,
    platform_id_problems,
    read_toml,
    server_policy_path,
    set_dotted,
)

log = logging.getLogger(__name__)

#: A Discord guild id (snowflake: 17-20 digits), as a DiscordChatExporter export records it.
_SNOWFLAKE = re.compile(r"\d{17,20}")
#: A Slack team id: ``T`` (a workspace) or ``E`` (an Enterprise Grid organization, as an org-wide export records
#: it) then upper-case letters and digits.
_SLACK_TEAM = re.compile(r"[TE][A-Z0-9]{2,}")

#: The platforms a server's own file may name: the bots' (``discord``, ``slack``) and a scanned export's.
FILE_PLATFORMS = ("discord", "slack", "export")
#: Names in the servers folder that are no server's file and are left alone: hidden files and editor backups.
_LEFT_ALONE = re.compile(r"(?is)\..*|.*~|.*\.(?:bak|orig|old|swp|swo|rej)")
#: An ending a server's file was meant to have (``.TOML``, ``.tml``, Notepad's ``.toml.txt``).
_TOMLISH = re.compile(r"(?i)(.+?)\.(?:toml|tml|tmol|toml\.txt)")


def file_server(name: str) -> tuple[str, str] | str:
    """The ``(platform, server id)`` a file in the servers folder is read for, from its name
    ``<platform>-<server id>.toml``; or, for a name no server's file has, why (one clause, naming the name it needs
    when that is plain: ``discord-123456789012345678.TOML`` -> "... rename it to discord-123456789012345678.toml").

    A Discord server id is 17-20 digits and a Slack one a team id (``T`` or ``E`` then upper-case letters and
    digits), as the bots look them up; ``export-<id>.toml`` takes any id (a scanned JSON lines file's stem)."""
    meant = _TOMLISH.fullmatch(name)
    stem = meant.group(1) if meant else name
    if not name.endswith(".toml"):
        return f"a server's file ends in .toml (lower case); rename it to {stem}.toml"
    platform, dash, server_id = stem.partition("-")
    if not dash or not server_id or platform not in FILE_PLATFORMS:
        fixed = (f"; rename it to {platform.lower()}-{server_id}.toml" if dash and server_id and
                 platform.lower() in FILE_PLATFORMS else "")
        return f"a server's file is named <platform>-<server id>.toml, the platform discord, slack or export{fixed}"
    if platform == "discord" and not _SNOWFLAKE.fullmatch(server_id):
        return (f"{server_id!r} is not a Discord server id (17-20 digits: with Developer Mode on, right-click the "
                "server > Copy Server ID)")
    if platform == "slack" and not _SLACK_TEAM.fullmatch(server_id):
        return f"{server_id!r} is not a Slack team id (T or E, then upper-case letters and digits: T0123ABCD)"
    return platform, server_id


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
        #: Each policy file's TOML as first read (:meth:`read`): a file is read once per registry.
        self._docs: dict[Path, dict[str, Any]] = {}
        self.base = load_policy(self.default_path, *self.extra_files, read=self.read)
        check_replacement_default(self.default_path, self.read(self.default_path))
        self._cache: dict[tuple[str, str], Policy] = {}
        self._lock = asyncio.Lock()

    def read(self, path: Path) -> dict[str, Any]:
        """A policy file's TOML, as it was when this registry first read it (at start, for the bots:
        :meth:`validate_servers` reads every server's file): a file edited while the bot runs takes effect at the
        next start, which checks it first. A broken edit made the server's next uncached message fail to be judged
        at all, and a ``/policy set`` took a file's other edits in with it.

        Raises:
            PolicyError: the file cannot be read or parsed (:func:`bot.core.policy.read_toml`); not remembered.
        """
        doc = self._docs.get(path)
        if doc is None:
            doc = self._docs[path] = read_toml(path)
        return copy.deepcopy(doc)

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
        if p in self._docs or p.exists():
            return p
        if platform == "export" and _SNOWFLAKE.fullmatch(server_id):
            p = server_policy_path(self.servers_dir, "discord", server_id)
            if p in self._docs or p.exists():
                return p
        if platform == "export" and _SLACK_TEAM.fullmatch(server_id):
            p = server_policy_path(self.servers_dir, "slack", server_id)
            if p in self._docs or p.exists():
                return p
        return None

    @staticmethod
    def check_own_ids(path: Path, doc: dict[str, Any] | None = None) -> None:
        """Refuse ids in a server's own file that are no ids of its platform (the file name's: ``discord-...``,
        ``slack-...``; :func:`bot.core.policy.platform_id_problems`): a role's name, a Slack id in a Discord
        server's file, a shortened snowflake matched nothing, so the exemption or override did nothing.

        Raises:
            PolicyError: naming the file, every such key and the reason.
        """
        problems = platform_id_problems(read_toml(path) if doc is None else doc, path.name.partition("-")[0])
        if problems:
            raise PolicyError(str(path), *problems[0], more=problems[1:])

    def expected_file(self, platform: str, server_id: str) -> Path | None:
        """Where the server's own file would be read from when it has none (``None`` without ``servers_dir``): for
        an export of a Discord guild or a Slack team, the bot's name of it (``discord-<id>.toml``,
        ``slack-<id>.toml``), else ``<platform>-<server id>.toml``."""
        if self.servers_dir is None:
            return None
        shown = platform
        if platform == "export" and _SNOWFLAKE.fullmatch(server_id):
            shown = "discord"
        elif platform == "export" and _SLACK_TEAM.fullmatch(server_id):
            shown = "slack"
        return server_policy_path(self.servers_dir, shown, server_id)

    def files_for(self, platform: str, server_id: str) -> list[Path]:
        """The policy files that judge a server, weakest first: the default, the ``--policy`` files, its own."""
        return self._files_for(platform, server_id)

    @staticmethod
    def override_keys(platform: str, server_id: str) -> list[tuple[str, str]]:
        """``(platform, server id)`` keys whose stored overrides apply to a server, in the order they apply: its
        own; for a chat export (platform ``"export"``) of a Discord guild (a snowflake id) or a Slack workspace
        (a team id), that guild's or workspace's first (``/policy set`` there: a stricter tier, a shorter
        ``server.retention_days``), then the export's own. An admin's override of their server holds for its
        history scanned into the mod log as it does for the bot, as its file does (:meth:`server_file`)."""
        if platform == "export":
            live = ("discord" if _SNOWFLAKE.fullmatch(server_id) else "slack" if _SLACK_TEAM.fullmatch(server_id)
                    else None)
            if live is not None:
                return [(live, server_id), (platform, server_id)]
        return [(platform, server_id)]

    async def _overrides(self, platform: str, server_id: str) -> dict[str, Any]:
        """The stored overrides that apply to a server (:meth:`override_keys`, later keys win), ``{}`` without a
        store."""
        if self.store is None:
            return {}
        merged: dict[str, Any] = {}
        for key in self.override_keys(platform, server_id):
            merged.update(await self.store.list_policy_overrides(*key))
        return merged

    def _files_for(self, platform: str, server_id: str) -> list[Path]:
        own = self.server_file(platform, server_id)
        return [self.default_path, *self.extra_files, *([own] if own is not None else [])]

    def unread_files(self, platform: str | None = None) -> list[tuple[Path, str]]:
        """Files in ``servers_dir`` meant as a server's file that no server reads, each with why
        (:func:`file_server`): a name ending in ``.TOML``, ``.tml`` or ``.toml.txt``, one without any ending that
        starts with a platform (``discord-123...``), or a ``.toml`` file whose name is not
        ``<platform>-<server id>.toml`` with a server id of that platform (``discord-myserver.toml``). Hidden files,
        editor backups (``~``, ``.bak``, ``.orig``, ``.swp``...) and other files (``README.md``,
        ``discord-<id>.toml.example``) are left alone.

        Args:
            platform: Only the files that name this platform, in any case, or no platform a server's file may name
                (``None``: every one).
        """
        if self.servers_dir is None or not self.servers_dir.is_dir():
            return []
        out: list[tuple[Path, str]] = []
        for path in sorted(self.servers_dir.iterdir()):
            name = path.name
            prefix = name.partition("-")[0].lower()
            # a TOML-like ending, or a platform's name with no ending at all (a name with another ending, such as
            # discord-<id>.toml.example, is a note or a template: left alone)
            meant = _TOMLISH.fullmatch(name) or (name.partition("-")[1] and prefix in FILE_PLATFORMS
                                                 and "." not in name)
            if not meant or _LEFT_ALONE.fullmatch(name) or not path.is_file():
                continue
            why = file_server(name)
            if isinstance(why, str) and (platform is None or prefix == platform or prefix not in FILE_PLATFORMS):
                out.append((path, why))
        return out

    def files_for_other_servers(self, platform: str, server_ids: Iterable[str],
                                owns: Callable[[str], bool] = lambda _server_id: True) -> list[Path]:
        """The well-named files ``<platform>-<server id>.toml`` in ``servers_dir`` whose server is none of
        ``server_ids`` (the servers a bot is in) though ``owns`` says it would be this bot's (a Discord process
        runs some shards only): a typo in a valid-looking id, or a server the bot has left. Their server would run
        on the default policy, so a bot names them once it knows its servers."""
        if self.servers_dir is None or not self.servers_dir.is_dir():
            return []
        mine = set(server_ids)
        out: list[Path] = []
        for path in sorted(self.servers_dir.glob(f"{platform}-*.toml")):
            named = file_server(path.name)
            if isinstance(named, tuple) and named[0] == platform and named[1] not in mine and owns(named[1]):
                out.append(path)
        return out

    def validate_servers(self, platform: str | None = None) -> int:
        """Load every server file (``<platform>-<server id>.toml``) in ``servers_dir`` and check it for its server;
        called at startup so a bad file stops the bot with a clear error instead of failing on the first message.
        A file meant as a server's that no server would read (:meth:`unread_files`: ``discord-<id>.TOML``, a name
        instead of the id) stops it too: that server would run on the default policy without a word.

        Returns:
            The number of server files checked.

        Raises:
            PolicyError: naming the file, the key (``(file name)`` for a name no server reads) and the reason
                (e.g. ``moderator_roles`` holding the server id).
        """
        if self.servers_dir is None or not self.servers_dir.is_dir():
            return 0
        unread = self.unread_files(platform)
        if unread:
            path, why = unread[0]
            more = f" (and {len(unread) - 1} more such file(s) in {self.servers_dir})" if len(unread) > 1 else ""
            raise PolicyError(str(path), "(file name)", f"no server reads this file: {why}{more}")
        n = 0
        for path in sorted(self.servers_dir.glob("*.toml")):
            named = file_server(path.name)
            if isinstance(named, str) or (platform is not None and named[0] != platform):
                continue
            plat, server_id = named
            load_policy(*self._files_for(plat, server_id), read=self.read).check_for_server(server_id, str(path))
            self.check_own_ids(path, self.read(path))
            n += 1
        return n

    async def get(self, platform: str, server_id: str) -> Policy:
        """The effective policy of a server (cached until changed): its files, then its stored overrides (an
        export's: its guild's or workspace's, then its own: :meth:`override_keys`; an override the files no
        longer accept is logged and left out).

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
            overrides = await self._overrides(platform, server_id)
            files = self._files_for(platform, server_id)
            policy = load_policy(*files, read=self.read)  # a bad file is the caller's error (PolicyError names it)
            if len(files) > 1 + len(self.extra_files):
                self.check_own_ids(files[-1], self.read(files[-1]))
            if overrides:
                try:
                    policy = load_policy(*files, overrides=overrides, read=self.read)
                    policy.check_for_server(server_id, "override")
                except PolicyError as exc:
                    log.error("invalid stored override for %s/%s (%s); using the policy files only", platform,
                              server_id, exc)
                    policy = load_policy(*files, read=self.read)
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
        policy = load_policy(*self._files_for(platform, server_id), overrides=overrides, read=self.read)
        policy.check_for_server(server_id, f"override {key}")
        if value is not None and (problems := platform_id_problems(set_dotted({}, key, value), platform)):
            raise PolicyError(f"override {key}", *problems[0], more=problems[1:])
        await self.store.set_policy_override(platform, server_id, OVERRIDE_SCOPE, key, value, moderator_id)
        self._cache[(platform, server_id)] = policy
        self._cache.pop(("export", server_id), None)  # its history scanned into the mod log follows (override_keys)
        return policy

    def invalidate(self, platform: str | None = None, server_id: str | None = None) -> None:
        """Forget cached policies (all, or one server's) and the server files read (all, or that server's), so
        they are read again when next needed (the default and ``--policy`` files stay as read at start)."""
        if platform is None or server_id is None:
            self._cache.clear()
            kept = {self.default_path, *self.extra_files}
            for path in [p for p in self._docs if p not in kept]:
                del self._docs[path]
        else:
            self._cache.pop((platform, server_id), None)
            own = self.server_file(platform, server_id)
            if own is not None and own not in (self.default_path, *self.extra_files):
                self._docs.pop(own, None)
