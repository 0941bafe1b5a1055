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
