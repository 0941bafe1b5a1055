"""Hostile-tester findings on the environment settings (round 16)."""

from __future__ import annotations

import pytest

from bot.settings import Settings, SettingsError


@pytest.mark.parametrize("name", ["MODBOT_BF16", "MODBOT_INT8"])
@pytest.mark.parametrize(("raw", "on"), [("1", True), ("true", True), ("True", True), ("yes", True), ("on", True),
                                         ("0", False), ("false", False), ("False", False), ("FALSE", False),
                                         ("no", False), ("No", False), ("off", False), (" 0 ", False), ("", False)])
def test_a_model_switch_reads_the_usual_spellings_of_on_and_off(name, raw, on):
    """``MODBOT_INT8=False`` (how YAML and many env files write a boolean) switched int8 quantisation ON: only the
    exact strings ``0``, ``false`` and ``no`` meant off, so ``False``, ``No`` and ``off`` changed the model's
    scores. Case and spaces do not matter now."""
    s = Settings.from_env({name: raw})
    assert (s.bf16 if name == "MODBOT_BF16" else s.int8) is on


@pytest.mark.parametrize("raw", ["maybe", "2", "enabled?"])
def test_a_model_switch_that_is_neither_on_nor_off_is_refused_naming_the_variable(raw):
    """Anything else was read as on; it is refused in one line naming the variable and the accepted values."""
    with pytest.raises(SettingsError, match="MODBOT_INT8") as exc:
        Settings.from_env({"MODBOT_INT8": raw})
    assert repr(raw) in str(exc.value) and "0" in str(exc.value) and "1" in str(exc.value)


def test_a_servers_folder_that_is_a_file_is_refused_naming_the_variable(tmp_path):
    """``MODBOT_SERVERS_DIR`` naming a file (``config/servers/discord-1.toml`` instead of its folder) was taken:
    no server's own file was ever found, so every server was silently judged by the default policy alone. It is
    refused in one line naming the variable and the path; a folder that does not exist is still fine (no server has
    a file of its own yet)."""
    f = tmp_path / "discord-1.toml"
    f.write_text("[server]\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="MODBOT_SERVERS_DIR") as exc:
        Settings.from_env({"MODBOT_SERVERS_DIR": str(f)})
    assert str(f) in str(exc.value) and "not a folder" in str(exc.value)
    assert Settings.from_env({"MODBOT_SERVERS_DIR": str(tmp_path / "later")}).servers_dir == tmp_path / "later"
