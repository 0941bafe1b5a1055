"""The composition root (bot.runtime): settings decide the policy files, the store and the scorer of every entry
point; the default policy is package data that an installed copy finds."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.models import ChannelRef, MemberRef, Message, ServerRef
from bot.core.policy import DEFAULT_POLICY_PATH
from bot.runtime import Runtime, open_runtime
from bot.settings import Settings, default_servers_dir
from bot.store.sqlite import SqliteStore
from tests.fakes import ABUSE, FakeScorer

ROOT = Path(__file__).resolve().parents[1]
GUILD = "123456789012345678"


def _settings(tmp_path: Path, **kw) -> Settings:
    return Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", **kw)


def test_default_policy_is_package_data():
    """The default policy lives inside the bot package (bot/config/default.toml), not in a checkout-only folder."""
    assert DEFAULT_POLICY_PATH == ROOT / "bot" / "config" / "default.toml"
    assert DEFAULT_POLICY_PATH.is_file()


def test_settings_from_env_reads_policy_and_servers_dir(tmp_path):
    """MODBOT_POLICY (any file name) and MODBOT_SERVERS_DIR are read; without them the packaged default and the
    checkout's config/servers apply."""
    s = Settings.from_env({"MODBOT_POLICY": str(tmp_path / "our-rules.toml"), "MODBOT_SERVERS_DIR": str(tmp_path)})
    assert s.default_policy == tmp_path / "our-rules.toml" and s.servers_dir == tmp_path
    d = Settings.from_env({})
    assert d.default_policy == DEFAULT_POLICY_PATH
    assert d.servers_dir == default_servers_dir() == ROOT / "config" / "servers"


async def test_runtime_applies_policy_file_of_any_name_server_file_and_override(tmp_path):
    """A default policy named our-rules.toml, the server's file in servers_dir and a stored runtime override are all
    applied, in that order of precedence."""
    rules = tmp_path / "our-rules.toml"
    rules.write_text(DEFAULT_POLICY_PATH.read_text(encoding="utf-8").replace(
        "retention_days = 30", "retention_days = 45"), encoding="utf-8")
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / f"discord-{GUILD}.toml").write_text("[thresholds]\nthreat = { review = 0.41 }\n")
    settings = _settings(tmp_path, default_policy=rules)
    async with open_runtime(settings, scorer=FakeScorer()) as rt:
        policy = await rt.policies.get("discord", GUILD)
        assert policy.server.retention_days == 45
        assert policy.thresholds["threat"].review == 0.41
        await rt.policies.set_override("discord", GUILD, "thresholds.threat.review", 0.42, "mod-1")
    async with open_runtime(settings, scorer=FakeScorer()) as rt:  # the override is stored in the mod log
        assert (await rt.policies.get("discord", GUILD)).thresholds["threat"].review == 0.42
        assert (await rt.policies.get("discord", "987654321098765432")).thresholds["threat"].review != 0.41
    async with open_runtime(settings, scorer=FakeScorer(), server_files=False, overrides=False) as rt:
        assert (await rt.policies.get("discord", GUILD)).thresholds["threat"].review not in (0.41, 0.42)


async def test_runtime_judges_and_records_then_closes_service_before_store(tmp_path):
    """The runtime's service judges with its scorer and records in its store; close() drains first, so the verdict
    is in the database afterwards, and a second close() does nothing."""
    rt = await Runtime.open(_settings(tmp_path), scorer=FakeScorer(ABUSE), enforce=False)
    m = Message(server=ServerRef("discord", GUILD), channel=ChannelRef("1"), author=MemberRef("2", "ann"), id="3",
                text="you freak", created_at=datetime.now(UTC))
    fut = rt.service.submit(m)
    await rt.close()
    await rt.close()
    assert fut.done() and fut.result().verdict.flagged
    async with await SqliteStore.open(tmp_path / "mod.db") as store:
        assert (await store.get_verdict("discord", GUILD, "3")) is not None


async def test_runtime_loads_scorer_from_factory_off_the_loop(tmp_path):
    """Without a scorer the factory is called once; its scorer is the one the service uses."""
    made: list[FakeScorer] = []

    def factory() -> FakeScorer:
        made.append(FakeScorer())
        return made[-1]

    async with open_runtime(_settings(tmp_path), scorer_factory=factory) as rt:
        assert made == [rt.scorer] and rt.service.scorer is rt.scorer


async def test_runtime_bad_policy_fails_before_the_store_or_model(tmp_path):
    """An invalid default policy raises PolicyError before the database file is created or the model is loaded."""
    from bot.core.policy import PolicyError

    bad = tmp_path / "bad.toml"
    bad.write_text("shadow_mode = 3\n", encoding="utf-8")

    def factory() -> FakeScorer:
        raise AssertionError("the model must not load")

    with pytest.raises(PolicyError, match="shadow_mode"):
        await Runtime.open(_settings(tmp_path, default_policy=bad), scorer_factory=factory)
    assert not (tmp_path / "mod.db").exists()


def test_discord_bot_settings_honour_servers_dir_and_policy_dir(tmp_path):
    """The Discord bot uses the settings' servers_dir (MODBOT_SERVERS_DIR); the older policy_dir form maps to
    policy_dir/servers and, when present, policy_dir/default.toml."""
    from bot.adapters.discord.client import ModBot
    from bot.settings import with_paths

    s = _settings(tmp_path)
    assert ModBot(settings=s).settings.servers_dir == tmp_path / "servers"
    legacy = with_paths(s, db_path=tmp_path / "x.db", policy_dir=tmp_path / "cfg")
    assert legacy.servers_dir == tmp_path / "cfg" / "servers" and legacy.default_policy == DEFAULT_POLICY_PATH
    assert legacy.db_path == tmp_path / "x.db"


@pytest.mark.slow  # builds and installs a wheel
def test_installed_wheel_finds_the_default_policy(tmp_path):
    """A wheel built from this tree contains bot/config/default.toml and no bench/; unpacked outside the checkout,
    bot.core.policy finds and loads the default policy inside the unpacked package."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        (src / name).write_bytes((ROOT / name).read_bytes())
    for pkg in ("bot", "cogs"):
        subprocess.run(["cp", "-r", str(ROOT / pkg), str(src / pkg)], check=True)
    out = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(src)], check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = out.glob("modbot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "bot/config/default.toml" in names
    assert not any(n.startswith("bench/") for n in names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import bot.core.policy as p, bot.settings as s; pol = p.load_policy(); "
            "print(p.DEFAULT_POLICY_PATH); print(s.default_servers_dir()); print(pol.server.retention_days)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    path, servers, days = proc.stdout.split("\n")[:3]
    assert Path(path) == site / "bot" / "config" / "default.toml"
    assert servers == "config/servers"
    assert days == "30"
