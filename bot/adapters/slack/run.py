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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.app import SlackHandlers, register
from bot.adapters.slack.desk import SlackDesk
from bot.adapters.slack.enforcer import SlackEnforcer
from bot.adapters.slack.status import announce_ready
from bot.adapters.slack.translate import PLATFORM
from bot.settings import Settings, with_paths

log = logging.getLogger(__name__)

#: Seconds a moderator user group's member list is reused.
GROUP_CACHE_S = 300.0


@dataclass(frozen=True)
class SlackSettings:
    """Credentials and transport of one Slack process (read from the environment by :meth:`from_env`).

    Attributes:
        bot_token, app_token, signing_secret, admin_token: see the module docstring; never logged (``repr=False``
            is implied: :meth:`__repr__` hides them).
        mode: ``"socket"`` or ``"http"``.
        host, port: Where the HTTP Events API listens (port 0: any free port, for tests).
        api_url: Web API root (``None``: Slack's own).
    """

    bot_token: str
    app_token: str | None = None
    signing_secret: str | None = None
    admin_token: str | None = None
    mode: str = "socket"
    host: str = "0.0.0.0"  # noqa: S104 - the HTTP Events API must be reachable by Slack
    port: int = 3000
    api_url: str | None = None

    def __repr__(self) -> str:
        return f"SlackSettings(mode={self.mode!r}, port={self.port}, admin_token={'set' if self.admin_token else None})"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> SlackSettings:
        """Read ``SLACK_*`` and ``MODBOT_SLACK_*``.

        Raises:
            SystemExit: a required token is missing, or the mode is unknown (the message names the variable).
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
                             "with connections:write); for the HTTP Events API set SLACK_SIGNING_SECRET and "
                             "MODBOT_SLACK_MODE=http")
        if mode == "http" and not e.get("SLACK_SIGNING_SECRET"):
            raise SystemExit("the HTTP Events API needs SLACK_SIGNING_SECRET (Basic Information > Signing Secret)")
        try:
            port = int(e.get("MODBOT_SLACK_PORT", "3000"))
        except ValueError:
            raise SystemExit("MODBOT_SLACK_PORT must be a number") from None
        return cls(bot_token=bot, app_token=e.get("SLACK_APP_TOKEN"), signing_secret=e.get("SLACK_SIGNING_SECRET"),
                   admin_token=e.get("SLACK_ADMIN_USER_TOKEN") or None, mode=mode, port=port,
                   api_url=e.get("SLACK_API_URL") or None)


class SlackBot:
    """A running Slack moderation bot. ``await bot.start()``, then ``await bot.close()``.

    Args:
        slack: Credentials and transport.
        settings: Process settings (database, policy files, model); default: from the environment.
        db_path, policy_dir: Older form (tests): the mod log file, and a folder with ``default.toml`` (optional)
            and ``servers/slack-<team id>.toml``.
        scorer_factory: Zero-argument callable returning a Scorer (called once, off the event loop); default: the
            configured model.
    """

    def __init__(self, slack: SlackSettings, *, settings: Settings | None = None,
                 db_path: str | os.PathLike[str] | None = None, policy_dir: str | os.PathLike[str] | None = None,
                 scorer_factory: Callable[[], Any] | None = None) -> None:
        self.slack = slack
        self.settings = with_paths(settings, db_path, policy_dir)
        self.scorer_factory = scorer_factory
        self.runtime: Any = None
        self.closing = False
        self.store: Any = None
        self.service: Any = None
        self.workflow: Any = None
        self.policies: Any = None
        self.enforcer: Any = None
        self.desk: Any = None
        self.app: Any = None
        self.bot_user_id = ""
        self.bot_id = ""
        self.team_id = ""
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._groups: dict[str, tuple[float, set[str]]] = {}
        #: Called with every Outcome once carried out (metrics, tests): the Slack counterpart of Discord's
        #: ``on_moderation_outcome`` event.
        self.observers: list[Callable[[Any], None]] = []

    def _client(self, token: str) -> AsyncWebClient:
        kwargs: dict[str, Any] = {"token": token,
                                  "retry_handlers": [AsyncRateLimitErrorRetryHandler(max_retry_count=2)]}
        if self.slack.api_url:
            kwargs["base_url"] = self.slack.api_url
        return AsyncWebClient(**kwargs)

    async def is_moderator(self, team_id: str, user_id: str) -> bool:
        """Listed in the policy's ``server.moderator_roles`` (user ids ``U…``/``W…``) or a member of a listed user
        group (``S…``, via ``usergroups.users.list``, cached :data:`GROUP_CACHE_S` seconds)."""
        policy = await self.policies.get(PLATFORM, team_id)
        for entry in policy.server.moderator_roles:
            if entry == user_id:
                return True
            if entry.startswith("S"):
                hit = self._groups.get(entry)
                if hit is None or time.monotonic() - hit[0] > GROUP_CACHE_S:
                    try:
                        resp = await self.app.client.usergroups_users_list(usergroup=entry)
                        hit = (time.monotonic(), set(resp.get("users") or []))
                    except Exception:  # noqa: BLE001 - a missing scope or group: nobody is a moderator through it
                        log.warning("cannot read user group %s", entry)
                        hit = (time.monotonic(), set())
                    self._groups[entry] = hit
                if user_id in hit[1]:
                    return True
        return False

    async def start(self) -> None:
        """Build everything, recover what a stop left, and start listening (Socket Mode or HTTP)."""
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
        await self.workflow.recover()
        if self.slack.mode == "socket":
            self._socket = AsyncSocketModeHandler(self.app, self.slack.app_token, web_client=client)
            await self._socket.connect_async()
        else:
            self._runner = web.AppRunner(self.app.web_app(path="/slack/events"))
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.slack.host, self.slack.port)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        await announce_ready(self)

    async def judge(self, msg: Any) -> Any:
        """Judge one message and carry out the outcome (the workflow's one path); observers see each outcome."""
        return await self.workflow.moderate(msg, observers=self.observers)

    async def close(self) -> None:
        """Stop taking events, carry out what was judged, then close the transport, the pipeline and the store."""
        self.closing = True
        if self.workflow is not None:
            await self.workflow.shutdown()
        if self._socket is not None:
            await self._socket.close_async()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.runtime is not None:
            await self.runtime.close()  # drains and stops the service, then closes the store
            self.runtime = self.service = self.store = None


async def run_slack(slack: SlackSettings, settings: Settings) -> None:
    """Run until cancelled (Ctrl-C / SIGTERM): the CLI's ``python -m bot slack``."""
    bot = SlackBot(slack, settings=settings)
    await bot.start()
    try:
        await asyncio.Event().wait()
    finally:
        await bot.close()
