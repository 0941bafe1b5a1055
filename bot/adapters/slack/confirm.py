"""Slack's rendering of the decisions that ask first (Kick, i.e. "Remove from channel", and a raid card's bulk
sanctions): a ``views.open`` modal with one ``plain_text_input``, and its ``view_submission``.

Layer: ``bot.adapters.slack``. Which decisions ask first, what the reason does and its limits are the workflow's
(:mod:`bot.workflow.confirm`); this module only renders the workflow's
:class:`~bot.workflow.confirm.Confirmation` and hands the reason back. The click is acknowledged first and the
modal opened with the click's ``trigger_id`` (valid 3 seconds, once: an expired one is answered "try again" and
nothing changes). The modal's ``private_metadata`` carries the decision, the card and when it was opened; on submit
the actor is read afresh from Slack and the workflow runs every check again. A reason the workflow refuses (too
long, too short) is answered inside the modal (``response_action: errors``, seen only by the moderator) and nothing
changes; a modal submitted after :data:`~bot.workflow.confirm.CONFIRM_TTL_S` seconds changes nothing and says so.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.adapters.slack import blocks
from bot.adapters.slack.parts import SlackListeners
from bot.workflow.authz import Actor, Refused
from bot.workflow.confirm import EXPIRED, asks_first, check_reason, expired, raid_asks_first

log = logging.getLogger(__name__)

#: The modal's ``callback_id``.
CALLBACK_ID = "mod_confirm"


async def ask_first(handlers: SlackListeners, body: dict[str, Any], parts: list[str], team: str, actor: Actor,
                    card_id: str, respond: AsyncRespond) -> bool:
    """For a button that asks first (``parts``: its ``action_id`` split on ``:``), open the reason modal after
    the workflow's quick checks (a refusal is answered ephemerally). Returns whether the click was handled here.

    Raises:
        Refused: the workflow refused to ask (missing permission, decided already, unknown item or raid).
    """
    wf = handlers.bot.workflow
    if parts[:2] == ["mod", "review"] and len(parts) == 4 and parts[2].isdigit() and asks_first(parts[3]):
        asked = await wf.confirm_review(actor, team, int(parts[2]), parts[3])
        meta = {"kind": "review", "id": int(parts[2]), "choice": parts[3]}
    elif parts[:2] == ["mod", "raid"] and len(parts) == 5 and parts[3].isdigit() and raid_asks_first(parts[4]):
        asked = await wf.confirm_raid(actor, team, int(parts[3]), parts[4])
        meta = {"kind": "raid", "id": int(parts[3]), "choice": parts[4]}
    else:
        return False
    meta.update(team=team, card=card_id, at=wf.clock().isoformat())
    await handlers._open_modal(body, blocks.reason_modal(CALLBACK_ID, asked, json.dumps(meta)), respond)
    return True


async def on_submit(handlers: Any, ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
    """The reason modal was submitted: a refused reason is answered in the modal; otherwise the decision is
    carried out with it and the moderator told ephemerally in the card's channel."""
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
        kind, number, choice, team = meta["kind"], int(meta["id"]), str(meta["choice"]), str(meta["team"])
        opened = datetime.fromisoformat(meta["at"])
    except (ValueError, KeyError, TypeError):
        await ack(response_action="errors", errors={"reason": "This confirmation cannot be read; press the button "
                                                              "again. Nothing was changed."})
        return
    reason = ((((view.get("state") or {}).get("values") or {}).get("reason") or {}).get("value") or {}).get("value")
    try:
        check_reason(reason, choice.capitalize() + (" all" if kind == "raid" else ""))
    except Refused as exc:
        await ack(response_action="errors", errors={"reason": str(exc)})
        return
    await ack()
    wf = handlers.bot.workflow
    user = (body.get("user") or {}).get("id", "")
    card_id = str(meta.get("card") or "")
    channel = card_id.partition(":")[0] or None
    if expired(opened, wf.clock()):
        await handlers.tell(user, EXPIRED, channel)
        return
    try:
        actor = await handlers.actor(team, user)
        if kind == "review":
            result = await wf.decide_review(actor, team, number, choice, reason=reason)
            if result.card is not None and card_id:
                await handlers.bot.desk.update_review(result.card, card_id)
            text = "" if result.ok else result.text
        else:
            text = blocks.said(await wf.raid_action(actor, team, number, choice, reason=reason))
    except Refused as exc:
        text = blocks.refusal(exc)
    if text:
        await handlers.tell(user, text, channel)


def register_confirm(app: AsyncApp, handlers: SlackListeners) -> None:
    """Attach the reason modal's ``view_submission`` listener."""
    async def submitted(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        await on_submit(handlers, ack, body, view)

    app.view(CALLBACK_ID)(submitted)
