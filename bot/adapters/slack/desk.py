"""The moderators' side of Slack (:class:`bot.workflow.ports.ModDesk`): mod log and review channel posts.

Layer: ``bot.adapters.slack``. Cards are posted with ``chat.postMessage`` and replaced with ``chat.update``; a card's
id is ``"<channel>:<ts>"``. A review or mod-log channel the bot cannot post in (``channel_not_found``,
``not_in_channel``, ``is_archived``, ``missing_scope``) is reported once (in the other channel and the log) and
skipped for :data:`RETRY_AFTER_S` seconds instead of being retried on every message.

A channel that became shared with another organisation (Slack Connect) after it was set up is no place for cards
or the mod log (members' flagged words, scores and the moderators' decisions): before posting, the desk reads
``conversations.info``'s ``is_ext_shared`` / ``is_pending_ext_shared``, reusing an unshared answer
:data:`SHARE_CHECK_S` seconds, and reports a shared channel as a channel problem instead of posting there. The
``channel_shared`` / ``channel_unshared`` events drop the reused answer (:meth:`SlackDesk.channel_changed`), so a
share is seen at the next post.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.network import NETWORK_ERRORS, network_reason
from bot.adapters.slack import blocks
from bot.adapters.slack.enforcer import PLATFORM_NAME, describe
from bot.adapters.slack.translate import PLATFORM, split
from bot.workflow.common import PolicySource
from bot.workflow.views import LogEntry, RaidCard, ReviewCard

log = logging.getLogger(__name__)

RETRY_AFTER_S = 600.0
#: Seconds a "not shared with another organisation" answer of ``conversations.info`` is reused for a channel.
SHARE_CHECK_S = 300.0
#: The channel problem of a review or mod-log channel shared through Slack Connect.
SHARED = ("it is shared with another organisation (Slack Connect), whose people would read the moderators' cards "
          "and the mod log")
_CHANNEL_PROBLEMS = {"channel_not_found", "not_in_channel", "is_archived", "missing_scope", "restricted_action"}


class SlackDesk:
    """Posts mod-log entries, review cards and raid cards in the policy's Slack channels.

    Args:
        client: The bot token's client.
        policies: Per-workspace policies (``server.review_channel``, ``server.mod_log_channel``: channel ids).
        clock: Seconds on a monotonic clock (``time.monotonic``), for :data:`RETRY_AFTER_S` and
            :data:`SHARE_CHECK_S`.
    """

    def __init__(self, client: AsyncWebClient, policies: PolicySource, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.policies = policies
        self.clock = clock
        self.problems: dict[tuple[str, str], float] = {}
        self._unshared: dict[str, float] = {}  # channel id -> clock time conversations.info said it is not shared

    async def _channel(self, team_id: str, which: str) -> str | None:
        policy = await self.policies.get(PLATFORM, team_id)
        cid = getattr(policy.server, which) or None
        if cid is None:
            return None
        failed = self.problems.get((team_id, cid))
        if failed is not None and self.clock() - failed < RETRY_AFTER_S:
            return None
        return cid

    async def _post(self, team_id: str, which: str, text: str, content: list[dict[str, Any]]) -> str | None:
        cid = await self._channel(team_id, which)
        if cid is None:
            return None
        if await self._shared(cid):
            await self._problem(team_id, cid, which, SHARED,
                                fix=f"Pick a channel of this workspace only for `server.{which}` (`/modsetup`).")
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

    async def _shared(self, cid: str) -> bool:
        """Whether ``cid`` is shared with another organisation now (``is_ext_shared``, or its share pending:
        ``is_pending_ext_shared``). An unshared answer is reused :data:`SHARE_CHECK_S` seconds; when Slack does not
        answer, ``False`` (the post then goes as before: the channel was checked when it was set)."""
        seen = self._unshared.get(cid)
        if seen is not None and self.clock() - seen < SHARE_CHECK_S:
            return False
        try:
            info = (await self.client.conversations_info(channel=cid)).get("channel") or {}
        except SlackApiError as exc:
            log.info("conversations.info %s: %s", cid, describe(exc))
            return False
        except NETWORK_ERRORS as exc:
            log.info("conversations.info %s: %s", cid, network_reason(exc, PLATFORM_NAME))
            return False
        if info.get("is_ext_shared") or info.get("is_pending_ext_shared"):
            self._unshared.pop(cid, None)
            return True
        self._unshared[cid] = self.clock()
        return False

    def channel_changed(self, channel_id: str) -> None:
        """A channel was shared with another organisation or unshared (``channel_shared`` / ``channel_unshared``):
        its sharing is read again at the next post, and a problem reported for it is tried again."""
        self._unshared.pop(channel_id, None)
        for key in [k for k in self.problems if k[1] == channel_id]:
            del self.problems[key]

    async def _problem(self, team_id: str, cid: str, which: str, reason: str, *, fix: str | None = None) -> None:
        first = (team_id, cid) not in self.problems
        self.problems[(team_id, cid)] = self.clock()
        if not first:
            return
        label = "review channel" if which == "review_channel" else "mod log channel"
        log.error("workspace %s: %s %s cannot be used: %s", team_id, label, cid, reason)
        other = "mod_log_channel" if which == "review_channel" else "review_channel"
        text, content = blocks.log_entry(LogEntry(
            title="Channel problem", lines=(f"The {label} <#{cid}> cannot be used: {reason}. "
                                            + (fix or f"Invite the bot (/invite) or set `server.{which}`."),), failed=True, kind="problem"))
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
