"""Break-it: platform refusals must be recorded (a case in the mod log), through the real discord.py client."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, text_opt

pytestmark = pytest.mark.discord


async def test_a_refused_unban_is_recorded_as_a_case_and_in_the_mod_log(env):
    """/mod unban that Discord refuses (403 Missing Permissions, e.g. the bot lost Ban Members) must leave a
    record: a failed case with Discord's reason and a mod-log entry, as every other refused sanction does. Today
    the moderator gets "Unban failed" and the mod log holds nothing at all."""
    banned = env.fake.new_user(None, "banned")
    env.fake.add_ban(env.guild, banned, "spam")
    env.fake.fail("DELETE", rf"/guilds/{env.guild['id']}/bans/{banned['id']}")
    admin = env.fake.new_user(env.guild, "admin2", roles=[env.mod_role])  # Moderators hold Ban Members
    cb = await mod_cmd(env, "unban", text_opt("user_id", banned["id"]), text_opt("reason", "served the time"),
                       user=admin)
    assert "Unban failed: Missing Permissions (50013)" in ephemeral_text(cb)
    assert env.fake.find("DELETE", rf"/guilds/{env.guild['id']}/bans/{banned['id']}")  # Discord was asked
    cases = [tuple(r) for r in env.rows("SELECT member_id, status, failure FROM cases")]
    assert cases and cases[-1][0] == banned["id"] and cases[-1][1] == "failed" \
        and "Missing Permissions" in (cases[-1][2] or ""), cases
    assert env.modlog_posts(), "nothing in the mod log about the refused unban"
