"""Wire tests: /mydata forget, /modstats (7 and 30 days), /policy show and /policy reset."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt
from tests.discord.replies import server_admin

pytestmark = pytest.mark.discord


async def forget(env, user, confirm="FORGET"):
    return await env.fake.slash(env.guild, user, "mydata", [{"name": "forget", "type": 1, "options": [
        text_opt("confirm", confirm)]}])


async def test_mydata_forget_erases_text_pseudonymises_keeps_counts(env):
    """/mydata forget erases alice's stored text, replaces her id everywhere, and keeps the case count."""
    await env.post(env.alice, "identityhate first")
    await env.post(env.alice, "harmless second")
    await env.post(env.bob, "identityhate from bob")
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    count = env.rows("SELECT COUNT(*) FROM cases")[0][0]
    text = ephemeral_text(await forget(env, env.alice))
    pseudonym = text.split("`")[1]
    assert pseudonym.startswith("forgotten-")
    uid = env.alice["id"]
    for table, col in (("messages", "author_id"), ("verdicts", "member_id"), ("cases", "member_id"),
                       ("strikes", "member_id"), ("review_items", "member_id")):
        assert env.rows(f"SELECT COUNT(*) FROM {table} WHERE {col} = ?", (uid,))[0][0] == 0, table
    mine = env.rows("SELECT excerpt, purged_at FROM messages WHERE author_id = ?", (pseudonym,))
    assert len(mine) == 2 and all(r["excerpt"] is None and r["purged_at"] for r in mine)
    assert env.rows("SELECT excerpt FROM messages WHERE author_id = ?", (env.bob["id"],))[0][0] == \
        "identityhate from bob"
    assert env.rows("SELECT COUNT(*) FROM cases")[0][0] == count
    assert env.rows("SELECT COUNT(*) FROM cases WHERE member_id = ?", (pseudonym,))[0][0] == 2


@pytest.mark.parametrize("confirm", ["forget", "yes", ""])
async def test_mydata_forget_needs_exact_confirmation(env, confirm):
    """/mydata forget without the exact word FORGET erases nothing."""
    await env.post(env.alice, "identityhate keep")
    assert "Nothing was erased" in ephemeral_text(await forget(env, env.alice, confirm))
    assert env.rows("SELECT excerpt FROM messages")[0][0] == "identityhate keep"


async def test_modstats_per_label_and_rule_over_7_and_30_days(env):
    """/modstats counts flags, dismissals (false positives) and overturns per label and rule, 7 vs 30 days."""
    old, _ = await env.post(env.alice, "identityhate long ago")
    _, recent = await env.post(env.bob, "identityhate this week")
    await env.post(env.alice, "join discord.gg/abcdef now")
    await env.fake.wait_for("POST", rf"/channels/{env.review}/messages", count=3)
    card = env.card(f"Review #{recent.review_id} ")
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{recent.review_id}:dismiss")
    ten_days_ago = (datetime.now(UTC) - timedelta(days=10)).isoformat(timespec="microseconds")
    con = sqlite3.connect(env.db)
    with con:
        con.execute("UPDATE verdicts SET judged_at = ? WHERE message_id = ?", (ten_days_ago, old["id"]))
    con.close()
    rule = json.loads(env.rows("SELECT rule_hits FROM verdicts WHERE rule_hits != '[]'")[0][0])[0]["rule"]
    cb = await env.fake.slash(env.guild, env.mod, "modstats", [])
    assert cb.body["data"]["flags"] & 64
    fields = {f["name"]: f["value"].splitlines() for f in cb.body["data"]["embeds"][0]["fields"]}
    ia7 = "label `identity_attack`: flags 1, decided 1, dismissed 1 (100%), cases 1, overturned 1 (100%)"
    ia30 = "label `identity_attack`: flags 2, decided 1, dismissed 1 (100%), cases 2, overturned 1 (50%)"
    link = f"rule `{rule}`: flags 1, decided 0, dismissed 0, cases 1, overturned 0 (0%)"
    assert ia7 in fields["Last 7 days"] and link in fields["Last 7 days"]
    assert ia30 in fields["Last 30 days"] and link in fields["Last 30 days"]


async def test_modstats_refused_for_members(env):
    """/modstats by a member without moderator rights is refused ephemerally."""
    cb = await env.fake.slash(env.guild, env.bob, "modstats", [])
    assert "You need Manage Messages" in ephemeral_text(cb)


async def policy_value(env, key):
    cb = await mod_cmd(env, "show", text_opt("key", key), group="policy")
    body = ephemeral_text(cb)
    assert body.startswith("```json\n") and body.endswith("\n```")
    return json.loads(body[len("```json\n"):-len("\n```")])


async def test_policy_show_set_reset_audited_back_to_file_value(env):
    """/policy show reads the effective value; reset after set returns to the server file's value, audited."""
    env.write_policy(env.guild, env.review, env.modlog, "[thresholds]\ninsult = { review = 0.9, act = 0.99 }\n")
    env.bot.policies.invalidate()
    key = "thresholds.insult.review"
    assert await policy_value(env, key) == 0.9
    admin = await server_admin(env)
    await mod_cmd(env, "set", text_opt("key", key), text_opt("value", "0.97"), group="policy", user=admin)
    assert await policy_value(env, key) == 0.97
    cb = await mod_cmd(env, "reset", text_opt("key", key), group="policy", user=admin)
    assert ephemeral_text(cb) == f"Policy updated: `{key}` reset."
    assert await policy_value(env, key) == 0.9
    assert (await env.bot.policy(env.guild["id"])).thresholds["insult"].review == 0.9
    assert env.rows("SELECT * FROM policy_overrides") == []
    audit = [tuple(r) for r in env.rows("SELECT key, action, old_value, new_value, moderator_id FROM "
                                        "policy_changes ORDER BY id")]
    assert audit == [(key, "set", None, "0.97", admin["id"]), (key, "reset", "0.97", None, admin["id"])]
    await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages",
                            pred=lambda r: "reset" in r.body["embeds"][0]["description"])


@pytest.mark.parametrize("key,expect", [("thresholds.nosuch", "Unknown policy key"),
                                        ("server", '"retention_days": 30')])
async def test_policy_show_whole_section_or_unknown_key(env, key, expect):
    """/policy show of a section prints its JSON; an unknown key answers an error."""
    cb = await mod_cmd(env, "show", text_opt("key", key), group="policy")
    assert expect in ephemeral_text(cb)


async def test_policy_reset_by_member_refused(env):
    """/policy reset by a member without Manage Server (a moderator included) changes nothing, is not audited."""
    admin = await server_admin(env)
    await mod_cmd(env, "set", text_opt("key", "thresholds.insult.review"), text_opt("value", "0.97"), group="policy",
                  user=admin)
    for who in (env.bob, env.mod):
        cb = await mod_cmd(env, "reset", text_opt("key", "thresholds.insult.review"), group="policy", user=who)
        assert "You need Manage Server" in ephemeral_text(cb)
    assert len(env.rows("SELECT * FROM policy_overrides")) == 1
    assert [r[0] for r in env.rows("SELECT action FROM policy_changes")] == ["set"]
