"""Wire tests: /policy show sends the whole effective policy as a file; /policy set autocompletes its keys."""

from __future__ import annotations

import json

import pytest

from tests.discord.fake_discord import snowflake
from tests.discord.helpers import mod_cmd, text_opt

pytestmark = pytest.mark.discord


async def test_policy_show_sends_the_whole_policy_as_a_file(env):
    """/policy show without a key answers with a JSON file of the whole effective policy (nothing cut), which
    parses and equals the server's effective policy."""
    cb = await mod_cmd(env, "show", group="policy")
    assert cb.body["data"]["flags"] & 64
    assert "The effective policy of this server" in cb.body["data"]["content"]
    (name, data), = cb.files.items()
    assert name == f"policy-{env.guild['id']}.json"
    doc = json.loads(data.decode("utf-8"))
    assert len(data) > 1900  # the old answer was cut at 1,900 characters, mid-JSON
    assert doc == (await env.bot.policy(env.guild["id"])).model_dump(mode="json")
    assert doc["server"]["review_channel"] == env.review


async def autocomplete(env, sub: str, typed: str) -> list[str]:
    """The choices the bot offers for ``/policy <sub> key:<typed>`` (an autocomplete interaction)."""
    p = env.fake.interaction_base(env.guild, env.mod, env.general)
    options = [{"name": "key", "type": 3, "value": typed, "focused": True}]
    if sub == "set":
        options.append({"name": "value", "type": 3, "value": ""})
    p.update(type=4, data={"id": snowflake(), "name": "policy", "type": 1, "guild_id": env.guild["id"],
                           "options": [{"name": sub, "type": 1, "options": options}]})
    cb = await env.fake._interact(p, 5)
    assert cb.body["type"] == 8, cb.body
    return [c["value"] for c in cb.body["data"]["choices"]]


async def test_policy_set_autocompletes_keys(env):
    """Typing 'thresholds.ins' offers the insult tiers first; any typed text offers at most 25 real keys."""
    choices = await autocomplete(env, "set", "thresholds.ins")
    assert choices[:2] == ["thresholds.insult.act", "thresholds.insult.review"]
    everything = await autocomplete(env, "set", "")
    assert len(everything) == 25
    review = await autocomplete(env, "reset", "review_channel")
    assert review == ["server.review_channel"]


async def test_policy_show_of_one_key_stays_inline(env):
    """/policy show with a small key answers its JSON inline, without a file."""
    cb = await mod_cmd(env, "show", text_opt("key", "server.retention_days"), group="policy")
    assert cb.body["data"]["content"] == "```json\n30\n```" and not cb.files


async def test_policy_show_says_which_default_tier_is_switched_off(env):
    """With the server's insult act tier switched off (``thresholds.insult.act = false``), the whole policy's
    caption and the inline ``thresholds.insult`` each end with the line saying so."""
    await env.bot.policies.set_override("discord", env.guild["id"], "thresholds.insult.act", False, None)
    note = "`thresholds.insult.act is off: insult never acts on its score alone (review from 0.85);"
    cb = await mod_cmd(env, "show", group="policy")
    assert cb.body["data"]["content"].split("\n")[1].startswith(note) and cb.files
    cb = await mod_cmd(env, "show", text_opt("key", "thresholds.insult"), group="policy")
    content = cb.body["data"]["content"]
    assert content.startswith("```json\n") and '"act": null' in content and not cb.files
    assert content.split("```\n")[-1].startswith(note)


async def new_role(env, name: str) -> str:
    """A role called ``name`` (no permissions, position 1) that the bot's cache knows; its id."""
    role = {"id": snowflake(), "name": name, "permissions": "0", "position": 1, "color": 0, "hoist": False,
            "managed": False, "mentionable": False, "flags": 0}
    env.guild["roles"].append(role)
    created = env.bot.wait_for("guild_role_create", check=lambda r: str(r.id) == role["id"], timeout=5)
    await env.fake.dispatch("GUILD_ROLE_CREATE", {"guild_id": env.guild["id"], "role": role})
    await created
    return str(role["id"])


async def set_moderators(env, admin, value: str) -> str:
    from tests.discord.helpers import ephemeral_text

    cb = await mod_cmd(env, "set", text_opt("key", "server.moderator_roles"), text_opt("value", value),
                       group="policy", user=admin)
    return ephemeral_text(cb)


async def test_policy_set_moderator_roles_takes_mentions_ids_and_names(env):
    """/policy set server.moderator_roles (and exempt.roles) reads what Discord puts in a string option when a role
    is picked (``<@&id>``), a bare id, a role's name (any case, with or without @) and several of them; the policy
    stores the role ids, once each."""
    from tests.discord.replies import server_admin

    admin = await server_admin(env)
    helpers = await new_role(env, "Helpers")
    senior = await new_role(env, "Senior Mods")
    mods = env.mod_role
    assert await set_moderators(env, admin, f"<@&{helpers}>") == \
        f'Policy updated: `server.moderator_roles` = `["{helpers}"]`.'
    assert (await env.bot.policy(env.guild["id"])).server.moderator_roles == [helpers]
    await set_moderators(env, admin, f"<@&{helpers}> <@&{mods}>, @senior mods, {helpers}")
    assert (await env.bot.policy(env.guild["id"])).server.moderator_roles == [helpers, mods, senior]
    await set_moderators(env, admin, "Senior Mods")
    assert (await env.bot.policy(env.guild["id"])).server.moderator_roles == [senior]
    await set_moderators(env, admin, json.dumps([mods, "helpers"]))
    assert (await env.bot.policy(env.guild["id"])).server.moderator_roles == [mods, helpers]
    cb = await mod_cmd(env, "set", text_opt("key", "exempt.roles"), text_opt("value", f"<@&{senior}>"),
                       group="policy", user=admin)
    from tests.discord.helpers import ephemeral_text

    assert ephemeral_text(cb) == f'Policy updated: `exempt.roles` = `["{senior}"]`.'
    assert (await env.bot.policy(env.guild["id"])).exempt.roles == [senior]


async def test_policy_set_moderator_roles_refuses_roles_the_server_does_not_have(env):
    """A name no role has, a mention or id of no role here, and a name two roles share are refused with the words
    typed; nothing is stored."""
    from tests.discord.replies import server_admin

    admin = await server_admin(env)
    await new_role(env, "Twins")
    await new_role(env, "twins")
    before = (await env.bot.policy(env.guild["id"])).server.moderator_roles
    assert await set_moderators(env, admin, "Nobody Here") == \
        "There is no role `Nobody Here` in this server. Nothing was changed."
    assert await set_moderators(env, admin, "<@&123456789012345678>") == \
        "There is no role `123456789012345678` in this server. Nothing was changed."
    assert await set_moderators(env, admin, "twins") == \
        "2 roles are called `twins`: pick the role (@twins) or give its id. Nothing was changed."
    assert (await set_moderators(env, admin, "@everyone")).startswith("Refused `server.moderator_roles`")
    assert (await env.bot.policy(env.guild["id"])).server.moderator_roles == before
    assert env.rows("SELECT COUNT(*) FROM policy_overrides")[0][0] == 0


async def test_policy_key_autocomplete_stays_within_discords_limits(env):
    """Typing a /policy set key offers the matching dotted keys: nothing typed, the first 25 of them (Discord takes
    at most 25 choices, each name and value at most 100 characters); ``thresholds.ins`` the insult tier keys
    first. Answered over the wire as an autocomplete callback (type 8) the fake checks as Discord does."""
    def typed(text: str) -> list[dict]:
        return [{"name": "set", "type": 1, "options": [{"name": "key", "type": 3, "value": text, "focused": True}]}]

    everything = await env.fake.autocomplete(env.guild, env.mod, "policy", typed(""))
    assert everything.response == 200 and everything.body["type"] == 8
    choices = everything.body["data"]["choices"]
    assert len(choices) == 25 and all(len(c["name"]) <= 100 and c["name"] == c["value"] for c in choices)
    insult = (await env.fake.autocomplete(env.guild, env.mod, "policy", typed("thresholds.ins"))).body["data"]
    assert [c["value"] for c in insult["choices"]][:2] == ["thresholds.insult.act", "thresholds.insult.review"]
