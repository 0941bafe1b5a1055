"""Server policy configuration and its live changes (thirty-fourth session's break-it pass): the real policy loader,
the real override store and registry."""

from __future__ import annotations

import pytest

from bot.core.policy import DEFAULT_POLICY_PATH, PolicyError, load_policy
from bot.core.policy_registry import PolicyRegistry


async def test_policy_set_overrides_that_need_each_other_survive_a_restart(tmp_path):
    """``/policy set thresholds.threat.review 0.5`` then ``/policy set thresholds.threat.act 0.6`` (the file's
    tiers are 0.8 / 0.98) is valid and answered as set; the store lists overrides by key, and each was validated
    alone in that order: act 0.6 over the file's review 0.8 was refused, so at the next start every override of the
    server (shadow_mode too) was logged as invalid and dropped: the policy went back to the files unseen. Any later
    ``/policy set`` of that server was refused for the same reason."""
    from bot.runtime import OverrideBridge
    from bot.store import open_store

    store = await open_store(str(tmp_path / "modlog.db"))
    try:
        live = PolicyRegistry(store=OverrideBridge(store))
        await live.set_override("discord", "g1", "shadow_mode", True, "mod1")
        await live.set_override("discord", "g1", "thresholds.threat.review", 0.5, "mod1")
        await live.set_override("discord", "g1", "thresholds.threat.act", 0.6, "mod1")
        again = await live.set_override("discord", "g1", "thresholds.insult.review", 0.9, "mod1")
        assert (again.thresholds["threat"].review, again.thresholds["threat"].act) == (0.5, 0.6)
        restarted = await PolicyRegistry(store=OverrideBridge(store)).get("discord", "g1")
        assert (restarted.thresholds["threat"].review, restarted.thresholds["threat"].act) == (0.5, 0.6)
        assert restarted.thresholds["insult"].review == 0.9 and restarted.shadow_mode is True
    finally:
        await store.close()


async def test_a_join_window_past_any_span_is_refused_before_a_join_burst_crashes(tmp_path):
    """``[rules.raid] join_window_s = inf`` (TOML's infinity; ``1e999`` through /policy set) passed validation: the
    next join burst recorded its raid and posted its card, then the mod log's line ``int(join_window_s)`` raised
    OverflowError out of the join handler, so the mod log never got the alert. It is refused naming the key, as
    ``cooldown_s`` and ``raid_mode_duration_s`` are."""
    bad = tmp_path / "discord-123456789012345678.toml"
    for key in ("join_window_s", "window_s"):
        bad.write_text(f"[rules.raid]\n{key} = inf\n", encoding="utf-8")
        with pytest.raises(PolicyError) as info:
            load_policy(DEFAULT_POLICY_PATH, bad)
        assert info.value.key == f"rules.raid.{key}" and info.value.source == str(bad)


def test_a_server_file_saved_with_a_utf8_byte_order_mark_is_read(tmp_path):
    """A server file saved by Notepad or PowerShell 5 (``Out-File -Encoding utf8``) starts with a UTF-8 byte order
    mark: it was refused as ``(syntax): Invalid statement (at line 1, column 1)``, a reason naming nothing the
    moderator can see in the file. The mark is skipped, as scan's readers skip it; a file in another encoding is
    still refused naming it."""
    good = tmp_path / "discord-123456789012345678.toml"
    good.write_bytes(b"\xef\xbb\xbfshadow_mode = true\r\n[server]\r\nretention_days = 7\r\n")
    policy = load_policy(DEFAULT_POLICY_PATH, good)
    assert policy.shadow_mode is True and policy.server.retention_days == 7
    utf16 = tmp_path / "discord-223456789012345678.toml"
    utf16.write_bytes("\ufeffshadow_mode = true\n".encode("utf-16"))
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, utf16)
    assert info.value.source == str(utf16) and "not UTF-8" in info.value.reason


def test_a_named_pipe_given_as_a_policy_is_refused_instead_of_hanging(tmp_path):
    """A FIFO where a policy file is expected (``policy check``'s FILE, ``--policy``, or a
    ``discord-<guild id>.toml`` in the servers folder) blocked in open() until some process wrote to it:
    ``policy check`` and a bot's start hung with no word. It is refused naming the file and why; ``policy check``
    exits 2 with one ``error:`` line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    fifo = tmp_path / "discord-123456789012345678.toml"
    os.mkfifo(fifo)
    with pytest.raises(PolicyError) as info:
        load_policy(DEFAULT_POLICY_PATH, fifo)
    assert info.value.source == str(fifo) and "not a regular file" in info.value.reason
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "bot", "policy", "check", str(fifo)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(root), "PATH": ""})
    assert done.returncode == 2 and done.stderr.startswith("error: ") and str(fifo) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
