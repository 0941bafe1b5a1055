"""The policy on Slack: ``/modpolicy show|set|reset`` and the ``/modsetup`` modal, the twins of Discord's
``/policy`` and ``/modbot setup``.

Layer: ``bot.adapters.slack``. :func:`register_policy` is called from :func:`bot.adapters.slack.app.register`.
The show/set/reset and setup logic is :mod:`bot.workflow.policy_admin`'s, shared with Discord; this module reads
Slack's input, checks what only Slack can tell, and renders the answer:

* ``/modpolicy show [key]``: one small key inline; the whole effective policy (about 5,000 characters, past a
  section's 3,000) is never cut: it is uploaded as ``policy-<team>.json`` to the moderator's direct messages with
  the bot (``files.getUploadURLExternal`` + ``files.completeUploadExternal``, as ``files_upload_v2`` does; scope
  ``files:write``), or, when the upload is refused, sent there in numbered pages that join into the JSON
  (:mod:`bot.adapters.slack.files`, shared with ``/mydata export``).
* ``/modsetup`` (workspace admins): a modal with ``conversations_select`` menus for the review and mod-log channels,
  a menu of the workspace's user groups (``usergroups.list``) and a ``multi_users_select`` for moderators. On
  submit each picked channel is checked with ``conversations.info`` as the bot: a private channel it was not
  invited to is invisible to it (``channel_not_found``), it can post only in channels it is a member of
  (``is_member``; the app has no ``chat:write.public``), and a Slack Connect channel (shared with another
  organisation) is refused. A problem keeps the modal open with the reason under the
  field (``response_action: errors``) and nothing is written; otherwise the modal closes and the workflow writes
  the overrides, posts the setup to the mod log and the admin is told what was set.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import blocks
from bot.adapters.slack.enforcer import describe
from bot.adapters.slack.files import send_json_to_dm
from bot.adapters.slack.parts import SlackBotParts, SlackListeners
from bot.adapters.slack.translate import PLATFORM
from bot.workflow.authz import Actor, Refused
from bot.workflow.policy_admin import (
    RoleLookup,
    RoleWords,
    SetupChange,
    apply_setup,
    authorize_change,
    change_policy,
    parse_value,
    show_policy,
    with_moderators,
)

log = logging.getLogger(__name__)

#: The slash commands this module listens to (also in ``config/slack-app-manifest.yml``).
POLICY_COMMANDS = ("/modpolicy", "/modsetup")
#: Longest wait for the user groups before opening the setup modal, in seconds (a ``trigger_id`` lives 3 s).
GROUPS_LOOKUP_S = 1.0
#: A Slack channel id (public ``C…``, private ``G…``): ``/modpolicy set`` of a channel key checks such a value.
CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{2,}$")
#: A member's id (``U…``, ``W…`` on Enterprise Grid) and a user group's (``S…``).
USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
GROUP_ID = re.compile(r"^S[A-Z0-9]{2,}$")
#: Longest wait for the user groups when ``/modpolicy set`` names one, in seconds (the command is acknowledged
#: already; its ``response_url`` lives 30 minutes).
POLICY_GROUPS_LOOKUP_S = 10.0
#: How Slack writes what the roles keys hold (``server.moderator_roles``: user groups and members): a user-group
#: mention ``<!subteam^S1|@mods>`` and a member's ``<@U1>`` / ``<@U1|ann>`` in a command's text.
SLACK_ROLES = RoleWords(mention=re.compile(r"<(?:!subteam\^|@)([SUW][A-Z0-9]+)(?:\|[^>]*)?>"), noun="user group",
                        many="user groups", missing="user group or member", place="workspace",
                        takes="user groups and members: @handle or a user group's name, mentions or ids")
#: The setup modal's ``callback_id``.
SETUP_VIEW = "mod_setup"
#: Seconds the setup submission's checks (the submitter's rights, the picked channels) may take before the ack: Slack
#: waits 3 s for it, and a rate-limited read would otherwise hold the ack while the SDK waits Retry-After out.
SETUP_CHECK_S = 2.0
#: Longest JSON of one key shown inline: a code block inside a section's 3,000 characters.
INLINE_POLICY_MAX = 2_900
#: Slack allows at most 100 options in a static select.
MAX_OPTIONS = 100
POLICY_USAGE = "Usage: /modpolicy show [key] | set <key> <value> | reset <key>"


async def send_policy_file(client: AsyncWebClient, user: str, filename: str, data: bytes, caption: str,
                           notes: str = "") -> str:
    """Send the policy JSON whole to ``user``'s DM with the bot (a file; pages when the upload is refused);
    returns the answer to show in the channel. ``notes`` (lines after the caption: tiers switched off) go with
    the file and after the answer."""
    text = data.decode("utf-8")
    sent = await send_json_to_dm(client, user, filename=filename, content=text, pages=text, label=f"`{filename}`",
                                 comment=caption + notes)
    if sent.how == "no_dm":
        return "The policy could not be sent: the bot cannot open a direct message with you."
    if sent.how == "partial":
        return f"The policy could not be sent whole ({sent.sent} of {sent.parts} parts reached your direct messages)."
    return f"{caption[:-1]} was sent to your direct messages " + (
        f"as `{filename}`." if sent.how == "file" else f"in {sent.parts} parts.") + notes


async def policy_command(handlers: SlackListeners, team: str, user: str, args: list[str]) -> str:
    """``/modpolicy show [key] | set <key> <value> | reset <key>``: the answer's text.

    Raises:
        Refused: not allowed, an unknown key, an invalid value (nothing is stored).
    """
    bot = handlers.bot
    actor = await handlers.actor(team, user)
    sub = args[0].lower() if args else ""
    key = blocks.unescape(args[1]) if len(args) > 1 else None  # Slack sends & < > as entities: the key as typed
    if sub == "show" and len(args) <= 2:
        shown = show_policy(actor, await bot.policies.get(PLATFORM, team), team, key,
                            inline_max=INLINE_POLICY_MAX, place="workspace", fence="```", code=blocks.code_json,
                            base=bot.policies.base)
        if shown.inline is not None:
            return shown.inline  # JSON in one code block, escaped: nothing in it is markup
        return await send_policy_file(bot.app.client, user, shown.filename, shown.data, shown.caption, shown.notes)
    if sub == "set" and len(args) >= 3:
        async def check_channel(channel: str) -> str | None:  # as /modsetup checks its picks, as the bot
            return await channel_problem(bot.app.client, channel) if CHANNEL_ID.match(channel) else None

        return await change_policy(bot.policies, bot.desk, PLATFORM, actor, team, key or "",
                                   parse_value(blocks.unescape(" ".join(args[2:]))), check_channel=check_channel,
                                   lookup_role=role_lookup(bot), role_words=SLACK_ROLES, escape=blocks.escape)
    if sub == "reset" and len(args) == 2:
        return await change_policy(bot.policies, bot.desk, PLATFORM, actor, team, key or "", None,
                                   escape=blocks.escape)
    return POLICY_USAGE


def _channel_select(block_id: str, label: str, hint: str, current: str | None) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "conversations_select", "action_id": "channel",
                               "placeholder": {"type": "plain_text", "text": "Pick a channel"},
                               "filter": {"include": ["public", "private"], "exclude_bot_users": True,
                                          "exclude_external_shared_channels": True}}
    if current:
        element["initial_conversation"] = current
    return {"type": "input", "block_id": block_id, "optional": True, "label": {"type": "plain_text", "text": label},
            "hint": {"type": "plain_text", "text": hint}, "element": element}


def setup_view(policy: Any, groups: list[dict[str, Any]], meta: str) -> dict[str, Any]:
    """The ``/modsetup`` modal: review channel, mod-log channel, a moderators' user group (when the workspace has
    any) and moderator users; the current channels are preselected."""
    body = [_channel_select("review", "Review channel", "Where review cards are posted (moderators only). Invite "
                            "@modbot there first.", policy.server.review_channel),
            _channel_select("modlog", "Mod-log channel", "Where cases, raid alerts and failed actions are logged.",
                            policy.server.mod_log_channel)]
    if groups:
        body.append({"type": "input", "block_id": "group", "optional": True,
                     "label": {"type": "plain_text", "text": "Moderators' user group"},
                     "hint": {"type": "plain_text", "text": "Its members may moderate (added to the list)."},
                     "element": {"type": "static_select", "action_id": "group",
                                 "placeholder": {"type": "plain_text", "text": "Pick a user group"},
                                 "options": [{"text": {"type": "plain_text", "text": blocks.cut(
                                     f"@{g.get('handle') or g['id']}", 75)}, "value": g["id"]}
                                     for g in groups[:MAX_OPTIONS]]}})
    body.append({"type": "input", "block_id": "users", "optional": True,
                 "label": {"type": "plain_text", "text": "Moderators"},
                 "hint": {"type": "plain_text", "text": "These members may moderate (added to the list)."},
                 "element": {"type": "multi_users_select", "action_id": "users",
                             "placeholder": {"type": "plain_text", "text": "Pick members"}}})
    return {"type": "modal", "callback_id": SETUP_VIEW, "private_metadata": meta,
            "title": {"type": "plain_text", "text": "Set up modbot"},
            "submit": {"type": "plain_text", "text": "Save"}, "close": {"type": "plain_text", "text": "Cancel"},
            "blocks": body}


async def list_groups(client: AsyncWebClient, timeout_s: float) -> list[dict[str, Any]]:
    """The workspace's user groups that are not deleted (``usergroups.list``, scope ``usergroups:read``), waiting
    at most ``timeout_s`` seconds (a rate-limited answer's ``Retry-After`` included).

    Raises:
        SlackApiError: Slack refused (no scope, a plan without user groups).
        TimeoutError: no answer in time.
    """
    listed = await asyncio.wait_for(client.usergroups_list(), timeout_s)
    return [g for g in listed.get("usergroups") or [] if not g.get("date_delete")]


def role_lookup(bot: SlackBotParts) -> RoleLookup:
    """``/modpolicy set``'s reading of a roles key (:func:`bot.workflow.policy_admin.role_ids`): a member's id is
    theirs when Slack knows them (``users.info``); a user group's id, ``@handle``, handle or name (any case) is
    that group's, from the user groups ``/modsetup`` offers (:func:`list_groups`, read once per command).

    The returned lookup raises :class:`Refused` when Slack does not list the user groups."""
    groups: list[dict[str, Any]] | None = None

    async def lookup(ref: str) -> list[str]:
        nonlocal groups
        if USER_ID.match(ref):
            return [ref] if await bot.enforcer.user_info(ref) is not None else []
        if groups is None:
            try:
                groups = await list_groups(bot.app.client, POLICY_GROUPS_LOOKUP_S)
            except SlackApiError as exc:
                raise Refused(f"Slack would not list this workspace's user groups ({describe(exc)}). Nothing was "
                              "changed.") from None
            except TimeoutError:
                raise Refused(f"Slack did not list this workspace's user groups within {POLICY_GROUPS_LOOKUP_S:.0f} "
                              "seconds; please try again. Nothing was changed.") from None
        if GROUP_ID.match(ref):
            return [g["id"] for g in groups if g.get("id") == ref]
        wanted = ref.removeprefix("@").casefold()
        return [g["id"] for g in groups
                if wanted in (str(g.get("handle") or "").casefold(), str(g.get("name") or "").casefold())]

    return lookup


async def open_setup(handlers: SlackListeners, team: str, user: str, command: dict[str, Any], body: dict[str, Any],
                     respond: AsyncRespond) -> str:
    """``/modsetup``: refuse anyone who may not change the policy, else open the modal (an expired
    ``trigger_id`` gets "try again"). Returns the text to answer ("" when the modal opened)."""
    bot = handlers.bot
    authorize_change(await handlers.actor(team, user))
    try:  # bounded: a rate-limited lookup (429, Retry-After) must not spend the trigger_id's 3 seconds
        groups = await list_groups(bot.app.client, GROUPS_LOOKUP_S)
    except SlackApiError as exc:  # no usergroups:read, or a plan without user groups: offer users only
        log.info("usergroups.list failed: %s", describe(exc))
        groups = []
    except TimeoutError:
        log.info("usergroups.list took over %.1f s: the setup offers users only", GROUPS_LOOKUP_S)
        groups = []
    meta = json.dumps({"team": team, "channel": command.get("channel_id") or ""})
    await handlers._open_modal(body, setup_view(await bot.policies.get(PLATFORM, team), groups, meta), respond)
    return ""


async def channel_problem(client: AsyncWebClient, channel: str) -> str | None:
    """Why the bot cannot (or must not) post in ``channel`` (as ``conversations.info`` tells the bot), or ``None``.

    A Slack Connect channel (``is_ext_shared``, or ``is_pending_ext_shared`` while the other organisation has not
    accepted yet) is refused: the review and mod-log channels carry members' flagged words, scores and the
    moderators' decisions, which the other organisation's people in it would read."""
    try:
        info = (await client.conversations_info(channel=channel))["channel"]
    except SlackApiError as exc:
        if exc.response.get("error") == "channel_not_found":
            return "the bot cannot see this channel: invite @modbot to it (`/invite @modbot`)"
        return f"Slack would not say whether the bot can post here ({describe(exc)})"
    if info.get("is_archived"):
        return "this channel is archived"
    if info.get("is_im") or info.get("is_mpim"):
        return "pick a channel, not a direct message"
    if info.get("is_ext_shared") or info.get("is_pending_ext_shared"):
        return ("this channel is shared with another organisation (Slack Connect): its people would read the "
                "moderators' cards and the mod log; pick a channel of this workspace only")
    if not info.get("is_member"):
        return "the bot is not in this channel: invite @modbot to it (`/invite @modbot`)"
    return None


def _picked(values: dict[str, Any], block: str, action: str, field: str) -> Any:
    return ((values.get(block) or {}).get(action) or {}).get(field)


def register_policy(app: AsyncApp, handlers: SlackListeners) -> None:
    """Attach ``/modpolicy``, ``/modsetup`` and the setup modal's submission to a bolt app (``handlers``: the
    app's :class:`SlackHandlers`)."""

    async def on_command(ack: Any, command: dict[str, Any], respond: Any, body: dict[str, Any]) -> None:
        await ack()
        team = command.get("team_id") or handlers.bot.team_id
        user = command.get("user_id", "")
        try:
            if command.get("command") == "/modsetup":
                text = await open_setup(handlers, team, user, command, body, respond)
            else:
                text = await policy_command(handlers, team, user, (command.get("text") or "").split())
        except Refused as exc:
            text = blocks.refusal(exc)
        if text:
            await respond(text=text, response_type="ephemeral")

    async def on_setup_submit(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        """Check the submitter's rights again and the picks as the bot (a few quick Web API reads, inside Slack's 3
        seconds), keep the modal open with the reasons when a pick is wrong, else close it, write the setup and
        tell the admin."""
        bot = handlers.bot
        meta = json.loads(view.get("private_metadata") or "{}")
        team = meta.get("team") or bot.team_id
        user = (body.get("user") or {}).get("id", "")
        values = (view.get("state") or {}).get("values") or {}
        review = _picked(values, "review", "channel", "selected_conversation")
        modlog = _picked(values, "modlog", "channel", "selected_conversation")
        group = (_picked(values, "group", "group", "selected_option") or {}).get("value")
        users = list(_picked(values, "users", "users", "selected_users") or [])


        async def checks() -> tuple[Actor, dict[str, str]]:
            actor = await handlers.actor(team, user)
            try:
                authorize_change(actor)
            except Refused:
                return actor, {}  # refused below, without reading the channels
            return actor, {block: why for block, channel in (("review", review), ("modlog", modlog)) if channel
                           and (why := await channel_problem(bot.app.client, channel))}

        try:
            # Slack needs the ack within 3 s: a rate-limited read (the SDK waits Retry-After out) must not hold it
            actor, errors = await asyncio.wait_for(checks(), SETUP_CHECK_S)
        except TimeoutError:
            await ack(response_action="errors",
                      errors={"review": "Slack was too slow to answer the bot's checks; press Save again."})
            return
        try:
            authorize_change(actor)  # again on submit (rights change; a submission can be forged)
        except Refused as exc:
            await ack()
            await handlers.tell(user, blocks.refusal(exc), meta.get("channel") or None)
            return
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        policy = await bot.policies.get(PLATFORM, team)
        changes = []
        if review:
            changes.append(SetupChange("server.review_channel", review, f"review channel: <#{review}>"))
        if modlog:
            changes.append(SetupChange("server.mod_log_channel", modlog, f"mod-log channel: <#{modlog}>"))
        mods = [*([group] if group else []), *users]
        if mods:
            shown = ", ".join(f"<!subteam^{m}>" if m.startswith("S") else f"<@{m}>" for m in mods)
            changes.append(SetupChange("server.moderator_roles", with_moderators(policy, mods),
                                       f"moderators: {shown}"))
        try:
            text = await apply_setup(bot.policies, bot.desk, PLATFORM, actor, team, changes)
        except Refused as exc:
            text = blocks.refusal(exc)
        await handlers.tell(user, text, meta.get("channel") or None)

    for name in POLICY_COMMANDS:
        app.command(name)(on_command)
    app.view(SETUP_VIEW)(on_setup_submit)
