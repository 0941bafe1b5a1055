"""Plain words (issue 28, item 6): durations, tiers, the labels that mattered, strikes, rule details."""

from __future__ import annotations

import pytest

from bot.workflow import words


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0 seconds"), (1, "1 second"), (45, "45 seconds"), (60, "1 minute"), (90, "1 minute 30 seconds"),
    (3600, "1 hour"), (3605, "1 hour"), (6734, "1 hour 52 minutes"), (86400, "1 day"), (604800, "7 days"),
    (2 * 86400 + 4 * 3600 + 5, "2 days 4 hours"), (None, "unknown"), (-5, "0 seconds"),
])
def test_durations_in_minutes_hours_days(seconds, text):
    """A duration uses its largest unit and the next smaller one, never raw seconds past a minute."""
    assert words.duration(seconds) == text


def test_tiers_read_review_from():
    """Tiers read 'review from 0.95, act from 0.98'; an off tier is left out; both off is 'off'."""
    assert words.tier(0.95, 0.98) == "review from 0.95, act from 0.98"
    assert words.tier(0.95, None) == "review from 0.95"
    assert words.tier(None, 0.5) == "act from 0.50"
    assert words.tier(None, None) == "off"


def test_only_the_labels_that_mattered():
    """Labels that reached a tier or flagged are kept in order; with none, the highest-scoring label alone."""
    scores = {"toxicity": 0.9, "insult": 0.2, "threat": None, "identity_attack": 0.8}
    tiers = {"toxicity": (0.85, None), "insult": (0.5, 0.9), "identity_attack": (0.9, None)}
    assert words.labels_that_mattered(scores, tiers) == ["toxicity"]
    assert words.labels_that_mattered(scores, tiers, flagged=["identity_attack"]) == ["toxicity", "identity_attack"]
    assert words.labels_that_mattered({"toxicity": 0.1, "insult": 0.3}, {}) == ["insult"]
    assert words.labels_that_mattered({"threat": None}, {}) == []


def test_strikes_without_one_one_points():
    """Strike counts say points only when they differ from the count: never '1 (1 points)'."""
    assert words.strikes(0, 0) == "no strikes"
    assert words.strikes(1, 1) == "1 strike"
    assert words.strikes(3, 3) == "3 strikes"
    assert words.strikes(1, 3) == "1 strike worth 3 points"
    assert words.worth(2, 2) == "" and words.worth(2, 1) == " worth 1 point"


def test_rule_details_in_plain_words():
    """'account age 6734s < 604800s' reads 'account age 1 hour 52 minutes, under 7 days'."""
    assert words.rule_detail("account age 6734s < 604800s") == "account age 1 hour 52 minutes, under 7 days"
    assert words.rule_hit("duplicates: 5 identical messages in 30s") == "duplicates: 5 identical messages in 30 seconds"
    assert words.rule_hit("invite") == "invite"
    assert words.rule_detail("3 links to example.com") == "3 links to example.com"
    assert words.rule_detail("identity_attack 0.97 >= 0.95") == "identity_attack 0.97, at or over 0.95"
