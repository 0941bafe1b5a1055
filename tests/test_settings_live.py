"""Settings of the live path (queue bound, catch-up bounds, shards) and their errors at the CLI."""

from __future__ import annotations

import pytest

from bot.cli import main
from bot.settings import CATCHUP_HOURS, CATCHUP_MESSAGES, QUEUE_MAX, Settings, SettingsError


def test_defaults() -> None:
    """Without variables: queue bound 1,024, catch-up 200 messages / 24 h, no shard range."""
    s = Settings.from_env({})
    assert (s.queue_max, s.catchup_messages, s.catchup_hours) == (QUEUE_MAX, CATCHUP_MESSAGES, CATCHUP_HOURS)
    assert (QUEUE_MAX, CATCHUP_MESSAGES, CATCHUP_HOURS) == (1024, 200, 24.0)
    assert s.shard_ids is None and s.shard_count is None


def test_shard_range_and_list() -> None:
    """MODBOT_SHARD_IDS takes a list or a range, sorted and unique, within MODBOT_SHARD_COUNT."""
    s = Settings.from_env({"MODBOT_SHARD_IDS": "2-3,0", "MODBOT_SHARD_COUNT": "4", "MODBOT_QUEUE_MAX": "64",
                           "MODBOT_CATCHUP_MESSAGES": "0", "MODBOT_CATCHUP_HOURS": "1.5"})
    assert s.shard_ids == (0, 2, 3) and s.shard_count == 4
    assert (s.queue_max, s.catchup_messages, s.catchup_hours) == (64, 0, 1.5)


@pytest.mark.parametrize("env,needle", [
    ({"MODBOT_SHARD_IDS": "0"}, "MODBOT_SHARD_IDS needs MODBOT_SHARD_COUNT"),
    ({"MODBOT_SHARD_IDS": "2", "MODBOT_SHARD_COUNT": "2"}, "each shard must be in 0..1"),
    ({"MODBOT_SHARD_IDS": "a-b", "MODBOT_SHARD_COUNT": "2"}, "shard numbers like 0,1 or 0-3"),
    ({"MODBOT_QUEUE_MAX": "0"}, "MODBOT_QUEUE_MAX must be at least 1"),
    ({"MODBOT_CATCHUP_HOURS": "soon"}, "MODBOT_CATCHUP_HOURS must be a number"),
])
def test_malformed_values_name_the_variable(env: dict[str, str], needle: str) -> None:
    """A malformed live-path variable raises SettingsError naming the variable and the reason."""
    with pytest.raises(SettingsError, match=needle):
        Settings.from_env(env)


def test_cli_reports_a_malformed_variable_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI prints one line naming the variable and exits 2 (no traceback)."""
    monkeypatch.setenv("MODBOT_SHARD_COUNT", "many")
    assert main(["policy", "check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: MODBOT_SHARD_COUNT must be a whole number, not 'many'"]
