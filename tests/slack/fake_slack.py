"""A small fake Slack on 127.0.0.1 (port 0) for the real slack_sdk / slack-bolt clients.

How a test points the real clients at it (``async with FakeSlack() as fake``):

* **Web API.** ``AsyncWebClient(base_url=fake.api_url, token=fake.bot_token)``. ``fake.api_url`` is
  ``http://127.0.0.1:<port>/api/`` *with* the trailing slash: the SDK joins with ``urljoin``, so without it
  ``/api`` would be dropped. Give bolt that client: ``AsyncApp(client=client, signing_secret=fake.signing_secret)``.
  ``AsyncApp`` verifies its token with ``auth.test`` (``token_verification_enabled``, on by default) on the first
  request, and learns the bot's user id and bot id from the answer, so the fake answers ``auth.test`` for the bot
  token (``fake.bot_user_id``, ``fake.bot_id``); bolt then drops the bot's own events by itself.
* **Socket Mode.** ``AsyncSocketModeHandler(app, app_token=fake.app_token)`` (``slack_bolt.adapter.socket_mode.
  aiohttp``) calls ``apps.connections.open`` through ``app.client`` with the app-level token; the fake answers
  ``{"ok": true, "url": "ws://127.0.0.1:<port>/socket?ticket=<n>"}``, and the websocket there sends ``hello``.
  Tests then push envelopes with :meth:`FakeSlack.send_envelope` and wait for the acknowledgement with
  :meth:`FakeSlack.wait_for_ack`. :meth:`FakeSlack.send_disconnect` makes the client fetch a new URL and reconnect.
* **HTTP Events API.** Serve the app (``app.web_app()``, bolt's aiohttp server, on 127.0.0.1:0) and post signed
  requests to it with :meth:`FakeSlack.deliver_event`, :meth:`FakeSlack.deliver_command` and
  :meth:`FakeSlack.deliver_interaction`. They sign ``v0:<timestamp>:<exact body bytes>`` with HMAC-SHA256 and
  ``fake.signing_secret`` (or a given wrong secret / old timestamp) and return the app's status, headers and body.
  Payload builders (``message_event``, ``command_payload``, ``block_actions_payload``...) register the
  ``response_url`` (``http://127.0.0.1:<port>/hooks/<id>``) and ``trigger_id`` they hand out with the fake.

Web API methods: ``auth.test``, ``chat.postMessage|update|delete|postEphemeral|getPermalink``,
``conversations.info|open|kick|join|members|history|replies``, ``users.info``, ``usergroups.users.list``,
``views.open|update|publish``, ``reactions.add``, ``apps.connections.open``, ``team.info``,
``files.getUploadURLExternal|completeUploadExternal`` (what slack_sdk's ``files_upload_v2`` calls; the bytes go
to the ``upload_url`` handed out, ``http://127.0.0.1:<port>/upload/<file id>``, and must be ``length`` bytes; the
retired ``files.upload`` answers ``method_deprecated``, as Slack has since November 2025); anything else answers
``unknown_method``. A ``response_url`` post acts as on Slack: ``replace_original``/``delete_original`` change the
message a button was on, ``"response_type": "in_channel"`` posts in the channel, otherwise the answer is recorded
as an ephemeral message to the user (:attr:`FakeSlack.ephemerals`).

The world model: one workspace (``team_id``, ``domain``), users (``U…``; admin/owner/bot/deleted flags), channels
(``C…`` public, ``G…`` private, ``D…`` direct messages) with members, and messages per channel keyed by ``ts``.
Rules enforced as Slack does: a bot token deletes only the bot's own messages (``cant_delete_message``), an admin
or owner user token (``xoxp-…``) deletes any; ``chat.postEphemeral`` needs the user in the channel; ``views.open``
needs a known ``trigger_id`` at most 3 s old and used once; Block Kit's limits (:func:`_block_problems`: 50 blocks a
message, 100 a view, section text 3,000 characters, header 150, button text 75...) answer ``invalid_blocks`` on
``chat.postMessage|update|postEphemeral`` and 400 ``invalid_blocks`` on a ``response_url``, and nothing is posted; a ``response_url`` works 5 times within 30 minutes,
then answers 404 ``expired_url``; private channels need the ``groups:*`` scopes; posting in a channel the bot is
not in needs ``chat:write.public``.
Time is the fake's clock (:meth:`FakeSlack.now`), which :meth:`FakeSlack.advance` moves forward, so expiry is tested
without sleeping. Every Web API call is recorded (:attr:`FakeSlack.calls`); waits are event-based
(:meth:`FakeSlack.wait_for`). Errors are injected with :meth:`FakeSlack.fail`, 429s with
:meth:`FakeSlack.rate_limit`, dropped connections with :meth:`FakeSlack.reset_connection`, and missing scopes by
removing a scope from :attr:`FakeSlack.bot_scopes`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

import aiohttp
from aiohttp import WSMsgType, web

#: Seconds a ``trigger_id`` stays usable (Slack: "expires in 3 seconds").
TRIGGER_TTL_S = 3.0
#: A ``response_url`` may be used this many times ...
RESPONSE_URL_MAX_USES = 5
#: ... within this many seconds (30 minutes).
RESPONSE_URL_TTL_S = 30 * 60

#: The bot-token scope each method needs (``missing_scope`` names it in ``needed``). Methods not listed need none.
METHOD_SCOPES: dict[str, str] = {
    "chat.postMessage": "chat:write",
    "chat.update": "chat:write",
    "chat.delete": "chat:write",
    "chat.postEphemeral": "chat:write",
    "conversations.info": "channels:read",
    "conversations.members": "channels:read",
    "conversations.open": "im:write",
    "conversations.kick": "channels:manage",
    "conversations.join": "channels:join",
    "conversations.history": "channels:history",
    "conversations.replies": "channels:history",
    "reactions.add": "reactions:write",
    "users.info": "users:read",
    "users.conversations": "channels:read",
    "usergroups.users.list": "usergroups:read",
    "usergroups.list": "usergroups:read",
    "team.info": "team:read",
    "files.getUploadURLExternal": "files:write",
    "files.completeUploadExternal": "files:write",
    "files.upload": "files:write",
}
#: For a private channel (``G…``) these scopes replace the public-channel ones above.
PRIVATE_SCOPES: dict[str, str] = {
    "channels:read": "groups:read",
    "channels:manage": "groups:write",
    "channels:history": "groups:history",
}

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    """A Slack-looking id: prefix + 10 upper-case alphanumerics, unique in the process."""
    return f"{prefix}{next(_ids):010d}"


@dataclass
class SlackUser:
    """A workspace member. ``tz`` is an IANA zone name; ``bot_id`` is set for bot users."""

    id: str
    name: str
    is_admin: bool = False
    is_owner: bool = False
    is_bot: bool = False
    deleted: bool = False
    tz: str = "Europe/Berlin"
    bot_id: str | None = None
    token: str | None = None
    #: A Slack Connect member's own workspace (``None``: this workspace). ``users.info`` gives it as ``team_id``.
    home_team: str | None = None

    def to_json(self, team_id: str) -> dict[str, Any]:
        """The ``user`` object of ``users.info`` (a Slack Connect member keeps their own ``team_id``)."""
        return {
            "id": self.id, "team_id": self.home_team or team_id, "name": self.name, "real_name": self.name.title(),
            "deleted": self.deleted, "is_admin": self.is_admin, "is_owner": self.is_owner,
            "is_primary_owner": self.is_owner, "is_bot": self.is_bot, "is_app_user": False,
            "is_restricted": False, "is_ultra_restricted": False, "tz": self.tz,
            "tz_offset": int(datetime.now(ZoneInfo(self.tz)).utcoffset().total_seconds()),  # type: ignore[union-attr]
            "updated": 1700000000,
            "profile": {"real_name": self.name.title(), "display_name": self.name, "image_72": "",
                        **({"bot_id": self.bot_id} if self.bot_id else {})},
        }


@dataclass
class SlackChannel:
    """A conversation: ``C…`` public, ``G…`` private, ``D…`` a direct message. ``members`` are user ids."""

    id: str
    name: str
    is_private: bool = False
    is_general: bool = False
    is_im: bool = False
    members: set[str] = field(default_factory=set)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Other workspaces this channel is shared with (Slack Connect), by team id; ``pending_share``: an invitation to
    #: share it that the other organisation has not accepted yet (``is_pending_ext_shared``).
    shared_with: list[str] = field(default_factory=list)
    pending_share: bool = False

    def to_json(self) -> dict[str, Any]:
        """The ``channel`` object of ``conversations.info``."""
        if self.is_im:
            other = sorted(self.members)
            return {"id": self.id, "is_im": True, "user": other[0] if other else None, "created": 1700000000}
        return {
            "id": self.id, "name": self.name, "is_channel": not self.is_private, "is_group": self.is_private,
            "is_im": False, "is_private": self.is_private, "is_general": self.is_general, "is_archived": False,
            "created": 1700000000, "num_members": len(self.members),
            "is_shared": bool(self.shared_with), "is_ext_shared": bool(self.shared_with), "is_org_shared": False,
            "is_pending_ext_shared": self.pending_share,
            **({"shared_team_ids": list(self.shared_with)} if self.shared_with else {}),
        }


@dataclass
class ApiCall:
    """One Web API request: method name, bearer token (or ``None``), parsed params, HTTP status and answer.

    ``content_type`` is how the SDK sent it (``application/json`` or ``application/x-www-form-urlencoded``;
    empty for a GET with query parameters).
    """

    method: str
    token: str | None
    params: dict[str, Any]
    content_type: str = ""
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)
    at: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether Slack answered ``ok: true``."""
        return bool(self.response.get("ok"))


@dataclass
class HookPost:
    """One POST to a ``response_url``: the JSON body and the HTTP status the fake answered."""

    hook_id: str
    body: Any
    status: int


@dataclass
class _Hook:
    created: float
    uses: int = 0
    channel: str | None = None
    user: str | None = None
    message_ts: str | None = None


@dataclass
class Envelope:
    """A Socket Mode envelope sent to the client and its acknowledgement.

    ``ack_latency_s`` is seconds from sending to receiving the ack (``None`` until acked); ``ack_payload`` is the
    ack's optional ``payload`` (e.g. a slash command's ``ack("text")``).
    """

    envelope_id: str
    type: str
    payload: dict[str, Any]
    sent_at: float
    acked: bool = False
    ack_payload: Any = None
    ack_latency_s: float | None = None


@dataclass
class InboundResponse:
    """The app's answer to a signed request: HTTP status, headers and body text."""

    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class _Failure:
    def __init__(self, error: str, times: int, status: int, retry_after: int | None, extra: dict[str, Any]):
        self.error, self.times, self.status, self.retry_after, self.extra = error, times, status, retry_after, extra


class FakeSlack:
    """The fake. Use ``async with FakeSlack() as fake``; see the module docstring for pointing clients at it.

    Default world: workspace ``fake.team_id`` / ``fake.domain``; the bot user (``fake.bot_user_id``, token
    ``fake.bot_token``), an owner ``fake.owner`` and an admin ``fake.admin`` with user tokens (``user.token``),
    a member ``fake.member``; ``#general`` (``fake.general``) and ``#random`` (``fake.random``) with everyone in
    them, and the app-level token ``fake.app_token``.
    """

    def __init__(self, *, signing_secret: str = "fake-signing-secret") -> None:
        self.signing_secret = signing_secret
        self.team_id = _new_id("T")
        self.team_name = "Fake Workspace"
        self.domain = "fakeworkspace"
        self.api_app_id = _new_id("A")
        self.app_token = f"xapp-1-{self.api_app_id}-1-fake"
        self.bot_token = "xoxb-fake-bot-token"
        self.bot_scopes: set[str] = set(METHOD_SCOPES.values()) | {"groups:write", "groups:read", "commands"}
        self.users: dict[str, SlackUser] = {}
        self.channels: dict[str, SlackChannel] = {}
        self.usergroups: dict[str, list[str]] = {}
        self.usergroup_handles: dict[str, str] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.home_tabs: dict[str, dict[str, Any]] = {}
        self.ephemerals: list[dict[str, Any]] = []
        self.deleted: list[dict[str, Any]] = []
        #: Uploaded files by id: ``{"id", "name", "title", "length", "data" (bytes or None before the upload),
        #: "channels"}``.
        self.files: dict[str, dict[str, Any]] = {}
        self.calls: list[ApiCall] = []
        self.hook_posts: list[HookPost] = []
        self.envelopes: dict[str, Envelope] = {}
        self.connections = 0
        self.time_offset = 0.0
        self._failures: dict[str, list[_Failure]] = {}
        self._triggers: dict[str, tuple[float, bool]] = {}
        self._hooks: dict[str, _Hook] = {}
        self._ts_counter = itertools.count(1)
        self._changed = asyncio.Event()
        self._socket: web.WebSocketResponse | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

        bot = self.add_user("modbot", is_bot=True)
        bot.token = self.bot_token
        self.bot_user_id, self.bot_id = bot.id, bot.bot_id
        self.owner = self.add_user("owner", is_owner=True, is_admin=True, with_token=True)
        self.admin = self.add_user("admin", is_admin=True, with_token=True)
        self.member = self.add_user("member")
        everyone = [self.bot_user_id, self.owner.id, self.admin.id, self.member.id]
        self.general = self.add_channel("general", members=everyone, is_general=True)
        self.random = self.add_channel("random", members=everyone)

    # ----------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> FakeSlack:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/hooks/{hook_id}", self._hook)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/socket", self._ws)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        """The Web API base URL for ``AsyncWebClient(base_url=...)``, with its required trailing slash."""
        return f"{self.base_url}/api/"

    # ----------------------------------------------------------------- world

    def now(self) -> float:
        """The fake's clock: epoch seconds plus :attr:`time_offset`."""
        return time.time() + self.time_offset

    def advance(self, seconds: float) -> None:
        """Move the fake's clock forward (expires triggers and response URLs without sleeping)."""
        self.time_offset += seconds

    def add_user(self, name: str, *, is_admin: bool = False, is_owner: bool = False, is_bot: bool = False,
                 deleted: bool = False, tz: str = "Europe/Berlin", with_token: bool = False,
                 home_team: str | None = None) -> SlackUser:
        """Add a member (id ``U…``); ``with_token`` gives them a user token ``xoxp-…`` (``user.token``);
        ``home_team`` makes them a Slack Connect member of another workspace (put them in a shared channel)."""
        user = SlackUser(_new_id("U"), name, is_admin=is_admin, is_owner=is_owner, is_bot=is_bot, deleted=deleted,
                         tz=tz, home_team=home_team)
        if with_token:
            user.token = f"xoxp-{user.id}-fake"
        if is_bot:
            user.bot_id = _new_id("B")
        self.users[user.id] = user
        return user

    def add_channel(self, name: str, *, private: bool = False, members: list[str] | None = None,
                    is_general: bool = False, bot_member: bool = True, shared_with: list[str] | None = None,
                    pending_share: bool = False) -> SlackChannel:
        """Add a channel (``C…`` public or ``G…`` private) with these member ids (the bot too unless told not);
        ``shared_with``: the other workspaces' team ids of a Slack Connect channel (``conversations.info`` then says
        ``is_ext_shared``), ``pending_share``: one whose sharing invitation is not accepted yet."""
        channel = SlackChannel(_new_id("G" if private else "C"), name, is_private=private, is_general=is_general,
                               members=set(members or []), shared_with=list(shared_with or []),
                               pending_share=pending_share)
        if bot_member:
            channel.members.add(self.bot_user_id)
        self.channels[channel.id] = channel
        return channel

    def add_dm(self, one: str, other: str) -> SlackChannel:
        """A direct message between two members (``D…``; the bot is not in it, so it gets none of its events)."""
        channel = SlackChannel(_new_id("D"), "", is_private=True, is_im=True, members={one, other})
        self.channels[channel.id] = channel
        return channel

    def add_usergroup(self, handle: str, members: list[str]) -> str:
        """Add a user group (e.g. moderators); returns its id ``S…``."""
        group_id = _new_id("S")
        self.usergroups[group_id] = list(members)
        self.usergroup_handles[group_id] = handle
        return group_id

    def new_ts(self) -> str:
        """A fresh, strictly increasing message ``ts`` (``"<seconds>.<6 digits>"``)."""
        return f"{int(self.now())}.{next(self._ts_counter):06d}"

    def add_message(self, channel: str, user: str, text: str, *, ts: str | None = None,
                    thread_ts: str | None = None, bot_id: str | None = None,
                    blocks: list[Any] | None = None) -> dict[str, Any]:
        """Store a message in ``channel`` (as if it had been posted) and return it (``ts`` set)."""
        msg: dict[str, Any] = {"type": "message", "user": user, "text": text, "ts": ts or self.new_ts(),
                               "team": self.team_id}
        if thread_ts:
            msg["thread_ts"] = thread_ts
        if bot_id:
            msg["bot_id"] = bot_id
        if blocks is not None:
            msg["blocks"] = blocks
        self.channels[channel].messages[msg["ts"]] = msg
        return msg

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        """The stored message, or ``None`` if it does not exist (or was deleted)."""
        chan = self.channels.get(channel)
        return chan.messages.get(ts) if chan else None

    def new_trigger_id(self) -> str:
        """Register a fresh ``trigger_id`` (usable once, for :data:`TRIGGER_TTL_S` seconds of the fake's clock)."""
        trigger = f"{next(_ids)}.{next(_ids)}.fake{next(_ids):08x}"
        self._triggers[trigger] = (self.now(), False)
        return trigger

    def new_response_url(self, *, channel: str | None = None, user: str | None = None,
                         message_ts: str | None = None) -> str:
        """Register a ``response_url`` on this fake (``http://127.0.0.1:<port>/hooks/<id>``).

        ``channel``/``user`` say where an answer goes (ephemeral to ``user``, or ``"response_type": "in_channel"``
        as a message in ``channel``); ``message_ts`` is the message that ``replace_original`` / ``delete_original``
        act on (the card a button was clicked on).
        """
        hook_id = f"{self.team_id}-{next(_ids)}"
        self._hooks[hook_id] = _Hook(created=self.now(), channel=channel, user=user, message_ts=message_ts)
        return f"{self.base_url}/hooks/{hook_id}"

    # ----------------------------------------------------------------- injection

    def fail(self, method: str, error: str, *, times: int = 1, **extra: Any) -> None:
        """Make the next ``times`` calls of ``method`` answer ``{"ok": false, "error": error, **extra}``."""
        self._failures.setdefault(method, []).append(_Failure(error, times, 200, None, extra))

    def reset_connection(self, method: str, *, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` end with the connection closed before any answer (a
        connection reset on the way to Slack; the client sees ``ServerDisconnectedError``). Nothing is done."""
        self._failures.setdefault(method, []).append(_Failure("connection_reset", times, 0, None, {}))

    def rate_limit(self, method: str, *, retry_after: int = 1, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` answer HTTP 429 with ``Retry-After: <retry_after>`` seconds."""
        self._failures.setdefault(method, []).append(_Failure("ratelimited", times, 429, retry_after, {}))

    # ----------------------------------------------------------------- waits

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_until(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait (event-based) until ``predicate()`` is truthy and return its value; ``TimeoutError`` after
        ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while not (value := predicate()):
                await self._changed.wait()
            return value

    def calls_of(self, method: str) -> list[ApiCall]:
        """Recorded calls of one Web API method, oldest first."""
        return [c for c in self.calls if c.method == method]

    async def wait_for(self, method: str, count: int = 1, timeout: float = 5.0) -> list[ApiCall]:
        """Wait until ``method`` has been called at least ``count`` times; return those calls."""
        return await self.wait_until(lambda: (calls := self.calls_of(method)) and len(calls) >= count and calls,
                                     timeout)

    async def wait_for_hook(self, count: int = 1, timeout: float = 5.0) -> list[HookPost]:
        """Wait until ``count`` POSTs to response URLs arrived; return them all."""
        return await self.wait_until(lambda: len(self.hook_posts) >= count and self.hook_posts, timeout)

    # ----------------------------------------------------------------- web api

    async def _parse(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.method == "POST":
            if request.content_type == "application/json":
                raw = await request.text()
                if raw:
                    params.update(json.loads(raw))
            else:
                params.update(dict(await request.post()))
        for key in ("blocks", "view", "attachments", "metadata"):
            if isinstance(params.get(key), str) and params[key][:1] in "[{":
                params[key] = json.loads(params[key])
        return params

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._parse(request)
        auth = request.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else params.pop("token", None)
        call = ApiCall(method, token, params, content_type=request.content_type if request.method == "POST" else "",
                       at=self.now())
        headers: dict[str, str] = {}
        queue = self._failures.get(method) or []
        if queue:
            failure = queue[0]
            failure.times -= 1
            if failure.times <= 0:
                queue.pop(0)
            call.status = failure.status
            call.response = {"ok": False, "error": failure.error, **failure.extra}
            if failure.status == 0:  # reset_connection: no answer at all
                self.calls.append(call)
                self._notify()
                assert request.transport is not None
                request.transport.close()
                return web.Response(status=500)
            if failure.retry_after is not None:
                headers["Retry-After"] = str(failure.retry_after)
        else:
            call.response = self._answer(method, token, params)
        self.calls.append(call)
        self._notify()
        return web.json_response(call.response, status=call.status, headers=headers)

    def _answer(self, method: str, token: str | None, params: dict[str, Any]) -> dict[str, Any]:
        handler = _METHODS.get(method)
        if handler is None:
            return _err("unknown_method")
        if not token:
            return _err("not_authed")
        if token.startswith("xapp-"):
            if token != self.app_token:
                return _err("invalid_auth")
            if method != "apps.connections.open":
                return _err("not_allowed_token_type")
            return handler(self, None, params)
        actor = next((u for u in self.users.values() if u.token == token), None)
        if actor is None:
            return _err("invalid_auth")
        if method == "apps.connections.open":
            return _err("not_allowed_token_type")
        if actor.deleted:
            return _err("account_inactive")
        needed = METHOD_SCOPES.get(method)
        chan = self._channel(params.get("channel"))
        if needed and chan is not None and chan.is_private and not chan.is_im:
            needed = PRIVATE_SCOPES.get(needed, needed)
        if actor.id == self.bot_user_id and needed and needed not in self.bot_scopes:
            return _err("missing_scope", needed=needed, provided=",".join(sorted(self.bot_scopes)))
        return handler(self, actor, params)

    def _channel(self, channel_id: Any) -> SlackChannel | None:
        return self.channels.get(str(channel_id)) if channel_id else None

    def _user(self, user_id: Any) -> SlackUser | None:
        return self.users.get(str(user_id)) if user_id else None

    def _auth_test(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        out = {"ok": True, "url": f"https://{self.domain}.slack.com/", "team": self.team_name, "user": actor.name,
               "team_id": self.team_id, "user_id": actor.id, "is_enterprise_install": False}
        if actor.id == self.bot_user_id:
            out["bot_id"] = self.bot_id
        return out

    def _post_message(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        target = str(params.get("channel") or "")
        if target in self.users:
            target = self._open_dm(target).id
        chan = self._channel(target)
        if chan is None:
            return _err("channel_not_found")
        public_ok = not chan.is_private and actor.id == self.bot_user_id and "chat:write.public" in self.bot_scopes
        if actor.id not in chan.members and not public_ok:
            return _err("not_in_channel")
        if not params.get("text") and not params.get("blocks") and not params.get("attachments"):
            return _err("no_text")
        if problems := _block_problems(params.get("blocks")):
            return _err("invalid_blocks", errors=problems, response_metadata={"messages": problems})
        msg = self.add_message(chan.id, actor.id, str(params.get("text") or ""), thread_ts=params.get("thread_ts"),
                               bot_id=actor.bot_id, blocks=params.get("blocks"))
        return {"ok": True, "channel": chan.id, "ts": msg["ts"], "message": dict(msg)}

    def _may_change(self, actor: SlackUser, msg: dict[str, Any], *, delete: bool) -> bool:
        if msg.get("user") == actor.id:
            return True
        return delete and actor.id != self.bot_user_id and (actor.is_admin or actor.is_owner)

    def _update(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None:
            return _err("channel_not_found")
        msg = chan.messages.get(str(params.get("ts")))
        if msg is None:
            return _err("message_not_found")
        if not self._may_change(actor, msg, delete=False):
            return _err("cant_update_message")
        if problems := _block_problems(params.get("blocks")):
            return _err("invalid_blocks", errors=problems, response_metadata={"messages": problems})
        if "text" in params:
            msg["text"] = params["text"]
        if "blocks" in params:
            msg["blocks"] = params["blocks"]
        msg["edited"] = {"user": actor.id, "ts": self.new_ts()}
        return {"ok": True, "channel": chan.id, "ts": msg["ts"], "text": msg["text"], "message": dict(msg)}

    def _delete(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None:
            return _err("channel_not_found")
        msg = chan.messages.get(str(params.get("ts")))
        if msg is None:
            return _err("message_not_found")
        if not self._may_change(actor, msg, delete=True):
            return _err("cant_delete_message")
        del chan.messages[msg["ts"]]
        self.deleted.append({"channel": chan.id, "ts": msg["ts"], "by": actor.id, "message": msg})
        return {"ok": True, "channel": chan.id, "ts": msg["ts"]}

    def _post_ephemeral(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None:
            return _err("channel_not_found")
        user = self._user(params.get("user"))
        if user is None:
            return _err("user_not_found")
        if actor.id not in chan.members:
            return _err("not_in_channel")
        if user.id not in chan.members:
            return _err("user_not_in_channel")
        if not params.get("text") and not params.get("blocks"):
            return _err("no_text")
        if problems := _block_problems(params.get("blocks")):
            return _err("invalid_blocks", errors=problems, response_metadata={"messages": problems})
        ts = self.new_ts()
        self.ephemerals.append({"channel": chan.id, "user": user.id, "text": params.get("text"),
                                "blocks": params.get("blocks"), "message_ts": ts,
                                "thread_ts": params.get("thread_ts")})
        return {"ok": True, "message_ts": ts}

    def _permalink(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None:
            return _err("channel_not_found")
        ts = str(params.get("message_ts"))
        if ts not in chan.messages:
            return _err("message_not_found")
        return {"ok": True, "channel": chan.id,
                "permalink": f"https://{self.domain}.slack.com/archives/{chan.id}/p{ts.replace('.', '')}"}

    def _conv_info(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """``conversations.info``: a private channel the caller is not in is ``channel_not_found``; a channel's
        ``is_member`` says whether the caller is in it (what ``chat.postMessage`` needs without
        ``chat:write.public``)."""
        chan = self._channel(params.get("channel"))
        if chan is None or (chan.is_private and actor.id not in chan.members):
            return _err("channel_not_found")
        return {"ok": True, "channel": {**chan.to_json(), **({} if chan.is_im else
                                                             {"is_member": actor.id in chan.members})}}

    def _open_dm(self, user_id: str) -> SlackChannel:
        dm_id = "D" + user_id[1:]
        if dm_id not in self.channels:
            self.channels[dm_id] = SlackChannel(dm_id, "", is_private=True, is_im=True,
                                                members={self.bot_user_id, user_id})
        return self.channels[dm_id]

    def _conv_open(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        users = [u for u in str(params.get("users") or "").split(",") if u]
        if len(users) != 1:
            return _err("not_enough_users" if not users else "too_many_users")
        user = self._user(users[0])
        if user is None:
            return _err("user_not_found")
        if user.deleted:
            return _err("user_disabled")
        return {"ok": True, "channel": {"id": self._open_dm(user.id).id}}

    def _kick(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None:
            return _err("channel_not_found")
        user = self._user(params.get("user"))
        if user is None:
            return _err("user_not_found")
        if user.id == actor.id:
            return _err("cant_kick_self")
        if chan.is_im:
            return _err("method_not_supported_for_channel_type")
        if chan.is_general:
            return _err("cant_kick_from_general")
        if actor.id not in chan.members or user.id not in chan.members:
            return _err("not_in_channel")
        chan.members.discard(user.id)
        return {"ok": True}

    def _join(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None or (chan.is_private and actor.id not in chan.members):
            return _err("channel_not_found")
        if chan.is_private or chan.is_im:
            return _err("method_not_supported_for_channel_type")
        chan.members.add(actor.id)
        return {"ok": True, "channel": chan.to_json()}

    def _members(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None or (chan.is_private and actor.id not in chan.members):
            return _err("channel_not_found")
        return {"ok": True, "members": sorted(chan.members), "response_metadata": {"next_cursor": ""}}

    def _users_info(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        user = self._user(params.get("user"))
        if user is None:
            return _err("user_not_found")
        return {"ok": True, "user": user.to_json(self.team_id)}

    def _usergroup_users(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        group = self.usergroups.get(str(params.get("usergroup")))
        if group is None:
            return _err("no_such_subteam")
        return {"ok": True, "users": list(group)}

    def _usergroups_list(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """``usergroups.list``: the workspace's user groups (without their members)."""
        return {"ok": True, "usergroups": [
            {"id": gid, "team_id": self.team_id, "is_usergroup": True, "name": handle.title(), "handle": handle,
             "date_delete": 0, "user_count": len(self.usergroups[gid])}
            for gid, handle in self.usergroup_handles.items()]}

    def _check_trigger(self, trigger_id: Any) -> str | None:
        entry = self._triggers.get(str(trigger_id)) if trigger_id else None
        if entry is None:
            return "invalid_trigger_id"
        created, used = entry
        if used:
            return "exchanged_trigger_id"
        if self.now() - created > TRIGGER_TTL_S:
            return "expired_trigger_id"
        self._triggers[str(trigger_id)] = (created, True)
        return None

    def _view_json(self, view_id: str, view: dict[str, Any], external_id: str | None) -> dict[str, Any]:
        return {"id": view_id, "team_id": self.team_id, "app_id": self.api_app_id, "bot_id": self.bot_id,
                "hash": f"{int(self.now())}.{next(_ids)}", "state": {"values": {}},
                "private_metadata": view.get("private_metadata", ""), "callback_id": view.get("callback_id", ""),
                "external_id": external_id or "", **{k: v for k, v in view.items() if k not in {"state"}}}

    def _views_open(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        if not isinstance(view, dict) or view.get("type") not in {"modal", "home"}:
            return _err("invalid_arguments")
        problems = _view_problems(view)
        if problems:
            return _err("invalid_arguments", response_metadata={"messages": problems})
        error = self._check_trigger(params.get("trigger_id"))
        if error:
            return _err(error)
        view_id = _new_id("V")
        self.views[view_id] = self._view_json(view_id, view, view.get("external_id"))
        return {"ok": True, "view": self.views[view_id]}

    def _views_update(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        if not isinstance(view, dict):
            return _err("invalid_arguments")
        if params.get("trigger_id") is not None:
            error = self._check_trigger(params.get("trigger_id"))
            if error:
                return _err(error)
        view_id = params.get("view_id")
        if not view_id and params.get("external_id"):
            view_id = next((k for k, v in self.views.items() if v["external_id"] == params["external_id"]), None)
        if not view_id or view_id not in self.views:
            return _err("not_found")
        self.views[view_id] = self._view_json(view_id, view, self.views[view_id]["external_id"])
        return {"ok": True, "view": self.views[view_id]}

    def _history(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """conversations.history: top-level messages newest first, strictly between ``oldest`` and ``latest``
        (``inclusive`` makes both ends inclusive), ``limit`` 1-999 (default 100; Slack recommends <= 200), cursor
        pagination towards older messages (``has_more`` and ``response_metadata.next_cursor``)."""
        chan = self._channel(params.get("channel"))
        if chan is None or (chan.is_private and actor.id not in chan.members):
            return _err("channel_not_found")
        if actor.id not in chan.members:
            return _err("not_in_channel")
        try:
            limit = int(params.get("limit") or 100)
            offset = int(base64.b64decode(str(params["cursor"])).decode().removeprefix("next_ts:")) \
                if params.get("cursor") else 0
        except (ValueError, UnicodeDecodeError):
            return _err("invalid_cursor")
        if not 1 <= limit <= 999:
            return _err("invalid_limit")
        inclusive = str(params.get("inclusive", "")).lower() in ("1", "true")
        oldest = _ts_key(str(params["oldest"])) if params.get("oldest") else None
        latest = _ts_key(str(params["latest"])) if params.get("latest") else None

        def within(ts: str) -> bool:
            k = _ts_key(ts)
            lo = oldest is None or (k >= oldest if inclusive else k > oldest)
            hi = latest is None or (k <= latest if inclusive else k < latest)
            return lo and hi

        top = [m for m in chan.messages.values() if m.get("thread_ts") in (None, m["ts"]) and within(m["ts"])]
        top.sort(key=lambda m: _ts_key(m["ts"]), reverse=True)
        page = top[offset:offset + limit]
        more = len(top) > offset + limit
        cursor = base64.b64encode(f"next_ts:{offset + limit}".encode()).decode() if more else ""
        return {"ok": True, "messages": [dict(m) for m in page], "has_more": more,
                "response_metadata": {"next_cursor": cursor}}

    def _user_conversations(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """users.conversations: the channels the caller is a member of, of ``types`` (default
        ``public_channel``), cursor pagination (``limit`` default 100)."""
        types = set(str(params.get("types") or "public_channel").split(","))
        if "private_channel" in types and "groups:read" not in self.bot_scopes and actor.id == self.bot_user_id:
            return _err("missing_scope", needed="groups:read", provided=",".join(sorted(self.bot_scopes)))
        found = [c for c in self.channels.values() if actor.id in c.members and not c.is_im
                 and ("private_channel" if c.is_private else "public_channel") in types]
        found.sort(key=lambda c: c.id)
        limit = int(params.get("limit") or 100)
        offset = int(params.get("cursor") or 0)
        page = found[offset:offset + limit]
        more = len(found) > offset + limit
        return {"ok": True, "channels": [c.to_json() for c in page],
                "response_metadata": {"next_cursor": str(offset + limit) if more else ""}}

    def _replies(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None or (chan.is_private and actor.id not in chan.members):
            return _err("channel_not_found")
        ts = str(params.get("ts"))
        if ts not in chan.messages:
            return _err("thread_not_found")
        thread = [m for m in chan.messages.values() if m["ts"] == ts or m.get("thread_ts") == ts]
        thread.sort(key=lambda m: _ts_key(m["ts"]))
        return {"ok": True, "messages": [dict(m) for m in thread], "has_more": False,
                "response_metadata": {"next_cursor": ""}}

    def _react(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        chan = self._channel(params.get("channel"))
        if chan is None:
            return _err("channel_not_found")
        msg = chan.messages.get(str(params.get("timestamp")))
        if msg is None:
            return _err("message_not_found")
        name = str(params.get("name") or "")
        if not name:
            return _err("invalid_name")
        reactions: list[dict[str, Any]] = msg.setdefault("reactions", [])
        entry = next((r for r in reactions if r["name"] == name), None)
        if entry is None:
            entry = {"name": name, "users": [], "count": 0}
            reactions.append(entry)
        if actor.id in entry["users"]:
            return _err("already_reacted")
        entry["users"].append(actor.id)
        entry["count"] += 1
        return {"ok": True}

    def _views_publish(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        view = params.get("view")
        if not isinstance(view, dict) or view.get("type") != "home":
            return _err("invalid_arguments")
        user = self._user(params.get("user_id"))
        if user is None:
            return _err("user_not_found")
        if problems := _block_problems(view.get("blocks"), "/view/blocks", VIEW_BLOCKS_MAX):
            return _err("invalid_arguments", response_metadata={"messages": problems})
        self.home_tabs[user.id] = view
        return {"ok": True, "view": self._view_json(_new_id("V"), view, None)}

    def _connections_open(self, actor: SlackUser | None, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket?ticket={next(_ids)}"}

    def _upload_url(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """``files.getUploadURLExternal``: ``filename`` and ``length`` (bytes, an integer) are required."""
        name, length = str(params.get("filename") or ""), str(params.get("length") or "")
        if not name or not length.isdigit() or int(length) <= 0:
            return _err("invalid_arguments")
        file_id = _new_id("F")
        self.files[file_id] = {"id": file_id, "name": name, "title": name, "length": int(length), "data": None,
                               "channels": [], "user": actor.id}
        return {"ok": True, "upload_url": f"{self.base_url}/upload/{file_id}", "file_id": file_id}

    async def _upload(self, request: web.Request) -> web.Response:
        """The ``upload_url``: the file's bytes, once, exactly ``length`` of them (else 400)."""
        entry = self.files.get(request.match_info["file_id"])
        data = await request.read()
        if entry is None or entry["data"] is not None:
            return web.Response(status=404, text="not found")
        if len(data) != entry["length"]:
            return web.Response(status=400, text=f"expected {entry['length']} bytes, got {len(data)}")
        entry["data"] = data
        self._notify()
        return web.Response(status=200, text=f"OK - {len(data)}")

    def _complete_upload(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """``files.completeUploadExternal``: every file uploaded; shared in ``channel_id`` (the actor must be in
        it) as one message carrying the files and ``initial_comment``."""
        files = params.get("files")
        if isinstance(files, str):
            files = json.loads(files)
        if not isinstance(files, list) or not files:
            return _err("invalid_arguments")
        entries = []
        for f in files:
            entry = self.files.get(str(f.get("id"))) if isinstance(f, dict) else None
            if entry is None or entry["user"] != actor.id:
                return _err("file_not_found")
            if entry["data"] is None:
                return _err("file_upload_not_completed")
            if f.get("title"):
                entry["title"] = str(f["title"])
            entries.append(entry)
        target = params.get("channel_id")
        if target:
            chan = self._channel(target)
            if chan is None:
                return _err("channel_not_found")
            if actor.id not in chan.members:
                return _err("not_in_channel")
            msg = self.add_message(chan.id, actor.id, str(params.get("initial_comment") or ""),
                                   thread_ts=params.get("thread_ts"), bot_id=actor.bot_id)
            msg["files"] = [{"id": e["id"], "name": e["name"], "title": e["title"], "size": e["length"]}
                            for e in entries]
            for e in entries:
                e["channels"].append(chan.id)
        return {"ok": True, "files": [{"id": e["id"], "name": e["name"], "title": e["title"], "size": e["length"],
                                       "channels": list(e["channels"])} for e in entries]}

    def _files_upload(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        """The retired ``files.upload`` (Slack stopped it in November 2025)."""
        return _err("method_deprecated")

    def file_text(self, file_id: str) -> str:
        """An uploaded file's content as UTF-8 text."""
        return bytes(self.files[file_id]["data"]).decode("utf-8")

    def _team_info(self, actor: SlackUser, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "team": {"id": self.team_id, "name": self.team_name, "domain": self.domain,
                                     "email_domain": "", "icon": {}}}

    # ----------------------------------------------------------------- response_url

    async def _hook(self, request: web.Request) -> web.Response:
        hook_id = request.match_info["hook_id"]
        try:
            body: Any = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = await request.text()
        hook = self._hooks.get(hook_id)
        if hook is None:
            status, text = 404, "no_service"
        elif self.now() - hook.created > RESPONSE_URL_TTL_S or hook.uses >= RESPONSE_URL_MAX_USES:
            status, text = 404, "expired_url"
        elif isinstance(body, dict) and _block_problems(body.get("blocks")):
            status, text = 400, "invalid_blocks"  # Slack refuses the post; the message stays as it was
        else:
            hook.uses += 1
            status, text = 200, "ok"
            if isinstance(body, dict):
                self._apply_response(hook, body)
        self.hook_posts.append(HookPost(hook_id, body, status))
        self._notify()
        return web.Response(status=status, text=text)

    def _apply_response(self, hook: _Hook, body: dict[str, Any]) -> None:
        """What Slack does with a response_url post: delete or replace the original message, post in the
        channel (``response_type: in_channel``), or show an ephemeral message to the user (the default)."""
        original = self.message(hook.channel, hook.message_ts) if hook.channel and hook.message_ts else None
        if _truthy(body.get("delete_original")):
            if original is not None:
                del self.channels[hook.channel].messages[original["ts"]]  # type: ignore[index]
                self.deleted.append({"channel": hook.channel, "ts": original["ts"], "by": "response_url",
                                     "message": original})
        elif _truthy(body.get("replace_original")):
            if original is None:  # an ephemeral message: only its response_url can replace it
                original = next((e for e in self.ephemerals if hook.message_ts and e["message_ts"] == hook.message_ts
                                 and e["channel"] == hook.channel and e["user"] == hook.user), None)
            if original is not None:
                original["text"] = body.get("text", "")
                if "blocks" in body:
                    original["blocks"] = body["blocks"]
        elif body.get("response_type") == "in_channel" and hook.channel in self.channels:
            self.add_message(hook.channel, self.bot_user_id, str(body.get("text", "")),
                             bot_id=self.bot_id, blocks=body.get("blocks"), thread_ts=body.get("thread_ts"))
        elif hook.channel and hook.user:
            self.ephemerals.append({"channel": hook.channel, "user": hook.user, "text": body.get("text"),
                                    "blocks": body.get("blocks"), "message_ts": self.new_ts()})

    # ----------------------------------------------------------------- socket mode

    async def _ws(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.add(ws)
        self._socket = ws
        self.connections += 1
        await ws.send_json({"type": "hello", "num_connections": 1,
                            "debug_info": {"host": "fake-slack", "approximate_connection_time": 18060},
                            "connection_info": {"app_id": self.api_app_id}})
        self._notify()
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(msg.data)
                except json.JSONDecodeError:
                    continue
                env = self.envelopes.get(str(data.get("envelope_id"))) if isinstance(data, dict) else None
                if env is not None and not env.acked:
                    env.acked = True
                    env.ack_payload = data.get("payload")
                    env.ack_latency_s = time.monotonic() - env.sent_at
                    self._notify()
        finally:
            self._sockets.discard(ws)
            if self._socket is ws:
                self._socket = None
            self._notify()
        return ws

    async def wait_for_connections(self, count: int = 1, timeout: float = 5.0) -> None:
        """Wait until ``count`` websocket connections have been opened in all (and one is open now)."""
        await self.wait_until(lambda: self.connections >= count and self._socket is not None, timeout)

    async def send_envelope(self, type: str, payload: dict[str, Any], *, accepts_response_payload: bool = False,
                            retry_attempt: int = 0, retry_reason: str = "") -> Envelope:
        """Send one Socket Mode envelope (``events_api`` | ``slash_commands`` | ``interactive``) on the open
        connection and return its record; raises ``RuntimeError`` if no client is connected."""
        if self._socket is None:
            raise RuntimeError("no Socket Mode client is connected")
        env = Envelope(envelope_id=f"env-{next(_ids)}", type=type, payload=payload, sent_at=time.monotonic())
        self.envelopes[env.envelope_id] = env
        await self._socket.send_json({"envelope_id": env.envelope_id, "type": type, "payload": payload,
                                      "accepts_response_payload": accepts_response_payload,
                                      "retry_attempt": retry_attempt, "retry_reason": retry_reason})
        return env

    async def wait_for_ack(self, envelope_id: str, timeout: float = 5.0) -> Envelope:
        """Wait until the client acknowledged ``envelope_id``; return the envelope (``ack_latency_s`` set)."""
        env = self.envelopes[envelope_id]
        await self.wait_until(lambda: env.acked, timeout)
        return env

    async def drop_connection(self) -> None:
        """Close the open websocket from the server side, as when Slack drops a connection; the client
        reconnects through ``apps.connections.open``."""
        if self._socket is None:
            raise RuntimeError("no Socket Mode client is connected")
        await self._socket.close()

    async def send_disconnect(self, reason: str = "refresh_requested") -> None:
        """Tell the connected client to reconnect (it calls ``apps.connections.open`` again)."""
        if self._socket is None:
            raise RuntimeError("no Socket Mode client is connected")
        await self._socket.send_json({"type": "disconnect", "reason": reason,
                                      "debug_info": {"host": "fake-slack"}})

    # ----------------------------------------------------------------- inbound payload builders

    def event_callback(self, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
        """Wrap an event in the Events API ``event_callback`` envelope (also the Socket Mode ``events_api``
        payload)."""
        return {"token": "legacy-verification-token", "team_id": self.team_id, "api_app_id": self.api_app_id,
                "event": event, "type": "event_callback", "event_id": event_id or _new_id("Ev"),
                "event_time": int(self.now()), "is_ext_shared_channel": False,
                "authorizations": [{"enterprise_id": None, "team_id": self.team_id, "user_id": self.bot_user_id,
                                    "is_bot": True, "is_enterprise_install": False}],
                "event_context": f"4-message-{self.team_id}-{event.get('channel', '')}"}

    def message_event(self, channel: str, user: str, text: str, *, thread_ts: str | None = None,
                      files: list[dict[str, Any]] | None = None, store: bool = True) -> dict[str, Any]:
        """A ``message`` event (``file_share`` subtype with ``files``); stored in the world unless ``store=False``."""
        chan = self.channels[channel]
        msg: dict[str, Any] = self.add_message(channel, user, text, thread_ts=thread_ts) if store else {
            "type": "message", "user": user, "text": text, "ts": self.new_ts(), "team": self.team_id}
        event = {**msg, "channel": channel, "event_ts": msg["ts"], "client_msg_id": f"cm-{next(_ids)}",
                 "channel_type": _channel_type(chan)}
        if thread_ts:
            event["thread_ts"] = thread_ts
        if files is not None:
            event["subtype"] = "file_share"
            event["files"] = files
            if store:
                msg["files"] = files
        return event

    def bot_message_event(self, channel: str, bot_id: str, text: str, *, username: str = "otherbot"
                          ) -> dict[str, Any]:
        """A ``bot_message`` subtype event from another integration (stored)."""
        ts = self.new_ts()
        msg = {"type": "message", "subtype": "bot_message", "bot_id": bot_id, "username": username, "text": text,
               "ts": ts}
        self.channels[channel].messages[ts] = dict(msg)
        return {**msg, "channel": channel, "event_ts": ts, "channel_type": _channel_type(self.channels[channel])}

    def message_changed_event(self, channel: str, ts: str, new_text: str) -> dict[str, Any]:
        """A ``message_changed`` event for the stored message ``ts``; the stored text becomes ``new_text``."""
        msg = self.channels[channel].messages[ts]
        previous = dict(msg)
        msg["text"] = new_text
        msg["edited"] = {"user": msg.get("user"), "ts": self.new_ts()}
        event_ts = self.new_ts()
        return {"type": "message", "subtype": "message_changed", "hidden": True, "channel": channel,
                "ts": event_ts, "event_ts": event_ts, "message": dict(msg), "previous_message": previous,
                "channel_type": _channel_type(self.channels[channel])}

    def message_deleted_event(self, channel: str, ts: str) -> dict[str, Any]:
        """A ``message_deleted`` event for ``ts`` (removed from the world if still stored)."""
        previous = self.channels[channel].messages.pop(ts, None)
        event_ts = self.new_ts()
        event = {"type": "message", "subtype": "message_deleted", "hidden": True, "channel": channel,
                 "ts": event_ts, "event_ts": event_ts, "deleted_ts": ts,
                 "channel_type": _channel_type(self.channels[channel])}
        if previous is not None:
            event["previous_message"] = previous
        return event

    def user_change_event(self, user: SlackUser, *, display_name: str | None = None) -> dict[str, Any]:
        """A ``user_change`` event (a profile edit); ``display_name`` sets the member's new display name."""
        obj = user.to_json(self.team_id)
        if display_name is not None:
            obj["profile"]["display_name"] = display_name
        return {"type": "user_change", "user": obj, "cache_ts": int(time.time()), "event_ts": self.new_ts()}

    def team_join_event(self, user: SlackUser) -> dict[str, Any]:
        """A ``team_join`` event for a (new) member."""
        return {"type": "team_join", "user": user.to_json(self.team_id), "event_ts": self.new_ts()}

    def member_joined_channel_event(self, user: str, channel: str, *, inviter: str | None = None
                                    ) -> dict[str, Any]:
        """A ``member_joined_channel`` event; the user is added to the channel's members."""
        chan = self.channels[channel]
        chan.members.add(user)
        event = {"type": "member_joined_channel", "user": user, "channel": channel,
                 "channel_type": "G" if chan.is_private else "C", "team": self.team_id, "event_ts": self.new_ts()}
        if inviter:
            event["inviter"] = inviter
        return event

    def channel_shared_event(self, channel: str, team: str) -> dict[str, Any]:
        """A ``channel_shared`` event: the channel is now shared with workspace ``team`` (Slack Connect accepted;
        ``conversations.info`` then says ``is_ext_shared``)."""
        chan = self.channels[channel]
        if team not in chan.shared_with:
            chan.shared_with.append(team)
        chan.pending_share = False
        return {"type": "channel_shared", "connected_team_id": team, "channel": channel, "event_ts": self.new_ts()}

    def channel_unshared_event(self, channel: str, team: str) -> dict[str, Any]:
        """A ``channel_unshared`` event: workspace ``team`` no longer shares the channel."""
        chan = self.channels[channel]
        chan.shared_with = [t for t in chan.shared_with if t != team]
        return {"type": "channel_unshared", "previously_connected_team_id": team, "channel": channel,
                "is_ext_shared": bool(chan.shared_with), "event_ts": self.new_ts()}

    def command_payload(self, command: str, text: str, *, user: str, channel: str) -> dict[str, str]:
        """A slash command's form fields, with a registered ``response_url`` and ``trigger_id``."""
        chan, who = self.channels[channel], self.users[user]
        return {"token": "legacy-verification-token", "team_id": self.team_id, "team_domain": self.domain,
                "channel_id": chan.id, "channel_name": chan.name or "directmessage", "user_id": who.id,
                "user_name": who.name, "command": command, "text": text, "api_app_id": self.api_app_id,
                "is_enterprise_install": "false",
                "response_url": self.new_response_url(channel=chan.id, user=who.id),
                "trigger_id": self.new_trigger_id()}

    def _interaction_base(self, kind: str, user: str) -> dict[str, Any]:
        who = self.users[user]
        return {"type": kind, "token": "legacy-verification-token", "api_app_id": self.api_app_id,
                "user": {"id": who.id, "username": who.name, "name": who.name, "team_id": self.team_id},
                "team": {"id": self.team_id, "domain": self.domain}, "is_enterprise_install": False,
                "enterprise": None, "trigger_id": self.new_trigger_id()}

    def block_actions_payload(self, *, user: str, channel: str, message_ts: str, action_id: str,
                              value: str = "", block_id: str = "actions") -> dict[str, Any]:
        """A ``block_actions`` payload: a button click on the stored message ``message_ts`` in ``channel``."""
        chan = self.channels[channel]
        message = chan.messages.get(message_ts, {"ts": message_ts})
        return {**self._interaction_base("block_actions", user),
                "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                              "is_ephemeral": False},
                "channel": {"id": channel, "name": chan.name}, "message": dict(message),
                "response_url": self.new_response_url(channel=channel, user=user, message_ts=message_ts),
                "state": {"values": {}},
                "actions": [{"type": "button", "action_id": action_id, "block_id": block_id, "value": value,
                             "action_ts": self.new_ts(), "text": {"type": "plain_text", "text": action_id}}]}

    def ephemeral_actions_payload(self, *, user: str, ephemeral: dict[str, Any], action_id: str, value: str = "",
                                  block_id: str = "actions") -> dict[str, Any]:
        """A ``block_actions`` payload: a button click on an ephemeral message (one of :attr:`ephemerals`, seen
        only by its user). Slack sends no ``message`` for it; its ``response_url`` can replace it in place."""
        channel = ephemeral["channel"]
        return {**self._interaction_base("block_actions", user),
                "container": {"type": "message", "message_ts": ephemeral["message_ts"], "channel_id": channel,
                              "is_ephemeral": True},
                "channel": {"id": channel, "name": self.channels[channel].name},
                "response_url": self.new_response_url(channel=channel, user=ephemeral["user"],
                                                      message_ts=ephemeral["message_ts"]),
                "state": {"values": {}},
                "actions": [{"type": "button", "action_id": action_id, "block_id": block_id, "value": value,
                             "action_ts": self.new_ts(), "text": {"type": "plain_text", "text": action_id}}]}

    def view_submission_payload(self, *, user: str, callback_id: str, values: dict[str, dict[str, Any]],
                                private_metadata: str = "", view_id: str | None = None,
                                checked: bool = True) -> dict[str, Any]:
        """A ``view_submission`` payload; ``values`` is ``view.state.values`` (block_id → action_id → value).

        For a view opened on this fake (``view_id``) and ``checked``, a ``plain_text_input`` value Slack's client
        would not submit (empty where required, outside ``min_length``/``max_length``) raises ``ValueError``;
        ``checked=False`` stands for a client that does not check."""
        opened = self.views.get(view_id or "")
        if opened is not None and checked:
            for block in opened.get("blocks") or []:
                element = block.get("element") or {}
                if block.get("type") != "input" or element.get("type") != "plain_text_input":
                    continue
                value = (values.get(block.get("block_id", ""), {}).get(element.get("action_id", "")) or {}).get(
                    "value") or ""
                if (not block.get("optional") and not value) or (value and not element.get("min_length", 0)
                                                                 <= len(value) <= element.get("max_length", 3000)):
                    raise ValueError(f"Slack's client would not submit {len(value)} characters for "
                                     f"{block.get('block_id')}")
        view = dict(opened or {}) or {"id": view_id or _new_id("V"), "type": "modal"}
        view.update({"callback_id": callback_id, "private_metadata": private_metadata,
                     "state": {"values": values}, "team_id": self.team_id, "app_id": self.api_app_id})
        return {**self._interaction_base("view_submission", user), "view": view, "response_urls": []}

    def message_action_payload(self, *, user: str, channel: str, message_ts: str, callback_id: str
                               ) -> dict[str, Any]:
        """A ``message_action`` (message shortcut) payload on the stored message ``message_ts``."""
        chan = self.channels[channel]
        message = chan.messages.get(message_ts, {"ts": message_ts})
        return {**self._interaction_base("message_action", user), "callback_id": callback_id,
                "action_ts": self.new_ts(), "message_ts": message_ts, "message": dict(message),
                "channel": {"id": channel, "name": chan.name or "directmessage"},
                "response_url": self.new_response_url(channel=channel, user=user)}

    # ----------------------------------------------------------------- inbound HTTP

    def sign(self, body: bytes, timestamp: int, secret: str | None = None) -> str:
        """``v0=`` + hex HMAC-SHA256 of ``v0:<timestamp>:<body>`` under ``secret`` (default: the signing secret)."""
        base = b"v0:" + str(timestamp).encode() + b":" + body
        key = (secret if secret is not None else self.signing_secret).encode()
        return "v0=" + hmac.new(key, base, hashlib.sha256).hexdigest()

    async def post_signed(self, url: str, body: bytes, content_type: str, *, secret: str | None = None,
                          timestamp: int | None = None, age_s: int = 0, retry_num: int | None = None,
                          retry_reason: str | None = None) -> InboundResponse:
        """POST ``body`` to the app's endpoint, signed over these exact bytes.

        ``timestamp`` defaults to the real clock (the app checks it against its own clock) minus ``age_s``
        seconds; ``secret`` signs with a wrong secret for negative tests; ``retry_num``/``retry_reason`` add
        ``X-Slack-Retry-Num``/``X-Slack-Retry-Reason`` as on a redelivery.
        """
        assert self._session is not None, "use FakeSlack as an async context manager"
        ts = int(time.time()) - age_s if timestamp is None else timestamp
        headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": str(ts),
                   "X-Slack-Signature": self.sign(body, ts, secret)}
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = retry_reason or "http_timeout"
        async with self._session.post(url, data=body, headers=headers) as resp:
            return InboundResponse(resp.status, dict(resp.headers), await resp.text())

    async def deliver_event(self, url: str, event: dict[str, Any], **kw: Any) -> InboundResponse:
        """POST an event as signed JSON and return the app's answer.

        A bare event dict is wrapped with :meth:`event_callback`, which gives it a new ``event_id`` each time (as
        when Slack sends one message twice under different event ids); to redeliver the *same* envelope, build it
        once with :meth:`event_callback` and pass it again with ``retry_num=1``.
        """
        payload = event if "type" in event and event["type"] in {"event_callback", "url_verification"} \
            else self.event_callback(event)
        return await self.post_signed(url, json.dumps(payload).encode(), "application/json", **kw)

    async def deliver_command(self, url: str, fields: dict[str, str], **kw: Any) -> InboundResponse:
        """POST slash command fields form-encoded and signed."""
        return await self.post_signed(url, urlencode(fields).encode(), "application/x-www-form-urlencoded", **kw)

    async def deliver_interaction(self, url: str, payload: dict[str, Any], **kw: Any) -> InboundResponse:
        """POST an interactivity payload as the form field ``payload=<url-encoded JSON>``, signed."""
        body = ("payload=" + quote(json.dumps(payload), safe="")).encode()
        return await self.post_signed(url, body, "application/x-www-form-urlencoded", **kw)


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _plain_len(obj: Any) -> int:
    return len(obj.get("text") or "") if isinstance(obj, dict) else 0


def _view_problems(view: dict[str, Any]) -> list[str]:
    """Slack's limits for a view (``views.open``), as ``[ERROR] ... [json-pointer:...]`` messages: a modal's title,
    submit and close at most 24 characters (title required), ``callback_id`` 255, ``private_metadata`` 3,000, at
    most 100 blocks; an input's label 2,000; a ``plain_text_input``'s ``max_length`` 1-3,000 and ``min_length``
    0-3,000 (not above it), its placeholder 150 and ``initial_value`` within ``max_length``."""
    out: list[str] = []
    if view.get("type") == "modal":
        if not 1 <= _plain_len(view.get("title")) <= 24:
            out.append("[ERROR] must be between 1 and 24 characters [json-pointer:/view/title/text]")
        for key in ("submit", "close"):
            if _plain_len(view.get(key)) > 24:
                out.append(f"[ERROR] must be less than 25 characters [json-pointer:/view/{key}/text]")
    if len(view.get("callback_id") or "") > 255:
        out.append("[ERROR] must be less than 256 characters [json-pointer:/view/callback_id]")
    if len(view.get("private_metadata") or "") > 3000:
        out.append("[ERROR] must be less than 3001 characters [json-pointer:/view/private_metadata]")
    blocks = view.get("blocks") or []
    out += _block_problems([b for b in blocks if b.get("type") != "input"], "/view/blocks", VIEW_BLOCKS_MAX)
    if len(blocks) > VIEW_BLOCKS_MAX and not any("no more than" in m for m in out):
        out.append("[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]")
    for i, block in enumerate(blocks):
        if block.get("type") != "input":
            continue
        where = f"/view/blocks/{i}"
        if not 1 <= _plain_len(block.get("label")) <= 2000:
            out.append(f"[ERROR] must be between 1 and 2000 characters [json-pointer:{where}/label/text]")
        element = block.get("element") or {}
        if element.get("type") != "plain_text_input":
            continue
        lo, hi = element.get("min_length", 0), element.get("max_length", 3000)
        if not 1 <= hi <= 3000:
            out.append(f"[ERROR] must be between 1 and 3000 [json-pointer:{where}/element/max_length]")
        if not 0 <= lo <= min(hi, 3000):
            out.append(f"[ERROR] must be between 0 and 3000 [json-pointer:{where}/element/min_length]")
        if _plain_len(element.get("placeholder")) > 150:
            out.append(f"[ERROR] must be less than 151 characters [json-pointer:{where}/element/placeholder/text]")
        if len(element.get("initial_value") or "") > hi:
            out.append(f"[ERROR] must be at most max_length [json-pointer:{where}/element/initial_value]")
    return out


#: Block Kit's limits (Slack's "Blocks" and "Block elements" reference pages), in items or characters.
MESSAGE_BLOCKS_MAX = 50
VIEW_BLOCKS_MAX = 100
SECTION_TEXT_MAX = 3000
SECTION_FIELDS_MAX = 10
SECTION_FIELD_MAX = 2000
HEADER_TEXT_MAX = 150
CONTEXT_ELEMENTS_MAX = 10
ACTIONS_ELEMENTS_MAX = 25
BUTTON_TEXT_MAX = 75
ACTION_ID_MAX = 255
BUTTON_VALUE_MAX = 2000
BLOCK_ID_MAX = 255
OPTIONS_MAX = 100
OPTION_TEXT_MAX = 75


def _text_problem(obj: Any, where: str, limit: int, *, plain: bool = False) -> str | None:
    """A text object that is missing, empty, over ``limit`` characters, or not ``plain_text`` where it must be."""
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return f"[ERROR] missing required field: text [json-pointer:{where}]"
    if plain and obj.get("type") != "plain_text":
        return f"[ERROR] must be plain_text [json-pointer:{where}/type]"
    if not 1 <= len(obj["text"]) <= limit:
        return f"[ERROR] must be between 1 and {limit} characters [json-pointer:{where}/text]"
    return None


def _element_problems(e: Any, where: str) -> list[str]:
    """A button's or select's limits: text 75, ``action_id`` 255, ``value`` 2,000, at most 100 options of 75."""
    if not isinstance(e, dict):
        return [f"[ERROR] must be an object [json-pointer:{where}]"]
    out = []
    if len(e.get("action_id") or "") > ACTION_ID_MAX:
        out.append(f"[ERROR] must be less than {ACTION_ID_MAX + 1} characters [json-pointer:{where}/action_id]")
    if e.get("type") == "button":
        out += [m for m in [_text_problem(e.get("text"), f"{where}/text", BUTTON_TEXT_MAX, plain=True)] if m]
        if len(e.get("value") or "") > BUTTON_VALUE_MAX:
            out.append(f"[ERROR] must be less than {BUTTON_VALUE_MAX + 1} characters [json-pointer:{where}/value]")
    options = e.get("options")
    if isinstance(options, list):
        if len(options) > OPTIONS_MAX:
            out.append(f"[ERROR] no more than {OPTIONS_MAX} items allowed [json-pointer:{where}/options]")
        for j, o in enumerate(options):
            out += [m for m in [_text_problem((o or {}).get("text"), f"{where}/options/{j}/text", OPTION_TEXT_MAX,
                                              plain=True)] if m]
    return out


def _block_problems(blocks: Any, where: str = "/blocks", max_blocks: int = MESSAGE_BLOCKS_MAX) -> list[str]:
    """Slack's limits for ``blocks`` as ``[ERROR] ... [json-pointer:...]`` messages (empty: valid): at most 50
    blocks in a message (100 in a view); a section's text 1-3,000 characters (or 1-10 fields of 2,000); a header's
    ``plain_text`` 1-150; a context's 1-10 elements of 3,000; an actions block's 1-25 elements; ``block_id`` 255;
    buttons and selects as :func:`_element_problems`."""
    if blocks is None:
        return []
    if not isinstance(blocks, list):
        return [f"[ERROR] must be an array [json-pointer:{where}]"]
    out: list[str] = []
    if len(blocks) > max_blocks:
        out.append(f"[ERROR] no more than {max_blocks} items allowed [json-pointer:{where}]")
    for i, b in enumerate(blocks):
        w = f"{where}/{i}"
        if not isinstance(b, dict):
            out.append(f"[ERROR] must be an object [json-pointer:{w}]")
            continue
        if len(b.get("block_id") or "") > BLOCK_ID_MAX:
            out.append(f"[ERROR] must be less than {BLOCK_ID_MAX + 1} characters [json-pointer:{w}/block_id]")
        kind = b.get("type")
        if kind == "section":
            fields = b.get("fields")
            if b.get("text") is not None or not fields:
                out += [m for m in [_text_problem(b.get("text"), f"{w}/text", SECTION_TEXT_MAX)] if m]
            if fields is not None:
                if not isinstance(fields, list) or not 1 <= len(fields) <= SECTION_FIELDS_MAX:
                    out.append(f"[ERROR] must hold 1 to {SECTION_FIELDS_MAX} items [json-pointer:{w}/fields]")
                else:
                    out += [m for j, f in enumerate(fields)
                            if (m := _text_problem(f, f"{w}/fields/{j}", SECTION_FIELD_MAX))]
            if b.get("accessory") is not None:
                out += _element_problems(b["accessory"], f"{w}/accessory")
        elif kind == "header":
            out += [m for m in [_text_problem(b.get("text"), f"{w}/text", HEADER_TEXT_MAX, plain=True)] if m]
        elif kind == "context":
            elements = b.get("elements")
            if not isinstance(elements, list) or not 1 <= len(elements) <= CONTEXT_ELEMENTS_MAX:
                out.append(f"[ERROR] must hold 1 to {CONTEXT_ELEMENTS_MAX} items [json-pointer:{w}/elements]")
            else:
                out += [m for j, e in enumerate(elements) if isinstance(e, dict) and e.get("type") != "image"
                        and (m := _text_problem(e, f"{w}/elements/{j}", SECTION_TEXT_MAX))]
        elif kind == "actions":
            elements = b.get("elements")
            if not isinstance(elements, list) or not 1 <= len(elements) <= ACTIONS_ELEMENTS_MAX:
                out.append(f"[ERROR] must hold 1 to {ACTIONS_ELEMENTS_MAX} items [json-pointer:{w}/elements]")
            else:
                for j, e in enumerate(elements):
                    out += _element_problems(e, f"{w}/elements/{j}")
    return out


def _err(error: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": error, **extra}


def _ts_key(ts: str) -> tuple[int, int]:
    seconds, _, micros = ts.partition(".")
    return int(seconds), int(micros or 0)


def _channel_type(chan: SlackChannel) -> str:
    return "im" if chan.is_im else "group" if chan.is_private else "channel"


_METHODS: dict[str, Callable[..., dict[str, Any]]] = {
    "auth.test": FakeSlack._auth_test,
    "chat.postMessage": FakeSlack._post_message,
    "chat.update": FakeSlack._update,
    "chat.delete": FakeSlack._delete,
    "chat.postEphemeral": FakeSlack._post_ephemeral,
    "chat.getPermalink": FakeSlack._permalink,
    "conversations.info": FakeSlack._conv_info,
    "conversations.open": FakeSlack._conv_open,
    "conversations.kick": FakeSlack._kick,
    "conversations.join": FakeSlack._join,
    "conversations.members": FakeSlack._members,
    "users.info": FakeSlack._users_info,
    "users.conversations": FakeSlack._user_conversations,
    "usergroups.users.list": FakeSlack._usergroup_users,
    "usergroups.list": FakeSlack._usergroups_list,
    "views.open": FakeSlack._views_open,
    "views.update": FakeSlack._views_update,
    "views.publish": FakeSlack._views_publish,
    "conversations.history": FakeSlack._history,
    "conversations.replies": FakeSlack._replies,
    "reactions.add": FakeSlack._react,
    "apps.connections.open": FakeSlack._connections_open,
    "team.info": FakeSlack._team_info,
    "files.getUploadURLExternal": FakeSlack._upload_url,
    "files.completeUploadExternal": FakeSlack._complete_upload,
    "files.upload": FakeSlack._files_upload,
}
