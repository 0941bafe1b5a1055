"""Environment values the bot cannot use (fifteenth session's break-it pass)."""

from __future__ import annotations

import pytest

from bot.settings import Settings, SettingsError


@pytest.mark.parametrize("raw", ["inf", "Infinity", "1e300", "86401"])
def test_scorer_timeout_that_no_socket_can_wait_is_refused_naming_the_variable(raw):
    """``MODBOT_SCORER_TIMEOUT_S=inf`` (or ``1e300``) was taken as a positive number of seconds; every remote
    scoring call then failed inside urllib with "OverflowError: timestamp out of range for platform time_t" (a
    traceback per batch) and every message went to review as a scorer error. It is refused at start with the
    variable and the range (above 0, at most a day)."""
    with pytest.raises(SettingsError, match=r"^MODBOT_SCORER_TIMEOUT_S='[^']+': expected a positive number of "
                                            r"seconds, at most 86400"):
        Settings.from_env({"MODBOT_SCORER_TIMEOUT_S": raw})
    assert Settings.from_env({"MODBOT_SCORER_TIMEOUT_S": "2.5"}).scorer_timeout_s == 2.5

