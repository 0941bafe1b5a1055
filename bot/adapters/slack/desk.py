"""The moderators' side of Slack (:class:`bot.workflow.ports.ModDesk`): mod log and review channel posts.

Layer: ``bot.adapters.slack``. Cards are posted with ``chat.postMessage`` and replaced with ``chat.update``; a card's
id is ``"<channel>:<ts>"``. A review or mod-log channel the bot cannot post in (``channel_not_found``,
``not_in_channel``, ``is_archived``, ``missing_scope``) is reported once (in the other channel and the log) and
skipped for :data:`RETRY_AFTER_S` seconds instead of being retried on every message.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import blocks
from bot.adapters.slack.enforcer import describe
from bot.adapters.slack.translate import PLATFORM, split
from bot.workflow.common import PolicySource
from bot.workflow.views import LogEntry, RaidCard, ReviewCard

log = logging.getLogger(__name__)

RETRY_AFTER_S = 600.0
_CHANNEL_PROBLEMS = {"channel_not_found", "not_in_channel", "is_archived", "missing_scope", "restricted_action"}


class SlackDesk:
    """Posts mod-log entries, review cards and raid cards in the policy's Slack channels.

    Args:
        client: The bot token's client.
        policies: Per-workspace policies (``server.review_channel``, ``server.mod_log_channel``: channel ids).
    """

    def __init__(self, client: AsyncWebClient, policies: PolicySource) -> None:
        self.client = client
        self.policies = policies
        self.problems: dict[tuple[str, str], float] = {}

    async def _channel(self, team_id: str, which: str) -> str | None:
        policy = await self.policies.get(PLATFORM, team_id)
        cid = getattr(policy.server, which) or None
        if cid is None:
            return None
        failed = self.problems.get((team_id, cid))
        if failed is not None and time.monotonic() - failed < RETRY_AFTER_S:
            return None
        return cid

    async def _post(self, team_id: str, which: str, text: str, content: list[dict[str, Any]]) -> str | None:
        cid = await self._channel(team_id, which)
        if cid is None:
            return None
        try:
            resp = await self.client.chat_postMessage(channel=cid, text=text, blocks=content)
            return f"{resp['channel']}:{resp['ts']}"
        except SlackApiError as exc:
            error = exc.response.get("error") if hasattr(exc.response, "get") else ""
            if error in _CHANNEL_PROBLEMS:
                await self._problem(team_id, cid, which, describe(exc))
            else:
                log.error("posting in %s of %s failed: %s", which, team_id, describe(exc))
            return None

    async def _problem(self, team_id: str, cid: str, which: str, reason: str) -> None:
        first = (team_id, cid) not in self.problems
        self.problems[(team_id, cid)] = time.monotonic()
        if not first:
            return
        label = "review channel" if which == "review_channel" else "mod log channel"
        log.error("workspace %s: %s %s cannot be used: %s", team_id, label, cid, reason)
        other = "mod_log_channel" if which == "review_channel" else "review_channel"
        text, content = blocks.log_entry(LogEntry(
            title="Channel problem", lines=(f"The {label} <#{cid}> cannot be used: {reason}. Invite the bot "
                                            f"(/invite) or set `server.{which}`.",), failed=True, kind="problem"))
        await self._post(team_id, other, text, content)

    async def _update(self, card_id: str, text: str, content: list[dict[str, Any]]) -> bool:
        channel, ts = split(card_id)
        try:
            await self.client.chat_update(channel=channel, ts=ts or "", text=text, blocks=content)
            return True
        except SlackApiError as exc:
            log.warning("updating card %s failed: %s", card_id, describe(exc))
            return False

    def forget_problems(self) -> None:
        """Try the channels again (after a policy change)."""
        self.problems.clear()

    async def post_mod_log(self, server_id: str, entry: LogEntry) -> bool:
        text, content = blocks.log_entry(entry)
        return await self._post(server_id, "mod_log_channel", text, content) is not None

    async def post_review(self, card: ReviewCard) -> str | None:
        text, content = blocks.review(card)
        return await self._post(card.server_id, "review_channel", text, content)

    async def update_review(self, card: ReviewCard, card_message_id: str) -> bool:
        text, content = blocks.review(card)
        return await self._update(card_message_id, text, content)

    async def post_raid(self, card: RaidCard) -> str | None:
        text, content = blocks.raid(card)
        return await self._post(card.server_id, "review_channel", text, content)

    async def update_raid(self, card: RaidCard, card_message_id: str) -> bool:
        text, content = blocks.raid(card)
        return await self._update(card_message_id, text, content)
