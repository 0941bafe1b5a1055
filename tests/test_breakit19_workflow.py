"""The platform-neutral moderation workflow across a restart (nineteenth session's break-it pass): a raid card's
"Ban all" pressed again after the bot restarted banned every raider a second time (a second case and a second
ban's strike points each: the record of what the raid's bulk actions did was kept in memory only). Real SQLite mod
log, the workflow's own fakes of the platform ports (tests/fakes.py)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.models import ActionKind
from bot.workflow import ModerationWorkflow
from tests.test_breakit_workflow import _close
from tests.test_workflow import MOD, SERVER, World, make_world


@pytest.fixture
async def world(tmp_path):
    w = await make_world(tmp_path)
    yield w
    await _close(w)


async def _raid(world: World, n: int = 12) -> None:
    """``n`` accounts join within seconds: raid #1 (a join burst) with every joiner as a raider."""
    t0 = datetime.now(UTC)
    for i in range(n):
        await world.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i))
        world.enforcer.add(f"new{i}")


async def _restart(world: World) -> ModerationWorkflow:
    """Close the workflow and start a new one on the same mod log (what a restart of the bot does)."""
    await world.workflow.close()
    workflow = ModerationWorkflow(platform="discord", store=world.store, enforcer=world.enforcer, desk=world.desk,
                                  policies=world.workflow.policies, ledger=world.service.ledger,
                                  raid_control=world.service)
    await workflow.recover()
    world.workflow = workflow
    return workflow


async def test_ban_all_pressed_again_after_a_restart_bans_no_raider_twice(world):
    await _raid(world)
    first = await world.workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed")
    assert first == "ban: 12 of 12 raider(s)."
    workflow = await _restart(world)
    again = await workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed")
    assert again == "ban: 0 of 12 raider(s). 12 already done before."
    assert len(world.enforcer.called("ban")) == 12
    assert world.rows("SELECT COUNT(*) FROM cases WHERE action = 'ban'") == [(12,)]
    assert set(world.rows("SELECT SUM(points) FROM strikes GROUP BY member_id")) == {(5,)}  # one ban's points


async def test_timeout_all_after_a_restart_skips_raiders_timed_out_but_times_out_the_rest(world):
    """A raider whose timeout case is recorded is skipped; one whose timeout failed (no case carried out) is timed
    out on the second press."""
    await _raid(world, 10)
    world.enforcer.refuse["timeout"] = "503 Service Unavailable"
    await world.workflow.raid_action(MOD, SERVER, 1, "timeout", reason="calm down please")
    assert world.rows("SELECT COUNT(*) FROM cases WHERE action = 'timeout' AND status = 'failed'") == [(10,)]
    del world.enforcer.refuse["timeout"]
    workflow = await _restart(world)
    text = await workflow.raid_action(MOD, SERVER, 1, "timeout", reason="calm down please")
    assert text == "timeout: 10 of 10 raider(s)."
    text = await (await _restart(world)).raid_action(MOD, SERVER, 1, "timeout", reason="calm down please")
    assert text == "timeout: 0 of 10 raider(s). 10 already done before."
    assert world.rows("SELECT COUNT(*) FROM cases WHERE action = 'timeout' AND status = 'applied'") == [(10,)]


async def test_a_ban_from_before_the_raid_does_not_skip_the_raider(world):
    """Only cases since the raid began count: a member banned last year (since unbanned, back with the raid) is
    banned again by "Ban all"."""
    world.enforcer.add("new0")
    assert (await world.workflow.sanction(MOD, SERVER, "new0", ActionKind.BAN, "old spam")).ok
    con = sqlite3.connect(world.store.path)
    with con:
        con.execute("UPDATE cases SET created_at = '2025-01-01T00:00:00.000000+00:00'")
    con.close()
    await _raid(world)  # new0 is back among the joiners
    assert await world.workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed") == \
        "ban: 12 of 12 raider(s)."
    assert world.rows("SELECT COUNT(*) FROM cases WHERE member_id = 'new0' AND action = 'ban'") == [(2,)]
