"""Hostile policy files (fifteenth session's break-it pass): real files on ``tmp_path`` read by the real policy
loader and by ``python -m bot policy check`` in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.policy import PolicyError, load_policy

ROOT = Path(__file__).resolve().parents[1]


def test_a_policy_file_nested_too_deeply_is_a_syntax_error_naming_the_file(tmp_path):
    """A TOML array nested 5,000 deep (``a = [[[[...]]]]``) raised RecursionError out of tomllib: ``policy check``
    printed a traceback (and a server file like it would stop the scan or the bot with one). It is a PolicyError
    naming the file and ``(syntax)``, and ``policy check`` exits 2 with one ``error:`` line."""
    bad = tmp_path / "discord-123456789012345678.toml"
    bad.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(ROOT / "bot" / "config" / "default.toml", bad)
    assert str(bad) in str(info.value) and "(syntax)" in str(info.value) and "nested" in str(info.value)
    done = subprocess.run([sys.executable, "-m", "bot", "policy", "check", str(bad)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and str(bad) in done.stderr


@pytest.mark.parametrize("raw", ["[" * 3000 + "]" * 3000, "NaN", "-Infinity", "1e400", "9" * 5000],
                         ids=["nested-3000", "nan", "-inf", "1e400", "5000-digits"])
async def test_policy_set_with_a_hostile_value_is_refused_and_stores_nothing(tmp_path, raw):
    """``/policy set thresholds.insult.review <value>`` (Discord's option holds 6,000 characters, Slack's command
    more): a value nested 3,000 deep raised RecursionError out of ``parse_value`` (the command failed with an
    internal error instead of an answer); it, ``NaN``, infinities and a 5,000-digit number are refused with the key
    and reason, and nothing is stored."""
    from bot.runtime import build_policies
    from bot.settings import Settings
    from bot.store import open_store
    from bot.workflow.authz import Refused
    from bot.workflow.policy_admin import change_policy, parse_value
    from tests.test_policy_admin import ADMIN, RecordingDesk

    store = await open_store(tmp_path / "modlog.db")
    try:
        registry = build_policies(Settings(db_path=tmp_path / "modlog.db"), server_files=False, store=store)
        desk = RecordingDesk()
        with pytest.raises(Refused, match=r"^Refused `thresholds.insult.review`: .*Nothing was changed.$"):
            await change_policy(registry, desk, "discord", ADMIN, "1", "thresholds.insult.review", parse_value(raw))
        assert (await registry.get("discord", "1")).thresholds["insult"].review == 0.85
        assert desk.posts == []
    finally:
        await store.close()
