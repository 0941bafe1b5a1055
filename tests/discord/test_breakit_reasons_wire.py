"""Reasons at and over the limits (issue 28's "Bad input": a reason too long for the platform gets a clear
ephemeral answer and nothing changes), through the real discord.py client against the fake Discord. The refusal
tests failed on main before their fix; the boundary test passed before and after."""

from __future__ import annotations

import pytest

from tests.discord.helpers import dm_posts, ephemeral_text, guild_requests, mod_on, text_opt

pytestmark = pytest.mark.discord


@pytest.mark.parametrize("sub", ["warn", "kick"])
async def test_mod_sanction_with_a_reason_over_1000_characters_is_refused_not_cut(env, sub):
    """``/mod warn|kick`` with a 1,500-character reason (Discord allows 6,000 in an option) is refused saying the
    limit; before, the case silently kept the first 1,000 characters and the member was sanctioned."""
    reason = "spam " * 300
    cb = await mod_on(env, sub, env.alice, text_opt("reason", reason))
    text = ephemeral_text(cb)
    assert "1,500 characters; at most 1,000" in text and "Nothing was changed" in text, text
    assert env.rows("SELECT * FROM cases") == [] and dm_posts(env, env.alice) == []
    assert guild_requests(env, "DELETE", "members", env.alice) == []


async def test_mod_warn_with_a_reason_of_exactly_1000_characters_keeps_it_whole(env):
    """The limit itself is allowed and stored whole."""
    reason = "x" * 1000
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", reason))
    assert ephemeral_text(cb).startswith("Case #1: warn")
    assert [tuple(r) for r in env.rows("SELECT reason FROM cases")] == [(reason,)]


async def test_appeal_card_of_a_case_with_a_1000_character_reason_is_posted(env):
    """A warning whose reason has the allowed 1,000 characters is appealed: the appeal card reaches the review
    channel (its "Case" field, ``#1: warn`` plus the reason, is fitted inside Discord's 1,024 characters per field
    by ``cards.fit``). Passed before and after: it guards the limit now that 1,000 characters are allowed whole."""
    reason = "x" * 1000
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", reason))
    assert ephemeral_text(cb).startswith("Case #1: warn")
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [{"name": "case", "type": 4, "value": 1}])
    assert cb.body["type"] == 9
    done = await env.fake.submit_modal(env.guild, env.alice, cb, ["it was a quote, sorry"])
    assert "appeal of case" in ephemeral_text(done)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    field = next(f for f in env.card("Appeal #")["embeds"][0]["fields"] if f["name"] == "Case")
    assert len(field["value"]) <= 1024 and field["value"].startswith("#1: warn")
