"""The one lifecycle of a bot process, for every platform: start, recover, retention, shutdown.

Layer: ``bot.workflow`` (platform-neutral: the workflow, the store port, the policy registry and callables the
adapter hands in). Both bots (``bot.adapters.discord.client.ModBot``, ``bot.adapters.slack.run.SlackBot``) run the
same steps in the same order (:data:`STEPS`), recorded in :attr:`Lifecycle.steps`:

1. ``retention`` (:meth:`Lifecycle.start`, before the platform connection): erase each server's message text older
   than its own ``server.retention_days`` now, then every :data:`bot.workflow.retention.RETENTION_INTERVAL_S`.
2. ``watch``: wait on the service's failure future; a write refused for good sets :attr:`Lifecycle.fatal`, sets
   :attr:`Lifecycle.stopped` and calls the adapter's ``on_failure`` (Discord: close the bot).
3. ``recover`` (:meth:`Lifecycle.connected`, once per process once the platform connection is up): carry out or
   fail the cases a stop left pending, reschedule expiries, restore raid mode (:meth:`ModerationWorkflow.recover`).
4. ``catch_up``: judge what was posted while the bot was down (the adapter's channels, :mod:`bot.workflow.catchup`).
   A failure of step 3 or 4 is logged and the bot goes on.
5. ``stop_retention`` (:meth:`Lifecycle.shutdown`), then ``drain``: the pipeline finishes what it was given and the
   workflow carries those verdicts out while the platform session still works (:meth:`ModerationWorkflow.shutdown`;
   a write refused meanwhile is still seen by the watch), ``stop_watch``, then ``disconnect`` (the adapter closes
   its connection) and ``close_runtime`` (the service drains and stops, the store closes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.core.errors import StoreError
from bot.core.policy_registry import PolicyRegistry
from bot.workflow.retention import RETENTION_INTERVAL_S, ErasedCards, Retention

log = logging.getLogger(__name__)

#: Every step of one process's life, in order (a reconnect runs none again).
STEPS = ("retention", "watch", "recover", "catch_up", "stop_retention", "drain", "stop_watch", "disconnect",
         "close_runtime")


class Recovering(Protocol):
    """What the lifecycle needs of the workflow (:class:`bot.workflow.ModerationWorkflow`)."""

    async def recover(self) -> list[str]: ...

    async def shutdown(self) -> None: ...


class Lifecycle:
    """Start, recover, retention and shutdown of one bot process (see the module docstring).

    Args:
        platform: ``"discord"`` or ``"slack"``.
        workflow: The workflow (recover, shutdown).
        store: The mod log (for retention).
        policies: Per-server effective policies (``server.retention_days``).
        failure: The service's failure future (:attr:`bot.core.service.ModerationService.failure`), or ``None``.
        on_failure: Awaited with the error when the service stops on a write refused for good.
        retention_interval_s: Seconds between two purges (the first runs in :meth:`start`).

    Attributes:
        steps: The steps run so far, in order (names of :data:`STEPS`).
        retention: The per-server retention (:class:`bot.workflow.retention.Retention`).
        fatal: The store error that stopped the service, else ``None``.
        stopped: Set when the service stopped on that error.
    """

    def __init__(self, platform: str, *, workflow: Recovering, store: Retention.Store, policies: PolicyRegistry,
                 failure: asyncio.Future[StoreError] | None = None,
                 on_failure: Callable[[StoreError], Awaitable[None]] | None = None,
                 retention_interval_s: float = RETENTION_INTERVAL_S) -> None:
        self.platform = platform
        self.workflow = workflow
        self.retention = Retention(platform, store, policies,
                                   cards=workflow if isinstance(workflow, ErasedCards) else None)
        self.failure = failure
        self.on_failure = on_failure
        self.retention_interval_s = retention_interval_s
        self.steps: list[str] = []
        self.fatal: StoreError | None = None
        self.stopped = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None
        self._connected = False
        self._shutting = False
        self._shut_down = asyncio.Event()

    @property
    def retention_task(self) -> asyncio.Task[None] | None:
        """The periodic purge's task while it runs, else ``None``."""
        return self.retention.task

    async def start(self) -> None:
        """Before connecting to the platform: the first purge and its timer (``retention``), then ``watch``."""
        self.steps.append("retention")
        await self.retention.start(self.retention_interval_s)
        self.steps.append("watch")
        if self._watch is None:
            self._watch = asyncio.create_task(self._watch_failure(), name=f"modbot-store-watch-{self.platform}")

    async def connected(self, catch_up: Callable[[], Awaitable[object]]) -> bool:
        """Once the platform connection is up: ``recover``, then ``catch_up`` (awaits the adapter's catch-up); each
        failure is logged and the next step runs. Only the first call does anything (a reconnect returns False)."""
        if self._connected:
            return False
        self._connected = True
        self.steps.append("recover")
        try:
            await self.workflow.recover()
        except Exception:
            log.exception("recovering pending cases, expiries and raid mode failed")
        self.steps.append("catch_up")
        try:
            await catch_up()
        except Exception:
            log.exception("catching up on messages posted while the bot was down failed")
        return True

    async def shutdown(self, disconnect: Callable[[], Awaitable[None]],
                       close_runtime: Callable[[], Awaitable[None]]) -> None:
        """Stop the purge timer, carry out what was judged, stop the watch, then ``disconnect`` (the adapter's) and
        ``close_runtime``. Called from the watch itself (``on_failure``), it does not cancel the watch. A second
        call waits for the first to finish and runs nothing again."""
        if self._shutting:
            await self._shut_down.wait()
            return
        self._shutting = True
        try:
            await self._shut(disconnect, close_runtime)
        finally:
            self._shut_down.set()

    async def _shut(self, disconnect: Callable[[], Awaitable[None]],
                    close_runtime: Callable[[], Awaitable[None]]) -> None:
        self.steps.append("stop_retention")
        await self.retention.stop()
        self.steps.append("drain")
        await self.workflow.shutdown()
        self.steps.append("stop_watch")
        if self._watch is not None and self._watch is not asyncio.current_task():
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        self._watch = None
        self.steps.append("disconnect")
        await disconnect()
        self.steps.append("close_runtime")
        await close_runtime()

    async def _watch_failure(self) -> None:
        if self.failure is None:
            return
        self.fatal = await asyncio.shield(self.failure)  # a cancelled watcher must not cancel the future
        self.stopped.set()
        if self.on_failure is not None:
            await self.on_failure(self.fatal)


__all__ = ["STEPS", "Lifecycle", "Recovering"]
