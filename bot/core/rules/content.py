"""The per-message content rules of one server (the ``CONTENT`` stage of the rule registry).

Layer: ``bot.core``. Stateless per message and deterministic: the same message, normalisation and settings give
the same hits, in the same order (registry order: blocklist, regex, invite, link, mention_spam, zalgo,
hostile_emoji). Each rule is its own class (:mod:`bot.core.rules.registry`); this runs them on one message for the
name screen (:mod:`bot.workflow.names`) and the rule tests. The service runs the registry's stages itself
(:func:`bot.core.judging.content_hits`, :func:`bot.core.judging.judge`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core.models import Message, RuleHit
from bot.core.normalize import Normalized
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.blocklist import term_key
from bot.core.rules.mentions import MentionSpamRule, mention_occurrences
from bot.core.rules.regex import DETAIL_CHARS, encodable
from bot.core.rules.settings import RulesSettings

if TYPE_CHECKING:
    from bot.core.rules.registry import RuleRegistry, RuleSet

__all__ = ["DETAIL_CHARS", "ContentRules", "encodable", "mention_occurrences", "term_key"]


class ContentRules:
    """The content rules of one server, compiled once.

    Args:
        settings: The server's rule settings (regex patterns were validated when the settings were built).
        registry: The rules to run; default :data:`bot.core.rules.registry.DEFAULT_RULES`.

    Attributes:
        ruleset: Every rule of the registry built for ``settings``.

    Raises:
        RuleConfigError: a regex pattern does not compile (only if ``settings`` bypassed validation).
    """

    def __init__(self, settings: RulesSettings, registry: RuleRegistry | None = None) -> None:
        if registry is None:
            from bot.core.rules.registry import DEFAULT_RULES  # not at import: see bot.core.rules.registry

            registry = DEFAULT_RULES
        self.settings = settings
        self.ruleset: RuleSet = registry.build(settings)
        self._mentions = MentionSpamRule(settings)

    def evaluate(
        self,
        message: Message,
        norm: Normalized,
        *,
        extra_terms: Sequence[str] = (),
        allow_terms: Sequence[str] = (),
        may_mention_everyone: bool = False,
        raid_mode: bool = False,
    ) -> list[RuleHit]:
        """Run every enabled content rule on one message.

        Args:
            message: The message (``text``, ``mentions``, ``mentions_everyone``, author roles are read).
            norm: ``normalize(message.text)``.
            extra_terms: Channel / category blocked terms; they use the default list's label and action.
            allow_terms: Channel / category allowed terms; with the server's ``allow`` they win over every list.
            may_mention_everyone: The platform says the author holds the mention-everyone permission.
            raid_mode: Raid mode is on here: ``max_mentions`` is multiplied by ``raid.threshold_factor``.

        Returns:
            Hits in rule order; empty for a clean message. ``action`` is the rule's configured action or
            ``None`` (signal); ``label`` is set where the rule supports a detoxify label.
        """
        ctx = RuleContext(message=message, norm=norm, extra_terms=extra_terms, allow_terms=allow_terms,
                          may_mention_everyone=may_mention_everyone, raid_mode=raid_mode)
        return self.ruleset.check(Stage.CONTENT, ctx)

    def mention_count(self, message: Message, may_mention_everyone: bool = False) -> int:
        """Mentions that count toward mention spam (:meth:`bot.core.rules.mentions.MentionSpamRule.mention_count`)."""
        return self._mentions.mention_count(message, may_mention_everyone)

