"""What the mod log can store of a message: every string as UTF-8, so none may hold a lone UTF-16 surrogate
(JSON's ``"\\ud800"``, which Python decodes to a ``str`` that cannot be encoded), and, so that SQLite and
PostgreSQL store the same, none may hold U+0000 (NUL: JSON's ``"\\u0000"``, a NUL byte in a CSV; PostgreSQL's
``TEXT`` cannot hold it, SQLite can).

A text or a name with either is shown with U+FFFD in its place (:func:`storable`, the one change ever made to
message text, as the importers do; U+FFFD rather than a space or nothing, so words on either side are not joined
or split differently and the card shows that something was there); an id with either (:func:`unstorable_id`)
cannot be changed without risking two messages or members becoming one, so that message is refused: the importers
report and skip it, the moderation service fails it alone. What a person types (a moderator's reason or note, a
member's report or appeal) is stored the same way: the workflow passes it through :func:`storable_text`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.core.models import Attachment, Message

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def encodable(text: str | None) -> bool:
    """True when ``text`` (``None``: nothing) can be encoded as UTF-8."""
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _problem(text: str | None) -> str | None:
    """Why ``text`` cannot be stored as it is (``"a lone UTF-16 surrogate"``, ``"a NUL character"``), or ``None``."""
    if not encodable(text):
        return "a lone UTF-16 surrogate"
    if "\x00" in (text or ""):
        return "a NUL character"
    return None


def unstorable_id(m: Message) -> str | None:
    """Why an id of ``m`` cannot be stored, naming the first such id and what it holds (``"author id holds a lone
    UTF-16 surrogate"``, ``"message id holds a NUL character"``; ids: ``message id``, ``server id``, ``platform``,
    ``channel id``, ``channel parent id``, ``category id``, ``author id``, ``reply_to``, ``role id``, ``mentioned
    member id``), or ``None`` when every id can be stored."""
    ids = [("message id", m.id), ("server id", m.server.id), ("platform", m.server.platform),
           ("channel id", m.channel.id), ("channel parent id", m.channel.parent_id),
           ("category id", m.channel.category_id), ("author id", m.author.id), ("reply_to", m.reply_to),
           *(("role id", r) for r in m.author.roles), *(("mentioned member id", x.id) for x in m.mentions)]
    if _problem("".join(v or "" for _, v in ids)) is None:
        return None
    return next(f"{name} holds {why}" for name, v in ids if (why := _problem(v)) is not None)


def storable_text(text: str) -> str:
    """``text`` with each lone surrogate and each NUL replaced by U+FFFD (``text`` itself when it has none)."""
    return text if _problem(text) is None else _UNSTORABLE.sub("\ufffd", text)


def storable(m: Message) -> Message:
    """``m`` itself when its text, names and attachments can be stored, else a copy with each lone surrogate and
    each NUL in them replaced by U+FFFD (:func:`storable_text`). Ids are left as they are (:func:`unstorable_id`)."""
    fields = [m.text, m.server.name, m.channel.name, m.author.name,
              *(t for a in m.attachments for t in (a.url, a.filename))]
    if _problem("".join(fields)) is None:
        return m
    return replace(m, text=storable_text(m.text), server=replace(m.server, name=storable_text(m.server.name)),
                   channel=replace(m.channel, name=storable_text(m.channel.name)),
                   author=replace(m.author, name=storable_text(m.author.name)),
                   attachments=tuple(Attachment(storable_text(a.url), storable_text(a.filename))
                                     for a in m.attachments))
