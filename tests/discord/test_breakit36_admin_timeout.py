"""Break-it: Discord never times out a member with Administrator (it answers 403 Missing Permissions, 50013, as if
the bot lacked a permission). A moderator's timeout of such a member, below them and below the bot, failed with
"Missing Permissions (50013)": the moderators went looking for a permission the bot has. Through the real
discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES, MODERATE_MEMBERS
from tests.discord.helpers import ephemeral_text, mod_on, text_opt
from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord

ADMINISTRATOR = 1 << 3


async def test_timeout_of_an_administrator_says_discord_does_not_time_out_administrators(env):
    """A lead (Moderate Members, position 4) times out a member whose role (position 2) grants Administrator: the
    case fails with the real reason, nothing is sent to Discord, and no strike is given."""
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MODERATE_MEMBERS, 4)
    admin = await member_with_role(env, "adm", ADMINISTRATOR, 2)
    cb = await mod_on(env, "timeout", admin, text_opt("minutes", 10, 4), text_opt("reason", "cool off"), user=lead)
    text = ephemeral_text(cb)
    reason = "Discord does not time out members with Administrator"
    assert "FAILED" in text and reason in text and "50013" not in text, text
    assert [tuple(r) for r in env.rows("SELECT action, status, failure FROM cases")] == [
        ("timeout", "failed", f"{reason} (their roles grant it)")]
    assert env.fake.find("PATCH", rf"/guilds/{env.guild['id']}/members/{admin['id']}") == []
    assert env.rows("SELECT * FROM strikes") == []
