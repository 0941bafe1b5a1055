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
