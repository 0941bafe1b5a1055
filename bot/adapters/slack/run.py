"""The Slack bot process: one workspace, one bot token; Socket Mode or the HTTP Events API.

Layer: ``bot.adapters.slack``. Composition for the Slack side: opens the store, loads the scorer and policies,
builds the judging pipeline and the workflow with the Slack enforcer and desk, and serves the bolt app.

Transports (``MODBOT_SLACK_MODE``):

* ``socket`` (default when ``SLACK_APP_TOKEN`` is set): bolt's ``AsyncSocketModeHandler`` (aiohttp) connects out
  through ``apps.connections.open``; no public URL is needed. Envelopes are acknowledged by bolt within 3 s.
* ``http``: bolt's aiohttp app serves ``POST /slack/events`` on ``MODBOT_SLACK_PORT`` (default 3000); every request
  is checked against ``SLACK_SIGNING_SECRET`` (HMAC-SHA256, at most 5 minutes old) and refused with 401 otherwise.

Tokens come from the environment only and are never logged or stored: ``SLACK_BOT_TOKEN`` (``xoxb-``),
``SLACK_APP_TOKEN`` (``xapp-``, Socket Mode), ``SLACK_SIGNING_SECRET`` (HTTP), ``SLACK_ADMIN_USER_TOKEN``
(``xoxp-`` of a workspace admin, optional: lets the bot delete members' messages). ``SLACK_API_URL`` points the
client at another Web API root (tests, proxies; keep the trailing slash).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, async_default_handlers
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.app import SlackHandlers, register
from bot.adapters.slack.desk import SlackDesk
from bot.adapters.slack.enforcer import SlackEnforcer
from bot.adapters.slack.status import announce_ready
from bot.adapters.slack.translate import PLATFORM, member_ref, message_fields, to_core, ts_time
from bot.core.models import Message
from bot.settings import Settings, with_paths
from bot.workflow.catchup import CatchupBounds, CatchupReport, catch_up
from bot.workflow.common import Observer
from bot.workflow.lifecycle import Lifecycle

if TYPE_CHECKING:  # built in start, imported there (importing the bot stays cheap)
    from bot.core.policy_registry import PolicyRegistry
    from bot.core.ports import Scorer
    from bot.core.service import ModerationService, Outcome
    from bot.core.store_port import ModStore
    from bot.runtime import Runtime
    from bot.workflow import ModerationWorkflow

log = logging.getLogger(__name__)

#: Seconds a moderator user group's member list, read on every check, may stand in for a read that failed (Slack
#: rate-limits ``usergroups.users.list`` at Tier 2, about 20 a minute) or was too slow.
GROUP_CACHE_S = 300.0
#: Seconds one ``usergroups.users.list`` read may take before the last list read stands in (Slack waits 3 s for an
#: interaction's ack; the SDK's retry handler would otherwise wait a Retry-After out).
GROUP_READ_S = 1.0
#: Seconds after a rate-limited or stalled group read during which the last list read stands in without asking Slack
#: again (each ask would wait :data:`GROUP_READ_S` for nothing while the limit lasts).
GROUP_QUIET_S = 10.0
#: Seconds a user group's member list read for a message's author (:meth:`SlackBot.author_roles`: exempt roles) is
#: reused: every message is judged, and Slack allows about 20 ``usergroups.users.list`` calls a minute.
AUTHOR_GROUPS_S = 60.0


def _body_deadline(seconds: float) -> Any:
    """An aiohttp middleware that reads the request body within ``seconds`` of its headers (bolt's handler then
    reads it from aiohttp's cache) and answers 408, closing the connection, when it has not arrived."""

    @web.middleware
    async def deadline(request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        try:
            await asyncio.wait_for(request.read(), seconds)
        except TimeoutError:
            resp = web.Response(status=408, text=f"the request body did not arrive within {seconds:g} s")
            resp.force_close()
            return resp
        result: web.StreamResponse = await handler(request)
        return result

    return deadline


#: A request timestamp as Slack sends it (``X-Slack-Request-Timestamp``): whole seconds since the epoch, ASCII digits.
_TIMESTAMP = re.compile(r"[0-9]{1,15}")


@web.middleware
async def _timestamp_header(request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
    """Refuse a request whose ``X-Slack-Request-Timestamp`` is there but not a number as bolt refuses any unsigned
    request (401 ``invalid request``): slack_sdk's signature check reads it with ``int()``, which raised, so anyone
    could get a 500 and an error with a traceback in the log for each such request. A missing header is left to
    bolt (401)."""
    stamp = request.headers.get("X-Slack-Request-Timestamp")
    if stamp is not None and not _TIMESTAMP.fullmatch(stamp):
        return web.json_response({"error": "invalid request"}, status=401)
    result: web.StreamResponse = await handler(request)
    return result


@dataclass(frozen=True)
class SlackSettings:
    """Credentials and transport of one Slack process (read from the environment by :meth:`from_env`).

    Attributes:
        bot_token, app_token, signing_secret, admin_token: see the module docstring; never logged (``repr=False``
            is implied: :meth:`__repr__` hides them).
        mode: ``"socket"`` or ``"http"``.
        host, port: Where the HTTP Events API listens (port 0: any free port, for tests).
        api_url: Web API root (``None``: Slack's own).
        idle_timeout_s: The HTTP Events API closes a connection idle this long, or still sending its request line
            and headers (75 s, aiohttp's ``run_app`` default; its connection handler's own is an hour, which let
            slow clients hold the public endpoint's connections and file descriptors).
        body_timeout_s: A request whose body has not arrived this long after its headers gets 408 (Slack sends
            an event's body at once; a slowloris client trickles it).
    """

    bot_token: str
    app_token: str | None = None
    signing_secret: str | None = None
    admin_token: str | None = None
    mode: str = "socket"
    host: str = "0.0.0.0"  # noqa: S104 - the HTTP Events API must be reachable by Slack
    port: int = 3000
    api_url: str | None = None
    idle_timeout_s: float = 75.0
    body_timeout_s: float = 10.0

    def __repr__(self) -> str:
        return f"SlackSettings(mode={self.mode!r}, port={self.port}, admin_token={'set' if self.admin_token else None})"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> SlackSettings:
        """Read ``SLACK_*`` and ``MODBOT_SLACK_*``.

        Raises:
            SystemExit: a required token is missing, the mode is unknown, or ``MODBOT_SLACK_PORT`` is not a port
                number (0 to 65535); the message names the variable.
        """
        e = dict(os.environ if env is None else env)
        bot = e.get("SLACK_BOT_TOKEN")
        if not bot:
            raise SystemExit("SLACK_BOT_TOKEN is not set (the app's Bot User OAuth Token, xoxb-...)")
        mode = e.get("MODBOT_SLACK_MODE") or ("http" if e.get("SLACK_SIGNING_SECRET") and not e.get(
            "SLACK_APP_TOKEN") else "socket")
        if mode not in ("socket", "http"):
            raise SystemExit(f"MODBOT_SLACK_MODE must be socket or http, not {mode!r}")
        if mode == "socket" and not e.get("SLACK_APP_TOKEN"):
            raise SystemExit("Socket Mode (the manifest's default) needs SLACK_APP_TOKEN (an app-level token xapp-... "
                             "with connections:write); for the HTTP Events API set SLACK_SIGNING_SECRET instead (or "
                             "MODBOT_SLACK_MODE=http beside it)")
        if mode == "http" and not e.get("SLACK_SIGNING_SECRET"):
            raise SystemExit("the HTTP Events API needs SLACK_SIGNING_SECRET (Basic Information > Signing Secret)")
        raw = e.get("MODBOT_SLACK_PORT", "").strip() or "3000"
        try:
            port = int(raw)
        except ValueError:
            port = -1
        if not 0 <= port <= 65535:  # checked here: the bind came after the model loaded, and failed with exit 1
            raise SystemExit(f"MODBOT_SLACK_PORT={e.get('MODBOT_SLACK_PORT')!r}: expected a port number from 1 to "
                             "65535 (0: any free port)")
        return cls(bot_token=bot, app_token=e.get("SLACK_APP_TOKEN"), signing_secret=e.get("SLACK_SIGNING_SECRET"),
                   admin_token=e.get("SLACK_ADMIN_USER_TOKEN") or None, mode=mode, port=port,
                   api_url=e.get("SLACK_API_URL") or None)


#: Messages asked for per ``conversations.history`` page (Slack recommends no more than 200).
HISTORY_PAGE = 200


class SlackHistory:
    """A channel's history for catch-up (:class:`bot.workflow.catchup.ChannelHistory`) through
    ``conversations.history?oldest=`` (Tier 3 for internal apps: about 50 calls a minute; the SDK's rate-limit
    handler waits out a 429's ``Retry-After``). Pages come newest first, so within the bound the NEWEST messages
    after the start are read, then judged oldest first. Thread replies are not read (``conversations.replies``
    per thread would cost one call each)."""

    def __init__(self, bot: SlackBot, channel_id: str) -> None:
        self.bot = bot
        self.channel_id = channel_id

    async def after(self, message_id: str | None, since: datetime, limit: int) -> AsyncIterator[Message]:
        """Members' top-level messages after the message ``C…:ts`` (or ``since``), oldest first, at most
        ``limit`` read (the bot's own and system messages count towards it and are skipped)."""
        oldest = message_id.split(":", 1)[1] if message_id else f"{since.timestamp():.6f}"
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while len(found) < limit:
            resp = await self.bot.app.client.conversations_history(
                channel=self.channel_id, oldest=oldest, limit=min(HISTORY_PAGE, limit - len(found)),
                cursor=cursor)  # None is left out of the request by slack_sdk
            found += resp.get("messages") or []
            cursor = (resp.get("response_metadata") or {}).get("next_cursor") or None
            if not resp.get("has_more") or not cursor:
                break
        for event in reversed(found[:limit]):
            event = {**event, "channel": self.channel_id}
            fields = message_fields(event)
            if fields is None or fields["user"] in (self.bot.bot_user_id, self.bot.bot_id):
                continue
            info = None if fields["bot"] else await self.bot.enforcer.user_info(fields["user"])
            first = await self.bot.workflow.first_seen(self.bot.team_id, fields["user"], at=ts_time(fields["ts"]))
            author = member_ref(fields["user"], info or ({"is_bot": True} if fields["bot"] else None), first,
                                home_team=self.bot.team_id,
                                named_roles=() if fields["bot"] else await self.bot.author_roles(
                                    self.bot.team_id, fields["user"]))
            try:
                yield to_core(self.bot.team_id, event, fields, author=author)
            except ValueError:
                continue


class SlackBot:
    """A running Slack moderation bot. ``await bot.start()``, then ``await bot.close()``.

    Args:
        slack: Credentials and transport.
        settings: Process settings (database, policy files, model); default: from the environment.
        db_path, policy_dir: Older form (tests): the mod log file, and a folder with ``default.toml`` (optional)
            and ``servers/slack-<team id>.toml``.
        scorer_factory: Zero-argument callable returning a Scorer (called once, off the event loop); default: the
            configured model.

    Attributes:
        lifecycle: Start, recover, retention and shutdown (:class:`bot.workflow.lifecycle.Lifecycle`, the Discord
            bot's too): built and started in :meth:`start`, ``connected`` once the transport is up.
    """

    def __init__(self, slack: SlackSettings, *, settings: Settings | None = None,
                 db_path: str | os.PathLike[str] | None = None, policy_dir: str | os.PathLike[str] | None = None,
                 scorer_factory: Callable[[], Scorer] | None = None) -> None:
        self.slack = slack
        self.settings = with_paths(settings, db_path, policy_dir)
        self.scorer_factory = scorer_factory
        #: Set by start, with the parts declared below the constructor.
        self.runtime: Runtime | None = None
        self.closing = False
        self.bot_user_id = ""
        self.bot_id = ""
        self.team_id = ""
        self.ready_at: datetime | None = None
        self.lifecycle: Lifecycle | None = None
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._groups: dict[str, tuple[float, set[str]]] = {}
        self._group_quiet: dict[str, float] = {}  # group -> monotonic time before which its list is not re-read
        #: Called with every Outcome once carried out (metrics, tests): the Slack counterpart of Discord's
        #: ``on_moderation_outcome`` event.
        self.observers: list[Observer] = []
        #: What the catch-up at the last start did (``None`` before it ran).
        self.catchup_report: CatchupReport | None = None

    @property
    def fatal(self) -> BaseException | None:
        """The store error that stopped the service (a write refused for good), else ``None``."""
        return self.lifecycle.fatal if self.lifecycle is not None else None

    # the parts start builds (:mod:`bot.runtime`, then the workflow on this platform's enforcer and desk)
    store: ModStore
    service: ModerationService
    policies: PolicyRegistry
    enforcer: SlackEnforcer
    desk: SlackDesk
    workflow: ModerationWorkflow
    app: AsyncApp

    def _client(self, token: str) -> AsyncWebClient:
        """A Web API client for ``token``: slack_sdk's default retry handlers (a connection reset or refused is
        tried once more) plus waiting out rate limits (429 + ``Retry-After``, twice at most). Passing handlers
        replaces the SDK's defaults, so they are named here too."""
        kwargs: dict[str, Any] = {"token": token,
                                  "retry_handlers": [*async_default_handlers(),
                                                     AsyncRateLimitErrorRetryHandler(max_retry_count=2)]}
        if self.slack.api_url:
            kwargs["base_url"] = self.slack.api_url
        return AsyncWebClient(**kwargs)

    async def is_moderator(self, team_id: str, user_id: str) -> bool:
        """Listed in the policy's ``server.moderator_roles`` (user ids ``U…``/``W…``) or a member of a listed user
        group (``S…``), read from Slack on every check (:meth:`_group_members`), so a moderator taken out of the
        group is refused at once."""
        policy = await self.policies.get(PLATFORM, team_id)
        for entry in policy.server.moderator_roles:
            if entry == user_id:
                return True
            if entry.startswith("S") and user_id in await self._group_members(entry):
                return True
        return False

    async def author_roles(self, team_id: str, user_id: str) -> tuple[str, ...]:
        """What stands for a message's author among the roles the policy names (``exempt.roles``,
        ``rules.mention_spam.everyone_roles``): on Slack these hold user groups (``S…``) and members (``U…``/``W…``,
        as ``/modpolicy set`` stores them), so the ids of the named groups the author is in, and the author's own
        id when named. Group lists are reused :data:`AUTHOR_GROUPS_S` seconds (:meth:`_group_members`). The
        workspace roles (``admin``, ``owner``) come from ``users.info`` (:func:`~bot.adapters.slack.translate.
        member_ref`)."""
        policy = await self.policies.get(PLATFORM, team_id)
        named = dict.fromkeys([*policy.exempt.roles, *policy.rules.mention_spam.everyone_roles])
        out = []
        for ref in named:
            if ref == user_id or (ref.startswith("S") and user_id in await self._group_members(
                    ref, max_age_s=AUTHOR_GROUPS_S)):
                out.append(ref)
        return tuple(out)

    async def _group_members(self, group: str, *, max_age_s: float = 0.0) -> set[str]:
        """The user ids in ``group`` (``usergroups.users.list``). A list read within ``max_age_s`` seconds is
        reused (0: read now; rights are checked on a fresh read). When Slack rate-limits the read or it takes over
        :data:`GROUP_READ_S`, the last list read within :data:`GROUP_CACHE_S` seconds stands in (none: nobody), and
        for :data:`GROUP_QUIET_S` seconds after it stands in without asking; any other error (a missing scope, a
        deleted group) means nobody is a moderator through the group."""
        now = time.monotonic()
        hit = self._groups.get(group)
        if hit is not None and now - hit[0] < max_age_s:
            return hit[1]
        if hit is not None and now < self._group_quiet.get(group, 0.0) and now - hit[0] <= GROUP_CACHE_S:
            return hit[1]  # Slack refused or stalled a read moments ago: not asked again (and waited for) yet
        try:
            resp = await asyncio.wait_for(self.app.client.usergroups_users_list(usergroup=group), GROUP_READ_S)
        except (TimeoutError, SlackApiError) as exc:
            limited = isinstance(exc, TimeoutError) or exc.response.status_code == 429
            if limited:
                self._group_quiet[group] = now + GROUP_QUIET_S
            if limited and hit is not None and now - hit[0] <= GROUP_CACHE_S:
                log.info("user group %s: Slack did not answer in time; using its list of %.0f s ago", group,
                         now - hit[0])
                return hit[1]
            log.warning("cannot read user group %s: %s", group, "no answer in time" if limited else exc)
            self._groups.pop(group, None)
            return set()
        except Exception:  # noqa: BLE001 - an unreadable answer: nobody is a moderator through it
            log.warning("cannot read user group %s", group)
            return set()
        members = set(resp.get("users") or [])
        self._groups[group] = (now, members)
        return members

    async def start(self) -> None:
        """Build everything, run the lifecycle's start (retention, watch), start listening (Socket Mode or HTTP),
        then recover what a stop left and catch up (:class:`bot.workflow.lifecycle.Lifecycle`)."""
        from bot.runtime import Runtime
        from bot.workflow import ModerationWorkflow

        client = self._client(self.slack.bot_token)
        auth = await client.auth_test()
        self.bot_user_id, self.bot_id, self.team_id = auth.get("user_id", ""), auth.get("bot_id", ""), \
            auth.get("team_id", "")
        self.runtime = await Runtime.open(self.settings, scorer_factory=self.scorer_factory,
                                          validate_platform=PLATFORM)
        self.store, self.policies, self.service = self.runtime.store, self.runtime.policies, self.runtime.service
        admin = self._client(self.slack.admin_token) if self.slack.admin_token else None
        self.enforcer = SlackEnforcer(client, admin_client=admin, bot_user_id=self.bot_user_id,
                                      is_moderator=self.is_moderator)
        self.desk = SlackDesk(client, self.policies)
        self.workflow = ModerationWorkflow(platform=PLATFORM, store=self.store, enforcer=self.enforcer,
                                           desk=self.desk, policies=self.policies, ledger=self.service.ledger,
                                           raid_control=self.service)
        # bolt also reads SLACK_BOT_TOKEN from the environment and warns that the client's token wins: it is the
        # same token, so that one warning is noise at every start
        logging.getLogger("slack_bolt.AsyncApp").addFilter(lambda r: "will be unused" not in r.getMessage())
        self.app = AsyncApp(client=client, signing_secret=self.slack.signing_secret or "unused-in-socket-mode",
                            request_verification_enabled=self.slack.mode == "http")
        register(self.app, SlackHandlers(self))
        self.lifecycle = Lifecycle(PLATFORM, workflow=self.workflow, store=self.store, policies=self.policies,
                                   failure=self.service.failure)
        await self.lifecycle.start()
        if self.slack.mode == "socket":
            self._socket = AsyncSocketModeHandler(self.app, self.slack.app_token, web_client=client)
            await self._socket.connect_async()
        else:
            web_app = self.app.web_app(path="/slack/events")
            web_app.middlewares.append(_timestamp_header)
            web_app.middlewares.append(_body_deadline(self.slack.body_timeout_s))
            self._runner = web.AppRunner(web_app, keepalive_timeout=self.slack.idle_timeout_s)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.slack.host, self.slack.port)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        await self.lifecycle.connected(self.catch_up)
        await announce_ready(self)

    async def member_channels(self) -> list[str]:
        """Public and private channels the bot is a member of (``users.conversations``, Tier 3, 200 a page)."""
        out: list[str] = []
        cursor: str | None = None
        while True:
            resp = await self.app.client.users_conversations(
                types="public_channel,private_channel", exclude_archived=True, limit=200,
                **({"cursor": cursor} if cursor else {}))
            out += [c["id"] for c in resp.get("channels") or []]
            cursor = (resp.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return out

    async def catch_up(self, now: datetime | None = None) -> CatchupReport | None:
        """Judge messages posted while the bot was down in the channels it is in, within
        ``settings.catchup_messages`` / ``catchup_hours`` (:mod:`bot.workflow.catchup`; docs/live-path.md). Runs
        after the transport is up, so a message arriving live meanwhile is judged once (dedupe)."""
        bounds = CatchupBounds(messages=self.settings.catchup_messages, hours=self.settings.catchup_hours)
        if bounds.messages <= 0:
            return None
        channels = [SlackHistory(self, cid) for cid in await self.member_channels()]
        self.catchup_report = await catch_up(self.workflow, self.store, PLATFORM, self.team_id, channels,
                                             now=now or datetime.now(UTC), bounds=bounds,
                                             observers=self.observers)
        return self.catchup_report

    async def judge(self, msg: Message) -> Outcome | None:
        """Judge one message and carry out the outcome (the workflow's one path); observers see each outcome."""
        return await self.workflow.moderate(msg, observers=self.observers)

    async def close(self) -> None:
        """Stop taking events, carry out what was judged, then close the transport, the pipeline and the store."""
        self.closing = True
        if self.lifecycle is None:  # start did not get as far
            await self._disconnect()
            await self._close_runtime()
            return
        await self.lifecycle.shutdown(self._disconnect, self._close_runtime)

    async def _disconnect(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _close_runtime(self) -> None:
        if self.runtime is not None:
            await self.runtime.close()  # drains and stops the service, then closes the store
            self.runtime = None

    async def wait_stopped(self) -> None:
        """Wait until the service stops on a write refused for good (:attr:`fatal` is then set; forever otherwise)."""
        if self.lifecycle is None:
            await asyncio.Event().wait()
        assert self.lifecycle is not None
        await self.lifecycle.stopped.wait()


async def run_slack(slack: SlackSettings, settings: Settings) -> None:
    """Run until cancelled (Ctrl-C / SIGTERM): the CLI's ``python -m bot slack``.

    Raises:
        StoreRefused: the mod log refused a write for good; the bot closed first (what was committed stays).
    """
    bot = SlackBot(slack, settings=settings)
    try:
        # start inside the try: a SIGTERM during start (catch-up, recovery) must still close the mod log, whose
        # aiosqlite thread would otherwise keep the process alive at exit
        await bot.start()
        await bot.wait_stopped()
    finally:
        await bot.close()
    if bot.fatal is not None:
        raise bot.fatal
