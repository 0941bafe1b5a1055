"""Break-it: a member holds one timeout on Discord, and a new timeout replaces it; a shorter one decided later (a
ladder step, a card's Timeout, a raid's) must not cut a longer timeout that still stands, through the real
discord.py client against the fake."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.discord.helpers import ephemeral_text, mod_on, text_opt
from tests.discord.test_review_buttons_wire import review_card

pytestmark = pytest.mark.discord


def _timed_out_until(env, user) -> datetime | None:
    until = env.fake.member(env.guild, user["id"])["communication_disabled_until"]
    return datetime.fromisoformat(until) if until else None


async def test_a_ladder_step_does_not_cut_a_moderators_longer_timeout(env):
    """A moderator times Alice out for 7 days (2 points). Another cleans the queue: Delete on the card of Alice's
    earlier flagged message adds 1 point, which crosses the default ladder's 3-point step "timeout 1 hour". Discord
    holds one timeout per member, so sending that hour ended Alice's week-long timeout after an hour. The week
    stands; the step's case says why it was not sent."""
    msg, outcome, card = await review_card(env)
    cb = await mod_on(env, "timeout", env.alice, text_opt("minutes", 7 * 24 * 60, 4), text_opt("reason", "doxxing"))
    assert "done" in ephemeral_text(cb)
    week = _timed_out_until(env, env.alice)
    assert week is not None and week > datetime.now(UTC) + timedelta(days=6)
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    await env.fake.wait_until(lambda: len(env.rows("SELECT * FROM cases WHERE escalated_from IS NOT NULL")) == 1)
    (step,) = env.rows("SELECT action, status, failure FROM cases WHERE escalated_from IS NOT NULL")
    assert step["action"] == "timeout" and step["status"] == "applied"
    now_until = _timed_out_until(env, env.alice)
    assert now_until is not None and now_until >= week - timedelta(seconds=5), now_until
    assert "case #2" in (step["failure"] or "")  # the step's case names the longer timeout it left standing


async def test_a_longer_timeout_still_replaces_a_shorter_one(env):
    """The other way round is unchanged: a 1-hour timeout, then a 7-day one, leaves the 7 days."""
    await mod_on(env, "timeout", env.alice, text_opt("minutes", 60, 4), text_opt("reason", "heated"))
    await mod_on(env, "timeout", env.alice, text_opt("minutes", 7 * 24 * 60, 4), text_opt("reason", "doxxing"))
    until = _timed_out_until(env, env.alice)
    assert until is not None and until > datetime.now(UTC) + timedelta(days=6)
    assert [r[0] for r in env.rows("SELECT status FROM cases ORDER BY number")] == ["applied", "applied"]


async def _week_then_step(env):
    """Alice: a moderator's 7-day timeout (case #2), then a ladder step's 1-hour timeout (case #3) not sent."""
    msg, outcome, card = await review_card(env)
    await mod_on(env, "timeout", env.alice, text_opt("minutes", 7 * 24 * 60, 4), text_opt("reason", "doxxing"))
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    await env.fake.wait_until(lambda: len(env.rows("SELECT * FROM cases WHERE escalated_from IS NOT NULL")) == 1)
    assert [tuple(r) for r in env.rows("SELECT number, action FROM cases ORDER BY number")] == [
        (1, "review"), (2, "timeout"), (3, "timeout")]


async def _appeal_decided(env, number: int, decision: str) -> None:
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", number, 4)])
    await env.fake.submit_modal(env.guild, env.alice, cb, ["that was not me, honestly"])
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    await env.fake.click(env.guild, env.mod, env.card("Appeal #"), f"mod:appealdecide:1:{decision}")


async def test_overturning_the_longer_timeout_leaves_the_shorter_one_that_still_runs(env):
    """The week (case #2) is overturned on appeal: the hour of the step (case #3) still stands, so Alice's timeout
    is shortened to it, neither kept at a week (case #3 is later, but was never sent) nor removed."""
    await _week_then_step(env)
    await _appeal_decided(env, 2, "overturn")
    await env.fake.wait_until(lambda: env.rows("SELECT status FROM appeals")[0][0] == "overturned")
    until = _timed_out_until(env, env.alice)
    assert until is not None and datetime.now(UTC) + timedelta(minutes=50) < until < datetime.now(UTC) + timedelta(
        minutes=61), until


async def test_overturning_the_unsent_shorter_timeout_leaves_the_longer_one(env):
    """The step's hour (case #3, never sent) is overturned on appeal: the week of case #2 stands untouched."""
    await _week_then_step(env)
    week = _timed_out_until(env, env.alice)
    await _appeal_decided(env, 3, "overturn")
    await env.fake.wait_until(lambda: env.rows("SELECT status FROM appeals")[0][0] == "overturned")
    assert _timed_out_until(env, env.alice) == week
    assert "case #2 times them out longer" in env.rows("SELECT failure FROM cases WHERE number = 3")[0][0]
