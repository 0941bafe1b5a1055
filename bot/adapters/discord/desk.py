"""The moderators' side of Discord (:class:`bot.workflow.ports.ModDesk`): the mod log and the review channel.

Layer: ``bot.adapters.discord``. Renders the workflow's views (``cards``) with their components (``views``).

A mod-log or review channel that is deleted, unreadable, or hidden from the bot by a channel overwrite is detected
(before sending, from the bot's computed permissions, or from Discord's 404/403), reported ONCE (in the other of
the two channels, and in the process log), and not tried again on every message: it is skipped for
:data:`RETRY_AFTER_S` seconds, or until a channel or policy change clears it (:meth:`DiscordDesk.forget_problems`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import discord

from bot.adapters.discord import cards
from bot.adapters.discord.enforcer import describe_error
from bot.workflow.common import PolicySource
from bot.workflow.views import LogEntry, RaidCard, ReviewCard

log = logging.getLogger(__name__)

#: The channels that hold the bot's own messages (cards, mod-log entries): text, voice and stage channels (their
#: text chat) and threads. A category or a forum (only posts) cannot.
Postable = discord.TextChannel | discord.VoiceChannel | discord.StageChannel | discord.Thread

#: Seconds an unreachable channel is skipped before the bot tries it again.
RETRY_AFTER_S = 600.0


class DiscordDesk:
    """Posts mod-log entries, review cards and raid cards.

    Args:
        client: The connected bot.
        policies: Per-server policies (``server.review_channel``, ``server.mod_log_channel``).
        review_view: ``(card) -> discord.ui.View`` components of a review or appeal card.
        raid_view: ``(card) -> discord.ui.View`` components of a raid card.
    """

    def __init__(self, client: discord.Client, policies: PolicySource, *,
                 review_view: Callable[[ReviewCard], discord.ui.View],
                 raid_view: Callable[[RaidCard], discord.ui.View]) -> None:
        self.client = client
        self.policies = policies
        self.review_view = review_view
        self.raid_view = raid_view
        # (server id, channel id) -> (monotonic time it failed, reason)
        self.problems: dict[tuple[str, str], tuple[float, str]] = {}

    def forget_problems(self, channel_id: str | None = None) -> None:
        """Try channels again (after a channel update, a permission change or a policy change)."""
        if channel_id is None:
            self.problems.clear()
        else:
            for key in [k for k in self.problems if k[1] == channel_id]:
                del self.problems[key]

    async def _target(self, server_id: str, which: str) -> tuple[Postable | None, str | None]:
        policy = await self.policies.get("discord", server_id)
        cid = getattr(policy.server, which) or None
        if not cid:
            return None, None
        failed = self.problems.get((server_id, cid))
        if failed is not None and time.monotonic() - failed[0] < RETRY_AFTER_S:
            return None, cid
        try:
            channel = self.client.get_channel(int(cid)) or await self.client.fetch_channel(int(cid))
        except (discord.HTTPException, ValueError) as exc:
            reason = describe_error(exc) if isinstance(exc, discord.HTTPException) else "not a channel id"
            await self._problem(server_id, cid, which, reason)
            return None, cid
        if not isinstance(channel, Postable):
            await self._problem(server_id, cid, which, "not a text channel (a category or forum holds no messages)")
            return None, cid
        guild = getattr(channel, "guild", None)
        me = guild.me if guild is not None else None
        if me is not None and hasattr(channel, "permissions_for"):
            perms = channel.permissions_for(me)
            missing = [n for n in ("view_channel", "send_messages", "embed_links") if not getattr(perms, n)]
            if missing:
                await self._problem(server_id, cid, which, "the bot lacks " + ", ".join(missing) + " there")
                return None, cid
        return channel, cid

    async def _problem(self, server_id: str, channel_id: str, which: str, reason: str) -> None:
        """Record an unreachable channel and report it once (in the other channel, and in the log)."""
        key = (server_id, channel_id)
        first = key not in self.problems
        self.problems[key] = (time.monotonic(), reason)
        if not first:
            return
        label = "review channel" if which == "review_channel" else "mod log channel"
        text = f"The {label} <#{channel_id}> cannot be used: {reason}. Fix it or set `server.{which}`."
        log.error("server %s: %s %s cannot be used: %s", server_id, label, channel_id, reason)
        other = "mod_log_channel" if which == "review_channel" else "review_channel"
        channel, _ = await self._target(server_id, other)
        if channel is not None:
            try:
                await channel.send(embed=cards.log_embed(LogEntry(title="Channel problem", lines=(text,),
                                                                  failed=True, kind="problem")))
            except discord.HTTPException:
                pass

    async def _send(self, server_id: str, which: str, **kwargs: Any) -> discord.Message | None:
        channel, cid = await self._target(server_id, which)
        if channel is None:
            return None
        try:
            return await channel.send(**kwargs)
        except discord.HTTPException as exc:
            if exc.status in (403, 404):
                await self._problem(server_id, cid or "", which, describe_error(exc))
            else:
                log.error("posting in %s of server %s failed: %s", which, server_id, describe_error(exc))
            return None

    async def _edit(self, server_id: str, message_id: str, **kwargs: Any) -> bool:
        channel, _ = await self._target(server_id, "review_channel")
        if channel is None:
            return False
        try:
            await channel.get_partial_message(int(message_id)).edit(**kwargs)
            return True
        except discord.HTTPException as exc:
            log.warning("editing card %s failed: %s", message_id, describe_error(exc), extra={"server": server_id})
            return False

    # ------------------------------------------------------------------ ModDesk
    async def post_mod_log(self, server_id: str, entry: LogEntry) -> bool:
        """Post a mod-log entry (``False`` when the mod log is unset or unreachable)."""
        return await self._send(server_id, "mod_log_channel", embed=cards.log_embed(entry)) is not None

    async def post_review(self, card: ReviewCard) -> str | None:
        """Post a review or appeal card with its buttons; returns the card's message id."""
        msg = await self._send(card.server_id, "review_channel", embed=cards.review_embed(card),
                               view=self.review_view(card))
        return str(msg.id) if msg is not None else None

    async def update_review(self, card: ReviewCard, card_message_id: str) -> bool:
        """Replace a posted card (re-flagged edit, decision)."""
        return await self._edit(card.server_id, card_message_id, embed=cards.review_embed(card),
                                view=self.review_view(card))

    async def post_raid(self, card: RaidCard) -> str | None:
        """Post a raid card with its bulk-action buttons."""
        msg = await self._send(card.server_id, "review_channel", embed=cards.raid_embed(card),
                               view=self.raid_view(card))
        return str(msg.id) if msg is not None else None

    async def update_raid(self, card: RaidCard, card_message_id: str) -> bool:
        """Replace a raid card (counts, actions, ended)."""
        return await self._edit(card.server_id, card_message_id, embed=cards.raid_embed(card),
                                view=self.raid_view(card))
