"""The identity target check: which messages name an identity (bot.core.identity_terms) and how the judge uses it."""

from __future__ import annotations

import pytest

from bot.core.identity_terms import CATEGORIES, identity_reference
from bot.core.judge import decide
from bot.core.models import LABELS, ActionKind, Scores
from bot.core.normalize import normalize
from bot.core.policy import DEFAULT_POLICY_PATH, load_policy


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("trans women are men", "gender:women"),
        ("tr@nnies out", "slur:trannies"),
        ("I hate w0men", "gender:women"),
        ("M u s l i m s are a plague", "religion:muslim*"),
        ("gas the j e w s", "race:jews"),
        ("you people are animals", "othering:you people"),
        ("he is just a man in a dress", "gender:man"),
        ("go back to your country", "origin:country"),
        ("ｇａｙｓ should leave", "orientation:gays"),
        ("autistic kids are a burden", "disability:autis*"),
    ],
)
def test_messages_naming_an_identity_are_found_through_evasion(text, found):
    """Group nouns, slurs and othering phrases are found after leetspeak, spacing and fullwidth folding."""
    assert identity_reference(normalize(text)) == found


@pytest.mark.parametrize(
    "text",
    [
        "She aite", "Re 21e8", "Komodo World is a victim", "OUR is not yet supported in Agama", "Kick Vee",
        "transaction failed again", "nice jewelry", "the homomorphic scheme", "Then they are slave states", "",
        "I hate waiters", "you are a cancer", "motherfucker looks like a heroin addict",
    ],
)
def test_messages_naming_no_identity_give_none(text):
    """Words that merely contain an identity term (transaction, jewelry, slave) and plain insults name no identity."""
    assert identity_reference(normalize(text)) is None


def test_server_terms_count_as_a_reference():
    """A server's own terms (e.g. a local slur) count, reported under category 'server'."""
    assert identity_reference(normalize("look at this zorblax"), ("zorblax",)) == "server:zorblax"


def test_every_category_is_non_empty_and_terms_are_lower_case():
    """The lexicon is written in the normalised form contains_term expects (lower case)."""
    for cat, terms in CATEGORIES.items():
        assert terms, cat
        assert all(t == t.lower() for t in terms), cat


def _scores(ia: float) -> Scores:
    return Scores(values={label: (ia if label == "identity_attack" else 0.01) for label in LABELS}, model="t")


def test_judge_holds_untargeted_identity_attack_to_the_untargeted_tier():
    """Default policy: ia 0.96 acts (delete) when targeted; untargeted it is below review 0.98 and passes."""
    policy = load_policy(DEFAULT_POLICY_PATH)
    tiers = policy.thresholds_for(_channel())
    targeted = decide(policy, tiers, _scores(0.96), [])
    untargeted = decide(policy, tiers, _scores(0.96), [], untargeted=True)
    assert targeted.strongest == ActionKind.DELETE and targeted.labels == ("identity_attack",)
    assert untargeted.strongest == ActionKind.NONE and not untargeted.flagged
    extreme = decide(policy, tiers, _scores(0.99), [], untargeted=True)
    assert extreme.strongest == ActionKind.REVIEW and extreme.labels == ("identity_attack",)


def test_raid_mode_also_scales_the_untargeted_tier():
    """In raid mode (threshold factor 0.8 by default) the untargeted review tier 0.98 becomes 0.784."""
    policy = load_policy(DEFAULT_POLICY_PATH)
    d = decide(policy, policy.thresholds_for(_channel()), _scores(0.80), [], untargeted=True, raid_mode=True)
    assert d.labels == ("identity_attack",)


def _channel():
    from bot.core.models import ChannelRef

    return ChannelRef(id="c1", name="general")


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("I hate homosexuls", "orientation:homosexual*~"),
        ("typical mslim", "religion:muslim*~"),
        ("kill all wmoen", "gender:women~"),
        ("I hate blackpeople", "race:black~"),
        ("hatemuslims", "religion:muslim*~"),
        ("killalljews", "race:jews~"),
        ("gaypeople are a disease", "orientation:gay~"),
    ],
)
def test_fuzzy_check_sees_misspelt_and_run_together_identity_words(text, found):
    """With fuzzy on, a dropped letter, swapped letters or a run-together identity word counts as named; off, not."""
    assert identity_reference(normalize(text)) is None
    assert identity_reference(normalize(text), fuzzy=True) == found


@pytest.mark.parametrize("text", ["transaction failed", "the whitespace is wrong", "you are a disgrace",
                                  "Re 21e8", "She aite", "Komodo World is a victim", "this is disgusting", "maybe"])
def test_fuzzy_check_does_not_read_ordinary_words_as_identity_words(text):
    """Words that merely contain or resemble an identity word ("transaction", "disgrace") still name no identity."""
    assert identity_reference(normalize(text), fuzzy=True) is None


def test_default_policy_uses_the_fuzzy_check():
    """The packaged default policy turns the fuzzy identity-target check on (decided on HateCheck dev)."""
    assert load_policy(DEFAULT_POLICY_PATH).identity_target.fuzzy is True


def test_every_counterfactual_term_is_an_identity_term_the_core_knows():
    """Each term of the counterfactual data and of the held-apart benign set is found by the exact lexicon check."""
    from bot.training.counterfactual import TERMS

    missing = [t for t in TERMS if identity_reference(normalize(f"a {t} person")) is None]
    assert missing == []
