"""The Slack app: slack-bolt listeners that translate Slack events, commands and clicks into workflow calls.

Layer: ``bot.adapters.slack``. Thin, like the Discord cogs: every listener acknowledges within Slack's 3 seconds
(bolt acknowledges events itself; commands, actions, shortcuts and view submissions call ``ack()`` first), builds an
:class:`~bot.workflow.authz.Actor` from Slack's own roles (workspace owner / admin, the policy's moderator user group
or user list), asks the workflow, and renders the answer (ephemeral for anything about one person). A failure that
is no refusal is logged and answered "Something went wrong; it was logged." (:meth:`SlackHandlers.answer_failure`).

Listeners (see ``slack-app-manifest.yml``): ``message`` (new, thread replies, ``message_changed``, file shares),
``team_join`` (join bursts, first-seen dates; ``member_joined_channel`` is a channel join and is only logged), buttons ``mod:*``, the message shortcut
``report_message``, slash commands ``/report``, ``/appeal``, ``/mystatus``, ``/mydata``, ``/modstats``
(``/modcase`` and ``/modmember``: :mod:`bot.adapters.slack.cases`; ``/modpolicy`` and ``/modsetup``:
:mod:`bot.adapters.slack.policy`), and the ``mod_report`` / ``mod_appeal`` / ``mod_confirm`` (a reason for a decision
that asks first: :mod:`bot.adapters.slack.confirm`) modals.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError

from bot.adapters.slack import blocks
from bot.adapters.slack.cases import register_cases
from bot.adapters.slack.confirm import ask_first, register_confirm
from bot.adapters.slack.enforcer import RANK_ADMIN, RANK_MODERATOR, RANK_OWNER, describe
from bot.adapters.slack.files import send_json_to_dm
from bot.adapters.slack.home import register_home
from bot.adapters.slack.names import judge_user, register_names
from bot.adapters.slack.parts import SlackBotParts
from bot.adapters.slack.policy import register_policy
from bot.adapters.slack.status import register_status
from bot.adapters.slack.translate import deleted_ts, member_ref, message_fields, split, to_core
from bot.workflow import words
from bot.workflow.authz import Actor, Permission, Refused
from bot.workflow.cases import strike_lines

log = logging.getLogger(__name__)

_USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
ALL_PERMISSIONS = frozenset(Permission)
#: What a member of the policy's moderator group or list may do on Slack: the review queue, deleting (with an
#: admin token), warning, and removing members from channels.
MODERATOR_PERMISSIONS = frozenset({Permission.MANAGE_MESSAGES, Permission.KICK_MEMBERS})


class SlackHandlers:
    """The listeners, bound to one running bot (:class:`bot.adapters.slack.run.SlackBot`)."""

    def __init__(self, bot: SlackBotParts) -> None:
        self.bot = bot

    # ------------------------------------------------------------------ helpers
    async def actor(self, team_id: str, user_id: str) -> Actor:
        """The person behind a click or command, from Slack's roles read afresh (owner/admin flags change)."""
        info = await self.bot.enforcer.user_info(user_id, fresh=True)
        home = self.bot.team_id or team_id
        if info is None or (info.get("team_id") and info["team_id"] != home):
            # unknown, deactivated, or a member of ANOTHER workspace (a Slack Connect guest, an admin there):
            # no rights here
            return Actor(user_id)
        rank = await self.bot.enforcer.rank(team_id, info)
        perms = ALL_PERMISSIONS if rank >= RANK_ADMIN else MODERATOR_PERMISSIONS if rank == RANK_MODERATOR \
            else frozenset()
        return Actor(id=user_id, name=info.get("name", ""), permissions=perms, rank=rank,
                     is_owner=rank == RANK_OWNER)

    async def tell(self, user_id: str, text: str, channel: str | None = None) -> None:
        """An answer only ``user_id`` sees: ephemeral in ``channel`` when given, else (or when Slack refuses the
        ephemeral there: a channel or direct message the bot is not in, where a member may report a message or run
        ``/modsetup``, an archived channel) a DM with the bot."""
        client = self.bot.app.client
        if channel:
            ch, thread = split(channel)
            try:
                await client.chat_postEphemeral(channel=ch, user=user_id, text=text,
                                                thread_ts=thread)  # None is left out by slack_sdk
                return
            except SlackApiError as exc:
                log.info("could not answer %s in %s (%s): answering in a DM", user_id, ch, describe(exc))
        try:
            opened = await client.conversations_open(users=user_id)
            await client.chat_postMessage(channel=opened["channel"]["id"], text=text)
        except SlackApiError as exc:
            log.warning("could not answer %s: %s", user_id, describe(exc))

    async def answer_failure(self, body: dict[str, Any], respond: AsyncRespond | None) -> None:
        """Tell the person whose command, click or modal failed on something that is no refusal (logged by the
        caller) that it failed, as Discord's interactions do (:data:`FAILED`): ephemerally through the request's
        ``response_url``, else (a submitted modal) in a DM. Events have nobody to tell. Never raises."""
        if body.get("type") == "event_callback" or "event" in body:
            return
        user = (body.get("user") or {}).get("id") if isinstance(body.get("user"), dict) else body.get("user_id")
        try:
            if respond is not None:
                await respond(text=FAILED, response_type="ephemeral", replace_original=False)
            elif user:
                await self.tell(str(user), FAILED)
        except Exception as exc:  # noqa: BLE001 - Slack unreachable still: the failure is logged already
            log.warning("could not tell %s that their request failed: %s", user, type(exc).__name__)

    async def send_export(self, team: str, user: str, record: dict[str, Any]) -> str:
        """Send ``/mydata export``'s record whole, never cut: a short one inline (the answer), else as a JSON file
        (``mydata-<team>.json``, ``files.uploadV2``) in the member's DM with the bot, as Discord sends it; when the
        upload is refused (no ``files:write`` scope, a failed upload), in DM pages of at most
        :data:`EXPORT_PAGE_CHARS` characters that join into the JSON. Returns the answer to show the member."""
        compact = json.dumps(record, default=str, ensure_ascii=False)
        if len(blocks.code_json(compact)) <= EXPORT_INLINE_CHARS:
            return "Everything this bot stores about you here:\n```" + blocks.code_json(compact) + "```"
        name = f"mydata-{team}.json"
        sent = await send_json_to_dm(self.bot.app.client, user, filename=name,
                                     content=json.dumps(record, indent=2, default=str, ensure_ascii=False),
                                     pages=compact, label="Your record", page_chars=EXPORT_PAGE_CHARS,
                                     comment="Everything this bot stores about you here (JSON).")
        if sent.how == "no_dm":
            return "Your record could not be sent: the bot cannot open a direct message with you."
        if sent.how == "partial":
            return (f"Your record could not be sent whole ({sent.sent} of {sent.parts} parts reached your direct "
                    "messages); please try again later.")
        return ("Everything this bot stores about you here was sent to your direct messages "
                + (f"as `{name}`." if sent.how == "file" else f"in {sent.parts} parts."))

    # ------------------------------------------------------------------ events
    async def on_message(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """Judge a new or edited message (bolt has already acknowledged the event)."""
        if self.bot.closing:
            return
        gone = deleted_ts(event)  # message_deleted, or a message with replies turned into a tombstone
        if gone is not None and event.get("channel"):
            team = body.get("team_id") or self.bot.team_id
            await self.bot.workflow.message_deleted(team, f"{event['channel']}:{gone}")
            return
        fields = message_fields(event)
        if fields is None or fields["user"] in (self.bot.bot_user_id, self.bot.bot_id):
            return
        team = body.get("team_id") or event.get("team") or self.bot.team_id
        info = None if fields["bot"] else await self.bot.enforcer.user_info(fields["user"])
        first = await self.bot.workflow.first_seen(team, fields["user"], at=datetime.now(UTC))
        author = member_ref(fields["user"], info or ({"is_bot": True} if fields["bot"] else None), first,
                            home_team=self.bot.team_id or team,
                            named_roles=() if fields["bot"] else await self.bot.author_roles(team, fields["user"]))
        try:
            msg = to_core(team, event, fields, author=author)
        except ValueError as exc:
            log.info("skipped a message event: %s", exc)
            return
        await self.bot.judge(msg)

    async def on_join(self, body: dict[str, Any], event: dict[str, Any]) -> None:
        """``team_join``: note when the workspace first saw the member; count the join towards a join burst."""
        user = event.get("user")
        user_id = user.get("id") if isinstance(user, dict) else user
        if not user_id or self.bot.closing:
            return
        team = body.get("team_id") or self.bot.team_id
        now = datetime.now(UTC)
        await self.bot.workflow.first_seen(team, user_id, at=now, joined=True)
        await self.bot.workflow.member_joined(team, user_id, now)
        await judge_user(self, body, event)  # the name they joined with (bot.adapters.slack.names)

    async def on_channel_join(self, event: dict[str, Any]) -> None:
        """``member_joined_channel``: a member (often long-standing, added by an admin) joined one channel. It is
        not a workspace join (``team_join`` is), so it neither counts toward a join-burst raid nor records a
        first-seen date: the new-member and raid-mode tiers must not apply to regulars added to a new channel."""
        log.debug("channel join of %s in %s (not a workspace join)", event.get("user"), event.get("channel"))

    async def on_channel_shared(self, event: dict[str, Any]) -> None:
        """``channel_shared`` / ``channel_unshared``: a channel was shared with another organisation (Slack
        Connect) or stopped being shared. The desk reads its sharing again before its next card or mod-log post
        (:meth:`bot.adapters.slack.desk.SlackDesk.channel_changed`), so a review or mod-log channel shared after
        setup gets no more cards (a channel problem is reported instead), and one unshared gets them again."""
        channel = event.get("channel")
        if isinstance(channel, str) and channel:
            log.info("%s: %s", event.get("type"), channel)
            self.bot.desk.channel_changed(channel)

    # ------------------------------------------------------------------ buttons
    async def on_action(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], respond: AsyncRespond) -> None:
        """A ``mod:*`` button: review decision, appeal decision, raid action, or Appeal (opens a modal)."""
        await ack()
        parts = action.get("action_id", "").split(":")
        team = (body.get("team") or {}).get("id") or self.bot.team_id
        user = (body.get("user") or {}).get("id", "")
        try:
            if parts[:2] == ["mod", "appeal"] and len(parts) == 4:
                await self._open_modal(body, blocks.text_modal("mod_appeal", "Appeal a case",
                                                               "Why should this case be overturned?",
                                                               f"{parts[2]}:{parts[3]}", min_length=5,
                                                               max_length=1500), respond)
                return
            actor = await self.actor(team, user)
            container = body.get("container") or {}
            card_id = f"{container.get('channel_id')}:{container.get('message_ts')}"
            if await ask_first(self, body, parts, team, actor, card_id, respond):  # Kick, raid bulk sanctions
                return
            if parts[:2] == ["mod", "review"] and len(parts) == 4 and parts[2].isdigit():
                result = await self.bot.workflow.decide_review(actor, team, int(parts[2]), parts[3])
                if result.card is not None:
                    await self.bot.desk.update_review(result.card, card_id)
                if not result.ok:
                    await respond(text=result.text, response_type="ephemeral", replace_original=False)
            elif parts[:2] == ["mod", "appealdecide"] and len(parts) == 4 and parts[2].isdigit() \
                    and parts[3] in ("uphold", "overturn"):  # anything else overturned (it was not "uphold")
                result = await self.bot.workflow.decide_appeal(actor, team, int(parts[2]), parts[3] == "uphold")
                if result.card is not None:
                    await self.bot.desk.update_review(result.card, card_id)
            elif parts[:2] == ["mod", "raid"] and len(parts) == 5 and parts[3].isdigit():
                text = await self.bot.workflow.raid_action(actor, team, int(parts[3]), parts[4])
                await respond(text=blocks.said(text), response_type="ephemeral", replace_original=False)
            else:
                raise Refused("Unknown button.")
        except Refused as exc:
            await respond(text=blocks.refusal(exc), response_type="ephemeral", replace_original=False)

    async def _open_modal(self, body: dict[str, Any], view: dict[str, Any], respond: AsyncRespond | None) -> None:
        """Open a modal with the request's ``trigger_id`` (valid for 3 seconds); an expired one gets an answer."""
        try:
            await self.bot.app.client.views_open(trigger_id=body.get("trigger_id", ""), view=view)
        except SlackApiError as exc:
            log.info("views.open failed: %s", describe(exc))
            if respond is not None:
                await respond(text="That took too long to open; please try again.", response_type="ephemeral",
                              replace_original=False)

    # ------------------------------------------------------------------ shortcut and modals
    async def on_report_shortcut(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        """Message shortcut "Report message": ask for the reason in a modal."""
        await ack()
        msg = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id", "")
        meta = _metadata({"team": (body.get("team") or {}).get("id"), "member": msg.get("user"),
                          "channel": channel, "ts": msg.get("ts"), "dm": is_direct_message(body.get("channel"))},
                         excerpt=blocks.unescape(msg.get("text") or ""))  # Slack's entities: as the member typed
        await self._open_modal(body, blocks.text_modal("mod_report", "Report to moderators", "What is wrong?",
                                                       meta), respond)

    async def on_report_submit(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """The report modal was submitted: record it (once per reporter and message) and queue it. A message's
        report names its channel, unless it is a direct message (:func:`is_direct_message`: nobody can be removed
        from it, and an admin's token cannot delete in it); a member's (``/report @member``) names none (its card
        offers no Remove from channel), and the reporter is answered where they typed the command."""
        await ack()
        meta = json.loads(view.get("private_metadata") or "{}")
        user = (body.get("user") or {}).get("id", "")
        reason = (((view.get("state") or {}).get("values") or {}).get("text") or {}).get("value", {}).get("value") or ""
        team = meta.get("team") or self.bot.team_id
        if not meta.get("member"):
            await self.tell(user, "That message has no author to report.")
            return
        message_id = f"{meta['channel']}:{meta['ts']}" if meta.get("ts") else None
        try:
            # a report of a member (/report @member) names no channel, as on Discord: the channel the command was
            # typed in is only where the reporter is answered (a card's Remove from channel acted there)
            in_channel = bool(message_id) and not meta.get("dm")  # a DM is no channel a card can act in
            result = await self.bot.workflow.report(user, team, meta["member"], reason, message_id=message_id,
                                                    channel_id=(meta.get("channel") or None) if in_channel else None,
                                                    excerpt=meta.get("excerpt", ""))
            text = result.text
        except Refused as exc:
            text = blocks.refusal(exc)
        await self.tell(user, text, meta.get("channel") or None)

    async def on_appeal_submit(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        """The appeal modal was submitted: file the appeal of one's own case."""
        await ack()
        team, _, case = (view.get("private_metadata") or "").partition(":")
        user = (body.get("user") or {}).get("id", "")
        text = (((view.get("state") or {}).get("values") or {}).get("text") or {}).get("value", {}).get("value") or ""
        try:
            result = await self.bot.workflow.appeal(user, team, int(case), text)
            answer = result.text
        except (Refused, ValueError) as exc:
            answer = blocks.refusal(exc) if isinstance(exc, Refused) else "That appeal names no case."
        await self.tell(user, answer)

    # ------------------------------------------------------------------ slash commands
    async def on_command(self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond, body: dict[str, Any]) -> None:
        """Every slash command: acknowledge at once, then answer ephemerally through ``respond``."""
        await ack()
        name = command.get("command", "")
        team = command.get("team_id") or self.bot.team_id
        user = command.get("user_id", "")
        args = (command.get("text") or "").split()
        try:
            text = await self._command(name, team, user, args, command, body, respond)
        except Refused as exc:
            text = blocks.refusal(exc)
        if text:
            await respond(text=text, response_type="ephemeral")

    async def _command(self, name: str, team: str, user: str, args: list[str], command: dict[str, Any],
                       body: dict[str, Any], respond: AsyncRespond) -> str:
        wf = self.bot.workflow
        if name == "/report":
            target = _USER.search(command.get("text") or "")
            if target is None:
                return "Usage: /report @member (or use the message shortcut \"Report message\")."
            if target.group(1) == user:
                return "You cannot report yourself."
            meta = json.dumps({"team": team, "member": target.group(1), "channel": command.get("channel_id")})
            await self._open_modal(body, blocks.text_modal("mod_report", "Report to moderators", "What is wrong?",
                                                           meta), respond)
            return ""
        if name == "/appeal":
            number = args[0].lstrip("#") if len(args) == 1 else ""
            if not (number.isascii() and number.isdigit() and len(number) <= 18):  # "²".isdigit(); int("²") raises
                return "Usage: /appeal <case number> (from your notice or /mystatus)."
            await self._open_modal(body, blocks.text_modal("mod_appeal", "Appeal a case",
                                                           "Why should this case be overturned?",
                                                           f"{team}:{args[0].lstrip('#')}", min_length=5,
                                                           max_length=1500), respond)
            return ""
        if name == "/mystatus":
            strikes, appeals = await wf.member_status(team, user)
            lines = strike_lines(strikes, room=blocks.SECTION_MAX, when=lambda at: f"{at:%Y-%m-%d}",
                                 escape=blocks.escape)
            return (f"*Active strikes:* {len(strikes)}{words.worth(len(strikes), sum(s.points for s in strikes))}\n"
                    + "\n".join(lines)
                    + "\n*Open appeals:* " + (", ".join(f"#{a.id} of case #{a.case_number}" for a in appeals)
                                              or "none"))
        if name == "/mydata":
            if args[:1] == ["export"]:
                return await self.send_export(team, user, await wf.export_member(team, user))
            if args[:1] == ["forget"]:
                if args[1:] != ["FORGET"]:
                    return "Nothing was erased: type `/mydata forget FORGET` (capitals) to confirm."
                return (await wf.forget_member(team, user)).text
            return "Usage: /mydata export | /mydata forget FORGET"
        actor = await self.actor(team, user)
        if name == "/modstats":
            lines = []
            for days in (7, 30):
                stats = await wf.stats(actor, team, datetime.now(UTC) - timedelta(days=days))
                rows = [f"{k} `{n}`: flags {st.flags}, dismissed {st.dismissals}, overturned {st.overturned}"
                        for k, table in (("label", stats.per_label), ("rule", stats.per_rule))
                        for n, st in table.items() if st.flags]
                lines.append(f"*Last {days} days:* " + ("\n" + "\n".join(rows) if rows else "nothing flagged"))
            return "\n".join(lines)
        return f"Unknown command {name}."


#: The answer to a command, click or modal that failed on something that is no refusal (Discord's words).
FAILED = "Something went wrong; it was logged."
#: A ``/mydata export`` record up to this many characters (compact JSON) is answered inline: an ephemeral answer
#: holds 3,000 characters of a section's text (Slack's block limit), less the words and code fence around it.
EXPORT_INLINE_CHARS = 2_800
#: Characters of compact JSON per DM page when the file upload is refused (well under Slack's 40,000 per message
#: and its advice to keep a message's text under 4,000).
EXPORT_PAGE_CHARS = 3_500

#: Slack's limit of a view's ``private_metadata``, in characters.
METADATA_MAX = 3000


def is_direct_message(channel: Any) -> bool:
    """Whether an interaction payload's ``channel`` (``{"id", "name"}``) is a direct message: a DM (id ``D…``, name
    ``directmessage``) or a group DM (name ``mpdm-…``; its id may start with ``G`` or ``C``)."""
    if not isinstance(channel, dict):
        return False
    cid, name = str(channel.get("id") or ""), str(channel.get("name") or "")
    return cid.startswith("D") or name == "directmessage" or name.startswith("mpdm-")


def _metadata(fields: dict[str, Any], *, excerpt: str = "") -> str:
    """JSON for a modal's ``private_metadata`` that always fits Slack's 3,000 characters (and so always parses on
    submit): the excerpt is shortened until it fits, whatever its script."""
    while True:
        text = json.dumps({**fields, "excerpt": excerpt}, ensure_ascii=False)
        if len(text) <= METADATA_MAX or not excerpt:
            return text
        excerpt = excerpt[: max(0, len(excerpt) - (len(text) - METADATA_MAX) - 1)]


COMMANDS = ("/report", "/appeal", "/mystatus", "/mydata", "/modstats")


def register(app: AsyncApp, handlers: SlackHandlers) -> None:
    """Attach the listeners to a bolt app."""
    app.event("message")(handlers.on_message)
    app.event("team_join")(handlers.on_join)
    app.event("member_joined_channel")(handlers.on_channel_join)
    app.event("channel_shared")(handlers.on_channel_shared)
    app.event("channel_unshared")(handlers.on_channel_shared)
    app.action(re.compile(r"^mod:"))(handlers.on_action)
    app.shortcut("report_message")(handlers.on_report_shortcut)
    app.view("mod_report")(handlers.on_report_submit)
    app.view("mod_appeal")(handlers.on_appeal_submit)
    for name in COMMANDS:
        app.command(name)(handlers.on_command)
    register_confirm(app, handlers)  # the reason modal of decisions that ask first (bot.adapters.slack.confirm)
    register_status(app, handlers)  # /modstatus (bot.adapters.slack.status)
    register_cases(app, handlers)  # /modcase, /modmember (bot.adapters.slack.cases)
    register_policy(app, handlers)  # /modpolicy, /modsetup and its modal (bot.adapters.slack.policy)
    register_home(app, handlers)  # the App Home tab (bot.adapters.slack.home)
    register_names(app, handlers)  # user_change: members' names (bot.adapters.slack.names)

    @app.error
    async def on_error(error: Exception, body: dict[str, Any], respond: AsyncRespond | None = None) -> None:
        log.error("slack listener failed: %s", type(error).__name__, exc_info=error)
        await handlers.answer_failure(body, respond)
