"""The mention-spam rule: too many pings in one message (``[rules.mention_spam]``).

Layer: ``bot.core``. Stateless and deterministic.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from bot.core.models import Message, RuleHit
from bot.core.rules._util import scaled_limit
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import MentionSpamSettings, RulesSettings


def mention_occurrences(text: str, user_id: str) -> int:
    """How often ``text`` pings ``user_id``: Discord ``<@id>`` / ``<@!id>`` and Slack ``<@id>`` / ``<@id|name>``."""
    if not user_id or "<@" not in text:
        return 0
    return (
        text.count(f"<@{user_id}>")
        + text.count(f"<@!{user_id}>")
        + text.count(f"<@{user_id}|")
    )


class MentionSpamRule:
    """``mention_spam``: more mentions than ``max_mentions`` (multiplied by ``raid.threshold_factor`` in raid mode);
    ``detail`` ``"<count> mentions (limit <limit>)"``."""

    name: ClassVar[str] = "mention_spam"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT})
    settings_model: ClassVar[type[BaseModel]] = MentionSpamSettings
    hit_names: ClassVar[tuple[str, ...]] = ("mention_spam",)

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings.mention_spam
        self._raid_factor = settings.raid.threshold_factor

    def mention_count(self, message: Message, may_mention_everyone: bool = False) -> int:
        """Mentions that count toward mention spam.

        Every ping counts: a user mentioned six times in one message counts six (the occurrences of the user's
        mention token in the text: Discord ``<@id>`` / ``<@!id>``, Slack ``<@id>`` or ``<@id|name>``; at least one
        per mentioned user, for exports whose text spells mentions another way). Bots, reply pings and the author
        do not count. An ``@everyone`` / ``@here`` by an author who may not use it (no permission, none of
        ``everyone_roles``) adds ``everyone_weight``.
        """
        ms = self.settings
        users = {m.id for m in message.mentions if not m.is_bot and not m.is_reply_ping and m.id != message.author.id}
        count = sum(max(1, mention_occurrences(message.text, uid)) for uid in users)
        if message.mentions_everyone:
            allowed = may_mention_everyone or bool(set(message.author.roles) & set(ms.everyone_roles))
            if not allowed:
                count += ms.everyone_weight
        return count

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        ms = self.settings
        if not ms.enabled:
            return []
        limit = ms.max_mentions
        if ctx.raid_mode:
            limit = scaled_limit(limit, self._raid_factor)
        count = self.mention_count(ctx.message, ctx.may_mention_everyone)
        if count <= limit:
            return []
        return [RuleHit(rule="mention_spam", detail=f"{count} mentions (limit {limit})", action=ms.action)]
