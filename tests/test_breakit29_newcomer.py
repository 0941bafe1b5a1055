"""A newcomer's findings (twenty-ninth session): what a first-time admin met on the documented commands."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError
from bot.core.policy_registry import PolicyRegistry
from bot.runtime import OverrideBridge
from bot.store.sqlite import SqliteStore


async def test_a_bad_server_file_is_named_once_without_a_false_override_message(tmp_path: Path, caplog):
    """A server file with ``toxicity = { review = "high" }``: ``get`` raises the PolicyError that names the file,
    key and reason, and logs nothing about a "stored override" (there is none) or "using files only" (it does not);
    before, ``scan`` printed that error line and a traceback before the one-line error."""
    servers = tmp_path / "servers"
    servers.mkdir()
    bad = servers / "discord-880000000000000001.toml"
    bad.write_text('[thresholds]\ntoxicity = { review = "high" }\n', encoding="utf-8")
    store = await SqliteStore.open(tmp_path / "m.db")
    try:
        registry = PolicyRegistry(DEFAULT_POLICY_PATH, servers_dir=servers, store=OverrideBridge(store))
        with caplog.at_level(logging.DEBUG), pytest.raises(PolicyError) as err:
            await registry.get("discord", "880000000000000001")
        assert str(bad) in str(err.value) and "thresholds.toxicity.review" in str(err.value)
        assert not [r for r in caplog.records if r.name.startswith("bot") and "override" in r.getMessage()]
    finally:
        await store.close()


async def test_a_stored_override_the_files_no_longer_accept_is_left_out_with_one_line(tmp_path: Path, caplog):
    """The other case the old message was for: an override stored earlier that the policy files now reject is left
    out, with one error line naming it (no traceback), and the files' policy is used."""
    store = await SqliteStore.open(tmp_path / "m.db")
    try:
        registry = PolicyRegistry(DEFAULT_POLICY_PATH, store=OverrideBridge(store))
        await registry.set_override("discord", "g1", "thresholds.toxicity.review", 0.5, "mod")
        await store.set_policy_override("discord", "g1", OverrideBridge.SCOPE, "thresholds.toxicity.review",
                                        "not a number", "mod")
        registry.invalidate()
        with caplog.at_level(logging.ERROR):
            policy = await registry.get("discord", "g1")
        assert policy.thresholds["toxicity"].review != 0.5
        (line,) = [r for r in caplog.records if r.name.startswith("bot") and "override" in r.getMessage()]
        assert "discord/g1" in line.getMessage() and line.exc_info is None
    finally:
        await store.close()


def test_an_unknown_label_is_one_problem_not_two(tmp_path: Path):
    """``foo = 3`` under [thresholds] was reported twice: pydantic's "Input should be a valid dictionary or instance
    of Tier" beside "unknown label 'foo'". The label's problem alone is reported; other problems stay."""
    from bot.core.policy import load_policy

    path = tmp_path / "p.toml"
    path.write_text('[thresholds]\nfoo = 3\ntoxicity = { review = "x" }\n', encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(DEFAULT_POLICY_PATH, path)
    text = str(err.value)
    assert "unknown label 'foo'" in text and "thresholds.toxicity.review" in text
    assert "thresholds.foo" not in text and "instance of Tier" not in text
