"""Send a long JSON document whole to a member's direct messages with the bot: as a file, or in pages when Slack
refuses the upload. Used by ``/mydata export`` (:mod:`bot.adapters.slack.app`) and ``/modpolicy show``
(:mod:`bot.adapters.slack.policy`); each words its own answer from the :class:`Sent` outcome.

Layer: ``bot.adapters.slack``. The file goes up as ``files_upload_v2`` does it (``files.getUploadURLExternal``,
the bytes to the upload URL, ``files.completeUploadExternal`` sharing it in the DM; scope ``files:write``); when
that is refused (no scope, a failed upload) the ``pages`` text is posted in numbered messages of at most
``page_chars`` characters whose code blocks join into the JSON. Nothing is ever cut.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import escape
from bot.adapters.slack.enforcer import describe

log = logging.getLogger(__name__)

#: Characters of JSON per DM page (well under Slack's 40,000 per message and its advice of 4,000).
PAGE_CHARS = 3_500


@dataclass(frozen=True, slots=True)
class Sent:
    """What reached the DM: ``how`` is ``"file"``, ``"pages"`` (all ``parts`` of them), ``"partial"`` (``sent`` of
    ``parts`` pages) or ``"no_dm"`` (the DM could not be opened; nothing was sent)."""

    how: Literal["file", "pages", "partial", "no_dm"]
    parts: int = 0
    sent: int = 0


def escaped_pages(text: str, page_chars: int) -> list[str]:
    """``text`` in pages for message text: each escaped for Slack (``&``, ``<``, ``>``: what the member sees, and
    copies, is ``text``; a record's ``<!channel>`` neither pings nor turns into a link) and at most ``page_chars``
    characters once escaped. Unescaped and joined, the pages are ``text``."""
    pages: list[str] = []
    current: list[str] = []
    size = 0
    for ch in text:
        piece = escape(ch)
        if size + len(piece) > page_chars and current:
            pages.append("".join(current))
            current, size = [], 0
        current.append(piece)
        size += len(piece)
    if current:
        pages.append("".join(current))
    return pages


async def send_json_to_dm(client: AsyncWebClient, user: str, *, filename: str, content: str, pages: str, label: str,
                          comment: str, page_chars: int = PAGE_CHARS) -> Sent:
    """Send ``content`` (the file's text) to ``user``'s DM as ``filename``; when the upload is refused, ``pages``
    (the same JSON, compact if wished) in numbered pages headed ``<label>, part n of N``, escaped for Slack's
    message text (:func:`escaped_pages`), each one ``` block: a backtick in the JSON is written ``\\u0060`` (the
    same JSON value) so that a ``` in a string cannot close the block.

    Args:
        label: What each page calls the document (``Your record``, ```policy-T1.json```).
        comment: The message shared with the file.
    """
    try:
        dm = (await client.conversations_open(users=user))["channel"]["id"]
    except SlackApiError as exc:
        log.warning("could not open a DM for %s (%s): %s", user, filename, describe(exc))
        return Sent("no_dm")
    try:
        await client.files_upload_v2(channel=dm, content=content, filename=filename, title=filename,
                                     initial_comment=comment)
        return Sent("file", 1, 1)
    except (SlackApiError, SlackRequestError) as exc:
        why = describe(exc) if isinstance(exc, SlackApiError) else str(exc)
        log.warning("upload of %s for %s refused (%s): sending it in pages", filename, user, why)
    chunks = escaped_pages(pages.replace("`", "\\u0060"), page_chars)  # JSON: the same value, no ``` to close a page
    for n, chunk in enumerate(chunks, 1):
        try:
            await client.chat_postMessage(channel=dm, text=f"{label}, part {n} of {len(chunks)} (join the parts in "
                                          f"order for the JSON):\n```{chunk}```")
        except SlackApiError as exc:
            log.warning("page %d of %s for %s failed: %s", n, filename, user, describe(exc))
            return Sent("partial", len(chunks), n - 1)
    return Sent("pages", len(chunks), len(chunks))
