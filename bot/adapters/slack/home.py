"""Slack App Home (issue 28, item 9): a member's own record, and for moderators the open review queue with links
to the cards.

Layer: ``bot.adapters.slack``. :func:`register_home` is called from :func:`bot.adapters.slack.app.register`. On
``app_home_opened`` (the Home tab) the member's rights are read afresh from Slack
(:meth:`~bot.adapters.slack.app.SlackHandlers.actor`): everyone sees their own active strikes, open appeals and
newest cases; a moderator also sees the workspace's open review items, each with a link to its card
(``chat.getPermalink``); nobody sees anyone else's record unless they are a moderator. Published with
``views.publish`` (no extra scope; the manifest enables the Home tab and subscribes to ``app_home_opened``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import SECTION_MAX, escape
from bot.adapters.slack.parts import SlackListeners
from bot.adapters.slack.translate import PLATFORM, split
from bot.workflow import words
from bot.workflow.cases import strike_lines
from bot.workflow.fit import fit_escaped, fit_texts

log = logging.getLogger(__name__)

#: Open review items listed on a moderator's Home tab (Slack allows 100 blocks in a view).
QUEUE_SHOWN = 20
#: The member's newest cases listed.
CASES_SHOWN = 10
#: Characters of a case's reason on the Home tab, counted escaped (ten cases of 1,000-character reasons would pass
#: a section's 3,000, and the later cases would be cut off).
CASE_REASON_SHOWN = 200


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


async def _card_link(client: AsyncWebClient, card_id: str | None) -> str:
    """A link to a review card (``"C…:ts"``), or ``""`` when it has no card or Slack gives no permalink."""
    if not card_id:
        return ""
    channel, ts = split(card_id)
    if not ts:
        return ""
    try:
        resp = await client.chat_getPermalink(channel=channel, message_ts=ts)
    except SlackApiError:
        return ""
    return str(resp.get("permalink") or "")


async def home_view(handlers: SlackListeners, team: str, user: str, now: datetime | None = None) -> dict[str, Any]:
    """The Home tab of ``user`` in ``team`` (a ``{"type": "home", "blocks": [...]}`` view)."""
    bot = handlers.bot
    now = now or datetime.now(UTC)
    store = bot.store
    strikes = await store.active_strikes(PLATFORM, team, user, now)
    appeals = await store.open_appeals(PLATFORM, team, user)
    cases = await store.list_cases(PLATFORM, team, user, limit=CASES_SHOWN)
    head = f"*Active strikes:* {words.strikes(len(strikes), sum(s.points for s in strikes))}"
    # every strike keeps its line within the section (reasons shortened), as in /mystatus; "\n• " per line
    lines = strike_lines(strikes, room=max(0, SECTION_MAX - len(head) - 3 * len(strikes)),
                         when=lambda at: f"{at:%Y-%m-%d}", escape=escape)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Your moderation record"}},
        _section(head + "".join(f"\n• {line}" for line in lines)),
        _section("*Open appeals:* " + (", ".join(f"#{a.id} of case #{a.case_number}" for a in appeals) or "none")),
        _section("*Your newest cases:*" + ("".join(f"\n• #{c.number} {c.created_at:%Y-%m-%d} {c.action.label}: "
                                                   + (fit_escaped(words.rule_detail(c.reason), CASE_REASON_SHOWN,
                                                                  escape) if c.reason else "-") for c in cases)
                                           or " none") + "\nAppeal a case with `/appeal <case number>`."),
    ]
    actor = await handlers.actor(team, user)
    if actor.is_moderator:
        items = await store.open_reviews(PLATFORM, team, limit=QUEUE_SHOWN + 1)
        heads, reasons = [], []
        for r in items[:QUEUE_SHOWN]:
            link = await _card_link(bot.app.client, await store.card_of_review(r.id))
            what = f"<{link}|Review #{r.id}>" if link else f"Review #{r.id}"
            heads.append(f"• {what} ({r.source}) <@{r.member_id}>: ")
            reasons.append(words.item_reason(r.source, r.reason))  # a report's, an appeal's words as written
        more = "\n…and more: see the review channel." if len(items) > QUEUE_SHOWN else ""
        # every item keeps its line (link and mention whole): the reasons, escaped, share the room the heads leave,
        # the longest shortened first, between entities
        room = SECTION_MAX - len(more) - sum(map(len, heads)) - len(heads)
        lines = [h + r for h, r in zip(heads, fit_texts(reasons, max(room, len(reasons)), escape, empty="-"),
                                       strict=True)]
        blocks += [{"type": "divider"},
                   {"type": "header", "text": {"type": "plain_text", "text": "Open review queue (moderators)"}},
                   _section("\n".join(lines) + more if lines else "The review queue is empty.")]
    return {"type": "home", "blocks": blocks}


def register_home(app: AsyncApp, handlers: SlackListeners) -> None:
    """Attach the ``app_home_opened`` listener to a bolt app."""

    async def on_home(event: dict[str, Any], body: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home":
            return
        user = event.get("user", "")
        team = body.get("team_id") or handlers.bot.team_id
        try:
            view = await home_view(handlers, team, user)
            await handlers.bot.app.client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log.warning("publishing the Home tab of %s failed: %s", user, exc.response.get("error"))

    app.event("app_home_opened")(on_home)
