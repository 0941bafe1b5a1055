"""The hostile-emoji rule: a message of hostile emoji only, addressed to another member (``[rules.hostile_emoji]``).

Layer: ``bot.core``. Stateless and deterministic.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from bot.core.emoji_words import hostile_emoji_only
from bot.core.models import RuleHit
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import HostileEmojiSettings, RulesSettings


class HostileEmojiRule:
    """``hostile_emoji``: the message is only hostile emoji and addresses another member (a reply, or a mention of
    someone who is not a bot and not the author); ``detail`` names the emoji."""

    name: ClassVar[str] = "hostile_emoji"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT})
    settings_model: ClassVar[type[BaseModel]] = HostileEmojiSettings
    hit_names: ClassVar[tuple[str, ...]] = ("hostile_emoji",)

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings.hostile_emoji

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        cfg, message = self.settings, ctx.message
        if not cfg.enabled:
            return []
        addressed = message.reply_to is not None or any(
            not m.is_bot and m.id != message.author.id for m in message.mentions)
        names = hostile_emoji_only(message.text) if addressed else None
        if not names:
            return []
        return [RuleHit(rule="hostile_emoji", detail=", ".join(dict.fromkeys(names)), label=cfg.label,
                        action=cfg.action)]
