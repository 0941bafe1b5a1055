"""A small fake Discord (REST + gateway) on 127.0.0.1 for the real discord.py 2.7 client.

Speaks the wire shapes in ``/work/shared/docs/platform-protocols.md`` section 2: exact ``application/json``
content type, HELLO/heartbeat ACK/IDENTIFY/READY (with ``resume_gateway_url``)/GUILD_CREATE, uncompressed text
frames, members with ``flags``, interactions with ``attachment_size_limit``, callbacks answered ``with_response``.
Every REST request is recorded; tests wait on recorded requests with :meth:`FakeDiscord.wait_for` (event-based).
Errors are injected with :meth:`FakeDiscord.fail`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1420070400000
MANAGE_MESSAGES = 1 << 13
ADMIN = 1 << 3
#: Permissions the bot's role has by default: view, send, embed, attach, read history, manage messages,
#: manage channels, kick, ban, moderate members.
BOT_PERMS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | MANAGE_MESSAGES | (1 << 4) | (1 << 1) | (
    1 << 2) | (1 << 40)
#: A moderator role's permissions: manage messages, kick, ban, moderate members (timeouts).
MOD_PERMS = MANAGE_MESSAGES | (1 << 1) | (1 << 2) | (1 << 40)
_counter = itertools.count(1)


def snowflake(at: datetime | None = None) -> str:
    """A Discord snowflake (as a string) whose timestamp is ``at`` (default: now)."""
    ms = int((at or datetime.now(UTC)).timestamp() * 1000)
    return str(((ms - DISCORD_EPOCH_MS) << 22) | (next(_counter) & 0x3FFFFF))


def iso(at: datetime | None = None) -> str:
    """ISO-8601 timestamp for a payload."""
    return (at or datetime.now(UTC)).isoformat()


def user_obj(uid: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    """A user object."""
    return {"id": uid, "username": name, "discriminator": "0", "global_name": None, "avatar": None, "bot": bot}


@dataclass
class Recorded:
    """One REST request the fake received."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    response: Any = None


@dataclass
class _Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    code: int
    message: str
    times: int


class FakeDiscord:
    """The fake server. Use ``async with FakeDiscord() as fake``; then ``fake.rest_base`` and ``fake.gateway``."""

    def __init__(self, *, message_content_flag: bool = True) -> None:
        self.bot_user = user_obj(snowflake(), "ModBot", bot=True)
        self.app_id = self.bot_user["id"]
        self.owner = user_obj(snowflake(), "owner")
        self.app_flags = (1 << 19) if message_content_flag else 0  # GATEWAY_MESSAGE_CONTENT_LIMITED
        self.guilds: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.deleted_channels: set[str] = set()
        self.requests: list[Recorded] = []
        self.identifies: list[dict[str, Any]] = []
        self._failures: list[_Failure] = []
        self._interaction_msgs: dict[str, str] = {}
        self.dm_channels: dict[str, str] = {}
        self._changed = asyncio.Condition()
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = 0
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
        for ws in list(self._sockets):
            await ws.close()
        if self._runner:
            await self._runner.cleanup()

    @property
    def rest_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gw"

    def add_guild(self, name: str = "Test server", *, bot_perms: int = BOT_PERMS) -> dict[str, Any]:
        """Create a guild with a bot role, a #general, #review and #mod-log channel, and the bot as member."""
        gid = snowflake()
        bot_role = snowflake()
        mod_role = snowflake()
        guild = {
            "id": gid, "name": name, "owner_id": self.owner["id"], "unavailable": False, "large": False,
            "joined_at": iso(), "features": [], "emojis": [], "stickers": [], "threads": [],
            "roles": [
                {"id": gid, "name": "@everyone", "permissions": str(1 << 10 | 1 << 11), "position": 0, "color": 0,
                 "hoist": False, "managed": False, "mentionable": False, "flags": 0},
                {"id": bot_role, "name": "ModBot", "permissions": str(bot_perms), "position": 5, "color": 0,
                 "hoist": False, "managed": True, "mentionable": False, "flags": 0},
                {"id": mod_role, "name": "Moderators", "permissions": str(MOD_PERMS), "position": 3, "color": 0,
                 "hoist": False, "managed": False, "mentionable": False, "flags": 0},
            ],
            "channels": [], "members": [],
            "mod_role": mod_role,
        }
        self.guilds[gid] = guild
        for cname in ("general", "review", "mod-log"):
            self.add_channel(guild, cname)
        self.add_member(guild, self.bot_user, roles=[bot_role])
        return guild

    def channel(self, guild: dict[str, Any], name: str) -> str:
        """Id of the channel called ``name``."""
        return next(c["id"] for c in guild["channels"] if c["name"] == name)

    def add_channel(self, guild: dict[str, Any], name: str) -> str:
        cid = snowflake()
        guild["channels"].append({"id": cid, "type": 0, "name": name, "position": len(guild["channels"]),
                                  "permission_overwrites": [], "rate_limit_per_user": 0, "guild_id": guild["id"]})
        return cid

    def add_member(self, guild: dict[str, Any], user: dict[str, Any], *, roles: list[str] | None = None,
                   joined_at: datetime | None = None) -> dict[str, Any]:
        member = {"user": user, "roles": roles or [], "joined_at": iso(joined_at), "deaf": False, "mute": False,
                  "flags": 0, "nick": None}
        guild["members"].append(member)
        return member

    def new_user(self, guild: dict[str, Any], name: str, *, created: datetime | None = None,
                 roles: list[str] | None = None) -> dict[str, Any]:
        """Make a user (snowflake from ``created``) and add them to the guild; returns the user object."""
        user = user_obj(snowflake(created), name)
        self.add_member(guild, user, roles=roles)
        return user

    def member(self, guild: dict[str, Any], uid: str) -> dict[str, Any] | None:
        return next((m for m in guild["members"] if m["user"]["id"] == uid), None)

    def fail(self, method: str, path_regex: str, *, status: int = 403, code: int = 50013,
             message: str = "Missing Permissions", times: int = 1) -> None:
        """Answer the next ``times`` requests matching ``method`` and ``path_regex`` with an error body."""
        self._failures.append(_Failure(method, re.compile(path_regex), status, code, message, times))

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
    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a dispatch (op 0) to every connected client."""
        for ws in list(self._sockets):
            self._seq += 1
            await ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": data}))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            frame = json.loads(msg.data)
            op = frame.get("op")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif op == 2:
                self.identifies.append(frame["d"])
                self._sockets.append(ws)
                self._seq += 1
                await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": self._seq, "d": {
                    "v": 10, "user": self.bot_user, "session_id": f"s{self._seq}",
                    "resume_gateway_url": self.gateway, "shard": frame["d"].get("shard", [0, 1]),
                    "guilds": [{"id": g, "unavailable": True} for g in self.guilds],
                    "application": {"id": self.app_id, "flags": self.app_flags}}}))
                for g in self.guilds.values():
                    payload = {k: v for k, v in g.items() if k != "mod_role"}
                    payload["member_count"] = len(g["members"])
                    self._seq += 1
                    await ws.send_str(json.dumps({"op": 0, "t": "GUILD_CREATE", "s": self._seq, "d": payload}))
            elif op == 6:
                self._sockets.append(ws)
                self._seq += 1
                await ws.send_str(json.dumps({"op": 0, "t": "RESUMED", "s": self._seq, "d": {}}))
            elif op == 8:
                gid = frame["d"]["guild_id"]
                await ws.send_str(json.dumps({"op": 0, "t": "GUILD_MEMBERS_CHUNK", "s": self._seq, "d": {
                    "guild_id": gid, "members": self.guilds[str(gid)]["members"], "chunk_index": 0,
                    "chunk_count": 1, "nonce": frame["d"].get("nonce")}}))
        if ws in self._sockets:
            self._sockets.remove(ws)
        return ws

    def connected(self) -> int:
        return len(self._sockets)

    # ------------------------------------------------------------------ messages & interactions
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
        """Dispatch MESSAGE_CREATE from ``user`` in channel id ``channel``; returns the payload."""
        msg = self.message_payload(guild, channel, user, content, **kw)
        await self.dispatch("MESSAGE_CREATE", msg)
        return msg

    async def edit(self, msg: dict[str, Any], content: str) -> dict[str, Any]:
        """Dispatch MESSAGE_UPDATE changing ``msg`` content (new edit timestamp)."""
        msg = dict(msg, content=content, edited_timestamp=iso())
        self.messages[msg["id"]] = msg
        await self.dispatch("MESSAGE_UPDATE", msg)
        return msg

    def interaction_base(self, guild: dict[str, Any], user: dict[str, Any], channel_id: str, *,
                         perms: int = 0) -> dict[str, Any]:
        member = self.member(guild, user["id"]) or {"roles": [], "joined_at": iso(), "flags": 0}
        ch = next((c for c in guild["channels"] if c["id"] == channel_id), {"id": channel_id, "type": 0,
                                                                              "name": "x", "position": 0})
        return {"id": snowflake(), "application_id": self.app_id, "token": f"tok{next(_counter)}", "version": 1,
                "guild_id": guild["id"], "channel_id": channel_id, "channel": ch,
                "member": {**{k: v for k, v in member.items() if k != "user"}, "user": user,
                           "permissions": str(perms)},
                "app_permissions": str(BOT_PERMS), "locale": "en-US", "guild_locale": "en-US", "entitlements": [],
                "authorizing_integration_owners": {"0": guild["id"]}, "context": 0,
                "attachment_size_limit": 8 * 1024 * 1024}

    async def _interact(self, payload: dict[str, Any], timeout: float) -> Recorded:
        before = len(self.find("POST", rf"/interactions/{payload['id']}/.*/callback"))
        await self.dispatch("INTERACTION_CREATE", payload)
        return await self.wait_for("POST", rf"/interactions/{payload['id']}/.*/callback", count=before + 1,
                                   timeout=timeout)

    async def slash(self, guild: dict[str, Any], user: dict[str, Any], name: str, options: list[dict[str, Any]],
                    *, perms: int = 0, channel_id: str | None = None, resolved: dict[str, Any] | None = None,
                    cmd_type: int = 1, target_id: str | None = None, timeout: float = 5.0) -> Recorded:
        """Send an application command interaction; return the recorded callback request."""
        p = self.interaction_base(guild, user, channel_id or self.channel(guild, "general"), perms=perms)
        data: dict[str, Any] = {"id": snowflake(), "name": name, "type": cmd_type, "options": options,
                                "guild_id": guild["id"], "resolved": resolved or {}}
        if target_id:
            data["target_id"] = target_id
        p.update(type=2, data=data)
        return await self._interact(p, timeout)

    async def click(self, guild: dict[str, Any], user: dict[str, Any], message: dict[str, Any], custom_id: str,
                    *, perms: int = 0, values: list[str] | None = None, timeout: float = 5.0) -> Recorded:
        """Click a component on a message the bot sent; return the recorded callback."""
        p = self.interaction_base(guild, user, message["channel_id"], perms=perms)
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": 2 if values is None else 3}
        if values is not None:
            data["values"] = values
        p.update(type=3, data=data, message=self.messages.get(message["id"], message))
        self._interaction_msgs[p["id"]] = message["id"]
        return await self._interact(p, timeout)

    async def submit_modal(self, guild: dict[str, Any], user: dict[str, Any], modal_callback: Recorded,
                           values: list[str], *, perms: int = 0, timeout: float = 5.0) -> Recorded:
        """Submit the modal the bot opened in ``modal_callback`` with ``values`` for its text inputs in order."""
        modal = modal_callback.body["data"]
        inputs = [c for c in _walk(modal["components"]) if c.get("type") == 4]
        p = self.interaction_base(guild, user, self.channel(guild, "general"), perms=perms)
        p.update(type=5, data={"custom_id": modal["custom_id"], "components": [
            {"type": 4, "custom_id": c["custom_id"], "value": v} for c, v in zip(inputs, values, strict=True)]})
        return await self._interact(p, timeout)

    # ------------------------------------------------------------------ REST
    def _respond(self, payload: Any, status: int = 200) -> web.Response:
        if payload is None:
            return web.Response(status=204)
        return web.Response(status=status, body=json.dumps(payload).encode(), content_type="application/json")

    def _error(self, status: int, code: int, message: str) -> web.Response:
        return self._respond({"message": message, "code": code}, status)

    def _bot_message(self, channel_id: str, body: dict[str, Any], *, flags: int = 0) -> dict[str, Any]:
        msg = {"id": snowflake(), "type": 0, "content": body.get("content") or "", "channel_id": channel_id,
               "author": self.bot_user, "timestamp": iso(), "edited_timestamp": None, "tts": False,
               "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [],
               "embeds": body.get("embeds") or [], "components": body.get("components") or [], "pinned": False,
               "flags": flags}
        guild = self._guild_of(channel_id)
        if guild:
            msg["guild_id"] = guild["id"]
        self.messages[msg["id"]] = msg
        return msg

    def _guild_of(self, channel_id: str) -> dict[str, Any] | None:
        return next((g for g in self.guilds.values() if any(c["id"] == channel_id for c in g["channels"])), None)

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body: Any = None
        files: dict[str, bytes] = {}
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                else:
                    files[part.filename or part.name or "file"] = bytes(await part.read())
        elif request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw else None
        rec = Recorded(request.method, path, dict(request.query), body, dict(request.headers), files)
        try:
            for f in self._failures:
                if f.times > 0 and f.method == request.method and f.pattern.fullmatch(path):
                    f.times -= 1
                    rec.response = {"status": f.status, "code": f.code}
                    return self._error(f.status, f.code, f.message)
            resp = self._route(request.method, path, body, request.query)
            rec.response = resp.status
            return resp
        finally:
            self.requests.append(rec)
            await self._notify()

    def _route(self, method: str, path: str, body: Any, query: Any) -> web.Response:  # noqa: C901
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
            cmds = [{**c, "id": snowflake(), "application_id": self.app_id, "version": "1"} for c in body or []]
            return self._respond(cmds)
        if path == "/users/@me/channels" and method == "POST":
            cid = self.dm_channels.setdefault(str(body["recipient_id"]), snowflake())
            return self._respond({"id": cid, "type": 1,
                                  "recipients": [user_obj(str(body["recipient_id"]), "member")]})
        if seg[0] == "channels":
            cid = seg[1]
            if cid in self.dm_channels.values() and method == "POST":
                return self._respond(self._bot_message(cid, body or {}))
            if cid in self.deleted_channels:
                return self._error(404, 10003, "Unknown Channel")
            if len(seg) == 2:
                ch = next((c for g in self.guilds.values() for c in g["channels"] if c["id"] == cid), None)
                if ch is None:
                    return self._error(404, 10003, "Unknown Channel")
                if method == "PATCH":
                    ch.update(body or {})
                return self._respond(ch)
            if seg[2] == "messages" and len(seg) == 3 and method == "POST":
                return self._respond(self._bot_message(cid, body or {}))
            if seg[2] == "messages" and len(seg) == 3 and method == "GET":  # history, newest first
                limit = min(int(query.get("limit", 50)), 100)
                before = int(query["before"]) if "before" in query else None
                found = sorted((m for m in self.messages.values() if m["channel_id"] == cid
                                and (before is None or int(m["id"]) < before)), key=lambda m: -int(m["id"]))
                return self._respond(found[:limit])
            if seg[2] == "messages" and len(seg) == 4 and seg[3] == "bulk-delete":
                return self._respond(None)
            if seg[2] == "messages" and len(seg) == 4:
                msg = self.messages.get(seg[3])
                if msg is None:
                    return self._error(404, 10008, "Unknown Message")
                if method == "DELETE":
                    self.messages.pop(seg[3])
                    return self._respond(None)
                if method == "PATCH":
                    msg.update({k: v for k, v in (body or {}).items() if k in ("content", "embeds", "components")})
                return self._respond(msg)
        if seg[0] == "guilds" and len(seg) == 3 and seg[2] == "incident-actions" and method == "PUT":
            guild = self.guilds.get(seg[1])
            if guild is None:
                return self._error(404, 10004, "Unknown Guild")
            guild["incidents_data"] = {"invites_disabled_until": (body or {}).get("invites_disabled_until"),
                                       "dms_disabled_until": (body or {}).get("dms_disabled_until")}
            return self._respond(guild["incidents_data"])
        if seg[0] == "guilds" and len(seg) >= 4:
            guild = self.guilds.get(seg[1])
            if guild is None:
                return self._error(404, 10004, "Unknown Guild")
            uid = seg[3]
            if seg[2] == "members":
                member = self.member(guild, uid)
                if member is None:
                    return self._error(404, 10007, "Unknown Member")
                if method == "DELETE":
                    guild["members"].remove(member)
                    return self._respond(None)
                if method == "PATCH":
                    member.update(body or {})
                return self._respond({**member, "guild_id": guild["id"]})
            if seg[2] == "bans":
                return self._respond(None)
        if seg[0] == "users" and len(seg) == 2 and method == "GET":
            for g in self.guilds.values():
                m = self.member(g, seg[1])
                if m:
                    return self._respond(m["user"])
            return self._error(404, 10013, "Unknown User")
        if seg[0] == "interactions":
            return self._callback(seg[1], body or {})
        if seg[0] == "webhooks":
            if method == "DELETE":
                return self._respond(None)
            return self._respond(self._bot_message("0", body or {}, flags=(body or {}).get("flags", 0)))
        return self._error(404, 0, f"fake discord: no route {method} {path}")

    def _callback(self, interaction_id: str, body: dict[str, Any]) -> web.Response:
        ctype = body.get("type")
        data = body.get("data") or {}
        inter: dict[str, Any] = {"id": interaction_id, "type": ctype}
        out: dict[str, Any] = {"interaction": inter}
        if ctype == 7 and interaction_id in self._interaction_msgs:
            msg = self.messages[self._interaction_msgs[interaction_id]]
            msg.update({k: v for k, v in data.items() if k in ("content", "embeds", "components")})
            out["resource"] = {"type": ctype, "message": msg}
        elif ctype in (4, 7):
            msg = self._bot_message("0", data, flags=data.get("flags", 0))
            inter["response_message_id"] = msg["id"]
            inter["response_message_ephemeral"] = bool(data.get("flags", 0) & 64)
            out["resource"] = {"type": ctype, "message": msg}
        elif ctype == 5:
            inter["response_message_loading"] = True
            inter["response_message_ephemeral"] = bool(data.get("flags", 0) & 64)
        return self._respond(out)

    def now_ms(self) -> int:
        return int(time.time() * 1000)


def _walk(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in components:
        out.append(c)
        if "components" in c:
            out.extend(_walk(c["components"]))
        if "component" in c:
            out.extend(_walk([c["component"]]))
    return out
