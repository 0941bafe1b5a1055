"""Break-it: /appeal tells a member nothing about other members' cases, through the real discord.py client against
the fake Discord. Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.discord.test_commands_wire import appeal_via_modal

pytestmark = pytest.mark.discord


async def test_appeal_of_another_members_case_answers_as_a_case_that_does_not_exist(env):
    """Bob appeals the number of Alice's case and a number no case has: both answers are the same sentence, so
    /appeal cannot be used to learn which case numbers exist and are about someone else. Before, the first said
    "Case #1 is not about you" and the second "There is no case #2 in that server"."""
    _, outcome = await env.post(env.alice, "identityhate not bob's")
    assert outcome.case_number == 1
    others = await appeal_via_modal(env, env.guild, env.bob, 1)
    missing = await appeal_via_modal(env, env.guild, env.bob, 2)
    assert others == "You have no case #1 in that server: you can only appeal your own cases.", others
    assert missing == "You have no case #2 in that server: you can only appeal your own cases.", missing
    assert env.rows("SELECT * FROM appeals") == []
