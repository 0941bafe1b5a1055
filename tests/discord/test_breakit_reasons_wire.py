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
