"""Wire tests: moderators' sanctions add strikes and go through the escalation ladder like automod."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.discord.helpers import ephemeral_text, guild_requests, mod_cmd, mod_on, text_opt, until

pytestmark = pytest.mark.discord


async def two_points(env):
    """Two automod deletions of alice's messages: 2 active strike points (cases #1 and #2)."""
    for text in ("identityhate one", "identityhate two"):
        _, outcome = await env.post(env.alice, text)
        assert outcome.strike_added
    assert env.rows("SELECT SUM(points) FROM strikes")[0][0] == 2


async def test_mod_warn_crossing_ladder_times_member_out_for_an_hour(env):
    """2 active points + /mod warn (1 point) crosses the 3-point step: PATCH timeout ~1 h ahead, case recorded."""
    await two_points(env)
    assert guild_requests(env, "PATCH", "members", env.alice) == []
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", "third strike"))
    text = ephemeral_text(cb)
    assert text.startswith("Case #3: warn") and "escalation: case #4 timeout (1 hour)" in text
    (patch,) = guild_requests(env, "PATCH", "members", env.alice)
    ahead = until(patch) - datetime.now(UTC)
    assert timedelta(minutes=59) < ahead <= timedelta(hours=1)
    row = env.rows("SELECT action, status, moderator_id, reason, expires_at FROM cases WHERE number = 4")[0]
    assert (row["action"], row["status"], row["moderator_id"]) == ("timeout", "applied", None)
    assert "after case #3" in row["reason"] and "ladder step at 3" in row["reason"]
    strikes = [tuple(r) for r in env.rows("SELECT points, case_number FROM strikes ORDER BY id")]
    assert strikes == [(1, 1), (1, 2), (1, 3)]


async def test_no_escalation_below_step_or_when_sanction_is_stronger(env):
    """One point + /mod warn stays below the step (no PATCH); a kick crossing it is not followed by a timeout."""
    await env.post(env.alice, "identityhate once")
    await mod_on(env, "warn", env.alice, text_opt("reason", "second"))
    assert guild_requests(env, "PATCH", "members", env.alice) == []
    await mod_on(env, "kick", env.alice, text_opt("reason", "enough"))
    assert guild_requests(env, "PATCH", "members", env.alice) == []
    assert [r[0] for r in env.rows("SELECT action FROM cases ORDER BY number")] == ["delete", "warn", "kick"]
    assert env.rows("SELECT SUM(points) FROM strikes")[0][0] == 5


async def test_pardoned_points_no_longer_count(env):
    """After /mod pardon of one automod case, a /mod warn brings 2 points, not 3: no escalation."""
    await two_points(env)
    assert "pardoned (1 strike(s))" in ephemeral_text(await mod_cmd(env, "pardon", text_opt("case", 1, 4)))
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", "after pardon"))
    assert "escalation" not in ephemeral_text(cb)
    assert guild_requests(env, "PATCH", "members", env.alice) == []


async def test_card_warn_adds_strike_and_escalates(env):
    """The review card's Warn adds a strike for the message; crossing the ladder times the member out."""
    await two_points(env)
    _, outcome = await env.post(env.alice, "borderline rude words")
    assert outcome.review_id is not None and not outcome.strike_added
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(
        f"Review #{outcome.review_id} ") for m in env.fake.messages.values()))
    card = env.card(f"Review #{outcome.review_id} ")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:warn")
    decision = next(f for f in cb.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")
    assert "escalation: case #" in decision["value"]
    (patch,) = guild_requests(env, "PATCH", "members", env.alice)
    assert timedelta(minutes=59) < until(patch) - datetime.now(UTC) <= timedelta(hours=1)
    row = env.rows("SELECT points, message_id FROM strikes ORDER BY id DESC LIMIT 1")[0]
    assert tuple(row) == (1, outcome.verdict.message.id)
