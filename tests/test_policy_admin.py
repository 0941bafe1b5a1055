"""The shared policy command and setup step (``bot.workflow.policy_admin``) and case filters
(``bot.workflow.cases``), on a real SQLite mod log and the real policy registry: what Discord and Slack both call."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path

import pytest

from bot.core.policy_registry import PolicyRegistry
from bot.runtime import build_policies
from bot.settings import Settings
from bot.store import open_store
from bot.workflow.authz import Actor, Permission, Refused
from bot.workflow.cases import case_filter
from bot.workflow.policy_admin import SetupChange, apply_setup, change_policy, show_policy, with_moderators
from bot.workflow.views import LogEntry

ADMIN = Actor("100", permissions=frozenset({Permission.MANAGE_SERVER, Permission.MANAGE_MESSAGES}))
MODERATOR = Actor("200", permissions=frozenset({Permission.MANAGE_MESSAGES}))


class RecordingDesk:
    """A desk that keeps what was posted to the mod log and how often its channel problems were forgotten."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, LogEntry]] = []
        self.forgotten = 0

    async def post_mod_log(self, server_id: str, entry: LogEntry) -> bool:
        self.posts.append((server_id, entry))
        return True

    def forget_problems(self) -> None:
        self.forgotten += 1


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[PolicyRegistry]:
    store = await open_store(tmp_path / "modlog.db")
    try:
        yield build_policies(Settings(db_path=tmp_path / "modlog.db"), server_files=False, store=store)
    finally:
        await store.close()


async def test_apply_setup_writes_each_override_and_stops_at_a_refused_one(registry):
    """A setup writes its overrides in order, audited; a value the policy refuses stops it and the answer names
    what was written before; problems or nothing picked write nothing; a moderator may not set up."""
    desk = RecordingDesk()
    text = await apply_setup(registry, desk, "slack", ADMIN, "T1", [
        SetupChange("server.review_channel", "C0123ABCD", "review channel: <#C0123ABCD>"),
        SetupChange("server.moderator_roles", ["S0123MODS"], "moderators: <!subteam^S0123MODS>")])
    assert text == "Set up: review channel: <#C0123ABCD>; moderators: <!subteam^S0123MODS>."
    policy = await registry.get("slack", "T1")
    assert policy.server.review_channel == "C0123ABCD" and policy.server.moderator_roles == ["S0123MODS"]
    assert desk.forgotten == 1 and desk.posts[0][1].lines == (
        'server.review_channel = "C0123ABCD"', 'server.moderator_roles = ["S0123MODS"]', "Moderator: 100")
    with pytest.raises(Refused, match=r"Refused `server.mod_log_channel`: .*Done before it: server.review_channel"):
        await apply_setup(registry, desk, "slack", ADMIN, "T1", [
            SetupChange("server.review_channel", "C0123OTHR", "review channel"),
            SetupChange("server.mod_log_channel", "#mod-log", "mod-log channel")])
    assert not (await registry.get("slack", "T1")).server.mod_log_channel  # the refused value was not stored
    with pytest.raises(Refused, match="^Cannot use that: the bot is not in <#C1>. Nothing was changed.$"):
        await apply_setup(registry, desk, "slack", ADMIN, "T1",
                          [SetupChange("server.mod_log_channel", "C1", "x")], ["the bot is not in <#C1>"])
    with pytest.raises(Refused, match="^Pick a review channel"):
        await apply_setup(registry, desk, "slack", ADMIN, "T1", [])
    with pytest.raises(Refused, match="^You need Manage Server"):
        await apply_setup(registry, desk, "slack", MODERATOR, "T1", [SetupChange("server.review_channel", "C2", "")])
    assert (await registry.get("slack", "T1")).server.review_channel == "C0123OTHR"
    assert with_moderators(policy, ["U1", "S0123MODS", "U1"]) == ["S0123MODS", "U1"]


async def test_change_policy_and_show_policy(registry):
    """set/reset go through the registry (a bad value stores nothing); show gives a small key inline and the
    whole policy as a file that parses back to the effective policy."""
    desk = RecordingDesk()
    assert await change_policy(registry, desk, "discord", ADMIN, "1", "thresholds.insult.review", 0.9) == \
        "Policy updated: `thresholds.insult.review` = `0.9`."
    with pytest.raises(Refused, match="Nothing was changed"):
        await change_policy(registry, desk, "discord", ADMIN, "1", "thresholds.insult.review", "high")
    policy = await registry.get("discord", "1")
    assert policy.thresholds["insult"].review == 0.9
    small = show_policy(MODERATOR, policy, "1", "thresholds.insult.review", inline_max=1900)
    assert small.inline == "```json\n0.9\n```"
    whole = show_policy(MODERATOR, policy, "1", inline_max=1900, place="workspace")
    assert whole.inline is None and whole.filename == "policy-1.json"
    assert json.loads(whole.data)["thresholds"]["insult"]["review"] == 0.9
    assert whole.caption == f"The effective policy of this workspace ({len(whole.data):,} bytes):"
    with pytest.raises(Refused, match="Unknown policy key `thresholds.nope`"):
        show_policy(MODERATOR, policy, "1", "thresholds.nope", inline_max=1900)
    assert await change_policy(registry, desk, "discord", ADMIN, "1", "thresholds.insult.review", None) == \
        "Policy updated: `thresholds.insult.review` reset."
    assert [e.title for _, e in desk.posts] == ["Policy change", "Policy change"]


def test_case_filter_checks_and_words_the_filters():
    """Actions are parsed case-insensitively, labels lower-cased, days read as YYYY-MM-DD (both included), and
    the answer's words list every filter."""
    f = case_filter(member="1", moderator="automod", action="WARN", label="Insult", text=" rude ",
                    since="2026-06-01", until="2026-06-30")
    assert (f.action, f.label, f.text, f.since, f.until) == ("warn", "insult", "rude", date(2026, 6, 1),
                                                             date(2026, 6, 30))
    assert f.describe() == ("member <@1>, by automod, action warn, label insult, reason has “rude”, "
                            "from 2026-06-01, until 2026-06-30")
    assert case_filter().empty and not f.empty
    with pytest.raises(Refused, match="^Unknown action `nuke`"):
        case_filter(action="nuke")
    with pytest.raises(Refused, match="^`until` must be a date like 2026-06-01"):
        case_filter(until="2026-13-01")

