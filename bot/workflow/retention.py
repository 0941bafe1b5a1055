"""Retention of message text, per server: the one lifecycle step both bots run (at start, then every
:data:`RETENTION_INTERVAL_S` seconds until they close).

Layer: ``bot.workflow`` (platform-neutral; talks to the store port and the policy registry only). Each server's
text older than its own ``server.retention_days`` (its effective policy: default < server file < ``/policy set``
override) is erased; verdicts, cases and strikes stay (:meth:`bot.core.store_port.RetentionStore.purge_expired_text`).
The review cards the bot posted follow: each one quoting erased text is edited to say "text erased after N days"
(:meth:`Retention.erase_cards`, in the periodic task).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from bot.core.store_port import ModLogReadStore, RetentionStore
from bot.workflow.common import PolicySource
from bot.workflow.words import plural

log = logging.getLogger(__name__)

#: The platform name scans record chat exports under (``python -m bot scan``): every bot purges them too, since a
#: scan of an export into the bot's mod log (an outage covered, docs/operations.md) has no bot of its own.
EXPORTS = "export"
#: Seconds between two purges (the first runs when the bot starts): text is erased within a day of its date.
RETENTION_INTERVAL_S = 6 * 3600


@runtime_checkable
class ErasedCards(Protocol):
    """The review cards a bot posted (:class:`bot.workflow.ModerationWorkflow`), as retention edits them."""

    async def erase_card_texts(self, server_id: str, days: int | None = None, *,
                               member_id: str | None = None) -> int:
        """Edit the posted cards whose message's text was erased to say so; returns the cards edited."""
        ...


class Retention:
    """Purges each server's expired message text, and has the bot's own review cards follow.

    Args:
        platform: ``"discord"`` or ``"slack"`` (a bot purges its own platform's servers), or ``None`` for every
            server of the mod log, scanned exports (``"export"``) included (``python -m bot purge``).
        store: The mod log.
        policies: Per-server effective policies (``server.retention_days``, days, 1..3650).
        cards: The bot's review cards (a bot's workflow); ``None`` (``python -m bot purge``, which reaches no
            platform): the cards whose text it erased are edited by the bot's next run (:meth:`erase_cards`).

    Every server of the platform the mod log holds is purged, also one the bot has left (its members' text must
    not outlive the retention period because the bot was removed), and every scanned export (:data:`EXPORTS`, by
    its guild's or workspace's file and ``/policy set`` overrides: :meth:`bot.core.policy_registry.PolicyRegistry.
    server_file`, :meth:`~bot.core.policy_registry.PolicyRegistry.override_keys`), which no bot
    runs for: each bot purges them (the purge is idempotent).
    """

    class Store(RetentionStore, ModLogReadStore, Protocol):
        """What retention needs from the store port."""

    def __init__(self, platform: str | None, store: Store, policies: PolicySource,
                 cards: ErasedCards | None = None) -> None:
        self.platform, self.store, self.policies, self.cards = platform, store, policies, cards
        self._task: asyncio.Task[None] | None = None
        #: ``(platform, server id)`` of the servers the last :meth:`purge` could not purge (their policy could not
        #: be read, or the store refused); ``[]`` when every server was purged.
        self.failed: list[tuple[str, str]] = []

    async def purge(self, now: datetime | None = None) -> int:
        """Erase, per server, text older than that server's ``retention_days``; returns messages purged in all.

        A server whose policy cannot be read (a file edited into an invalid one while the bot runs) or whose purge
        the store refuses is logged (one line naming the server and the reason), counts 0 and is listed in
        :attr:`failed`; the other servers are purged all the same, and the next run tries it again. Never raises
        (the periodic purge must outlive a bad file or a busy database): a failure to list the servers is logged
        and counts 0.
        """
        now = now or datetime.now(UTC)
        total = 0
        failed: list[tuple[str, str]] = []
        try:
            servers = [(platform, sid) for platform, sid in await self.store.modlog_servers()
                       if self.platform is None or platform in (self.platform, EXPORTS)]
        except Exception as exc:  # noqa: BLE001 - retention must not stop the bot
            log.error("retention: the servers of the mod log could not be read: %s", exc)
            self.failed = [(self.platform or "*", "*")]
            return 0
        for platform, server_id in servers:
            try:
                days = (await self.policies.get(platform, server_id)).server.retention_days
                n = await self.store.purge_expired_text(now - timedelta(days=days), now, platform=platform,
                                                        server_id=server_id)
            except Exception as exc:  # noqa: BLE001 - retention must not stop the bot
                log.error("retention: purging %s server %s failed: %s", platform, server_id, exc)
                failed.append((platform, server_id))
                continue
            if n:
                log.info("retention: erased the text of %s older than %s in %s server %s", plural(n, "message"),
                         plural(days, "day"), platform, server_id)
            total += n
        self.failed = failed
        return total

    async def erase_cards(self) -> int:
        """Edit the bot's posted review cards that still quote text the mod log erased (this process's purges, an
        earlier run's, ``python -m bot purge``'s) to say "text erased after N days" (N: the server's
        ``server.retention_days`` now): :meth:`ErasedCards.erase_card_texts`, per server of :attr:`platform`.
        Returns the cards edited; 0 without :attr:`cards`. Never raises: a server that fails is logged."""
        if self.cards is None or self.platform is None:
            return 0
        total = 0
        try:
            servers = [sid for platform, sid in await self.store.modlog_servers() if platform == self.platform]
        except Exception as exc:  # noqa: BLE001 - retention must not stop the bot
            log.error("retention: the servers of the mod log could not be read: %s", exc)
            return 0
        for server_id in servers:
            try:
                days = (await self.policies.get(self.platform, server_id)).server.retention_days
                n = await self.cards.erase_card_texts(server_id, days)
            except Exception as exc:  # noqa: BLE001 - retention must not stop the bot
                log.error("retention: editing the review cards of %s server %s failed: %s", self.platform,
                          server_id, exc)
                continue
            if n:
                log.info("retention: %s in %s server %s no longer quote erased text", plural(n, "review card"),
                         self.platform, server_id)
            total += n
        return total

    async def _loop(self, interval_s: float) -> None:
        while True:
            # the cards follow the text in the background: the first purge ran before the platform connection,
            # and editing many cards paces itself to the platform's rate limits
            await self.erase_cards()
            await asyncio.sleep(interval_s)
            await self.purge()

    async def start(self, interval_s: float = RETENTION_INTERVAL_S) -> int:
        """Purge once now, then every ``interval_s`` seconds until :meth:`stop`; returns the first purge's count."""
        n = await self.purge()
        if self._task is None:
            self._task = asyncio.create_task(self._loop(interval_s), name=f"modbot-retention-{self.platform or 'all'}")
        return n

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The periodic purge's task between :meth:`start` and :meth:`stop`, else ``None``."""
        return self._task

    async def stop(self) -> None:
        """Stop the periodic purge (idempotent)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


__all__ = ["EXPORTS", "RETENTION_INTERVAL_S", "ErasedCards", "Retention"]
