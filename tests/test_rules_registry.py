"""The rule registry: unique names in a fixed order, and a new rule added by registering one class (its settings
model with it), with nothing else changed: the service runs it at its stage and the policy acts on its hit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from bot.core.models import ActionKind, ChannelRef, MemberRef, Message, RuleHit, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.core.policy_registry import PolicyRegistry
from bot.core.rules import ContentRules, Rule, RuleContext, RulesSettings, Stage
from bot.core.rules.registry import DEFAULT_RULES, RuleRegistry
from bot.core.service import ModerationService
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SERVER = ServerRef("discord", "g1", "guild")
GENERAL = ChannelRef(id="c1", name="general")
OLD = T0 - timedelta(days=400)


def msg(mid: str, text: str, author: str = "u1") -> Message:
    who = MemberRef(id=author, name=author, joined_at=OLD, created_at=OLD)
    return Message(server=SERVER, channel=GENERAL, author=who, id=mid, text=text, created_at=T0)


# ---------------------------------------------------------------- a new rule: one class and its settings


class ShoutingSettings(BaseModel):
    """``[rules.shouting]`` of the new rule (its defaults apply: the test adds no field to RulesSettings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    min_letters: int = Field(default=12, ge=1)
    action: str | None = "review"


class ShoutingRule:
    """``shouting``: a message of at least ``min_letters`` letters, all upper case."""

    name: ClassVar[str] = "shouting"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.CONTENT})
    settings_model: ClassVar[type[BaseModel]] = ShoutingSettings
    hit_names: ClassVar[tuple[str, ...]] = ("shouting",)

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = ShoutingSettings()

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        letters = [c for c in ctx.message.text if c.isalpha()]
        if len(letters) >= self.settings.min_letters and all(c.isupper() for c in letters):
            return [RuleHit(rule="shouting", detail=f"{len(letters)} capital letters", action=self.settings.action)]
        return []


class ScoreEchoRule:
    """``score_echo``: an in-order rule that reads the scores and the member facts (a signal, no action)."""

    name: ClassVar[str] = "score_echo"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.ORDERED})
    settings_model: ClassVar[type[BaseModel]] = ShoutingSettings
    hit_names: ClassVar[tuple[str, ...]] = ("score_echo",)

    def __init__(self, settings: RulesSettings) -> None:
        pass

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        insult = ctx.scores.get("insult") if ctx.scores is not None else None
        return [RuleHit(rule="score_echo", detail=f"insult {insult} established {ctx.established}")]


@pytest.fixture
def registry() -> RuleRegistry:
    """The default rules plus the two new ones, registered on a copy (DEFAULT_RULES is untouched)."""
    reg = DEFAULT_RULES.copy()
    reg.register(ShoutingRule)
    reg.register(ScoreEchoRule)
    return reg


@pytest.fixture
async def service(tmp_path: Path, registry: RuleRegistry) -> AsyncIterator[ModerationService]:
    store = await SqliteStore.open(tmp_path / "mod.db")
    svc = ModerationService(scorer=FakeScorer(ABUSE), store=store, policies=PolicyRegistry(DEFAULT_POLICY_PATH),
                            max_delay_s=0.001, rules=registry)
    await svc.start()
    yield svc
    await svc.close()
    await store.close()


# ---------------------------------------------------------------- the registry itself


def test_default_registry_has_unique_names_in_a_fixed_order() -> None:
    """The service's rules, in the order their hits are listed; no two share a name or a hit name."""
    assert DEFAULT_RULES.names == ["blocklist", "regex", "links", "mention_spam", "zalgo", "hostile_emoji", "spam",
                                   "new_account", "identity_target"]
    hit_names = [n for r in DEFAULT_RULES for n in r.hit_names]
    assert len(hit_names) == len(set(hit_names))
    assert all(r.stages for r in DEFAULT_RULES)


def test_every_default_rule_is_a_rule() -> None:
    """Each registered class has the protocol's class attributes and builds from the default settings."""
    built = DEFAULT_RULES.build(RulesSettings())
    assert [r.name for r in built.rules] == DEFAULT_RULES.names
    for cls in DEFAULT_RULES:
        assert issubclass(cls.settings_model, BaseModel)
        assert cls.stages <= set(Stage)
    rule: Rule = built.get("zalgo")
    assert rule.name == "zalgo"


def test_each_rule_settings_model_is_a_table_of_the_policy() -> None:
    """Every default rule's settings model is the type of a ``[rules]`` table (or of a list of them, ``regex``), or
    of a policy table (``identity_target``): a server policy configures every rule."""
    from typing import get_args

    from bot.core.policy import Policy

    tables: set[object] = set()
    for model in (RulesSettings, Policy):
        for f in model.model_fields.values():
            tables.add(f.annotation)
            tables.update(get_args(f.annotation))
    missing = [cls.name for cls in DEFAULT_RULES if cls.settings_model not in tables]
    assert missing == []
    assert ShoutingRule.settings_model not in tables  # the check can fail: the test rule's model is not a table


def test_a_taken_name_is_refused() -> None:
    """Registering a second rule named like a registered one raises and leaves the registry as it was."""
    reg = DEFAULT_RULES.copy()

    class Blocklist2(ShoutingRule):
        name: ClassVar[str] = "blocklist"

    with pytest.raises(ValueError, match="'blocklist' is already registered"):
        reg.register(Blocklist2)
    assert reg.names == DEFAULT_RULES.names


def test_register_before_a_named_rule_sets_its_place() -> None:
    """``before=`` puts a rule just ahead of the one named; an unknown name is refused."""
    reg = DEFAULT_RULES.copy()
    reg.register(ShoutingRule, before="zalgo")
    assert reg.names.index("shouting") == reg.names.index("zalgo") - 1
    with pytest.raises(ValueError, match="no rule named 'nope'"):
        DEFAULT_RULES.copy().register(ShoutingRule, before="nope")


def test_copy_leaves_the_default_registry_unchanged(registry: RuleRegistry) -> None:
    """The fixture's rules are on its copy only."""
    assert "shouting" in registry.names and "shouting" not in DEFAULT_RULES.names
    assert len(registry) == len(DEFAULT_RULES) + 2


def test_content_rules_run_a_registered_rule_after_the_built_in_ones(registry: RuleRegistry) -> None:
    """ContentRules with the extended registry lists the new rule's hit after the built-in ones."""
    from bot.core.normalize import normalize

    text = "STOP POSTING THIS DISCORD.GG/ABC"
    hits = ContentRules(RulesSettings(), registry).evaluate(msg("m1", text), normalize(text))
    assert [h.rule for h in hits] == ["invite", "shouting"]
    assert ContentRules(RulesSettings()).evaluate(msg("m1", text), normalize(text))[0].rule == "invite"


# ---------------------------------------------------------------- the service runs it


async def test_service_runs_a_registered_content_rule_and_the_policy_acts_on_it(service: ModerationService) -> None:
    """An all-caps message trips the new rule: its hit is on the verdict and its ``review`` action is taken."""
    out = await service.handle(msg("m1", "EVERYONE LOOK AT THIS NOW"))
    v = out.verdict
    assert [h.rule for h in v.rule_hits] == ["shouting", "score_echo"]
    assert v.flagged and v.action == ActionKind.REVIEW and out.review_id is not None
    calm = await service.handle(msg("m2", "everyone look at this now"))
    assert [h.rule for h in calm.verdict.rule_hits] == ["score_echo"] and not calm.verdict.flagged


async def test_service_gives_an_ordered_rule_the_scores(service: ModerationService) -> None:
    """The in-order rule sees the model's scores and the member facts."""
    out = await service.handle(msg("m1", "you idiot"))
    echo = [h for h in out.verdict.rule_hits if h.rule == "score_echo"]
    assert echo and echo[0].detail == "insult 0.88 established False"
