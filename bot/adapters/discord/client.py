"""The Discord bot process: an ``AutoShardedBot`` that owns the store, the scorer and the moderation service.

Layer: ``bot.adapters.discord``. ``setup_hook`` builds the store, the scorer, the policies and
:class:`bot.core.service.ModerationService` through the composition root (:mod:`bot.runtime`), registers the
persistent components and loads the cogs in ``cogs/``. Slash commands are synced to one server only when a moderator asks
(``/modbot sync`` or mentioning the bot with ``sync``), never globally on every start.

The token comes from ``DISCORD_TOKEN`` (or the ``token`` argument) and is never logged.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import aiohttp
import discord
from discord.ext import commands

from bot.adapters.discord.desk import DiscordDesk
from bot.adapters.discord.enforcer import DiscordEnforcer
from bot.adapters.discord.status import announce_ready
from bot.adapters.discord.translate import PLATFORM, to_core
from bot.adapters.discord.views import DYNAMIC_ITEMS, notice_view, raid_view, review_view
from bot.core.models import Message
from bot.settings import Settings, with_paths
from bot.workflow.catchup import CatchupBounds, CatchupReport, catch_up
from bot.workflow.lifecycle import Lifecycle
from bot.workflow.views import LogEntry

if TYPE_CHECKING:  # built in setup_hook, imported there (importing the bot stays cheap)
    from bot.core.policy import Policy
    from bot.core.policy_registry import PolicyRegistry
    from bot.core.ports import Scorer
    from bot.core.service import ModerationService
    from bot.core.store_port import ModStore
    from bot.runtime import Runtime
    from bot.workflow import ModerationWorkflow

log = logging.getLogger(__name__)

#: Extensions loaded in ``setup_hook``, in order.
COGS = ("cogs.automod", "cogs.review", "cogs.member", "cogs.moderation", "cogs.admin", "cogs.status",
        "cogs.cases", "cogs.setup", "cogs.names")

#: Permissions the bot needs in every server (see docs/discord-setup.md).
REQUIRED_PERMISSIONS = discord.Permissions(
    view_channel=True, send_messages=True, embed_links=True, attach_files=True, read_message_history=True,
    manage_messages=True, manage_channels=True, manage_threads=True, kick_members=True, ban_members=True,
    moderate_members=True,
)


def shard_owner(shard_ids: list[int] | tuple[int, ...] | None, shard_count: int | None) -> Callable[[str], bool]:
    """Whether a guild (its id, a decimal string) is on one of ``shard_ids`` of ``shard_count`` shards: Discord's
    shard formula, ``(guild_id >> 22) % shard_count`` (developer docs, Gateway, "Sharding"). With no
    ``shard_count``, or no ``shard_ids`` (the process runs every shard), every guild is owned; an id that is not a
    number (a Slack or export namespace's) never is when shards are split."""
    if not shard_count or shard_ids is None:
        return lambda _guild_id: True
    mine = frozenset(shard_ids)

    def owns(guild_id: str) -> bool:
        try:
            return (int(guild_id) >> 22) % shard_count in mine
        except ValueError:
            return False
    return owns


def bot_intents() -> discord.Intents:
    """Guilds, members (privileged), moderation (bans and unbans: a moderator's unban by hand), guild messages and
    message content (privileged)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.members = True
    intents.moderation = True
    intents.guild_messages = True
    intents.message_content = True
    intents.dm_messages = False
    return intents


class DiscordHistory:
    """A text channel or thread's history for catch-up (:class:`bot.workflow.catchup.ChannelHistory`):
    ``GET /channels/{id}/messages?after=&limit=`` through discord.py's ``history(after=..., oldest_first=True)``,
    which pages 100 at a time (Discord's limit) from the oldest message after the start."""

    def __init__(self, channel: discord.abc.Messageable, bot_user_id: int) -> None:
        self.channel = channel
        self.channel_id = str(channel.id)  # type: ignore[attr-defined]
        self.bot_user_id = bot_user_id

    async def after(self, message_id: str | None, since: datetime, limit: int) -> AsyncIterator[Message]:
        """Members' default and reply messages after ``message_id`` (or ``since``), oldest first, at most
        ``limit`` read (the bot's own and system messages count towards it and are skipped)."""
        start: discord.abc.Snowflake | datetime = discord.Object(int(message_id)) if message_id else since
        async for m in self.channel.history(limit=limit, after=start, oldest_first=True):
            if m.author.id == self.bot_user_id or m.type not in (discord.MessageType.default,
                                                                  discord.MessageType.reply):
                continue
            yield to_core(m, edited=m.edited_at is not None)


class ModBot(commands.AutoShardedBot):
    """The moderation bot.

    Args:
        settings: Database, policy files (``default_policy``, ``servers_dir``) and model; default
            ``Settings.from_env()``.
        db_path: SQLite file of the mod log (created if missing); overrides ``settings.db_path``.
        policy_dir: Older form: a folder with ``default.toml`` (optional) and ``servers/<platform>-<server id>.toml``
            overrides; overrides ``settings`` (see :func:`bot_settings`).
        scorer_factory: Zero-argument callable returning a :class:`bot.core.ports.Scorer`; called once, off the
            event loop, in ``setup_hook``. Default: the model ``settings`` names (:func:`bot.runtime.load_scorer`).
        cogs: Extensions to load.
        **kwargs: Passed to :class:`discord.ext.commands.AutoShardedBot` (``shard_count``, ``shard_ids``,
            ``guild_ready_timeout``...); ``shard_ids`` / ``shard_count`` default to the settings'
            (``MODBOT_SHARD_IDS`` / ``MODBOT_SHARD_COUNT``: this process owns those shards only).

    Attributes:
        lifecycle: Start, recover, retention and shutdown (:class:`bot.workflow.lifecycle.Lifecycle`, the Slack
            bot's too): built in :meth:`setup_hook`, ``connected`` in the first :meth:`on_ready`.
    """

    def __init__(self, *, db_path: str | os.PathLike[str] | None = None,
                 policy_dir: str | os.PathLike[str] | None = None, settings: Settings | None = None,
                 scorer_factory: Callable[[], Scorer] | None = None, cogs: tuple[str, ...] = COGS,
                 **kwargs: Any) -> None:
        kwargs.setdefault("intents", bot_intents())
        kwargs.setdefault("allowed_mentions", discord.AllowedMentions.none())
        resolved = with_paths(settings, db_path, policy_dir)
        if resolved.shard_count is not None and kwargs.get("shard_count") is None:
            kwargs["shard_count"] = resolved.shard_count
            if resolved.shard_ids is not None and kwargs.get("shard_ids") is None:
                kwargs["shard_ids"] = list(resolved.shard_ids)
        super().__init__(command_prefix=commands.when_mentioned, help_command=None, **kwargs)
        self.settings = resolved
        self.db_path = str(self.settings.db_path)
        self.scorer_factory = scorer_factory
        #: Set by setup_hook, with the parts below (the cogs use them only after it: a cog loads at its end).
        self.runtime: Runtime | None = None
        self.cog_names = cogs
        self.enforcer = DiscordEnforcer(self, notice_view=notice_view)
        self.closing = False
        #: When the bot first became ready (UTC), for ``/modbot status``; ``None`` before.
        self.ready_at: datetime | None = None
        self.ready_event = asyncio.Event()
        self.startup_problems: list[str] = []
        #: The servers whose startup problems this process has reported (:meth:`on_ready`).
        self.startup_reported: set[int] = set()
        self.lifecycle: Lifecycle | None = None
        #: Set once the catch-up after a start has finished (per server reports in ``catchup_reports``).
        self.caught_up = asyncio.Event()
        self.catchup_reports: dict[str, CatchupReport] = {}

    @property
    def fatal(self) -> BaseException | None:
        """The store error that stopped the bot (a write refused for good), else ``None``: :func:`run` raises it
        after the bot closed, and the CLI prints it as one line and exits 2."""
        return self.lifecycle.fatal if self.lifecycle is not None else None

    @property
    def retention_task(self) -> asyncio.Task[None] | None:
        """The periodic purge of expired message text while the bot runs, else ``None``."""
        return self.lifecycle.retention_task if self.lifecycle is not None else None

    # the parts setup_hook builds (:mod:`bot.runtime`, then the workflow on this platform's enforcer and desk)
    store: ModStore
    scorer: Scorer
    policies: PolicyRegistry
    service: ModerationService
    workflow: ModerationWorkflow
    desk: DiscordDesk

    # ------------------------------------------------------------------ lifecycle
    async def setup_hook(self) -> None:
        """Build store, scorer, policies and service (:mod:`bot.runtime`; a bad server file stops the bot here,
        naming the file and the key), then the workflow with the Discord enforcer and desk; register components,
        load cogs."""
        from bot.runtime import Runtime
        from bot.workflow import ModerationWorkflow

        self.runtime = await Runtime.open(self.settings, scorer_factory=self.scorer_factory,
                                          validate_platform=PLATFORM)
        rt = self.runtime
        self.store, self.scorer, self.policies, self.service = rt.store, rt.scorer, rt.policies, rt.service
        self.desk = DiscordDesk(self, self.policies, review_view=review_view, raid_view=raid_view)
        self.workflow = ModerationWorkflow(platform=PLATFORM, store=self.store, enforcer=self.enforcer,
                                           desk=self.desk, policies=self.policies, ledger=self.service.ledger,
                                           raid_control=self.service,
                                           owns=shard_owner(self.shard_ids, self.shard_count))
        self.lifecycle = Lifecycle(PLATFORM, workflow=self.workflow, store=self.store, policies=self.policies,
                                   failure=self.service.failure, on_failure=self._stopped)
        await self.lifecycle.start()
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        self.tree.error(self.on_app_command_error)  # discord.py's way to set the tree's on_error
        for ext in self.cog_names:
            await self.load_extension(ext)
        flags = self.application_flags
        if not (flags.gateway_message_content or flags.gateway_message_content_limited):
            problem = ("the Message Content intent is not enabled for this application (Developer Portal > Bot > "
                       "Privileged Gateway Intents); message text will be empty and cannot be judged")
            self.startup_problems.append(problem)
            log.error(problem)
            self._connection._intents.message_content = False  # connect anyway instead of failing with 4014
        log.info("setup done: %d cogs, scorer %s", len(self.cog_names), getattr(self.scorer, "name", "?"))

    async def on_ready(self) -> None:
        """Report startup problems (missing intent, missing permissions) per server, once per start (discord.py
        fires ``on_ready`` again after every fresh IDENTIFY, an invalidated session's), then signal readiness."""
        for guild in self.guilds:
            if guild.id not in self.startup_reported:
                self.startup_reported.add(guild.id)
                await self.report_startup(guild)
        if self.lifecycle is not None and await self.lifecycle.connected(self.catch_up):  # once per process
            self.caught_up.set()
            for path in self.policies.files_for_other_servers(
                    PLATFORM, (str(g.id) for g in self.guilds), shard_owner(self.shard_ids, self.shard_count)):
                log.warning("%s: this bot is in no server with the id in its name (a typo in the server id, or a "
                            "server the bot has left?); no server reads it", path)
        await announce_ready(self)
        self.ready_event.set()

    def readable_channels(self, guild: discord.Guild) -> list[discord.abc.Messageable]:
        """Text channels and active threads where the bot may View Channel and Read Message History."""
        me = guild.me
        if me is None:
            return []
        out: list[discord.abc.Messageable] = []
        channels: list[discord.TextChannel | discord.Thread] = [*guild.text_channels, *guild.threads]
        for ch in channels:
            perms = ch.permissions_for(me)
            if perms.view_channel and perms.read_message_history:
                out.append(ch)
        return out

    async def catch_up(self, now: datetime | None = None) -> dict[str, CatchupReport]:
        """Judge messages posted while the bot was down, per server this process sees (its shards'), within
        ``settings.catchup_messages`` / ``catchup_hours`` (:mod:`bot.workflow.catchup`; docs/live-path.md)."""
        bounds = CatchupBounds(messages=self.settings.catchup_messages, hours=self.settings.catchup_hours)
        if bounds.messages <= 0 or self.user is None:
            return {}
        at = now or datetime.now(UTC)
        observers = (lambda o: self.dispatch("moderation_outcome", o),)
        for guild in self.guilds:
            if self.closing:
                break
            channels = [DiscordHistory(ch, self.user.id) for ch in self.readable_channels(guild)]
            self.catchup_reports[str(guild.id)] = await catch_up(
                self.workflow, self.store, PLATFORM, str(guild.id), channels, now=at, bounds=bounds,
                observers=observers)
        return self.catchup_reports

    async def report_startup(self, guild: discord.Guild) -> None:
        """Post missing intent / permission problems, and ids of the server's own policy that are none of its roles
        or channels, to the server's mod log channel and the log."""
        from bot.core.policy import PolicyError, ids_not_in_server

        problems = list(self.startup_problems)
        me = guild.me
        if me is not None:
            have = me.guild_permissions
            missing = [name for name, value in REQUIRED_PERMISSIONS if value and not getattr(have, name)]
            if missing and not have.administrator:
                problems.append("missing permissions: " + ", ".join(missing))
        try:  # ids of the server's own file or overrides that are none of its roles / channels: they do nothing
            problems += ids_not_in_server(await self.policy(guild.id), self.policies.base,
                                          {str(r.id) for r in guild.roles},
                                          {str(c.id) for c in (*guild.channels, *guild.threads)})
        except PolicyError as exc:  # stored overrides the files no longer accept, etc.: said where it is read
            log.error("server %s: %s", guild.id, exc)
        if not problems:
            return
        for p in problems:
            log.error("server %s: %s", guild.id, p)
        await self.desk.post_mod_log(str(guild.id), LogEntry(title="Startup problem", lines=tuple(
            f"\N{WARNING SIGN} {p}" for p in problems), failed=True, kind="problem"))

    async def _stopped(self, exc: BaseException) -> None:
        """The service stopped on a write refused for good (it logged the one line naming the database and the
        cause): close the bot."""
        if not self.closing:
            await self.close()

    async def close(self) -> None:
        """Shut down without losing work: stop taking new messages, let the judging pipeline finish what it was
        given and the workflow carry those verdicts out (while the Discord session still works), then close the
        Discord connection, the service and the store. A case that still did not get done stays ``pending`` and
        is carried out or marked failed at the next start."""
        self.closing = True
        if self.lifecycle is None:  # setup_hook did not get as far
            await super().close()
            await self._close_runtime()
            return
        await self.lifecycle.shutdown(super().close, self._close_runtime)

    async def _close_runtime(self) -> None:
        if self.runtime is not None:
            await self.runtime.close()  # drains and stops the service, then closes the store
            self.runtime = None

    # ------------------------------------------------------------------ helpers for cogs
    async def policy(self, guild_id: int | str) -> Policy:
        """The effective policy of a server."""
        return await self.policies.get("discord", str(guild_id))

    async def on_app_command_error(self, interaction: discord.Interaction,
                                   error: discord.app_commands.AppCommandError) -> None:
        """Bad options and failed checks get an ephemeral answer; anything else is logged with its context."""
        from bot.adapters.discord.interact import answer

        if isinstance(error, discord.app_commands.TransformerError | discord.app_commands.CheckFailure):
            text = f"{error} Nothing was changed."
        else:
            log.error("command %s failed", interaction.command and interaction.command.qualified_name,
                      exc_info=error, extra={"server": interaction.guild_id})
            text = "Something went wrong; it was logged. Nothing was changed."
        try:
            await answer(interaction, text)
        except discord.HTTPException:
            log.warning("could not answer a failed interaction")

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        """Log any unhandled event error with its event name; the bot keeps running."""
        log.exception("unhandled error in %s", event_method)


def run(*, token: str | None = None, db_path: str | None = None, policy_dir: str | None = None,
        settings: Settings | None = None, shard_count: int | None = None,
        scorer_factory: Callable[[], Scorer] | None = None, log_handler: logging.Handler | None = None) -> None:
    """Run the Discord bot until interrupted.

    Args:
        token: Bot token; ``None`` reads ``settings.discord_token`` / ``DISCORD_TOKEN``. Never logged.
        db_path: SQLite mod log file (overrides ``settings.db_path``).
        policy_dir: Older form of the policy folders (see :func:`bot_settings`).
        settings: Database, policy files and model (default ``Settings.from_env()``).
        shard_count: Number of shards, or ``None`` for ``settings.shard_count`` (``MODBOT_SHARD_COUNT``, with
            ``MODBOT_SHARD_IDS`` naming the shards this process owns), else Discord's recommendation
            (``GET /gateway/bot``).
        scorer_factory: Scorer loader (default: the model ``settings`` names).
        log_handler: Passed to :meth:`discord.Client.run` (``None`` keeps the app's logging setup).

    Raises:
        SystemExit: with a one-line message naming the cause: no token, a bad token, Discord cannot be reached
            (no network, DNS, refused connection), or the privileged intents are refused by Discord.
        StoreRefused: the mod log refused a write for good; the bot closed (what was committed stays).
    """
    s = with_paths(settings, db_path, policy_dir)
    token = token or s.discord_token or os.environ.get("DISCORD_TOKEN")
    if not token:
        raise SystemExit("DISCORD_TOKEN is not set")
    bot = ModBot(settings=s, scorer_factory=scorer_factory, shard_count=shard_count)
    try:
        bot.run(token, log_handler=log_handler, log_level=logging.INFO)
    except discord.LoginFailure:
        raise SystemExit("Discord refused the token (DISCORD_TOKEN)") from None
    except discord.PrivilegedIntentsRequired:
        raise SystemExit("Discord refused the privileged intents: enable Server Members and Message Content in "
                         "the Developer Portal (Bot > Privileged Gateway Intents)") from None
    except (aiohttp.ClientError, OSError, discord.GatewayNotFound) as exc:
        raise SystemExit(f"cannot reach Discord ({discord.http.Route.BASE}): {exc or type(exc).__name__}") from None
    except discord.HTTPException as exc:
        raise SystemExit(f"Discord answered {exc.status} while logging in: {exc.text or exc}") from None
    if bot.fatal is not None:
        raise bot.fatal


async def run_discord(settings: Settings, *, scorer_factory: Callable[[], Scorer] | None = None) -> None:
    """Async entry: run the bot of ``settings`` (token from ``settings.discord_token`` or ``DISCORD_TOKEN``)."""
    token = settings.discord_token or os.environ.get("DISCORD_TOKEN")
    if not token:
        raise SystemExit("DISCORD_TOKEN is not set")
    bot = ModBot(settings=settings, scorer_factory=scorer_factory)
    async with bot:
        await bot.start(token)
    if bot.fatal is not None:
        raise bot.fatal
