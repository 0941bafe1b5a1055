"""Tests of the rule settings: defaults, validation errors naming the field, and channel-override merging."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.core.rules import RulesSettings


def test_defaults_are_valid_and_documented() -> None:
    """Default settings validate and every field has a description or is a nested table."""
    s = RulesSettings()
    assert (s.mention_spam.max_mentions, s.raid.window_s, s.raid.threshold_factor) == (5, 60.0, 0.8)
    for section in ("blocklist", "links", "mention_spam", "spam", "new_account", "raid", "zalgo"):
        model = type(getattr(s, section))
        undocumented = [n for n, f in model.model_fields.items() if not f.description and n != "lists"]
        assert undocumented == [], section


@pytest.mark.parametrize(
    ("doc", "loc", "message"),
    [
        ({"bogus": 1}, "bogus", "Extra inputs are not permitted"),
        ({"spam": {"flood_windw_s": 3}}, "spam.flood_windw_s", "Extra inputs are not permitted"),
        ({"spam": {"flood_window_s": -1}}, "spam.flood_window_s", "greater than 0"),
        ({"raid": {"window_s": 0}}, "raid.window_s", "greater than 0"),
        ({"raid": {"cooldown_s": -5}}, "raid.cooldown_s", "greater than or equal to 0"),
        ({"raid": {"threshold_factor": 1.5}}, "raid.threshold_factor", "less than or equal to 1"),
        ({"raid": {"flagged_burst": 1}}, "raid.flagged_burst", "greater than or equal to 2"),
        ({"mention_spam": {"max_mentions": 0}}, "mention_spam.max_mentions", "greater than or equal to 1"),
        ({"new_account": {"min_account_age_s": -1}}, "new_account.min_account_age_s", "greater than or equal to 0"),
        ({"links": {"action": "nuke"}}, "links.action", "unknown action 'nuke'"),
        ({"spam": {"crowd_action": "explode"}}, "spam.crowd_action", "unknown action 'explode'"),
        ({"blocklist": {"label": "rude"}}, "blocklist.label", "unknown label 'rude'"),
        ({"blocklist": {"terms": ["ok", "  "]}}, "blocklist.terms", "empty term"),
        ({"blocklist": {"lists": [{"name": "a"}, {"name": "a"}]}}, "blocklist.lists", "duplicate blocklist name"),
        ({"links": {"allowed_domains": ["not a domain"]}}, "links.allowed_domains", "not a domain"),
        ({"regex": [{"name": "r1", "pattern": "(abc"}]}, "regex.0.pattern", "regex rule 'r1': invalid pattern '(abc'"),
        ({"regex": [{"name": "r", "pattern": "a"}, {"name": "r", "pattern": "b"}]}, "regex", "duplicate regex rule"),
    ],
)
def test_validation_errors_name_the_field(doc: dict, loc: str, message: str) -> None:
    """Unknown keys, impossible values and bad actions / labels / patterns fail, naming the field."""
    with pytest.raises(ValidationError) as err:
        RulesSettings.model_validate(doc)
    first = err.value.errors()[0]
    assert ".".join(str(p) for p in first["loc"]) == loc
    assert message in first["msg"]


@pytest.mark.parametrize(("written", "stored"), [("none", None), ("", None), ("Timeout", "timeout"), ("ban", "ban")])
def test_action_spelling(written: str, stored: str | None) -> None:
    """Actions are case-insensitive; "none" and "" (TOML has no null) mean signal only."""
    assert RulesSettings.model_validate({"links": {"action": written}}).links.action == stored


def test_domains_and_terms_are_cleaned() -> None:
    """Domains lose scheme, www and path; terms are stripped and de-duplicated case-insensitively."""
    s = RulesSettings.model_validate(
        {
            "links": {"allowed_domains": ["https://www.Example.com/path", "example.com"]},
            "blocklist": {"terms": [" Wibble ", "wibble", "frob"]},
        }
    )
    assert (s.links.allowed_domains, s.blocklist.terms) == (["example.com"], ["Wibble", "frob"])


def test_merged_extends_lists_and_replaces_scalars() -> None:
    """A channel override extends term and domain lists, merges named lists and replaces scalars."""
    base = RulesSettings.model_validate(
        {
            "blocklist": {
                "terms": ["wibble"],
                "lists": [{"name": "slurs", "terms": ["a1"], "label": "identity_attack"}],
            },
            "regex": [{"name": "r", "pattern": "x", "action": "log"}],
            "links": {"allowed_domains": ["example.com"]},
        }
    )
    merged = base.merged(
        {
            "blocklist": {
                "terms": ["frob", "WIBBLE"],
                "allow": ["ok"],
                "lists": [{"name": "slurs", "terms": ["a2"]}, {"name": "extra", "terms": ["b"]}],
            },
            "regex": [{"name": "r", "action": "delete"}, {"name": "r2", "pattern": "y"}],
            "links": {"allowed_domains": ["docs.org"]},
            "mention_spam": {"max_mentions": 3},
        }
    )
    assert merged.blocklist.terms == ["wibble", "frob"]
    assert merged.blocklist.allow == ["ok"]
    assert [(g.name, g.terms, g.label) for g in merged.blocklist.lists] == [
        ("slurs", ["a1", "a2"], "identity_attack"),
        ("extra", ["b"], None),
    ]
    assert [(r.name, r.pattern, r.action) for r in merged.regex] == [("r", "x", "delete"), ("r2", "y", "review")]
    assert merged.links.allowed_domains == ["example.com", "docs.org"]
    assert merged.mention_spam.max_mentions == 3
    assert base.blocklist.terms == ["wibble"]  # the base is unchanged


def test_merged_validates_the_result() -> None:
    """An invalid override fails with the field named."""
    with pytest.raises(ValidationError, match="spam.flood_count"):
        RulesSettings().merged({"spam": {"flood_count": 0}})


def test_settings_are_json_serialisable() -> None:
    """Settings dump to JSON (the policy version hash is taken over that dump)."""
    s = RulesSettings.model_validate({"regex": [{"name": "r", "pattern": "x"}]})
    assert RulesSettings.model_validate_json(s.model_dump_json()) == s
