"""Translate discord.py objects into core values (the only module that reads discord.py message shapes).

Layer: ``bot.adapters.discord``. Imports discord.py and ``bot.core``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import discord

from bot.core.models import Attachment, ChannelRef, MemberRef, Mention, Message, ServerRef

log = logging.getLogger(__name__)

PLATFORM = "discord"


def _utc(dt: datetime | None) -> datetime | None:
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def server_ref(guild: discord.Guild | discord.Object) -> ServerRef:
    """The core :class:`ServerRef` of a guild."""
    return ServerRef(PLATFORM, str(guild.id), getattr(guild, "name", "") or "")


def channel_ref(channel: Any) -> ChannelRef:
    """The core :class:`ChannelRef` of a text channel or thread (threads carry their parent and its category)."""
    is_thread = isinstance(channel, discord.Thread)
    parent = getattr(channel, "parent", None) if is_thread else None
    category_id = getattr(parent or channel, "category_id", None)
    return ChannelRef(
        id=str(channel.id),
        name=getattr(channel, "name", "") or "",
        parent_id=str(channel.parent_id) if is_thread and channel.parent_id else None,
        category_id=str(category_id) if category_id else None,
        is_thread=is_thread,
    )


def member_ref(user: discord.Member | discord.User | discord.abc.User) -> MemberRef:
    """The core :class:`MemberRef`: ``created_at`` from the snowflake, ``joined_at`` and role ids when a Member.

    ``@everyone`` (whose id equals the guild id) is left out of ``roles``.
    """
    roles: tuple[str, ...] = ()
    joined = None
    if isinstance(user, discord.Member):
        roles = tuple(str(r.id) for r in user.roles if r.id != user.guild.id)
        joined = _utc(user.joined_at)
    return MemberRef(
        id=str(user.id),
        name=user.display_name,
        joined_at=joined,
        created_at=discord.utils.snowflake_time(user.id),
        roles=roles,
        is_bot=bool(user.bot),
    )


def mentions(message: discord.Message) -> tuple[Mention, ...]:
    """Users mentioned; the implicit ping of a reply is flagged ``is_reply_ping`` (it does not count as spam)."""
    reply_author: int | None = None
    ref = message.reference
    resolved = ref.resolved if ref is not None else None
    if isinstance(resolved, discord.Message):
        reply_author = resolved.author.id
    explicit = set(message.raw_mentions)
    out = []
    for user in message.mentions:
        implicit = user.id == reply_author and user.id not in explicit
        out.append(Mention(id=str(user.id), is_bot=bool(user.bot), is_reply_ping=implicit))
    return tuple(out)


def to_core(message: discord.Message, *, edited: bool = False) -> Message:
    """Translate a guild message into a core :class:`Message`.

    Args:
        message: A message from a guild text channel or thread (``message.guild`` must be set).
        edited: True for an edit event: ``edited_at`` is the edit time (falls back to now, UTC).

    Raises:
        ValueError: the message is not from a guild.
    """
    if message.guild is None:
        raise ValueError("not a guild message")
    edited_at = None
    if edited:
        edited_at = _utc(message.edited_at) or datetime.now(UTC)
    ref = message.reference
    return Message(
        server=server_ref(message.guild),
        channel=channel_ref(message.channel),
        author=member_ref(message.author),
        id=str(message.id),
        text=message.content or "",
        created_at=_utc(message.created_at) or datetime.now(UTC),
        edited_at=edited_at,
        reply_to=str(ref.message_id) if ref is not None and ref.message_id else None,
        attachments=tuple(Attachment(a.url, a.filename) for a in message.attachments),
        mentions=mentions(message),
        mentions_everyone=bool(message.mention_everyone),
    )
