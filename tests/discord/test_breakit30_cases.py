"""Break-it: a moderator cannot rewrite the reason of a case about themselves (as they cannot pardon it, dismiss
its card or decide its appeal), through the real discord.py client against the fake."""

from __future__ import annotations

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES, MODERATE_MEMBERS
from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt
from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord


async def test_a_moderator_cannot_rewrite_the_reason_of_their_own_case(env):
    """A lead warns the moderator (case #1, "leaked the mod channel"). The moderator's /case reason on case #1 is
    refused and the case keeps its reason; nothing is audited because nothing changed."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MODERATE_MEMBERS, 4)
    cb = await mod_on(env, "warn", env.mod, text_opt("reason", "leaked the mod channel"), user=lead)
    assert "Case #1: warn" in ephemeral_text(cb)
    cb = await mod_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", "a misunderstanding"),
                       group="case")
    assert "about yourself" in ephemeral_text(cb)
    assert [tuple(r) for r in env.rows("SELECT number, reason FROM cases")] == [(1, "leaked the mod channel")]
