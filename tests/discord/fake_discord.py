"""A fake Discord (REST + gateway) on 127.0.0.1 for the real discord.py 2.7 client, as strict as Discord where a
moderation bot can get it wrong.

Speaks the wire shapes in ``/work/shared/docs/platform-protocols.md`` section 2: exact ``application/json``
content type, HELLO/heartbeat ACK/IDENTIFY/READY (with ``resume_gateway_url``)/GUILD_CREATE, uncompressed text
frames, members with ``flags``, interactions with ``attachment_size_limit``, callbacks answered ``with_response``.

What it enforces, with Discord's status codes and JSON error codes:

* interactions: the first callback within ``interaction_deadline`` seconds (Discord: 3 s) of INTERACTION_CREATE,
  else 404/10062; a second callback 400/40060; follow-ups and ``@original`` edits only after an ack and within
  ``token_ttl`` seconds (Discord: 15 minutes), else 404/10015;
* rate limits injected with :meth:`FakeDiscord.rate_limit` (429 with ``Via`` and ``X-RateLimit-*`` headers; a retry
  before ``retry_after`` has passed gets another 429);
* size limits (content, embeds, components, modals, autocomplete choices) as 400/50035 "Invalid Form Body" with an
  ``errors`` tree; an attachment larger than ``attachment_size_limit`` (what interactions carry; Discord: 10 MiB
  without boosts) as 413/40005 "Request entity too large";
* permissions computed like Discord (roles, administrator, owner, channel overwrites, timeouts) for interactions
  (``member.permissions``, ``app_permissions``) and for the bot's REST calls (50013 Missing Permissions, 50001
  Missing Access, role hierarchy);
* DMs (50007 when the user shares no guild with the bot or closed DMs), bans (stored; 10026 Unknown Ban),
  bulk delete (2-100 ids, 50034 for ids older than 14 days), timeouts at most 28 days ahead;
* mentions computed as Discord does from a message's ``content`` and ``allowed_mentions`` (absent: everything
  parses; ``@everyone``/``@here`` and unmentionable roles only with Mention Everyone; embeds never ping), stored on
  the message as ``mention_everyone``, ``mentions`` and ``mention_roles``, and every ping in :attr:`FakeDiscord.pings`;
* gateway events after the bot's own actions (MESSAGE_CREATE/UPDATE/DELETE(_BULK), GUILD_BAN_ADD/REMOVE,
  GUILD_MEMBER_REMOVE/UPDATE, CHANNEL_UPDATE, THREAD_CREATE/UPDATE, GUILD_UPDATE), filtered by the session's
  intents (MESSAGE_CONTENT stripped without the privileged intent);
* sessions with an event buffer: :meth:`FakeDiscord.drop_connection` then op 6 RESUME replays what was missed.

Every REST request is recorded; tests wait on recorded requests with :meth:`FakeDiscord.wait_for` (event-based).
Errors are injected with :meth:`FakeDiscord.fail`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from aiohttp import BodyPartReader, WSMsgType, web

DISCORD_EPOCH_MS = 1420070400000

# Permission bits (https://discord.com/developers/docs/topics/permissions).
CREATE_INSTANT_INVITE = 1 << 0
KICK_MEMBERS = 1 << 1
BAN_MEMBERS = 1 << 2
ADMIN = ADMINISTRATOR = 1 << 3
MANAGE_CHANNELS = 1 << 4
MANAGE_GUILD = 1 << 5
VIEW_AUDIT_LOG = 1 << 7
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
MANAGE_MESSAGES = 1 << 13
EMBED_LINKS = 1 << 14
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
MANAGE_NICKNAMES = 1 << 27
MANAGE_ROLES = 1 << 28
MANAGE_THREADS = 1 << 34
CREATE_PUBLIC_THREADS = 1 << 35
SEND_MESSAGES_IN_THREADS = 1 << 38
MODERATE_MEMBERS = 1 << 40
MENTION_EVERYONE = 1 << 17
#: Every permission bit Discord defines today (bits 0-50); what administrators and the owner get.
ALL_PERMISSIONS = (1 << 51) - 1
#: What the ``@everyone`` role allows in a new server (the subset a moderation bot's tests touch).
EVERYONE_PERMS = (CREATE_INSTANT_INVITE | VIEW_CHANNEL | SEND_MESSAGES | EMBED_LINKS | ATTACH_FILES
                  | READ_MESSAGE_HISTORY | CREATE_PUBLIC_THREADS | SEND_MESSAGES_IN_THREADS)
#: What the "Moderators" role of :meth:`FakeDiscord.add_guild` allows: manage messages, kick, ban, moderate.
MODERATOR_PERMS = MANAGE_MESSAGES | KICK_MEMBERS | BAN_MEMBERS | MODERATE_MEMBERS
MOD_PERMS = MODERATOR_PERMS
#: Permissions the bot's role has by default: view, send, embed, attach, read history, manage messages,
#: manage channels, manage threads, kick, ban, moderate members.
BOT_PERMS = (VIEW_CHANNEL | SEND_MESSAGES | EMBED_LINKS | ATTACH_FILES | READ_MESSAGE_HISTORY | MANAGE_MESSAGES
             | MANAGE_CHANNELS | MANAGE_THREADS | KICK_MEMBERS | BAN_MEMBERS | MODERATE_MEMBERS)
# A timed-out member keeps only these (Discord docs, "Permissions for Timed Out Members").
_TIMEOUT_KEEPS = VIEW_CHANNEL | READ_MESSAGE_HISTORY

# Gateway intents (https://discord.com/developers/docs/events/gateway#list-of-intents).
GUILDS = 1 << 0
GUILD_MEMBERS = 1 << 1
GUILD_MODERATION = 1 << 2
GUILD_MESSAGES = 1 << 9
DIRECT_MESSAGES = 1 << 12
MESSAGE_CONTENT = 1 << 15
AUTO_MODERATION_EXECUTION = 1 << 21
_EVENT_INTENT = {
    "GUILD_UPDATE": GUILDS, "GUILD_ROLE_CREATE": GUILDS, "GUILD_ROLE_UPDATE": GUILDS,
    "GUILD_ROLE_DELETE": GUILDS, "CHANNEL_CREATE": GUILDS, "CHANNEL_UPDATE": GUILDS, "CHANNEL_DELETE": GUILDS,
    "THREAD_CREATE": GUILDS, "THREAD_UPDATE": GUILDS, "THREAD_DELETE": GUILDS,
    "GUILD_MEMBER_ADD": GUILD_MEMBERS, "GUILD_MEMBER_REMOVE": GUILD_MEMBERS, "GUILD_MEMBER_UPDATE": GUILD_MEMBERS,
    "GUILD_BAN_ADD": GUILD_MODERATION, "GUILD_BAN_REMOVE": GUILD_MODERATION,
    "AUTO_MODERATION_ACTION_EXECUTION": AUTO_MODERATION_EXECUTION,
}
_MESSAGE_EVENTS = ("MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE", "MESSAGE_DELETE_BULK")

#: Discord's interaction deadline: the initial response must arrive within 3 s of INTERACTION_CREATE.
INTERACTION_DEADLINE_S = 3.0
#: Interaction tokens (follow-ups, ``@original`` edits) are valid for 15 minutes.
TOKEN_TTL_S = 15 * 60.0
#: Discord's largest attachment for a server without boosts, in bytes (10 MiB since 2024).
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024
#: Longest timeout Discord accepts for ``communication_disabled_until``: 28 days.
MAX_TIMEOUT = timedelta(days=28)
#: Bulk delete refuses ids older than this (50034).
BULK_DELETE_MAX_AGE = timedelta(days=14)
#: Incident actions (paused invites/DMs) may reach at most 24 hours ahead.
MAX_INCIDENT_AHEAD = timedelta(hours=24)
#: Events kept per session for RESUME.
RESUME_BUFFER = 1000

_counter = itertools.count(1)


def snowflake(at: datetime | None = None) -> str:
    """A Discord snowflake (as a string) whose timestamp is ``at`` (default: now)."""
    ms = int((at or datetime.now(UTC)).timestamp() * 1000)
    return str(((ms - DISCORD_EPOCH_MS) << 22) | (next(_counter) & 0x3FFFFF))


def shard_of(guild_id: str | int, shard_count: int) -> int:
    """The shard that receives a guild's events: ``(guild_id >> 22) % shard_count`` (Discord's routing)."""
    return (int(guild_id) >> 22) % shard_count


def snowflake_on_shard(shard_id: int, shard_count: int) -> str:
    """A fresh snowflake (a guild id) whose guild lands on ``shard_id`` of ``shard_count``."""
    ms = int(datetime.now(UTC).timestamp() * 1000) - DISCORD_EPOCH_MS
    ms += (shard_id - ms) % shard_count
    return str((ms << 22) | (next(_counter) & 0x3FFFFF))


def snowflake_time(sid: str | int) -> datetime:
    """The creation time encoded in a snowflake."""
    return datetime.fromtimestamp(((int(sid) >> 22) + DISCORD_EPOCH_MS) / 1000, UTC)


def iso(at: datetime | None = None) -> str:
    """ISO-8601 timestamp for a payload."""
    return (at or datetime.now(UTC)).isoformat()


def user_obj(uid: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    """A user object."""
    return {"id": uid, "username": name, "discriminator": "0", "global_name": None, "avatar": None, "bot": bot}


class DiscordError(Exception):
    """An error answer: HTTP ``status`` with body ``{"message", "code"[, "errors"]}``."""

    def __init__(self, status: int, code: int, message: str, errors: dict[str, Any] | None = None) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status, self.code, self.message, self.errors = status, code, message, errors

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors is not None:
            out["errors"] = self.errors
        return out


def _missing_permissions() -> DiscordError:
    return DiscordError(403, 50013, "Missing Permissions")


def _missing_access() -> DiscordError:
    return DiscordError(403, 50001, "Missing Access")


@dataclass
class Recorded:
    """One REST request the fake received; ``response`` is the status (or ``{"status", "code"}`` when injected)."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    response: Any = None
    #: the JSON error code of a refused request (50013, 10062, ...), else None
    error_code: int | None = None


@dataclass
class _Failure:
    method: str
    pattern: re.Pattern[str]
    status: int  # 0: the connection is closed without an answer (reset_connection)
    code: int
    message: str
    times: int


@dataclass
class _RateLimit:
    method: str
    pattern: re.Pattern[str]
    retry_after: float
    times: int
    global_: bool
    scope: str
    bucket: str
    limit: int
    code: int | None
    blocked_until: float = 0.0
    hits: int = 0


@dataclass
class Interaction:
    """Server-side state of one interaction: when it was dispatched (monotonic s) and how it was answered."""

    id: str
    token: str
    type: int
    guild_id: str | None
    channel_id: str
    created: float
    acked_at: float | None = None
    callback_type: int | None = None
    response_message_id: str | None = None
    source_message_id: str | None = None


@dataclass
class _Session:
    id: str
    intents: int
    seq: int = 0
    buffer: list[tuple[int, str]] = field(default_factory=list)
    ws: web.WebSocketResponse | None = None
    resumable: bool = True
    #: ``[shard_id, shard_count]`` from IDENTIFY: the session gets only the events of guilds on that shard
    shard: tuple[int, int] = (0, 1)

    def owns(self, guild_id: str | int | None) -> bool:
        """Whether this session's shard receives events of ``guild_id`` (no guild: shard 0, as DMs go)."""
        if guild_id is None:
            return self.shard[0] == 0
        return shard_of(guild_id, self.shard[1]) == self.shard[0]


class FakeDiscord:
    """The fake server. Use ``async with FakeDiscord() as fake``; then ``fake.rest_base`` and ``fake.gateway``.

    Args:
        message_content_flag: the application has the Message Content intent enabled (READY's application flags).
        interaction_deadline: seconds after INTERACTION_CREATE within which the initial callback must arrive
            (Discord: 3.0). Only shorten it in a test of the deadline itself.
        token_ttl: seconds an interaction token stays usable for follow-ups (Discord: 900).
    """

    def __init__(self, *, message_content_flag: bool = True, interaction_deadline: float = INTERACTION_DEADLINE_S,
                 token_ttl: float = TOKEN_TTL_S) -> None:
        self.bot_user = user_obj(snowflake(), "ModBot", bot=True)
        self.app_id = self.bot_user["id"]
        self.owner = user_obj(snowflake(), "owner")
        self.users: dict[str, dict[str, Any]] = {u["id"]: u for u in (self.bot_user, self.owner)}
        self.app_flags = (1 << 19) if message_content_flag else 0  # GATEWAY_MESSAGE_CONTENT_LIMITED
        self.interaction_deadline = interaction_deadline
        self.token_ttl = token_ttl
        #: The largest attachment Discord takes, in bytes (a server without boosts: 10 MiB); interactions carry it
        #: as ``attachment_size_limit``, and a larger file is refused with 413 / 40005 "Request entity too large".
        self.attachment_size_limit = ATTACHMENT_SIZE_LIMIT
        #: How far Discord's clock runs behind the bot's (the bot's clock is fast): the 28-day timeout limit is
        #: measured from Discord's own "now" when the request arrives, so an exact 28 days from the bot is refused.
        self.clock_behind = timedelta(0)
        self.guilds: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        #: Every ping a bot message made (``{"channel_id", "everyone", "users", "roles", "content"}``).
        self.pings: list[dict[str, Any]] = []
        self.deleted_channels: set[str] = set()
        self.bans: dict[str, dict[str, dict[str, Any]]] = {}
        self.incidents: dict[str, dict[str, Any]] = {}
        self.closed_dms: set[str] = set()
        self.dm_channels: dict[str, str] = {}
        self.requests: list[Recorded] = []
        self.identifies: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        #: every dispatch the fake made: (event name, data), before per-session intent filtering
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.interactions: dict[str, Interaction] = {}
        self.sessions: dict[str, _Session] = {}
        self._failures: list[_Failure] = []
        self._rate_limits: list[_RateLimit] = []
        self._changed = asyncio.Condition()
        self._resume_gate = asyncio.Event()
        self._resume_gate.set()
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ------------------------------------------------------------------ setup
    async def __aenter__(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/gw", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._resume_gate.set()
        for s in list(self.sessions.values()):
            if s.ws is not None:
                await s.ws.close()
        if self._runner:
            await self._runner.cleanup()

    @property
    def rest_base(self) -> str:
        """Base URL discord.py's ``Route.BASE`` must point at."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway(self) -> str:
        """Gateway URL for ``DiscordWebSocket.DEFAULT_GATEWAY`` (also READY's ``resume_gateway_url``)."""
        return f"ws://127.0.0.1:{self.port}/gw"

    def add_guild(self, name: str = "Test server", *, bot_perms: int = BOT_PERMS,
                  shard: tuple[int, int] | None = None) -> dict[str, Any]:
        """Create a guild owned by :attr:`owner` with roles @everyone (id = guild id), ModBot (position 5,
        ``bot_perms``) and Moderators (position 3, :data:`MODERATOR_PERMS`; its id is ``guild["mod_role"]``),
        channels #general, #review and #mod-log, and the bot as member. ``shard=(shard_id, shard_count)`` picks
        an id whose events go to that shard."""
        gid = snowflake_on_shard(*shard) if shard else snowflake()
        bot_role = snowflake()
        mod_role = snowflake()
        guild = {
            "id": gid, "name": name, "owner_id": self.owner["id"], "unavailable": False, "large": False,
            "joined_at": iso(), "features": [], "emojis": [], "stickers": [], "threads": [],
            "roles": [_role(gid, "@everyone", EVERYONE_PERMS, 0), _role(bot_role, "ModBot", bot_perms, 5, managed=True),
                      _role(mod_role, "Moderators", MODERATOR_PERMS, 3)],
            "channels": [], "members": [],
            "mod_role": mod_role,
        }
        self.guilds[gid] = guild
        for cname in ("general", "review", "mod-log"):
            self.add_channel(guild, cname)
        self.add_member(guild, self.bot_user, roles=[bot_role])
        return guild

    def channel(self, guild: dict[str, Any], name: str) -> str:
        """Id of the channel (or thread) called ``name``."""
        return next(c["id"] for c in guild["channels"] + guild["threads"] if c["name"] == name)

    def add_channel(self, guild: dict[str, Any], name: str, *, type_: int = 0,
                    overwrites: list[dict[str, Any]] | None = None) -> str:
        """Add a channel (0 text, 15 forum) without dispatching; returns its id."""
        cid = snowflake()
        ch: dict[str, Any] = {"id": cid, "type": type_, "name": name, "position": len(guild["channels"]),
                              "permission_overwrites": overwrites or [], "rate_limit_per_user": 0,
                              "guild_id": guild["id"], "nsfw": False, "parent_id": None, "flags": 0}
        if type_ == 15:
            ch.update(available_tags=[], default_reaction_emoji=None, default_forum_layout=0, topic=None)
        guild["channels"].append(ch)
        return cid

    def add_member(self, guild: dict[str, Any], user: dict[str, Any], *, roles: list[str] | None = None,
                   joined_at: datetime | None = None) -> dict[str, Any]:
        """Add ``user`` to ``guild`` with role ids ``roles`` (no dispatch); returns the member object."""
        member = {"user": user, "roles": roles or [], "joined_at": iso(joined_at), "deaf": False, "mute": False,
                  "flags": 0, "nick": None, "communication_disabled_until": None}
        guild["members"].append(member)
        self.users[user["id"]] = user
        return member

    def new_user(self, guild: dict[str, Any] | None, name: str, *, created: datetime | None = None,
                 roles: list[str] | None = None) -> dict[str, Any]:
        """Make a user (snowflake from ``created``) and add them to ``guild`` (None: no guild); returns the user."""
        user = user_obj(snowflake(created), name)
        self.users[user["id"]] = user
        if guild is not None:
            self.add_member(guild, user, roles=roles)
        return user

    def member(self, guild: dict[str, Any], uid: str) -> dict[str, Any] | None:
        """The member object of user ``uid`` in ``guild`` (mutable fake state), or None."""
        return next((m for m in guild["members"] if m["user"]["id"] == uid), None)

    def role(self, guild: dict[str, Any], name: str) -> dict[str, Any]:
        """The role called ``name`` (``"@everyone"``, ``"ModBot"``, ``"Moderators"``, ...)."""
        return next(r for r in guild["roles"] if r["name"] == name)

    async def add_role(self, guild: dict[str, Any], name: str, permissions: int, position: int, *,
                       role_id: str | None = None) -> dict[str, Any]:
        """Create a role and dispatch GUILD_ROLE_CREATE; returns the role object."""
        role = _role(role_id or snowflake(), name, permissions, position)
        guild["roles"].append(role)
        await self.dispatch("GUILD_ROLE_CREATE", {"guild_id": guild["id"], "role": role})
        return role

    async def set_role_permissions(self, guild: dict[str, Any], role_id: str, permissions: int) -> None:
        """Change a role's permissions and dispatch GUILD_ROLE_UPDATE."""
        role = next(r for r in guild["roles"] if r["id"] == role_id)
        role["permissions"] = str(permissions)
        await self.dispatch("GUILD_ROLE_UPDATE", {"guild_id": guild["id"], "role": role})

    async def set_overwrite(self, guild: dict[str, Any], channel_id: str, target_id: str, *, allow: int = 0,
                            deny: int = 0) -> None:
        """Set a channel permission overwrite for a role or member (type inferred) and dispatch CHANNEL_UPDATE."""
        ch = self._channel_in(guild, channel_id)
        kind = 0 if any(r["id"] == target_id for r in guild["roles"]) else 1
        ows = [o for o in ch["permission_overwrites"] if o["id"] != target_id]
        ows.append({"id": target_id, "type": kind, "allow": str(allow), "deny": str(deny)})
        ch["permission_overwrites"] = ows
        await self.dispatch("CHANNEL_UPDATE", ch)

    def add_ban(self, guild: dict[str, Any], user: dict[str, Any], reason: str | None = None) -> None:
        """Set up an existing ban (no dispatch): the user is stored as banned and is no longer a member."""
        self.users[user["id"]] = user
        self.bans.setdefault(guild["id"], {})[user["id"]] = {"user": user, "reason": reason}
        member = self.member(guild, user["id"])
        if member is not None:
            guild["members"].remove(member)

    def close_dms(self, user_id: str) -> None:
        """The user turned off DMs from server members: the bot's DMs to them fail with 403/50007."""
        self.closed_dms.add(user_id)

    def fail(self, method: str, path_regex: str, *, status: int = 403, code: int = 50013,
             message: str = "Missing Permissions", times: int = 1) -> None:
        """Answer the next ``times`` requests matching ``method`` and ``path_regex`` with an error body."""
        self._failures.append(_Failure(method, re.compile(path_regex), status, code, message, times))

    def reset_connection(self, method: str, path_regex: str, *, times: int = 1) -> None:
        """End the next ``times`` requests matching ``method`` and ``path_regex`` with the connection closed before
        any answer (a reset on the way to Discord, a restarted edge; discord.py sees ``ServerDisconnectedError``,
        which it does not retry). Nothing is done."""
        self._failures.append(_Failure(method, re.compile(path_regex), 0, 0, "connection reset", times))

    def rate_limit(self, method: str, path_regex: str, *, retry_after: float = 0.5, times: int = 1,
                   global_: bool = False, scope: str | None = None, bucket: str = "abcd1234", limit: int = 5,
                   code: int | None = None) -> None:
        """Answer the next ``times`` requests matching ``method``/``path_regex`` with a Discord 429.

        The 429 carries ``Via``, ``Retry-After`` (whole seconds, rounded up), ``X-RateLimit-Scope`` (``user``,
        ``shared`` or ``global``), and for route limits ``X-RateLimit-Limit``/``-Remaining: 0``/``-Reset``/
        ``-Reset-After``/``-Bucket``; for global ones ``X-RateLimit-Global: true``. Body: ``{"message": "You are
        being rate limited.", "retry_after": <s>, "global": <bool>[, "code"]}``. Until ``retry_after`` seconds
        have passed since a 429, further matching requests get another 429 (not counted in ``times``).
        """
        self._rate_limits.append(_RateLimit(method, re.compile(path_regex), retry_after, times, global_,
                                            scope or ("global" if global_ else "user"), bucket, limit, code))

    # ------------------------------------------------------------------ permissions
    def _channel_in(self, guild: dict[str, Any], cid: str) -> dict[str, Any]:
        return next(c for c in guild["channels"] + guild["threads"] if c["id"] == cid)

    def find_channel(self, cid: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(guild, channel or thread) for a guild channel id; (None, None) if unknown."""
        for g in self.guilds.values():
            for c in g["channels"] + g["threads"]:
                if c["id"] == cid:
                    return g, c
        return None, None

    def base_permissions(self, guild: dict[str, Any], user_id: str) -> int:
        """Guild-wide permissions: owner and administrator get all; else @everyone | the member's roles."""
        if user_id == guild["owner_id"]:
            return ALL_PERMISSIONS
        member = self.member(guild, user_id)
        roles = {r["id"]: int(r["permissions"]) for r in guild["roles"]}
        perms = roles.get(guild["id"], 0)
        for rid in (member or {}).get("roles", []):
            perms |= roles.get(rid, 0)
        return ALL_PERMISSIONS if perms & ADMINISTRATOR else perms

    def permissions(self, guild: dict[str, Any], user_id: str, channel_id: str | None = None) -> int:
        """A member's permissions in a channel, by Discord's algorithm.

        Base from roles (owner/administrator: all), then the @everyone overwrite, then all role overwrites
        combined (deny then allow), then the member's overwrite. Threads use their parent's overwrites. Without
        VIEW_CHANNEL nothing else applies; a timed-out member keeps only VIEW_CHANNEL and READ_MESSAGE_HISTORY.
        """
        perms = self.base_permissions(guild, user_id)
        if perms == ALL_PERMISSIONS:
            return perms
        member = self.member(guild, user_id) or {"roles": []}
        if channel_id is not None:
            ch = self._channel_in(guild, channel_id)
            if ch.get("type") in (10, 11, 12):
                ch = self._channel_in(guild, ch["parent_id"])
            ows = {o["id"]: (int(o["allow"]), int(o["deny"])) for o in ch.get("permission_overwrites", [])}
            if guild["id"] in ows:
                allow, deny = ows[guild["id"]]
                perms = (perms & ~deny) | allow
            allow = deny = 0
            for rid in member["roles"]:
                if rid in ows:
                    allow |= ows[rid][0]
                    deny |= ows[rid][1]
            perms = (perms & ~deny) | allow
            if user_id in ows:
                allow, deny = ows[user_id]
                perms = (perms & ~deny) | allow
            if not perms & VIEW_CHANNEL:
                perms = 0
        until = member.get("communication_disabled_until")
        if until and datetime.fromisoformat(until) > datetime.now(UTC):
            perms &= _TIMEOUT_KEEPS
        return perms

    def _top_position(self, guild: dict[str, Any], user_id: str) -> int:
        member = self.member(guild, user_id)
        pos = {r["id"]: r["position"] for r in guild["roles"]}
        return max([pos.get(r, 0) for r in (member or {}).get("roles", [])], default=0)

    def _require(self, guild: dict[str, Any], bits: int, channel_id: str | None = None) -> None:
        """The bot must see the channel (50001) and hold ``bits`` there (50013)."""
        perms = self.permissions(guild, self.bot_user["id"], channel_id)
        if channel_id is not None and not perms & VIEW_CHANNEL:
            raise _missing_access()
        if perms & bits != bits:
            raise _missing_permissions()

    def _check_hierarchy(self, guild: dict[str, Any], target_id: str) -> None:
        """The bot cannot act on the owner or on a member whose top role is not below the bot's (50013)."""
        if target_id == guild["owner_id"]:
            raise _missing_permissions()
        if self.member(guild, target_id) and \
                self._top_position(guild, target_id) >= self._top_position(guild, self.bot_user["id"]):
            raise _missing_permissions()

    # ------------------------------------------------------------------ waiting
    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def find(self, method: str, path_regex: str, pred: Any = None) -> list[Recorded]:
        """Recorded requests with ``method`` whose path fully matches ``path_regex`` (and ``pred`` if given)."""
        rx = re.compile(path_regex)
        return [r for r in self.requests if r.method == method and rx.fullmatch(r.path) and (pred is None or pred(r))]

    async def wait_for(self, method: str, path_regex: str, pred: Any = None, *, count: int = 1,
                       timeout: float = 5.0) -> Recorded:
        """Wait until ``count`` matching requests were recorded; return the last. Raises TimeoutError."""
        async def _wait() -> Recorded:
            async with self._changed:
                while True:
                    found = self.find(method, path_regex, pred)
                    if len(found) >= count:
                        return found[count - 1]
                    await self._changed.wait()
        return await asyncio.wait_for(_wait(), timeout)

    async def wait_until(self, check: Any, *, timeout: float = 5.0) -> None:
        """Wait until ``check()`` is true, re-checked after every request or gateway event."""
        async def _wait() -> None:
            async with self._changed:
                while not check():
                    await self._changed.wait()
        await asyncio.wait_for(_wait(), timeout)

    # ------------------------------------------------------------------ gateway
    def _wants(self, session: _Session, event: str, data: dict[str, Any]) -> bool:
        if event in _MESSAGE_EVENTS:
            return bool(session.intents & (GUILD_MESSAGES if data.get("guild_id") else DIRECT_MESSAGES))
        need = _EVENT_INTENT.get(event)
        if event == "GUILD_MEMBER_UPDATE" and data.get("user", {}).get("id") == self.bot_user["id"]:
            need = None  # the bot always hears about its own member
        return need is None or bool(session.intents & need)

    def _shape(self, session: _Session, event: str, data: dict[str, Any]) -> dict[str, Any]:
        """Without MESSAGE_CONTENT, guild messages lose content/embeds/attachments/components (except the bot's
        own and those mentioning it)."""
        if event not in ("MESSAGE_CREATE", "MESSAGE_UPDATE") or session.intents & MESSAGE_CONTENT \
                or not data.get("guild_id") or data.get("author", {}).get("id") == self.bot_user["id"] \
                or any(m.get("id") == self.bot_user["id"] for m in data.get("mentions", [])):
            return data
        return {**data, "content": "", "embeds": [], "attachments": [], "components": []}

    async def _send(self, session: _Session, event: str, data: dict[str, Any]) -> None:
        session.seq += 1
        frame = json.dumps({"op": 0, "t": event, "s": session.seq, "d": data})
        session.buffer.append((session.seq, frame))
        del session.buffer[:-RESUME_BUFFER]
        ws = session.ws
        if ws is not None and not ws.closed:
            try:
                await ws.send_str(frame)
            except ConnectionError:
                pass  # the client is gone; the frame stays buffered for RESUME

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a dispatch (op 0) to every live session whose intents want it; sessions that are disconnected
        but resumable buffer it for RESUME."""
        self.events.append((event, data))
        gid = data.get("guild_id") or (data.get("id") if event.startswith("GUILD_") and "guild_id" not in data
                                       else None)
        for s in list(self.sessions.values()):
            if s.resumable and s.owns(gid) and self._wants(s, event, data):
                await self._send(s, event, self._shape(s, event, data))
        await self._notify()

    async def drop_connection(self, code: int = 4000, *, hold_resume: bool = False) -> None:
        """Close every live gateway connection with ``code`` (4000: discord.py resumes). Sessions stay
        resumable; events dispatched meanwhile are buffered. With ``hold_resume`` the fake does not answer
        RESUME until :meth:`allow_resume`."""
        if hold_resume:
            self._resume_gate.clear()
        for s in self.sessions.values():
            ws, s.ws = s.ws, None
            if ws is not None:
                await ws.close(code=code)

    async def request_reconnect(self) -> None:
        """Send op 7 RECONNECT on every live connection (Discord does this before moving a session); discord.py
        closes and resumes."""
        for s in self.sessions.values():
            if s.ws is not None:
                await s.ws.send_str(json.dumps({"op": 7, "d": None}))

    def allow_resume(self) -> None:
        """Let held RESUMEs through (see :meth:`drop_connection`)."""
        self._resume_gate.set()

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        session: _Session | None = None
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            op = frame.get("op")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif op == 2:
                session = await self._identify(ws, frame["d"])
                if session is None:
                    break
            elif op == 6:
                session = await self._resume(ws, frame["d"])
            elif op == 8 and session is not None:
                gid = str(frame["d"]["guild_id"])
                await self._send(session, "GUILD_MEMBERS_CHUNK", {
                    "guild_id": gid, "members": self.guilds[gid]["members"], "chunk_index": 0,
                    "chunk_count": 1, "nonce": frame["d"].get("nonce")})
        if session is not None and session.ws is ws:
            session.ws = None
            if ws.close_code in (1000, 1001):  # a clean close ends the session (Discord cannot resume it)
                session.resumable = False
        await self._notify()
        return ws

    async def _identify(self, ws: web.WebSocketResponse, d: dict[str, Any]) -> _Session | None:
        self.identifies.append(d)
        shard_id, shard_count = (int(x) for x in d.get("shard") or (0, 1))
        if not 0 <= shard_id < shard_count:
            await ws.close(code=4010)  # Invalid shard
            return None
        session = _Session(id=f"session{next(_counter)}", intents=int(d.get("intents", 0)),
                           shard=(shard_id, shard_count))
        self.sessions[session.id] = session
        owned = [g for g in self.guilds.values() if session.owns(g["id"])]
        await self._send(session, "READY", {
            "v": 10, "user": self.bot_user, "session_id": session.id, "resume_gateway_url": self.gateway,
            "shard": [shard_id, shard_count], "guilds": [{"id": g["id"], "unavailable": True} for g in owned],
            "application": {"id": self.app_id, "flags": self.app_flags}})
        session.ws = ws
        await ws.send_str(session.buffer[-1][1])
        for g in owned:
            await self._send(session, "GUILD_CREATE", self.guild_payload(g, session.intents))
        return session

    async def _resume(self, ws: web.WebSocketResponse, d: dict[str, Any]) -> _Session | None:
        await self._resume_gate.wait()
        session = self.sessions.get(d.get("session_id", ""))
        seq = d.get("seq") or 0
        if session is None or not session.resumable or seq > session.seq or (
                session.buffer and seq < session.buffer[0][0] - 1):
            await ws.send_str(json.dumps({"op": 9, "d": False}))
            return None
        old, session.ws = session.ws, None
        if old is not None and old is not ws:  # the client moved on before its old socket was seen closing
            await old.close(code=4000)
        replayed: list[str] = []
        cursor = seq
        while True:
            pending = [(s, f) for s, f in session.buffer if s > cursor]
            if not pending:
                break
            for s, f in pending:
                await ws.send_str(f)
                replayed.append(json.loads(f)["t"])
                cursor = s
        session.ws = ws  # no await since the last check: nothing dispatched in between is lost
        self.resumes.append({"session_id": session.id, "seq": seq, "replayed": replayed})
        await self._send(session, "RESUMED", {})
        return session

    def guild_payload(self, guild: dict[str, Any], intents: int = -1) -> dict[str, Any]:
        """The GUILD_CREATE payload for a session with ``intents`` (default: all); without GUILD_MEMBERS only the
        bot's own member is listed, as Discord does."""
        payload = {k: v for k, v in guild.items() if k != "mod_role"}
        payload["member_count"] = len(guild["members"])
        if not intents & GUILD_MEMBERS:
            payload["members"] = [m for m in guild["members"] if m["user"]["id"] == self.bot_user["id"]]
        incidents = self.incidents.get(guild["id"])
        if incidents:
            payload["incidents_data"] = incidents
        return payload

    def connected(self) -> int:
        """Number of live gateway sessions."""
        return sum(1 for s in self.sessions.values() if s.ws is not None)

    # ------------------------------------------------------------------ messages, threads & interactions
    def message_payload(self, guild: dict[str, Any], channel_id: str, user: dict[str, Any], content: str, *,
                        mid: str | None = None, edited: datetime | None = None,
                        mentions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """A MESSAGE_CREATE payload (also stored so the bot can fetch it)."""
        member = self.member(guild, user["id"]) or {"roles": [], "joined_at": iso(), "flags": 0}
        msg = {"id": mid or snowflake(), "type": 0, "content": content, "channel_id": channel_id,
               "guild_id": guild["id"], "author": user, "timestamp": iso(),
               "edited_timestamp": iso(edited) if edited else None, "tts": False, "mention_everyone": False,
               "mentions": mentions or [], "mention_roles": [], "attachments": [], "embeds": [], "pinned": False,
               "flags": 0, "components": [],
               "member": {k: v for k, v in member.items() if k != "user"}}
        self.messages[msg["id"]] = msg
        return msg

    async def post(self, guild: dict[str, Any], channel: str, user: dict[str, Any], content: str,
                   **kw: Any) -> dict[str, Any]:
        """Dispatch MESSAGE_CREATE from ``user`` in channel (or thread) id ``channel``; returns the payload."""
        msg = self.message_payload(guild, channel, user, content, **kw)
        await self.dispatch("MESSAGE_CREATE", msg)
        return msg

    async def edit(self, msg: dict[str, Any], content: str) -> dict[str, Any]:
        """Dispatch MESSAGE_UPDATE changing ``msg`` content (new edit timestamp)."""
        msg = dict(msg, content=content, edited_timestamp=iso())
        self.messages[msg["id"]] = msg
        await self.dispatch("MESSAGE_UPDATE", msg)
        return msg

    def _thread(self, guild: dict[str, Any], parent_id: str, name: str, owner_id: str, *,
                tid: str | None = None, slowmode: int = 0) -> dict[str, Any]:
        now = iso()
        thread = {"id": tid or snowflake(), "type": 11, "guild_id": guild["id"], "parent_id": parent_id,
                  "owner_id": owner_id, "name": name, "rate_limit_per_user": slowmode, "message_count": 0,
                  "member_count": 1, "total_message_sent": 0, "flags": 0, "applied_tags": [],
                  "last_message_id": None,
                  "thread_metadata": {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": now,
                                      "locked": False, "create_timestamp": now}}
        guild["threads"].append(thread)
        return thread

    async def create_thread(self, guild: dict[str, Any], parent_id: str, user: dict[str, Any], name: str,
                            content: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """A member opens a public thread (type 11) in a text channel, or a post in a forum (type 15) with a
        starter message ``content`` (its id is the thread's). Dispatches THREAD_CREATE (``newly_created``) and,
        for a forum post, MESSAGE_CREATE. Returns (thread, starter message or None)."""
        parent = self._channel_in(guild, parent_id)
        thread = self._thread(guild, parent_id, name, user["id"])
        await self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        starter = None
        if parent["type"] == 15:
            starter = await self.post(guild, thread["id"], user, content or "", mid=thread["id"])
        return thread, starter

    def interaction_base(self, guild: dict[str, Any], user: dict[str, Any], channel_id: str) -> dict[str, Any]:
        """The common INTERACTION_CREATE fields, with ``member.permissions`` and ``app_permissions`` computed for
        ``user`` and the bot in ``channel_id``."""
        member = self.member(guild, user["id"]) or {"roles": [], "joined_at": iso(), "flags": 0}
        _, ch = self.find_channel(channel_id)
        ch = ch or {"id": channel_id, "type": 0, "name": "x", "position": 0}
        return {"id": snowflake(), "application_id": self.app_id, "token": f"tok{next(_counter)}", "version": 1,
                "guild_id": guild["id"], "channel_id": channel_id, "channel": ch,
                "member": {**{k: v for k, v in member.items() if k != "user"}, "user": user,
                           "permissions": str(self.permissions(guild, user["id"], channel_id if ch.get("guild_id")
                                                               else None))},
                "app_permissions": str(self.permissions(guild, self.bot_user["id"], channel_id if ch.get(
                    "guild_id") else None)),
                "locale": "en-US", "guild_locale": "en-US", "entitlements": [],
                "authorizing_integration_owners": {"0": guild["id"]}, "context": 0,
                "attachment_size_limit": self.attachment_size_limit}

    async def send_interaction(self, payload: dict[str, Any]) -> Interaction:
        """Register ``payload`` (its deadline starts now) and dispatch INTERACTION_CREATE; no waiting. For a
        component interaction the message it was on (``payload["message"]``) is what type 6/7 callbacks update."""
        source = (payload.get("message") or {}).get("id")
        inter = Interaction(payload["id"], payload["token"], payload["type"], payload.get("guild_id"),
                            payload["channel_id"], time.monotonic(), source_message_id=source)
        self.interactions[inter.token] = inter
        await self.dispatch("INTERACTION_CREATE", payload)
        return inter

    async def _interact(self, payload: dict[str, Any], timeout: float) -> Recorded:
        rx = rf"/interactions/{payload['id']}/.*/callback"
        before = len(self.find("POST", rx))
        await self.send_interaction(payload)
        return await self.wait_for("POST", rx, count=before + 1, timeout=timeout)

    async def slash(self, guild: dict[str, Any], user: dict[str, Any], name: str, options: list[dict[str, Any]],
                    *, channel_id: str | None = None, resolved: dict[str, Any] | None = None,
                    cmd_type: int = 1, target_id: str | None = None, timeout: float = 5.0) -> Recorded:
        """Send an application command interaction; return the recorded callback request."""
        p = self.interaction_base(guild, user, channel_id or self.channel(guild, "general"))
        data: dict[str, Any] = {"id": snowflake(), "name": name, "type": cmd_type, "options": options,
                                "guild_id": guild["id"], "resolved": resolved or {}}
        if target_id:
            data["target_id"] = target_id
        p.update(type=2, data=data)
        return await self._interact(p, timeout)

    async def autocomplete(self, guild: dict[str, Any], user: dict[str, Any], name: str,
                           options: list[dict[str, Any]], *, timeout: float = 5.0) -> Recorded:
        """Send an autocomplete interaction (type 4) for ``/name`` with ``options`` (the option being typed marked
        ``"focused": True``, inside its subcommand's ``options``); return the recorded callback (type 8)."""
        p = self.interaction_base(guild, user, self.channel(guild, "general"))
        p.update(type=4, data={"id": snowflake(), "name": name, "type": 1, "options": options,
                               "guild_id": guild["id"]})
        return await self._interact(p, timeout)

    async def click(self, guild: dict[str, Any], user: dict[str, Any], message: dict[str, Any], custom_id: str,
                    *, values: list[str] | None = None, timeout: float = 5.0) -> Recorded:
        """Click a component on a message the bot sent; return the recorded callback."""
        p = self.interaction_base(guild, user, message["channel_id"])
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": 2 if values is None else 3}
        if values is not None:
            data["values"] = values
        p.update(type=3, data=data, message=self.messages.get(message["id"], message))
        return await self._interact(p, timeout)

    async def submit_modal(self, guild: dict[str, Any], user: dict[str, Any], modal_callback: Recorded,
                           values: list[str], *, message: dict[str, Any] | None = None, checked: bool = True,
                           timeout: float = 5.0) -> Recorded:
        """Submit the modal the bot opened in ``modal_callback`` with ``values`` for its text inputs in order.

        ``message``: the message whose component opened the modal (Discord sends it with the submit, and the
        submit is then in that message's channel and may be answered with type 6/7, updating it).
        ``checked``: refuse values Discord's client would not send (a required input left empty, a value outside
        the input's ``min_length``/``max_length``) with ``ValueError``; ``False`` stands for a client that does
        not check them."""
        modal = modal_callback.body["data"]
        inputs = [c for c in _walk(modal["components"]) if c.get("type") == 4]
        if checked:
            for c, v in zip(inputs, values, strict=True):
                if (c.get("required", True) and not v) or (v and not c.get("min_length", 0) <= len(v)
                                                           <= c.get("max_length", 4000)):
                    raise ValueError(f"Discord's client would not submit {len(v)} characters for {c['custom_id']}")
        channel_id = message["channel_id"] if message else self.channel(guild, "general")
        p = self.interaction_base(guild, user, channel_id)
        answers = {c["custom_id"]: v for c, v in zip(inputs, values, strict=True)}

        def submitted(c: dict[str, Any]) -> dict[str, Any]:  # the modal's layout, each input with its value
            if c.get("type") == 4:
                return {"type": 4, "custom_id": c["custom_id"], "value": answers[c["custom_id"]]}
            if c.get("type") == 18:
                return {"type": 18, "component": submitted(c["component"])}
            return {"type": c.get("type", 1), "components": [submitted(x) for x in c.get("components", [])]}

        p.update(type=5, data={"custom_id": modal["custom_id"],
                               "components": [submitted(c) for c in modal["components"]]})
        if message is not None:
            p["message"] = self.messages.get(message["id"], message)
        return await self._interact(p, timeout)

    # ------------------------------------------------------------------ REST plumbing
    def _respond(self, payload: Any, status: int = 200) -> web.Response:
        if payload is None:
            return web.Response(status=204)
        return web.Response(status=status, body=json.dumps(payload).encode(), content_type="application/json")

    def _error(self, status: int, code: int, message: str) -> web.Response:
        return self._respond({"message": message, "code": code}, status)

    def _emit(self, event: str, data: dict[str, Any]) -> None:
        """Queue a gateway event caused by the current REST request (sent right after it is handled)."""
        self._pending.append((event, data))

    def _rate_limited(self, rl: _RateLimit, now: float) -> web.Response:
        wait = max(rl.blocked_until - now, 0.0) or rl.retry_after
        rl.blocked_until = max(rl.blocked_until, now + wait)
        rl.hits += 1
        headers = {"Via": "1.1 google", "Retry-After": str(math.ceil(wait)), "X-RateLimit-Scope": rl.scope}
        if rl.global_:
            headers["X-RateLimit-Global"] = "true"
        else:
            headers.update({"X-RateLimit-Limit": str(rl.limit), "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": f"{time.time() + wait:.3f}",
                            "X-RateLimit-Reset-After": f"{wait:.3f}", "X-RateLimit-Bucket": rl.bucket})
        body: dict[str, Any] = {"message": "You are being rate limited.", "retry_after": round(wait, 3),
                                "global": rl.global_}
        if rl.code is not None:
            body["code"] = rl.code
        return web.Response(status=429, body=json.dumps(body).encode(), content_type="application/json",
                            headers=headers)

    def _check_rate_limit(self, method: str, path: str) -> web.Response | None:
        now = time.monotonic()
        for rl in self._rate_limits:
            if rl.method != method or not rl.pattern.fullmatch(path):
                continue
            if now < rl.blocked_until:
                return self._rate_limited(rl, now)
            if rl.times > 0:
                rl.times -= 1
                rl.blocked_until = 0.0
                return self._rate_limited(rl, now)
        return None

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body: Any = None
        files: dict[str, bytes] = {}
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                assert isinstance(part, BodyPartReader), "discord.py sends one flat multipart body"
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                else:
                    files[part.filename or part.name or "file"] = bytes(await part.read())
        elif request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw else None
        rec = Recorded(request.method, path, dict(request.query), body, dict(request.headers), files)
        self._pending = []
        try:
            limited = self._check_rate_limit(request.method, path)
            if limited is not None:
                rec.response = 429
                return limited
            for f in self._failures:
                if f.times > 0 and f.method == request.method and f.pattern.fullmatch(path):
                    f.times -= 1
                    rec.response = {"status": f.status, "code": f.code}
                    rec.error_code = f.code
                    if f.status == 0:  # reset_connection: no answer at all
                        assert request.transport is not None
                        request.transport.close()
                        return web.Response(status=500)
                    return self._error(f.status, f.code, f.message)
            try:
                resp = self._route(rec)
            except DiscordError as exc:
                self._pending = []
                rec.error_code = exc.code
                resp = self._respond(exc.body(), exc.status)
            rec.response = resp.status
            pending, self._pending = self._pending, []
            for event, data in pending:
                await self.dispatch(event, data)
            return resp
        finally:
            self.requests.append(rec)
            await self._notify()

    def _route(self, rec: Recorded) -> web.Response:  # noqa: C901
        method, path, body = rec.method, rec.path, rec.body
        seg = path.strip("/").split("/")
        if path == "/users/@me" and method == "GET":
            return self._respond(self.bot_user)
        if path == "/oauth2/applications/@me":
            return self._respond({"id": self.app_id, "name": "ModBot", "description": "", "icon": None,
                                  "bot_public": False, "bot_require_code_grant": False, "owner": self.owner,
                                  "verify_key": "00", "flags": self.app_flags})
        if path == "/gateway/bot":
            return self._respond({"url": self.gateway, "shards": 1, "session_start_limit": {
                "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
        if seg[0] == "applications" and method == "PUT":
            # Discord answers with full application command objects: a USER or MESSAGE command's description is
            # "" (discord.py's AppCommand reads it), a guild command carries its guild_id
            guild_id = seg[3] if len(seg) >= 5 and seg[2] == "guilds" else None
            cmds = [{"type": 1, "description": "", "options": [], "default_member_permissions": None, "nsfw": False,
                     **c, "id": snowflake(), "application_id": self.app_id, "version": snowflake(),
                     **({"guild_id": guild_id} if guild_id else {})} for c in body or []]
            return self._respond(cmds)
        if path == "/users/@me/channels" and method == "POST":
            return self._respond(self._open_dm(str((body or {}).get("recipient_id"))))
        if seg[0] == "users" and len(seg) == 2 and method == "GET":
            user = self.users.get(seg[1])
            if user is None:
                raise DiscordError(404, 10013, "Unknown User")
            return self._respond(user)
        if seg[0] == "channels" and len(seg) >= 2:
            return self._channels(rec, seg)
        if seg[0] == "guilds" and len(seg) >= 2:
            return self._guilds(rec, seg)
        if seg[0] == "interactions" and len(seg) == 4 and seg[3] == "callback" and method == "POST":
            return self._callback(seg[1], seg[2], body or {}, rec.files)
        if seg[0] == "webhooks" and len(seg) >= 3:
            return self._webhook(rec, seg)
        return self._error(404, 0, f"fake discord: no route {method} {path}")

    # ------------------------------------------------------------------ DMs
    def _open_dm(self, recipient_id: str) -> dict[str, Any]:
        user = self.users.get(recipient_id)
        if user is None:
            raise DiscordError(400, 50033, "Invalid Recipient(s)")
        cid = self.dm_channels.setdefault(recipient_id, snowflake())
        return {"id": cid, "type": 1, "last_message_id": None, "flags": 0, "recipients": [user]}

    def _dm_recipient(self, cid: str) -> str | None:
        return next((uid for uid, c in self.dm_channels.items() if c == cid), None)

    def shares_guild(self, user_id: str) -> bool:
        """Whether ``user_id`` is a member of a guild the bot is in."""
        return any(self.member(g, user_id) and self.member(g, self.bot_user["id"]) for g in self.guilds.values())

    # ------------------------------------------------------------------ channels
    def _channels(self, rec: Recorded, seg: list[str]) -> web.Response:  # noqa: C901
        method, body = rec.method, rec.body or {}
        cid = seg[1]
        recipient = self._dm_recipient(cid)
        if recipient is not None:
            if len(seg) == 3 and seg[2] == "messages" and method == "POST":
                if recipient in self.closed_dms or not self.shares_guild(recipient):
                    raise DiscordError(403, 50007, "Cannot send messages to this user")
                self._validate_message(body, rec.files)
                return self._respond(self._bot_message(cid, body, rec.files))
            if len(seg) == 2 and method == "GET":
                return self._respond(self._open_dm(recipient))
            raise DiscordError(403, 50003, "Cannot execute action on a DM channel")
        if cid in self.deleted_channels:
            raise DiscordError(404, 10003, "Unknown Channel")
        guild, ch = self.find_channel(cid)
        if guild is None or ch is None:
            raise DiscordError(404, 10003, "Unknown Channel")
        is_thread = ch["type"] in (10, 11, 12)
        if len(seg) == 2:
            if method == "GET":
                self._require(guild, 0, cid)
                return self._respond(ch)
            if method == "PATCH":
                self._require(guild, MANAGE_THREADS if is_thread else MANAGE_CHANNELS, cid)
                slow = body.get("rate_limit_per_user")
                if slow is not None and not 0 <= int(slow) <= 21600:
                    raise _form_error({"rate_limit_per_user": _err("NUMBER_TYPE_MAX", "int value should be "
                                                                   "less than or equal to 21600.")})
                if "permission_overwrites" in body:
                    self._require(guild, MANAGE_ROLES, cid)
                for key in ("name", "topic", "rate_limit_per_user", "nsfw", "permission_overwrites"):
                    if key in body:
                        ch[key] = body[key]
                self._emit("THREAD_UPDATE" if is_thread else "CHANNEL_UPDATE", ch)
                return self._respond(ch)
        if seg[2] == "threads" and len(seg) == 3 and method == "POST":
            return self._bot_thread(guild, ch, body, rec.files)
        if seg[2] != "messages":
            return self._error(404, 0, f"fake discord: no route {method} {rec.path}")
        if len(seg) == 3 and method == "GET":
            return self._history(guild, cid, rec.query)
        if len(seg) == 3 and method == "POST":
            if ch["type"] not in (0, 5, 10, 11, 12):
                raise DiscordError(400, 50008, "Cannot send messages in a non-text channel")
            self._require(guild, SEND_MESSAGES_IN_THREADS if is_thread else SEND_MESSAGES, cid)
            self._validate_message(body, rec.files)
            return self._respond(self._bot_message(cid, body, rec.files))
        if len(seg) == 4 and seg[3] == "bulk-delete" and method == "POST":
            return self._bulk_delete(guild, cid, body)
        if len(seg) == 5 and seg[4] == "threads" and method == "POST":
            return self._bot_thread(guild, ch, body, rec.files, tid=seg[3])
        if len(seg) == 4:
            self._require(guild, READ_MESSAGE_HISTORY if method == "GET" else 0, cid)
            msg = self.messages.get(seg[3])
            if msg is None or msg["channel_id"] != cid:
                raise DiscordError(404, 10008, "Unknown Message")
            mine = msg["author"]["id"] == self.bot_user["id"]
            if method == "DELETE":
                if not mine:
                    self._require(guild, MANAGE_MESSAGES, cid)
                self.messages.pop(seg[3])
                self._emit("MESSAGE_DELETE", {"id": seg[3], "channel_id": cid, "guild_id": guild["id"]})
                return self._respond(None)
            if method == "PATCH":
                if not mine:
                    raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
                merged = {**msg, **{k: v for k, v in body.items() if k in ("content", "embeds", "components")}}
                self._validate_message(merged, rec.files)
                msg.update(merged, edited_timestamp=iso())
                self._emit("MESSAGE_UPDATE", msg)
            return self._respond(msg)
        return self._error(404, 0, f"fake discord: no route {method} {rec.path}")

    def _history(self, guild: dict[str, Any], cid: str, query: dict[str, str]) -> web.Response:
        """GET /channels/{c}/messages: newest first, ``limit`` 1-100 (default 50), ``before``/``after`` ids; needs
        View Channel and Read Message History. With ``after`` (and no ``before``) the page holds the ``limit``
        messages right after that id (the oldest ones), still newest first, as Discord pages forward."""
        self._require(guild, READ_MESSAGE_HISTORY, cid)
        limit = int(query.get("limit", 50))
        if not 1 <= limit <= 100:
            raise _form_error({"limit": _err("NUMBER_TYPE_MAX" if limit > 100 else "NUMBER_TYPE_MIN",
                                             "int value should be between 1 and 100.")})
        before = int(query["before"]) if "before" in query else None
        after = int(query["after"]) if "after" in query else None
        found = sorted((m for m in self.messages.values() if m["channel_id"] == cid
                        and (before is None or int(m["id"]) < before) and (after is None or int(m["id"]) > after)),
                       key=lambda m: -int(m["id"]))
        if after is not None and before is None:
            return self._respond(found[-limit:])
        return self._respond(found[:limit])

    def _bulk_delete(self, guild: dict[str, Any], cid: str, body: dict[str, Any]) -> web.Response:
        self._require(guild, MANAGE_MESSAGES | READ_MESSAGE_HISTORY, cid)
        ids = body.get("messages")
        if not isinstance(ids, list) or not 2 <= len(ids) <= 100:
            n = len(ids) if isinstance(ids, list) else 0
            raise _form_error({"messages": _err("BASE_TYPE_MIN_LENGTH" if n < 2 else "BASE_TYPE_MAX_LENGTH",
                                                "Must be 2 or more in length." if n < 2
                                                else "Must be 100 or fewer in length.")})
        cutoff = datetime.now(UTC) - BULK_DELETE_MAX_AGE
        if any(snowflake_time(i) < cutoff for i in ids):
            raise DiscordError(400, 50034, "You can only bulk delete messages that are under 14 days old.")
        gone = [str(i) for i in ids if self.messages.get(str(i), {}).get("channel_id") == cid]
        for mid in gone:
            self.messages.pop(mid)
        self._emit("MESSAGE_DELETE_BULK", {"ids": [str(i) for i in ids], "channel_id": cid, "guild_id": guild["id"]})
        return self._respond(None)

    def _bot_thread(self, guild: dict[str, Any], parent: dict[str, Any], body: dict[str, Any],
                    files: dict[str, bytes], tid: str | None = None) -> web.Response:
        """POST /channels/{c}/threads (text channel: a thread; forum: a post with ``message``) or
        /channels/{c}/messages/{m}/threads (a thread on a message; its id is the message's)."""
        name = body.get("name") or ""
        if not 1 <= len(name) <= 100:
            raise _form_error({"name": _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")})
        forum = parent["type"] == 15
        self._require(guild, SEND_MESSAGES if forum else CREATE_PUBLIC_THREADS, parent["id"])
        if forum:
            self._validate_message(body.get("message") or {}, files, prefix=("message",))
        thread = self._thread(guild, parent["id"], name, self.bot_user["id"], tid=tid,
                              slowmode=int(body.get("rate_limit_per_user") or 0))
        self._emit("THREAD_CREATE", {**thread, "newly_created": True})
        out = dict(thread)
        if forum:
            out["message"] = self._bot_message(thread["id"], body.get("message") or {}, files, mid=thread["id"])
        return self._respond(out)

    # ------------------------------------------------------------------ guilds
    def _guilds(self, rec: Recorded, seg: list[str]) -> web.Response:  # noqa: C901
        method, body = rec.method, rec.body or {}
        guild = self.guilds.get(seg[1])
        if guild is None:
            raise DiscordError(404, 10004, "Unknown Guild")
        gid = guild["id"]
        reason = unquote(rec.headers.get("X-Audit-Log-Reason", "")) or None
        if len(seg) == 2:
            if method == "GET":
                return self._respond(self.guild_payload(guild))
            if method == "PATCH":
                self._require(guild, MANAGE_GUILD)
                if "name" in body:
                    guild["name"] = body["name"]
                self._emit("GUILD_UPDATE", self._guild_update(guild))
                return self._respond(self.guild_payload(guild))
        if seg[2] == "incident-actions" and len(seg) == 3 and method == "PUT":
            return self._incident_actions(guild, body)
        if seg[2] == "bulk-ban" and len(seg) == 3 and method == "POST":
            return self._bulk_ban(guild, body, reason)
        if seg[2] == "bans" and len(seg) == 3 and method == "GET":
            self._require(guild, BAN_MEMBERS)
            return self._respond(list(self.bans.get(gid, {}).values()))
        if len(seg) < 4:
            return self._error(404, 0, f"fake discord: no route {method} {rec.path}")
        uid = seg[3]
        if seg[2] == "members" and len(seg) == 6 and seg[4] == "roles" and method in ("PUT", "DELETE"):
            return self._member_role(guild, uid, seg[5], add=method == "PUT")
        if seg[2] == "members" and len(seg) == 4:
            member = self.member(guild, uid)
            if member is None:
                raise DiscordError(404, 10007, "Unknown Member")
            if method == "GET":
                return self._respond({**member, "guild_id": gid})
            if method == "DELETE":
                self._require(guild, KICK_MEMBERS)
                self._check_hierarchy(guild, uid)
                guild["members"].remove(member)
                self._emit("GUILD_MEMBER_REMOVE", {"guild_id": gid, "user": member["user"]})
                return self._respond(None)
            if method == "PATCH":
                return self._patch_member(guild, member, body)
        if seg[2] == "bans" and len(seg) == 4:
            bans = self.bans.setdefault(gid, {})
            if method == "GET":
                self._require(guild, BAN_MEMBERS)
                if uid not in bans:
                    raise DiscordError(404, 10026, "Unknown Ban")
                return self._respond(bans[uid])
            if method == "DELETE":
                self._require(guild, BAN_MEMBERS)
                if uid not in bans:
                    raise DiscordError(404, 10026, "Unknown Ban")
                ban = bans.pop(uid)
                self._emit("GUILD_BAN_REMOVE", {"guild_id": gid, "user": ban["user"]})
                return self._respond(None)
            if method == "PUT":
                seconds = rec.query.get("delete_message_seconds", body.get("delete_message_seconds", 0))
                self._ban(guild, uid, int(seconds), reason)
                return self._respond(None)
        return self._error(404, 0, f"fake discord: no route {method} {rec.path}")

    def _guild_update(self, guild: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in self.guild_payload(guild).items()
                if k not in ("members", "channels", "threads", "joined_at", "member_count", "large", "unavailable")}

    def _ban(self, guild: dict[str, Any], uid: str, delete_seconds: int, reason: str | None) -> None:
        """Ban one user (member or not); raises DiscordError for what Discord refuses."""
        self._require(guild, BAN_MEMBERS)
        if not 0 <= delete_seconds <= 604800:
            raise _form_error({"delete_message_seconds": _err(
                "NUMBER_TYPE_MAX", "int value should be less than or equal to 604800.")})
        user = self.users.get(uid)
        if user is None:
            raise DiscordError(404, 10013, "Unknown User")
        self._check_hierarchy(guild, uid)
        gid = guild["id"]
        self.bans.setdefault(gid, {})[uid] = {"user": user, "reason": reason}
        member = self.member(guild, uid)
        if member is not None:
            guild["members"].remove(member)
            self._emit("GUILD_MEMBER_REMOVE", {"guild_id": gid, "user": user})
        self._emit("GUILD_BAN_ADD", {"guild_id": gid, "user": user})
        if delete_seconds:
            cutoff = datetime.now(UTC) - timedelta(seconds=delete_seconds)
            by_channel: dict[str, list[str]] = {}
            for mid, m in list(self.messages.items()):
                if m.get("guild_id") == gid and m["author"]["id"] == uid and \
                        datetime.fromisoformat(m["timestamp"]) >= cutoff:
                    by_channel.setdefault(m["channel_id"], []).append(mid)
                    self.messages.pop(mid)
            for cid, ids in by_channel.items():
                self._emit("MESSAGE_DELETE_BULK", {"ids": ids, "channel_id": cid, "guild_id": gid})

    def _bulk_ban(self, guild: dict[str, Any], body: dict[str, Any], reason: str | None) -> web.Response:
        self._require(guild, BAN_MEMBERS | MANAGE_GUILD)
        ids = body.get("user_ids")
        if not isinstance(ids, list) or not 1 <= len(ids) <= 200:
            raise _form_error({"user_ids": _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 200 in length.")})
        seconds = int(body.get("delete_message_seconds") or 0)
        if not 0 <= seconds <= 604800:
            raise _form_error({"delete_message_seconds": _err(
                "NUMBER_TYPE_MAX", "int value should be less than or equal to 604800.")})
        banned, failed = [], []
        for uid in map(str, ids):
            if uid in self.bans.get(guild["id"], {}):
                failed.append(uid)
                continue
            try:
                self._ban(guild, uid, seconds, reason)
                banned.append(uid)
            except DiscordError:
                failed.append(uid)
        if not banned:
            raise DiscordError(400, 500000, "Failed to ban users")
        return self._respond({"banned_users": banned, "failed_users": failed})

    def _patch_member(self, guild: dict[str, Any], member: dict[str, Any], body: dict[str, Any]) -> web.Response:
        uid = member["user"]["id"]
        if "communication_disabled_until" in body:
            self._require(guild, MODERATE_MEMBERS)
            self._check_hierarchy(guild, uid)
            if self.base_permissions(guild, uid) & ADMINISTRATOR:
                raise _missing_permissions()
            until = body["communication_disabled_until"]
            if until is not None:
                when = datetime.fromisoformat(until)
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                if when - (datetime.now(UTC) - self.clock_behind) > MAX_TIMEOUT:
                    raise _form_error({"communication_disabled_until": _err(
                        "BASE_TYPE_BAD_TIME", "Cannot time out a member for more than 28 days.")})
            member["communication_disabled_until"] = until
        if "nick" in body:
            self._require(guild, MANAGE_NICKNAMES)
            self._check_hierarchy(guild, uid)
            member["nick"] = body["nick"]
        if "roles" in body:
            self._require(guild, MANAGE_ROLES)
            member["roles"] = [str(r) for r in body["roles"]]
        self._emit("GUILD_MEMBER_UPDATE", {**member, "guild_id": guild["id"]})
        return self._respond({**member, "guild_id": guild["id"]})

    def _member_role(self, guild: dict[str, Any], uid: str, role_id: str, *, add: bool) -> web.Response:
        self._require(guild, MANAGE_ROLES)
        role = next((r for r in guild["roles"] if r["id"] == role_id), None)
        if role is None:
            raise DiscordError(404, 10011, "Unknown Role")
        member = self.member(guild, uid)
        if member is None:
            raise DiscordError(404, 10007, "Unknown Member")
        if role["position"] >= self._top_position(guild, self.bot_user["id"]):
            raise _missing_permissions()
        if add and role_id not in member["roles"]:
            member["roles"].append(role_id)
        elif not add and role_id in member["roles"]:
            member["roles"].remove(role_id)
        self._emit("GUILD_MEMBER_UPDATE", {**member, "guild_id": guild["id"]})
        return self._respond(None)

    def _incident_actions(self, guild: dict[str, Any], body: dict[str, Any]) -> web.Response:
        """PUT /guilds/{g}/incident-actions: pause invites and/or DMs until a time at most 24 h ahead."""
        self._require(guild, MANAGE_GUILD)
        current = self.incidents.setdefault(guild["id"], {"invites_disabled_until": None, "dms_disabled_until": None,
                                                          "dm_spam_detected_at": None, "raid_detected_at": None})
        errors: dict[str, Any] = {}
        for key in ("invites_disabled_until", "dms_disabled_until"):
            if key not in body:
                continue
            value = body[key]
            if value is not None:
                try:
                    when = datetime.fromisoformat(value)
                except (TypeError, ValueError):
                    errors[key] = _err("DATE_TIME_TYPE_PARSE", "Could not parse datetime.")
                    continue
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                if when - datetime.now(UTC) > MAX_INCIDENT_AHEAD:
                    errors[key] = _err("BASE_TYPE_BAD_TIME", "Must be at most 24 hours in the future.")
                    continue
            current[key] = value
        if errors:
            raise _form_error(errors)
        self._emit("GUILD_UPDATE", self._guild_update(guild))
        return self._respond(current)

    # ------------------------------------------------------------------ interactions & webhooks
    def _callback(self, interaction_id: str, token: str, body: dict[str, Any],
                  files: dict[str, bytes]) -> web.Response:
        inter = self.interactions.get(token)
        if inter is None or inter.id != interaction_id:
            raise DiscordError(404, 10062, "Unknown interaction")
        if inter.acked_at is not None:
            raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
        if time.monotonic() - inter.created > self.interaction_deadline:
            raise DiscordError(404, 10062, "Unknown interaction")
        ctype = body.get("type")
        data = body.get("data") or {}
        if ctype not in (1, 4, 5, 6, 7, 8, 9, 10, 12):
            raise _form_error({"type": _err("BASE_TYPE_CHOICES", "Value must be one of (1, 4, 5, 6, 7, 8, 9, 10, 12).")})
        if ctype in (4, 7):
            self._validate_message(data, files, prefix=("data",), partial=ctype == 7)
        elif ctype == 8:
            if inter.type != 4:
                raise DiscordError(400, 50035, "Invalid Form Body: only an autocomplete interaction takes choices")
            self._validate_choices(data)
        elif ctype == 9:
            if inter.type == 5:  # Discord: a modal cannot answer a modal
                raise DiscordError(400, 50035, "Invalid Form Body: a modal submit cannot be answered with a modal")
            self._validate_modal(data)
        if ctype in (6, 7) and inter.type == 5 and inter.source_message_id is None:
            raise DiscordError(400, 50035, "Invalid Form Body: only a modal opened from a component can update "
                                           "a message")
        inter.acked_at = time.monotonic()
        inter.callback_type = ctype
        resp: dict[str, Any] = {"id": interaction_id, "type": inter.type}
        out: dict[str, Any] = {"interaction": resp}
        ephemeral = bool(data.get("flags", 0) & 64)
        if ctype in (6, 7) and inter.source_message_id in self.messages:
            msg = self.messages[inter.source_message_id]
            inter.response_message_id = msg["id"]
            if ctype == 7:
                msg.update({k: v for k, v in data.items() if k in ("content", "embeds", "components")},
                           edited_timestamp=iso())
                self._emit("MESSAGE_UPDATE", msg)
                out["resource"] = {"type": ctype, "message": msg}
        elif ctype in (4, 7):
            msg = self._bot_message(inter.channel_id, data, files, flags=data.get("flags", 0),
                                    announce=not ephemeral)
            inter.response_message_id = msg["id"]
            resp["response_message_id"] = msg["id"]
            resp["response_message_ephemeral"] = ephemeral
            out["resource"] = {"type": ctype, "message": msg}
        elif ctype == 5:
            msg = self._bot_message(inter.channel_id, {}, {}, flags=(data.get("flags", 0) | 128),
                                    announce=not ephemeral)
            inter.response_message_id = msg["id"]
            resp["response_message_id"] = msg["id"]
            resp["response_message_loading"] = True
            resp["response_message_ephemeral"] = ephemeral
            out["resource"] = {"type": ctype}
        return self._respond(out)

    def _webhook(self, rec: Recorded, seg: list[str]) -> web.Response:
        """Interaction follow-ups: /webhooks/{app}/{token}[/messages/{id|@original}]."""
        method, body = rec.method, rec.body or {}
        inter = self.interactions.get(seg[2])
        if seg[1] != self.app_id or inter is None or inter.acked_at is None or \
                time.monotonic() - inter.created > self.token_ttl:
            raise DiscordError(404, 10015, "Unknown Webhook")
        if len(seg) == 3 and method == "POST":
            self._validate_message(body, rec.files)
            flags = body.get("flags", 0)
            if inter.callback_type == 5 and inter.response_message_id in self.messages and \
                    self.messages[inter.response_message_id]["flags"] & 128:
                # the first follow-up after a deferred response fills in the "thinking" message
                thinking = self.messages[inter.response_message_id]
                thinking.update({k: v for k, v in body.items() if k in ("content", "embeds", "components")},
                                flags=thinking["flags"] & ~128)
                thinking.update(self._pings(self.find_channel(thinking["channel_id"])[0], thinking["channel_id"],
                                            body, thinking["content"]))
                return self._respond(thinking)
            return self._respond(self._bot_message(inter.channel_id, body, rec.files, flags=flags,
                                                   announce=not flags & 64))
        if len(seg) == 5 and seg[3] == "messages":
            mid = inter.response_message_id if seg[4] == "@original" else seg[4]
            msg = self.messages.get(mid or "")
            if msg is None:
                raise DiscordError(404, 10008, "Unknown Message")
            if method == "GET":
                return self._respond(msg)
            if method == "DELETE":
                self.messages.pop(msg["id"])
                if not msg["flags"] & 64:
                    self._emit("MESSAGE_DELETE", {"id": msg["id"], "channel_id": msg["channel_id"],
                                                  **({"guild_id": msg["guild_id"]} if "guild_id" in msg else {})})
                return self._respond(None)
            if method == "PATCH":
                merged = {**msg, **{k: v for k, v in body.items() if k in ("content", "embeds", "components")}}
                self._validate_message(merged, rec.files)
                msg.update(merged, flags=msg["flags"] & ~128, edited_timestamp=iso())
                if "content" in body:  # an edit pings those newly allowed (Discord re-parses edited content)
                    msg.update(self._pings(self.find_channel(msg["channel_id"])[0], msg["channel_id"], body,
                                           msg["content"]))
                if not msg["flags"] & 64:
                    self._emit("MESSAGE_UPDATE", msg)
                return self._respond(msg)
        return self._error(404, 0, f"fake discord: no route {method} {rec.path}")

    def _bot_message(self, channel_id: str, body: dict[str, Any], files: dict[str, bytes], *, flags: int = 0,
                     mid: str | None = None, announce: bool = True) -> dict[str, Any]:
        guild, _ = self.find_channel(channel_id)
        embeds = body.get("embeds") or []
        if guild is not None and embeds and not self.permissions(guild, self.bot_user["id"], channel_id) \
                & EMBED_LINKS and not flags & 64:
            embeds = []  # Discord drops embeds silently without Embed Links
        msg: dict[str, Any] = {"id": mid or snowflake(), "type": 0, "content": body.get("content") or "",
               "channel_id": channel_id,
               "author": self.bot_user, "timestamp": iso(), "edited_timestamp": None, "tts": False,
               **self._pings(guild, channel_id, body, body.get("content") or ""),
               "attachments": [{"id": snowflake(), "filename": name, "size": len(blob), "url": f"https://x/{name}",
                                "proxy_url": f"https://x/{name}"} for name, blob in files.items()],
               "embeds": embeds, "components": body.get("components") or [], "pinned": False,
               "flags": flags}
        if body.get("message_reference"):
            msg["message_reference"] = body["message_reference"]
        if guild:
            msg["guild_id"] = guild["id"]
            me = self.member(guild, self.bot_user["id"]) or {}
            msg["member"] = {k: v for k, v in me.items() if k != "user"}
        self.messages[msg["id"]] = msg
        if announce:
            self._emit("MESSAGE_CREATE", msg)
        return msg

    def _pings(self, guild: dict[str, Any] | None, channel_id: str, body: dict[str, Any],
               content: str) -> dict[str, Any]:
        """Who a message with ``content`` pings, as Discord decides ("Allowed Mentions Object"): without
        ``allowed_mentions`` every kind parses; with it, a kind parses when in ``parse`` or its id is listed.
        ``@everyone``/``@here`` need Mention Everyone in the channel, as does a role that is not mentionable.
        Returns the message fields (``mention_everyone``, ``mentions``, ``mention_roles``) and records every ping
        in :attr:`pings`."""
        allowed = body.get("allowed_mentions")
        parse = {"users", "roles", "everyone"} if allowed is None else set(allowed.get("parse") or [])
        users = set() if allowed is None else {str(u) for u in allowed.get("users") or []}
        roles = set() if allowed is None else {str(r) for r in allowed.get("roles") or []}
        may_all = guild is not None and bool(self.permissions(guild, self.bot_user["id"], channel_id)
                                             & MENTION_EVERYONE)
        everyone = "everyone" in parse and may_all and bool(re.search(r"@(everyone|here)\b", content))
        mentioned = []
        for uid in dict.fromkeys(re.findall(r"<@!?(\d+)>", content)):
            if ("users" in parse or uid in users) and uid in self.users:
                mentioned.append(self.users[uid])
        mention_roles = []
        for rid in dict.fromkeys(re.findall(r"<@&(\d+)>", content)):
            role = next((r for r in (guild or {}).get("roles", []) if r["id"] == rid), None)
            if role is not None and ("roles" in parse or rid in roles) and (role.get("mentionable") or may_all):
                mention_roles.append(rid)
        if everyone or mentioned or mention_roles:
            self.pings.append({"channel_id": channel_id, "everyone": everyone,
                               "users": [u["id"] for u in mentioned], "roles": mention_roles, "content": content})
        return {"mention_everyone": everyone, "mentions": mentioned, "mention_roles": mention_roles}

    # ------------------------------------------------------------------ validation
    def _validate_message(self, body: dict[str, Any], files: dict[str, bytes], *,
                          prefix: tuple[str, ...] = (), partial: bool = False) -> None:
        """Discord's message limits (400/50035 with an ``errors`` tree under ``prefix``); an empty message is
        400/50006."""
        if any(len(blob) > self.attachment_size_limit for blob in files.values()):
            raise DiscordError(413, 40005, "Request entity too large")
        errors: dict[str, Any] = {}
        content = body.get("content") or ""
        if len(content) > 2000:
            errors["content"] = _err("BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
        embeds = body.get("embeds") or []
        if len(embeds) > 10:
            errors["embeds"] = _err("BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
        else:
            emb_errors: dict[str, Any] = {}
            total = 0
            for i, e in enumerate(embeds):
                err, size = _embed_errors(e)
                total += size
                if err:
                    emb_errors[str(i)] = err
            if emb_errors:
                errors["embeds"] = emb_errors
            elif total > 6000:
                errors["embeds"] = _err("MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000")
        comp_errors = _components_errors(body.get("components") or [])
        if comp_errors:
            errors["components"] = comp_errors
        if errors:
            for key in reversed(prefix):
                errors = {key: errors}
            raise _form_error(errors)
        if not partial and not (content or embeds or body.get("components") or files or body.get("sticker_ids")
                                or body.get("poll") or body.get("attachments")):
            raise DiscordError(400, 50006, "Cannot send an empty message")

    def _validate_choices(self, data: dict[str, Any]) -> None:
        """An autocomplete answer (callback type 8): at most 25 choices, each ``name`` 1-100 characters and a
        string ``value`` at most 100 (400/50035 otherwise)."""
        choices = data.get("choices") or []
        if len(choices) > 25:
            raise _form_error({"data": {"choices": _err("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")}})
        errors: dict[str, Any] = {}
        for i, c in enumerate(choices):
            one: dict[str, Any] = {}
            if not 1 <= len(str(c.get("name") or "")) <= 100:
                one["name"] = _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
            if isinstance(c.get("value"), str) and len(c["value"]) > 100:
                one["value"] = _err("BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
            if one:
                errors[str(i)] = one
        if errors:
            raise _form_error({"data": {"choices": errors}})

    def _validate_modal(self, data: dict[str, Any]) -> None:
        errors: dict[str, Any] = {}
        if not 1 <= len(data.get("title") or "") <= 45:
            errors["title"] = _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length.")
        if not 1 <= len(data.get("custom_id") or "") <= 100:
            errors["custom_id"] = _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
        rows = data.get("components") or []
        if not 1 <= len(rows) <= 5:
            errors["components"] = _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
        else:
            for i, c in enumerate(_walk(rows)):
                if c.get("type") == 4:
                    if len(c.get("custom_id") or "") > 100:
                        errors.setdefault("components", {})[str(i)] = {"custom_id": _err(
                            "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")}
                    if len(c.get("label") or "") > 45:
                        errors.setdefault("components", {})[str(i)] = {"label": _err(
                            "BASE_TYPE_MAX_LENGTH", "Must be 45 or fewer in length.")}
                    problem = _text_input_problem(c)
                    if problem:
                        errors.setdefault("components", {})[str(i)] = problem
        if errors:
            raise _form_error({"data": errors})

    def now_ms(self) -> int:
        """Wall-clock time in milliseconds since the Unix epoch."""
        return int(time.time() * 1000)


def _role(rid: str, name: str, permissions: int, position: int, *, managed: bool = False) -> dict[str, Any]:
    return {"id": rid, "name": name, "permissions": str(permissions), "position": position, "color": 0,
            "hoist": False, "managed": managed, "mentionable": False, "flags": 0}


def _err(code: str, message: str) -> dict[str, Any]:
    return {"_errors": [{"code": code, "message": message}]}


def _form_error(errors: dict[str, Any]) -> DiscordError:
    return DiscordError(400, 50035, "Invalid Form Body", errors)


def _max_len(value: Any, limit: int) -> dict[str, Any] | None:
    if value is not None and len(str(value)) > limit:
        return _err("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")
    return None


def _embed_errors(embed: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """(errors, counted characters) for one embed: title 256, description 4096, 25 fields (name 256, value
    1024), footer text 2048, author name 256; the size is what counts towards the 6000 total."""
    errors: dict[str, Any] = {}
    for key, limit in (("title", 256), ("description", 4096)):
        e = _max_len(embed.get(key), limit)
        if e:
            errors[key] = e
    footer = (embed.get("footer") or {}).get("text")
    author = (embed.get("author") or {}).get("name")
    for key, value, limit in (("footer", footer, 2048), ("author", author, 256)):
        e = _max_len(value, limit)
        if e:
            errors[key] = {("text" if key == "footer" else "name"): e}
    fields = embed.get("fields") or []
    if len(fields) > 25:
        errors["fields"] = _err("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
    else:
        ferr: dict[str, Any] = {}
        for i, f in enumerate(fields):
            one = {k: e for k, e in (("name", _max_len(f.get("name"), 256)), ("value", _max_len(f.get("value"), 1024)))
                   if e}
            if one:
                ferr[str(i)] = one
        if ferr:
            errors["fields"] = ferr
    size = sum(len(str(v or "")) for v in (embed.get("title"), embed.get("description"), footer, author))
    size += sum(len(str(f.get("name") or "")) + len(str(f.get("value") or "")) for f in fields)
    return errors, size


def _components_errors(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Message components v1: at most 5 action rows; a row holds 1-5 buttons or one select; custom_id at most
    100 characters; a select has at most 25 options (label, value and description at most 100 characters each)
    and a placeholder of at most 150."""
    if len(rows) > 5:
        return _err("BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.")
    errors: dict[str, Any] = {}
    for i, row in enumerate(rows):
        items = row.get("components") or []
        if row.get("type") != 1:
            continue  # components v2 layouts are not checked
        if not 1 <= len(items) <= 5:
            errors[str(i)] = {"components": _err("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")}
            continue
        if any(c.get("type") in (3, 5, 6, 7, 8) for c in items) and len(items) > 1:
            errors[str(i)] = {"components": _err("COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                                                 "The specified component exceeds the maximum width")}
            continue
        cerr: dict[str, Any] = {}
        for j, c in enumerate(items):
            one: dict[str, Any] = {}
            e = _max_len(c.get("custom_id"), 100)
            if e:
                one["custom_id"] = e
            if c.get("type") == 3 and len(c.get("options") or []) > 25:
                one["options"] = _err("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
            elif c.get("type") == 3:
                opt_errors = {str(k): {key: e for key in ("label", "value", "description")
                                       if (e := _max_len(o.get(key), 100))}
                              for k, o in enumerate(c.get("options") or [])}
                if any(opt_errors.values()):
                    one["options"] = {k: v for k, v in opt_errors.items() if v}
            if c.get("type") in (3, 5, 6, 7, 8) and (e := _max_len(c.get("placeholder"), 150)):
                one["placeholder"] = e
            if c.get("type") == 2 and len(c.get("label") or "") > 80:
                one["label"] = _err("BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.")
            if one:
                cerr[str(j)] = one
        if cerr:
            errors[str(i)] = {"components": cerr}
    return errors or None


def _text_input_problem(c: dict[str, Any]) -> dict[str, Any] | None:
    """Discord's limits for a text input (component type 4): style 1 or 2, ``min_length`` 0-4000, ``max_length``
    1-4000 and not below ``min_length``, ``value`` and ``placeholder`` at most 4000 and 100 characters."""
    lo, hi = c.get("min_length", 0), c.get("max_length", 4000)
    if c.get("style") not in (1, 2):
        return {"style": _err("BASE_TYPE_CHOICES", "Value must be one of (1, 2).")}
    if not 0 <= lo <= 4000:
        return {"min_length": _err("NUMBER_TYPE_MAX", "int value should be less than or equal to 4000.")}
    if not 1 <= hi <= 4000 or hi < lo:
        return {"max_length": _err("NUMBER_TYPE_MAX", "int value should be between 1 and 4000.")}
    if len(c.get("value") or "") > 4000:
        return {"value": _err("BASE_TYPE_MAX_LENGTH", "Must be 4000 or fewer in length.")}
    if len(c.get("placeholder") or "") > 100:
        return {"placeholder": _err("BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")}
    return None


def _walk(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in components:
        out.append(c)
        if "components" in c:
            out.extend(_walk(c["components"]))
        if "component" in c:
            out.extend(_walk([c["component"]]))
    return out
