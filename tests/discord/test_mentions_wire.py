"""Wire tests: words a moderator or member typed (a reason, a refused value) never ping on Discord.

Discord pings whoever a message's ``content`` mentions (``@everyone``, ``@here``, ``<@id>``, ``<@&role>``) unless
the message's ``allowed_mentions`` says otherwise; embeds never ping. The fake computes the pings as Discord does
(:meth:`tests.discord.fake_discord.FakeDiscord._pings`), so these tests fail when a message the bot sends with a
member's words in its content lets mentions through. The bot is given Mention Everyone and the Moderators role
is made mentionable, so that only ``allowed_mentions`` stands between the words and a ping.
"""

from __future__ import annotations

import discord
import pytest

from tests.discord.fake_discord import BOT_PERMS, MENTION_EVERYONE
from tests.discord.helpers import dm_posts, ephemeral_text, mod_cmd, mod_on, text_opt

pytestmark = pytest.mark.discord


async def can_ping_everyone(env) -> str:
    """Give the bot Mention Everyone and make the Moderators role mentionable; returns a reason that mentions
    everyone, the Moderators role and bob."""
    await env.fake.set_role_permissions(env.guild, env.fake.role(env.guild, "ModBot")["id"],
                                        BOT_PERMS | MENTION_EVERYONE)
    env.fake.role(env.guild, "Moderators")["mentionable"] = True
    return f"@everyone @here <@&{env.mod_role}> <@{env.bob['id']}> look"


async def test_the_fake_pings_when_a_message_allows_it(env):
    """The control: a message that allows every mention pings everyone, the role and the user (so the tests below
    can fail)."""
    reason = await can_ping_everyone(env)
    channel = env.bot.get_channel(int(env.general))
    await channel.send(reason, allowed_mentions=discord.AllowedMentions.all())
    (ping,) = env.fake.pings
    assert ping["everyone"] and ping["roles"] == [env.mod_role] and ping["users"] == [env.bob["id"]]


async def test_a_warning_reason_pings_nobody_in_the_notice_the_answer_or_the_mod_log(env):
    """/mod warn with a reason full of mentions: the member's DM notice, the moderator's answer, the mod log and
    the member's /mystatus ping nobody; the reason is stored as typed."""
    reason = await can_ping_everyone(env)
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", reason))
    assert ephemeral_text(cb).startswith("Case #1: warn")
    await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages")
    assert dm_posts(env, env.alice)
    status = await env.fake.slash(env.guild, env.alice, "mystatus", [])
    assert reason in str(status.body["data"])
    changed = await mod_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", reason + " again"),
                            group="case")
    assert "#1" in ephemeral_text(changed)
    assert env.rows("SELECT reason FROM cases")[0][0] == reason + " again"
    shown = await mod_cmd(env, "show", text_opt("number", 1, 4), group="case")
    assert reason in str(shown.body["data"])
    assert env.fake.pings == []


async def test_mystatus_shows_every_strike_when_a_reason_is_long(env):
    """A strike whose reason is 990 characters no longer pushes the next strike (and its own case number and
    expiry) out of /mystatus's 1,024-character field: each strike keeps its line, reasons are shortened to fit."""
    long = "spamming the same link again and again " * 25
    await mod_on(env, "warn", env.alice, text_opt("reason", long[:990]))
    await mod_on(env, "warn", env.alice, text_opt("reason", "second warning"))
    status = await env.fake.slash(env.guild, env.alice, "mystatus", [])
    field = status.body["data"]["embeds"][0]["fields"][0]
    assert field["name"].startswith("Active strikes: 2")
    lines = field["value"].split("\n")
    assert len(field["value"]) <= 1024 and len(lines) == 2
    assert lines[0].startswith("1 point: spamming the same link") and "\u2026 (case #1), expires <t:" in lines[0]
    assert lines[1].startswith("1 point: second warning (case #2), expires <t:")
