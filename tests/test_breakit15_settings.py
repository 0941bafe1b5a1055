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


@pytest.mark.parametrize("raw", ["abc", "-1", "1.5", "99999"])
def test_onnx_threads_that_are_not_a_thread_count_are_a_load_error_naming_the_variable(raw):
    """``MODBOT_ONNX_THREADS=abc`` raised ``ValueError: invalid literal for int()`` out of the ONNX scorer's
    constructor, a traceback at start; ``-1`` or ``99999`` went to ONNX Runtime as they were. Each is a
    ScorerLoadError naming the variable (the one-line "the model could not be loaded" error)."""
    from bot.scoring import ScorerLoadError
    from bot.scoring.onnx_scorer import onnx_threads

    with pytest.raises(ScorerLoadError, match=r"^MODBOT_ONNX_THREADS="):
        onnx_threads({"MODBOT_ONNX_THREADS": raw})
    assert onnx_threads({"MODBOT_ONNX_THREADS": "3"}) == 3
    assert onnx_threads({}) >= 1


@pytest.mark.parametrize(("ids", "count"), [("0-999999999", "2"), ("0-999999999", "1000000000"),
                                            ("0", "99999999999999999999")])
def test_shard_settings_out_of_range_are_refused_at_once(ids, count):
    """``MODBOT_SHARD_IDS=0-999999999`` (a typo) built a list of a billion shard numbers before checking it
    against ``MODBOT_SHARD_COUNT``: the process ate gigabytes and did not start within 30 s. A count past
    65,536 shards was accepted. Both are refused at once, naming the variable."""
    import time

    started = time.monotonic()
    with pytest.raises(SettingsError, match="MODBOT_SHARD_"):
        Settings.from_env({"MODBOT_SHARD_IDS": ids, "MODBOT_SHARD_COUNT": count})
    assert time.monotonic() - started < 1.0
    assert Settings.from_env({"MODBOT_SHARD_IDS": "0-3,5", "MODBOT_SHARD_COUNT": "8"}).shard_ids == (0, 1, 2, 3, 5)
