"""Break-it: Discord adapter authorization through the real discord.py client against the fake."""

from __future__ import annotations

import asyncio

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES, VIEW_CHANNEL, snowflake

pytestmark = pytest.mark.discord


async def _policy_helper(env):
    """A member whose only moderator standing is a role listed in the policy's ``server.moderator_roles``
    (the role itself holds no Discord permission)."""
    gid = env.guild["id"]
    role = {"id": snowflake(), "name": "helpers", "permissions": "0", "position": 2, "color": 0, "hoist": False,
            "managed": False, "mentionable": False, "flags": 0}
    env.guild["roles"].append(role)
    created = env.bot.wait_for("guild_role_create", check=lambda r: str(r.id) == role["id"], timeout=5)
    await env.fake.dispatch("GUILD_ROLE_CREATE", {"guild_id": gid, "role": role})
    await created
    path = env.policy_dir / "servers" / f"discord-{gid}.toml"
    path.write_text(path.read_text().replace(f'moderator_roles = ["{env.mod_role}"]',
                                             f'moderator_roles = ["{env.mod_role}", "{role["id"]}"]'))
    env.bot.policies.invalidate()
    user = env.fake.new_user(env.guild, "helper", roles=[role["id"]])
    member = env.fake.member(env.guild, user["id"])
    joined = env.bot.wait_for("member_join", check=lambda m: str(m.id) == user["id"], timeout=5)
    await env.fake.dispatch("GUILD_MEMBER_ADD", {**member, "guild_id": gid})
    await joined
    return user, role["id"]


async def _deny_in_general(env, target_id: str, bits: int) -> None:
    await env.fake.set_overwrite(env.guild, env.general, target_id, deny=bits)
    for _ in range(100):
        ch = env.bot.get_channel(int(env.general))
        if ch is not None and any(str(t.id) == target_id for t in ch.overwrites):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("overwrite never reached the bot's cache")


@pytest.mark.parametrize("bits", [MANAGE_MESSAGES | VIEW_CHANNEL, MANAGE_MESSAGES, VIEW_CHANNEL],
                         ids=["both", "manage_messages", "view_channel"])
async def test_policy_moderator_role_denied_manage_messages_in_the_channel_cannot_delete_there(env, bits):
    """The server's admins deny the helpers' role Manage Messages (and even View Channel) in #general with a
    channel overwrite. Discord says the helper may not manage messages there; the review card's Delete for a
    message in #general must be refused and the message must stay (the project's rule: the platform's own
    permissions IN the channel concerned)."""
    helper, role_id = await _policy_helper(env)
    await _deny_in_general(env, role_id, bits)
    assert not env.fake.permissions(env.guild, helper["id"], env.general) & MANAGE_MESSAGES  # Discord's own answer
    msg, outcome = await env.post(env.alice, "borderline needs a human")
    prefix = f"Review #{outcome.review_id} "
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(prefix)
                                          for m in env.fake.messages.values()))
    card = env.card(prefix)
    await env.fake.click(env.guild, helper, card, f"mod:review:{outcome.review_id}:delete")
    await asyncio.sleep(0.5)
    assert env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}") == []
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))[0][0] == "open"


async def test_policy_moderator_role_still_deletes_where_no_overwrite_takes_it_away(env):
    """The same helper, with an overwrite in #general that only denies an unrelated permission (Add Reactions):
    the moderator role's grant stands there, and the card's Delete deletes."""
    helper, role_id = await _policy_helper(env)
    await _deny_in_general(env, role_id, 1 << 6)  # ADD_REACTIONS
    msg, outcome = await env.post(env.alice, "borderline needs a human")
    prefix = f"Review #{outcome.review_id} "
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(prefix)
                                          for m in env.fake.messages.values()))
    await env.fake.click(env.guild, helper, env.card(prefix), f"mod:review:{outcome.review_id}:delete")
    await env.fake.wait_until(lambda: env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}"))


async def test_raid_card_end_is_refused_to_a_moderator_who_may_not_lift_slowmode(env):
    """A flagged-message raid puts #general in raid mode with 30 s slowmode. /raidmode off refuses a moderator
    without Manage Channels (slowmode is Discord's Manage Channels action). The raid card's "End raid mode" does
    the same thing (slowmode set back to 0, raid mode off), so it must be refused to that moderator too."""
    for i in range(5):
        user = env.fake.new_user(env.guild, f"raider{i}")
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    assert [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")] == [30]
    cb = await env.fake.slash(env.guild, env.mod, "raidmode", [{"name": "state", "type": 3, "value": "off"}])
    assert "You need Manage Channels" in cb.body["data"]["content"]  # the command refuses this moderator
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    await env.fake.click(env.guild, env.mod, card, f"mod:raid:{env.guild['id']}:1:end")
    await asyncio.sleep(0.5)
    assert [r.body["rate_limit_per_user"] for r in env.fake.find("PATCH", rf"/channels/{env.general}")] == [30]
    assert env.rows("SELECT COUNT(*) FROM raid_modes")[0][0] == 1  # raid mode still saved
