"""Translate Slack event payloads into core values (the only module that reads Slack's message shapes).

Layer: ``bot.adapters.slack``. Imports ``bot.core`` only (payloads are plain dicts).

Ids: a workspace is a server (``team_id``); a conversation is a channel; a thread reply lives in a virtual channel
``"<channel>:<thread_ts>"`` whose parent is the conversation (so raid and policy overrides of the channel apply to
its threads). A message's id is ``"<channel>:<ts>"``: Slack's ``ts`` is unique only within a conversation, so with
the workspace this is the dedupe key (workspace, channel, ts) the issue asks for. :func:`split` recovers the
conversation and ``ts`` from either.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from bot.adapters.slack.blocks import unescape
from bot.core.models import Attachment, ChannelRef, MemberRef, Mention, Message, ServerRef
from bot.ingest.common import file_words

PLATFORM = "slack"

_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_EVERYONE = re.compile(r"<!(channel|here|everyone)(?:\|[^>]*)?>")


def split(ref: str) -> tuple[str, str | None]:
    """``"C1:1700000000.000100"`` -> ``("C1", "1700000000.000100")``; a plain channel id -> ``(id, None)``."""
    channel, _, ts = ref.partition(":")
    return channel, ts or None


#: A Slack ``ts``: decimal seconds since the epoch, with an optional fraction (``"1700000000.000100"``).
_TS = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,9})?")


def parse_ts(ts: str | None) -> datetime | None:
    """The UTC time of a Slack ``ts`` (``"1700000000.000100"``: decimal seconds since the epoch, as text), or
    ``None`` when it is missing or not one: not decimal digits (``"inf"``, ``"1e20"``, ``"nan"``, ``"0x10"``,
    padded with spaces) or past what a :class:`datetime` holds (year 9999)."""
    if not isinstance(ts, str) or not _TS.fullmatch(ts):
        return None
    try:
        return datetime.fromtimestamp(float(ts), UTC)
    except (ValueError, OverflowError, OSError):  # out of datetime's or the platform's time_t range
        return None


def ts_time(ts: str | None) -> datetime:
    """The UTC time of a Slack ``ts`` (:func:`parse_ts`); now when missing or malformed (never raises)."""
    return parse_ts(ts) or datetime.now(UTC)


def channel_ref(channel: str, thread_ts: str | None, ts: str | None, name: str = "") -> ChannelRef:
    """The channel of a message: the conversation, or for a thread reply its virtual thread channel."""
    if thread_ts and thread_ts != ts:
        return ChannelRef(id=f"{channel}:{thread_ts}", name=name, parent_id=channel, is_thread=True)
    return ChannelRef(id=channel, name=name)


def member_ref(user_id: str, info: dict[str, Any] | None, first_seen: datetime | None, *,
               home_team: str = "", named_roles: tuple[str, ...] = ()) -> MemberRef:
    """The author. Slack gives no account age: ``joined_at`` is the first time the workspace was seen to have this
    member (a ``team_join`` or their first message), which the new-member and raid rules use. ``roles`` carries
    ``"owner"``/``"admin"`` from ``users.info``, only for a member of ``home_team`` (the bot's workspace): a Slack
    Connect member's flags are their own workspace's (an admin THERE is a plain member here, as for rights); then
    ``named_roles``, the user groups (``S…``) and member ids the policy names as roles that stand for this author
    (:meth:`bot.adapters.slack.run.SlackBot.author_roles`)."""
    info = info or {}
    foreign = bool(home_team and info.get("team_id") and info["team_id"] != home_team)
    roles = () if foreign else tuple(r for r, flag in (("owner", "is_owner"), ("admin", "is_admin"))
                                     if info.get(flag))
    roles += tuple(r for r in named_roles if r not in roles)
    name = (info.get("profile") or {}).get("display_name") or info.get("real_name") or info.get("name") or ""
    return MemberRef(id=user_id, name=name, joined_at=first_seen, created_at=None, roles=roles,
                     is_bot=bool(info.get("is_bot")))


#: Message subtypes that carry a member's (or an integration's) words to judge.
JUDGED_SUBTYPES = (None, "file_share", "thread_broadcast", "bot_message", "me_message")


def deleted_ts(event: dict[str, Any]) -> str | None:
    """The ``ts`` of the message a ``message`` event says was deleted, else ``None``: a ``message_deleted``, or a
    ``message_changed`` to Slackbot's ``tombstone`` (how Slack deletes a message that has thread replies: the
    thread stays under "This message was deleted.")."""
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        return event.get("deleted_ts") or None
    msg = event.get("message")
    if subtype == "message_changed" and isinstance(msg, dict) and msg.get("subtype") == "tombstone":
        return msg.get("ts") or None
    return None


def message_fields(event: dict[str, Any]) -> dict[str, Any] | None:
    """The message an event carries, as ``{user, text, ts, thread_ts, edited_ts, files, bot}``, or ``None`` when
    it carries none to judge (a deletion, a join notice, an edit of a message's metadata only)."""
    subtype = event.get("subtype")
    if subtype == "message_changed":
        msg = event.get("message") or {}
        prev = event.get("previous_message") or {}
        if not msg.get("user") or msg.get("text") == prev.get("text") or msg.get("subtype") not in JUDGED_SUBTYPES:
            return None  # unchanged words, or no longer a message to judge (a tombstone: see deleted_ts)
        edited = (msg.get("edited") or {}).get("ts") or event.get("event_ts") or event.get("ts")
        return {"user": msg["user"], "text": msg.get("text") or "", "ts": msg.get("ts"),
                "thread_ts": msg.get("thread_ts"), "edited_ts": edited, "files": msg.get("files") or [],
                "bot": bool(msg.get("bot_id"))}
    if subtype not in JUDGED_SUBTYPES:
        return None
    user = event.get("user") or event.get("bot_id")
    if not user:
        return None
    return {"user": user, "text": event.get("text") or "", "ts": event.get("ts"), "thread_ts": event.get("thread_ts"),
            "edited_ts": None, "files": event.get("files") or [],
            "bot": subtype == "bot_message" or bool(event.get("bot_id"))}


def to_core(team_id: str, event: dict[str, Any], fields: dict[str, Any], *, author: MemberRef,
            channel_name: str = "") -> Message:
    """A core :class:`Message` from a ``message`` event (see :func:`message_fields`). Its text is what the member
    typed, then the shared files' titles and names (:func:`file_words`), so a file share is judged on all of them.

    Raises:
        ValueError: the event has no channel or ``ts``, or its ``ts`` is not a Slack time (:func:`parse_ts`:
            ``"inf"``, ``"1e20"``...); a malformed ``edited_ts`` is read as now.
    """
    channel = event.get("channel")
    ts = fields.get("ts")
    if not channel or not ts:
        raise ValueError("message event without channel or ts")
    created = parse_ts(ts)
    if created is None:
        raise ValueError("message event whose ts is not a Slack time")
    text = fields["text"]
    files = [f for f in fields.get("files") or [] if isinstance(f, dict)]
    mentions = tuple(Mention(id=u) for u in _MENTION.findall(text))  # real markup, read before unescaping
    everyone = bool(_EVERYONE.search(text))
    text = unescape(text)  # what the member typed: Slack sends &, <, > as &amp; &lt; &gt;
    shared = file_words(files)
    if shared:
        text = f"{text}\n{shared}".strip()
    return Message(
        server=ServerRef(PLATFORM, team_id),
        channel=channel_ref(channel, fields.get("thread_ts"), ts, channel_name),
        author=author,
        id=f"{channel}:{ts}",
        text=text,
        created_at=created,
        edited_at=ts_time(fields["edited_ts"]) if fields.get("edited_ts") else None,
        reply_to=f"{channel}:{fields['thread_ts']}" if fields.get("thread_ts") and fields["thread_ts"] != ts else None,
        attachments=tuple(Attachment(f.get("url_private") or "", f.get("name") or "") for f in files),
        mentions=mentions,
        mentions_everyone=everyone,
    )
