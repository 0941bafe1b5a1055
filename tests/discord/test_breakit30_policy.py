"""Break-it: a raid timing the bot cannot hold as a date (an infinite or astronomically long raid mode or alert
cooldown) is refused by /policy set, instead of being accepted and breaking every raid and join burst after it,
through the real discord.py client against the fake."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, text_opt
from tests.discord.replies import server_admin

pytestmark = pytest.mark.discord


@pytest.mark.parametrize("key", ["rules.raid.raid_mode_duration_s", "rules.raid.cooldown_s"])
@pytest.mark.parametrize("value", ["1e999", "1e12"])
async def test_a_raid_timing_past_any_date_is_refused(env, key, value):
    """``1e999`` is JSON for infinity and ``1e12`` s is 31,700 years: both were stored, and the next raid's end
    (now + raid_mode_duration_s) or join burst's quiet period (now + cooldown_s) raised OverflowError: no raid card,
    no alert, every join after it failing. The policy refuses them and keeps its value."""
    admin = await server_admin(env)
    before = (await env.bot.policy(int(env.guild["id"]))).model_dump(mode="json")["rules"]["raid"][key.split(".")[-1]]
    cb = await mod_cmd(env, "set", text_opt("key", key), text_opt("value", value), group="policy", user=admin)
    text = ephemeral_text(cb)
    assert "updated" not in text.lower() and key.split(".")[-1] in text, text
    env.bot.policies.invalidate()
    after = (await env.bot.policy(int(env.guild["id"]))).model_dump(mode="json")["rules"]["raid"][key.split(".")[-1]]
    assert after == before
