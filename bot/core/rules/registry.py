"""The rule registry: every automod rule, by unique name, in the fixed order they run and their hits are listed.

Layer: ``bot.core``. Pure Python.

:data:`DEFAULT_RULES` is the one list of the rules the service runs (one class per rule, see
:mod:`bot.core.rules.base`); :meth:`RuleRegistry.build` makes a :class:`RuleSet` of one server's rules, compiled
from its ``[rules]`` once per policy version. Adding a rule is one file with its class, its settings model (a table
of :class:`~bot.core.rules.settings.RulesSettings`) and one line here (CONTRIBUTING.md, "Adding a rule").

Import this module as ``bot.core.rules.registry`` (the ``bot.core.rules`` package does not import it:
``bot.core.policy`` imports the rule settings, and the identity-target rule imports the policy's settings).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from bot.core.models import RuleHit
from bot.core.rules.accounts import NewAccountRule
from bot.core.rules.base import Rule, RuleContext, Stage
from bot.core.rules.blocklist import BlocklistRule
from bot.core.rules.hostile_emoji import HostileEmojiRule
from bot.core.rules.identity import IdentityTargetRule
from bot.core.rules.links_rule import LinksRule
from bot.core.rules.mentions import MentionSpamRule
from bot.core.rules.regex import RegexRule
from bot.core.rules.settings import RulesSettings
from bot.core.rules.spam import SpamRule
from bot.core.rules.zalgo import ZalgoRule


class RuleSet:
    """One server's rules, built from its ``[rules]`` (``rules``: instances in registry order)."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._by_stage = {stage: tuple(r for r in self.rules if stage in r.stages) for stage in Stage}

    def at(self, stage: Stage) -> tuple[Rule, ...]:
        """The rules that run at ``stage``, in registry order."""
        return self._by_stage[stage]

    def check(self, stage: Stage, ctx: RuleContext) -> list[RuleHit]:
        """Every hit of the rules of ``stage`` on one message, rule by rule in registry order."""
        hits: list[RuleHit] = []
        for rule in self._by_stage[stage]:
            hits += rule.check(ctx)
        return hits

    def get(self, name: str) -> Rule:
        """The rule named ``name``.

        Raises:
            KeyError: no rule has that name.
        """
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise KeyError(name)


class RuleRegistry:
    """An ordered set of rule classes with unique names.

    Args:
        rules: Rule classes in the order they run; their hits are listed in this order within a stage.

    Raises:
        ValueError: two rules share a name, or a rule has no stage.
    """

    def __init__(self, rules: Iterable[type[Rule]] = ()) -> None:
        self._rules: list[type[Rule]] = []
        for rule in rules:
            self.register(rule)

    def register(self, rule: type[Rule], *, before: str | None = None) -> type[Rule]:
        """Add a rule class at the end (or just before the rule named ``before``); returns it (usable as a class
        decorator on a registry of one's own).

        Raises:
            ValueError: the name is taken, the rule declares no stage, or ``before`` names no rule.
        """
        if rule.name in self.names:
            raise ValueError(f"a rule named {rule.name!r} is already registered")
        if not rule.stages:
            raise ValueError(f"rule {rule.name!r} declares no stage")
        if before is None:
            self._rules.append(rule)
        else:
            if before not in self.names:
                raise ValueError(f"no rule named {before!r} to register {rule.name!r} before")
            self._rules.insert(self.names.index(before), rule)
        return rule

    @property
    def names(self) -> list[str]:
        """Rule names in order."""
        return [r.name for r in self._rules]

    def __iter__(self) -> Iterator[type[Rule]]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def copy(self) -> RuleRegistry:
        """An independent registry with the same rules (a test adds a rule to its copy only)."""
        return RuleRegistry(self._rules)

    def build(self, settings: RulesSettings) -> RuleSet:
        """Every rule compiled for one server's ``[rules]``.

        Raises:
            RuleConfigError: a regex pattern does not compile (only if ``settings`` bypassed validation).
        """
        return RuleSet([cls(settings) for cls in self._rules])


#: The rules the service runs, in order. Content hits are listed blocklist, regex, invite, link, mention_spam,
#: zalgo, hostile_emoji; in-order hits spam, new_account / new_member, identity_target.
DEFAULT_RULES = RuleRegistry([
    BlocklistRule,
    RegexRule,
    LinksRule,
    MentionSpamRule,
    ZalgoRule,
    HostileEmojiRule,
    SpamRule,
    NewAccountRule,
    IdentityTargetRule,
])
