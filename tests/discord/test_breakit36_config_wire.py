"""Wire test (thirty-sixth session's break-it pass, area "config"): the real discord.py client against the local
fake Discord names a server's file that no server of the bot reads."""

from __future__ import annotations

import logging

import pytest

pytestmark = pytest.mark.discord


async def test_a_server_file_for_a_server_the_bot_is_not_in_is_named_at_ready(env, caplog):
    """``discord-<id>.toml`` with one digit of the guild id mistyped is a well-formed name, so it passed the start
    check and was never read: the guild ran on the default policy and nothing said so. Once the bot knows its
    servers it logs a warning naming the file; the files of its own servers are not named."""
    await env.stop()
    typo = env.policy_dir / "servers" / f"discord-{int(env.guild['id']) + 1}.toml"
    typo.write_text('[thresholds]\nthreat = { review = 0.4 }\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="bot.adapters.discord.client"):
        await env.start()
        await env.bot.caught_up.wait()
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "bot.adapters.discord.client" and r.levelno == logging.WARNING]
    assert warnings == [f"{typo}: this bot is in no server with the id in its name (a typo in the server id, or a "
                        "server the bot has left?); no server reads it"]


async def test_policy_set_exempt_channels_takes_channel_mentions_and_refuses_names(env):
    """``/policy set exempt.channels`` with a picked channel (Discord sends ``<#id>`` in a string option) was
    refused as "Input should be a valid list", so a moderator wrote ``["#bot-commands"]``, which was stored and
    exempted nothing. Mentions and ids (several, by spaces or commas) are now stored as ids, and a name is refused
    with the reason; a message in the exempt channel is then not judged."""
    from tests.discord.helpers import ephemeral_text, mod_cmd, text_opt
    from tests.discord.replies import server_admin

    admin = await server_admin(env)
    bots = env.fake.add_channel(env.guild, "bot-commands")
    cb = await mod_cmd(env, "set", text_opt("key", "exempt.channels"), text_opt("value", f"<#{bots}> <#{bots}>"),
                       group="policy", user=admin)
    assert ephemeral_text(cb) == f'Policy updated: `exempt.channels` = `["{bots}"]`.'
    assert (await env.bot.policy(env.guild["id"])).exempt.channels == [bots]
    cb = await mod_cmd(env, "set", text_opt("key", "exempt.channels"), text_opt("value", '["#bot-commands"]'),
                       group="policy", user=admin)
    assert ephemeral_text(cb).startswith("Refused `exempt.channels`: '#bot-commands' is a name or mention, not an "
                                         "id; give the channel's id")
    assert (await env.bot.policy(env.guild["id"])).exempt.channels == [bots]
    _, outcome = await env.post(env.alice, "threatword you", channel=bots)
    assert outcome.verdict.exempt == "channel" and not outcome.verdict.flagged


async def test_policy_ids_that_are_none_of_the_servers_roles_or_channels_are_reported_at_start(env):
    """A member's id copied for a role's id (both are snowflakes) in ``exempt.roles``, or a deleted channel in
    ``exempt.channels`` or as a channel override's key, loaded and matched nothing, without a word. At start the bot
    now posts each to the server's mod log (and logs it) with the key; the server's real roles and channels, and
    ids inherited from the default policy, are not named."""
    await env.stop()
    path = env.policy_dir / "servers" / f"discord-{env.guild['id']}.toml"
    member_id, gone = env.alice["id"], str(int(env.general) + 7)
    path.write_text(path.read_text() + "\n" +
                    f'[exempt]\nroles = ["{env.mod_role}", "{member_id}"]\nchannels = ["{env.general}", "{gone}"]\n'
                    f'[channels."{gone}"]\nexempt = true\n', encoding="utf-8")
    await env.start()
    post = await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages")
    text = post.body["embeds"][0]["description"]
    assert post.body["embeds"][0]["title"] == "Startup problem"
    assert text.splitlines() == [
        f"\N{WARNING SIGN} exempt.roles: {member_id} is no role of this server, so it matches nothing (an id of "
        "something else, or a role deleted?)",
        f"\N{WARNING SIGN} exempt.channels: {gone} is no channel of this server, so it matches nothing (an id of "
        "something else, or a channel deleted?)",
        f"\N{WARNING SIGN} channels: {gone} is no channel of this server, so it matches nothing (an id of something "
        "else, or a channel deleted?)"]
