"""What the mod log can store of a message: every string as UTF-8, so none may hold a lone UTF-16 surrogate
(JSON's ``"\\ud800"``, which Python decodes to a ``str`` that cannot be encoded).

A text or a name with one is shown with U+FFFD in its place (:func:`storable`, the one change ever made to message
text, as the importers do); an id with one (:func:`unstorable_id`) cannot be changed without risking two messages
or members becoming one, so that message is refused: the importers report and skip it, the moderation service
fails it alone.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.core.models import Attachment, Message

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def encodable(text: str | None) -> bool:
    """True when ``text`` (``None``: nothing) can be encoded as UTF-8."""
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unstorable_id(m: Message) -> str | None:
    """The first id of ``m`` that holds a lone surrogate, named (``"message id"``, ``"author id"``, ``"channel id"``,
    ``"server id"``, ``"reply_to"``, ``"role id"``...), or ``None`` when every id can be stored."""
    ids = [("message id", m.id), ("server id", m.server.id), ("platform", m.server.platform),
           ("channel id", m.channel.id), ("channel parent id", m.channel.parent_id),
           ("category id", m.channel.category_id), ("author id", m.author.id), ("reply_to", m.reply_to),
           *(("role id", r) for r in m.author.roles), *(("mentioned member id", x.id) for x in m.mentions)]
    if encodable("".join(v or "" for _, v in ids)):
        return None
    return next(name for name, v in ids if not encodable(v))


def _clean(text: str) -> str:
    return text if encodable(text) else _LONE_SURROGATE.sub("\ufffd", text)


def storable(m: Message) -> Message:
    """``m`` itself when its text, names and attachments can be stored, else a copy with each lone surrogate in them
    replaced by U+FFFD. Ids are left as they are (:func:`unstorable_id`)."""
    fields = [m.text, m.server.name, m.channel.name, m.author.name,
              *(t for a in m.attachments for t in (a.url, a.filename))]
    if encodable("".join(fields)):
        return m
    return replace(m, text=_clean(m.text), server=replace(m.server, name=_clean(m.server.name)),
                   channel=replace(m.channel, name=_clean(m.channel.name)),
                   author=replace(m.author, name=_clean(m.author.name)),
                   attachments=tuple(Attachment(_clean(a.url), _clean(a.filename)) for a in m.attachments))
