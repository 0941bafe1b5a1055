"""Automod rules that run beside the model: blocklist / allowlist, regex, links and invites, mention spam,
duplicate / crowd / flood spam, new-account signals, zalgo, and raid detection with raid mode.

Layer: ``bot.core``. Pure Python, no I/O, deterministic: time is always message time. Regexes run on RE2.

Each rule is one class (:class:`Rule`: a unique name, the :class:`Stage` s it runs at, its own settings model, a
``check(ctx)`` method); the registry that lists them in order is :mod:`bot.core.rules.registry` (import it by that
name; this package does not import it). See CONTRIBUTING.md, "Adding a rule".

Public API:

* :class:`Rule`, :class:`Stage`, :class:`RuleContext` -- what a rule is and reads.
* :class:`RulesSettings` and its parts (``[rules]`` of a server policy), :meth:`RulesSettings.merged` for
  channel overrides.
* :class:`ContentRules` -- the registry's stateless per-message rules (``evaluate(message, norm) -> list[RuleHit]``).
* :class:`SpamTracker` -- the windows of duplicate / crowd / flood spam (``observe(message, norm)``).
* :func:`new_account_hits`, :func:`is_new_member` -- account-age signals.
* :class:`RaidDetector` -- one :class:`~bot.core.models.RaidAlert` per burst; raid mode per channel / server.
"""

from __future__ import annotations

from bot.core.rules.accounts import is_new_member, new_account_hits
from bot.core.rules.base import Rule, RuleContext, Stage
from bot.core.rules.blocklist import term_key
from bot.core.rules.content import ContentRules
from bot.core.rules.links import FoundLinks, find_links
from bot.core.rules.raid import RaidDetector
from bot.core.rules.settings import (
    BlocklistGroup,
    BlocklistSettings,
    LinkSettings,
    MentionSpamSettings,
    NewAccountSettings,
    RaidSettings,
    RegexRuleSettings,
    RuleConfigError,
    RulesSettings,
    SpamSettings,
    ZalgoSettings,
    compile_pattern,
)
from bot.core.rules.spam import SpamTracker

__all__ = [
    "BlocklistGroup",
    "BlocklistSettings",
    "ContentRules",
    "FoundLinks",
    "LinkSettings",
    "MentionSpamSettings",
    "NewAccountSettings",
    "RaidDetector",
    "RaidSettings",
    "RegexRuleSettings",
    "Rule",
    "RuleConfigError",
    "RuleContext",
    "RulesSettings",
    "SpamSettings",
    "SpamTracker",
    "Stage",
    "ZalgoSettings",
    "compile_pattern",
    "find_links",
    "is_new_member",
    "new_account_hits",
    "term_key",
]
