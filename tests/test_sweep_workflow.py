"""Issue 25 (correctness sweep), workflow items: temporary-ban timers, join-burst raid actions, purge records,
timeout caps and automatic raider timeouts."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta

from bot.core.models import ActionKind
from bot.workflow import ModerationWorkflow
from tests.test_workflow import MOD, SERVER, make_world


async def _wait_past(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def test_temporary_ban_expiry_does_not_lift_a_later_permanent_ban(world):  # noqa: F811
    """A 1 s temporary ban followed by a permanent ban of the same member: the first ban's end unbans nobody."""
    tmp = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    perm = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    assert tmp.ok and perm.ok
    await _wait_past(1.3)
    assert world.enforcer.called("unban") == []
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (tmp.case_number,)) == [(1,)]


async def test_mod_unban_cancels_a_temporary_bans_timer(world):  # noqa: F811
    """/mod unban of a temporarily banned member marks the temporary case lifted and cancels its timer, so a
    later permanent ban is not lifted when the old ban would have ended."""
    tmp = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    res = await world.workflow.unban(MOD, SERVER, "alice", "mistake")
    assert res.ok and world.workflow._timers == {}
    assert world.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (tmp.case_number,)) == [(1,)]
    await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
    await _wait_past(1.3)
    assert world.enforcer.called("unban") == [("alice",)]  # only the moderator's unban


async def test_ban_after_an_overturned_appeal_is_not_lifted_by_the_old_timer(world):  # noqa: F811
    """Temporary ban, appeal overturned (unbanned), then a new permanent ban: the old ban's timer lifts nothing."""
    tmp = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=1)
    await world.workflow.appeal("alice", SERVER, tmp.case_number, "sorry")
    (appeal_id,) = world.rows("SELECT id FROM appeals")[0]
    decided = await world.workflow.decide_appeal(MOD, SERVER, appeal_id, uphold=False)
    assert decided.ok and world.enforcer.called("unban") == [("alice",)]
    await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "again")
    await _wait_past(1.3)
    assert world.enforcer.called("unban") == [("alice",)]


async def test_restart_does_not_reschedule_a_temporary_ban_superseded_by_a_permanent_one(tmp_path):
    """After a restart, a temporary ban followed by a permanent ban is not rescheduled, even once it is due."""
    w = await make_world(tmp_path)
    try:
        tmp = await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "cool off", duration_s=3600)
        await w.workflow.sanction(MOD, SERVER, "alice", ActionKind.BAN, "for good")
        await w.workflow.close()
        con = sqlite3.connect(w.store.path)  # the superseded case as an older build left it: due and not lifted
        con.execute("UPDATE cases SET expires_at = '2000-01-01T00:00:00.000000+00:00', lifted_at = NULL "
                    "WHERE number = ?", (tmp.case_number,))
        con.commit()
        con.close()
        again = ModerationWorkflow(platform="discord", store=w.store, enforcer=w.enforcer, desk=w.desk,
                                   policies=w.workflow.policies, ledger=w.service.ledger, raid_control=w.service)
        await again.recover()
        await asyncio.sleep(0.1)
        assert w.enforcer.called("unban") == []
        assert again._timers == {}
        assert w.rows("SELECT lifted_at IS NOT NULL FROM cases WHERE number = ?", (tmp.case_number,)) == [(1,)]
        await again.close()
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def _join_burst(world, n: int) -> None:  # noqa: F811
    t0 = datetime.now(UTC)
    for i in range(n):
        world.enforcer.add(f"new{i}")
        await world.workflow.member_joined(SERVER, f"new{i}", t0 + timedelta(seconds=i * 0.1))


async def test_join_burst_ban_all_bans_every_joiner_including_later_ones(world):  # noqa: F811
    """25 joins (the alert fires at the tenth): "Ban all" bans all 25 and answers "ban: 25 of 25"."""
    await _join_burst(world, 25)
    text = await world.workflow.raid_action(MOD, SERVER, 1, "ban", reason="raid confirmed")
    assert text.startswith("ban: 25 of 25 raider(s)."), text
    assert sorted(m for (m,) in world.enforcer.called("ban")) == sorted(f"new{i}" for i in range(25))


async def test_join_burst_raiders_are_kept_in_the_store(world):  # noqa: F811
    """Later joiners of a join-burst raid are saved on the raid, so a restart's bulk action still reaches them."""
    await _join_burst(world, 25)
    raid = await world.store.get_raid("discord", SERVER, 1)
    assert len(raid.members) == 25


async def test_end_raid_mode_on_a_join_burst_card_ends_the_real_raid(world):  # noqa: F811
    """"End raid mode" closes the join-burst raid itself: a later join neither reopens nor redraws its card."""
    await _join_burst(world, 12)
    await world.workflow.raid_action(MOD, SERVER, 1, "end")
    assert all(b.closed for b in world.workflow._boards.values())
    assert world.workflow.open_join_raid(SERVER, await world.workflow.policies.get("discord", SERVER)) is None
    updates = len(world.desk.raid_updates)
    world.enforcer.add("late")
    await world.workflow.member_joined(SERVER, "late", datetime.now(UTC) + timedelta(seconds=2))
    await asyncio.sleep(1.7)  # a card refresh would be due by now
    assert len(world.desk.raid_updates) == updates
    assert world.desk.raid_updates[-1][1].closed


async def test_purge_case_records_what_was_deleted_and_what_was_refused(world):  # noqa: F811
    """/purge of 150 messages, 30 older than 14 days: the case says "120 deleted, 30 refused (older than 14 days)"
    and is not recorded as simply applied."""
    now = datetime.now(UTC)
    ids = [(f"m{i}", now - timedelta(days=1)) for i in range(120)] + \
          [(f"old{i}", now - timedelta(days=15)) for i in range(30)]
    res = await world.workflow.purge(MOD, SERVER, "c1", ids)
    (reason, status, failure), = world.rows("SELECT reason, status, failure FROM cases WHERE number = ?",
                                            (res.case_number,))
    assert reason == "purge in channel c1: 120 deleted, 30 refused (older than 14 days)"
    assert status == "failed"
    assert failure == "partially applied: 120 of 150 deleted, 30 refused (older than 14 days)"


async def test_purge_case_with_nothing_refused_is_applied(world):  # noqa: F811
    """/purge where every message is deleted records the count and ``applied`` with no failure text."""
    now = datetime.now(UTC)
    res = await world.workflow.purge(MOD, SERVER, "c1", [(f"m{i}", now) for i in range(5)])
    assert world.rows("SELECT reason, status, failure FROM cases WHERE number = ?", (res.case_number,)) == [
        ("purge in channel c1: 5 deleted", "applied", None)]


async def test_a_28_day_timeout_is_sent_capped_below_discords_limit_and_says_so(world):  # noqa: F811
    """A moderator's 28-day timeout is sent as 28 days less the 1 h clock-skew margin, and the case says so."""
    from bot.core.models import MAX_SENT_TIMEOUT_S, MAX_TIMEOUT_S

    world.enforcer.add("alice")
    res = await world.workflow.sanction(MOD, SERVER, "alice", ActionKind.TIMEOUT, "cool off",
                                        duration_s=MAX_TIMEOUT_S)
    assert res.ok
    assert world.enforcer.called("timeout") == [("alice", MAX_SENT_TIMEOUT_S)] == [("alice", 28 * 86400 - 3600)]
    (failure,), = world.rows("SELECT failure FROM cases WHERE number = ?", (res.case_number,))
    assert failure.startswith("timeout capped at 27 d 23 h (asked 28 days)")


def test_policy_check_warns_about_a_timeout_longer_than_what_is_sent(tmp_path):
    """A ladder step of exactly 28 days loads, and Policy.warnings() names it and what is sent instead."""
    from bot.core.policy import DEFAULT_POLICY_PATH, load_policy

    extra = tmp_path / "p.toml"
    extra.write_text("[[strikes.ladder]]\npoints = 9\naction = \"timeout\"\nduration_s = 2419200\n")
    warnings = load_policy(DEFAULT_POLICY_PATH, extra).warnings()
    assert any(w.startswith("strikes.ladder[") and "2419200 s is sent as 2415600 s" in w for w in warnings), warnings
    assert load_policy(DEFAULT_POLICY_PATH).warnings() == []


async def test_join_burst_raiders_are_timed_out_automatically_when_the_policy_says_so(tmp_path):
    """rules.raid.timeout_raiders = true: every account of a 12-join burst (later joiners too) is timed out for
    raider_timeout_s, one automod case each, applied; off by default (the other tests) nothing is timed out."""
    w = await make_world(tmp_path, policy="[rules.raid]\ntimeout_raiders = true\nraider_timeout_s = 600\n")
    try:
        await _join_burst(w, 12)
        assert sorted(w.enforcer.called("timeout")) == sorted((f"new{i}", 600) for i in range(12))
        rows = w.rows("SELECT member_id, status, moderator_id FROM cases WHERE action = 'timeout'")
        assert len(rows) == 12 and {(s, m) for _, s, m in rows} == {("applied", None)}
        text = await w.workflow.raid_action(MOD, SERVER, 1, "timeout", reason="raid confirmed")  # nothing is done twice
        assert text.startswith("timeout: 0 of 12 raider(s).") and "12 already done before" in text
        assert len(w.enforcer.called("timeout")) == 12
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


async def test_join_burst_raiders_are_not_timed_out_by_default(world):  # noqa: F811
    """Without rules.raid.timeout_raiders (default false) a join burst times nobody out."""
    await _join_burst(world, 12)
    assert world.enforcer.called("timeout") == []


async def test_message_raid_times_out_its_new_member_raiders_but_not_regulars(tmp_path):
    """rules.raid.timeout_raiders = true and eight members posting attacks: the raid's raiders who joined an hour
    ago are timed out (one automod case each), the two long-standing members among them are not."""
    from dataclasses import replace

    w = await make_world(tmp_path, policy="[rules.raid]\ntimeout_raiders = true\nraider_timeout_s = 900\n")
    try:
        t0 = datetime.now(UTC)
        for i in range(8):
            info = w.enforcer.add(f"raider{i}")
            joined = t0 - (timedelta(days=400) if i in (1, 6) else timedelta(hours=1))
            w.enforcer.members[f"raider{i}"] = replace(info, joined_at=joined)
            msg = w.message(f"raider{i}", "you vermin", at=t0 + timedelta(seconds=i))
            await w.judge(replace(msg, author=replace(msg.author, joined_at=joined)))
        await w.workflow.drain()
        timed = sorted(m for m, _ in w.enforcer.called("timeout"))
        assert timed == sorted(f"raider{i}" for i in range(8) if i not in (1, 6))
        assert {s for _, s in w.enforcer.called("timeout")} == {900}
        assert w.rows("SELECT COUNT(*) FROM cases WHERE action = 'timeout' AND moderator_id IS NULL") == [(6,)]
    finally:
        await w.workflow.close()
        await w.service.close()
        await w.store.close()


def test_policy_check_cli_prints_the_timeout_cap_warning(tmp_path, capsys):
    """`policy check` of a policy with a 28-day ladder timeout exits 0 and warns on stderr what is sent instead."""
    from bot.cli import main

    f = tmp_path / "p.toml"
    f.write_text("[[strikes.ladder]]\npoints = 9\naction = \"timeout\"\nduration_s = 2419200\n")
    assert main(["policy", "check", str(f)]) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if "review_channel" not in ln
           and "mod_log_channel" not in ln]  # the unset-channel warnings of policy check come after it
    assert err == ["warning: strikes.ladder[0]: a timeout of 2419200 s is sent as 2415600 s (Discord's 28-day limit "
                   "is measured on its own clock; 1 h is kept for clock skew)"]
