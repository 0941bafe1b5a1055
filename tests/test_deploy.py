"""The systemd units in deploy/ (checked with systemd-analyze verify where it exists) and the database default."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.settings import Settings, default_db_path, ensure_db_folder

REPO = Path(__file__).resolve().parents[1]
UNITS = sorted((REPO / "deploy").glob("*.service"))
PYTHON = "/opt/modbot/.venv/bin/python"


def verify(unit_text: str, name: str, tmp_path: Path) -> str:
    """systemd-analyze verify's complaints about one unit (its ExecStart pointed at this interpreter, since verify
    also checks that the program exists); '' when it has none."""
    path = tmp_path / name
    path.write_text(unit_text.replace(PYTHON, sys.executable), encoding="utf-8")
    proc = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60,
                          check=False)
    complaints = [ln for ln in (proc.stdout + proc.stderr).splitlines() if name in ln]
    return "\n".join(complaints) if complaints or proc.returncode == 0 else f"rc {proc.returncode}: {proc.stderr}"


def test_there_is_one_unit_per_platform_and_one_for_the_scoring_service():
    """deploy/ has a Discord and a Slack unit, each running its own platform's command, and the scoring service's."""
    assert [u.name for u in UNITS] == ["modbot-discord.service", "modbot-serve.service", "modbot-slack.service"]
    for unit in UNITS:
        if unit.stem == "modbot-serve":
            continue
        cfg = configparser.ConfigParser(strict=False, interpolation=None)
        cfg.read_string(unit.read_text(encoding="utf-8"))
        platform = unit.stem.removeprefix("modbot-")
        assert cfg["Service"]["ExecStart"] == f"{PYTHON} -m bot {platform}"
        assert cfg["Service"]["EnvironmentFile"] == f"/etc/modbot/{platform}.env"
        assert "Environment=MODBOT_DB=/var/lib/modbot/modlog.db" in unit.read_text(encoding="utf-8").splitlines()
        assert cfg["Service"]["RestartPreventExitStatus"] == "2"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_unit_passes_systemd_analyze_verify(unit, tmp_path):
    """systemd-analyze verify finds nothing wrong with the unit."""
    assert verify(unit.read_text(encoding="utf-8"), unit.name, tmp_path) == ""


def test_the_scoring_service_unit_serves_on_localhost_with_a_keys_file_and_stores_nothing():
    """The service's unit runs ``python -m bot serve`` on localhost (keys are needed before it listens elsewhere),
    reads its keys file's name from its environment file, drains within the stop timeout, and has no state folder:
    the service stores no text."""
    unit = REPO / "deploy" / "modbot-serve.service"
    cfg = configparser.ConfigParser(strict=False, interpolation=None)
    cfg.read_string(unit.read_text(encoding="utf-8"))
    service = cfg["Service"]
    assert service["ExecStart"] == f"{PYTHON} -m bot serve --host 127.0.0.1 --port 8080"
    assert service["EnvironmentFile"] == "/etc/modbot/serve.env"
    assert "StateDirectory" not in service and "MODBOT_DB" not in unit.read_text(encoding="utf-8")
    assert int(service["TimeoutStopSec"]) > 20  # the default --drain-s
    assert service["RestartPreventExitStatus"] == "2"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_verify_catches_a_misspelt_key(tmp_path):
    """The check above can fail: a misspelt key in a unit is reported."""
    text = UNITS[0].read_text(encoding="utf-8").replace("KillSignal=", "KilSignal=")
    assert "Unknown key" in verify(text, "modbot-bad.service", tmp_path)


def test_database_default_does_not_depend_on_the_working_folder(tmp_path, monkeypatch):
    """Without --db or MODBOT_DB the mod log is $XDG_DATA_HOME/modbot/modlog.db (else ~/.local/share/...), an
    absolute path whatever folder the process runs in."""
    monkeypatch.chdir(tmp_path)
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    assert Settings.from_env(env).db_path == tmp_path / "data" / "modbot" / "modlog.db"
    assert default_db_path({}) == Path.home() / ".local" / "share" / "modbot" / "modlog.db"
    assert default_db_path({"XDG_DATA_HOME": "relative/dir"}).is_absolute()  # a relative XDG value is ignored
    assert Settings.from_env({"MODBOT_DB": "/srv/x.db"}).db_path == Path("/srv/x.db")


def test_default_database_folder_is_created_owner_only(tmp_path, monkeypatch):
    """The default database's missing folder is created with mode 0700; another missing folder is left alone."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    ensure_db_folder(default_db_path())
    assert (tmp_path / "data" / "modbot").stat().st_mode & 0o777 == 0o700
    ensure_db_folder(tmp_path / "typo" / "x.db")
    assert not (tmp_path / "typo").exists()
