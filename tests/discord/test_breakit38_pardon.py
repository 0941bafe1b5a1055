"""Break-it: /mod pardon is checked as the sanctions it undoes are (role hierarchy; never a case about the
moderator themselves), through the real discord.py client against the fake Discord. Each test failed before its
fix."""

from __future__ import annotations

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES, MODERATE_MEMBERS
from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt
from tests.discord.replies import member_with_role
from tests.discord.test_breakit36_forgotten import forget

pytestmark = pytest.mark.discord


async def test_a_moderator_cannot_pardon_a_case_of_a_member_ranking_above_them(env):
    """An owner-appointed lead (role at 4, above the moderators' 3) is warned by a senior (role at 6): case #1, one
    strike. The moderator, who could not warn the lead (role hierarchy), cannot pardon that strike either: refused
    with the hierarchy sentence, the strike stays active and the case applied. Before, the pardon went through."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MODERATE_MEMBERS, 4)
    senior = await member_with_role(env, "senior", MANAGE_MESSAGES | MODERATE_MEMBERS, 6)
    refused = ephemeral_text(await mod_on(env, "warn", lead, text_opt("reason", "x")))
    assert "(role hierarchy)" in refused, refused
    assert "Case #1: warn" in ephemeral_text(await mod_on(env, "warn", lead, text_opt("reason", "leaked the mod "
                                                                                       "channel"), user=senior))
    answer = ephemeral_text(await mod_cmd(env, "pardon", text_opt("case", 1, 4)))
    assert answer == "lead ranks at or above you (role hierarchy). Nothing was changed.", answer
    assert [tuple(r) for r in env.rows("SELECT pardoned_at FROM strikes")] == [(None,)]
    assert [tuple(r) for r in env.rows("SELECT status FROM cases")] == [("applied",)]
    assert "Case #1 pardoned (1 strike(s))." == ephemeral_text(await mod_cmd(env, "pardon", text_opt("case", 1, 4),
                                                                             user=senior))


async def test_a_moderator_cannot_pardon_their_own_case_after_mydata_forget(env):
    """A lead warns the moderator (case #1). The moderator runs /mydata forget, so the case now names their
    pseudonym; /mod pardon 1 is still a case about themselves: refused, the strike stays. Before, the pseudonym
    did not match their id and they pardoned their own strike."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MODERATE_MEMBERS, 4)
    assert "Case #1: warn" in ephemeral_text(await mod_on(env, "warn", env.mod, text_opt("reason", "leaked the mod "
                                                                                           "channel"), user=lead))
    await forget(env, env.mod)
    answer = ephemeral_text(await mod_cmd(env, "pardon", text_opt("case", 1, 4)))
    assert answer == "You cannot pardon a case about yourself. Nothing was changed.", answer
    assert [tuple(r) for r in env.rows("SELECT pardoned_at FROM strikes")] == [(None,)]
