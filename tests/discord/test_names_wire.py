"""Members' names on Discord (issue 25 item 16): the real discord.py client against the fake Discord, judging
display names and nicknames on GUILD_MEMBER_ADD and GUILD_MEMBER_UPDATE (FakeScorer presets)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.policy_defaults import IA_REVIEW

pytestmark = pytest.mark.discord


async def join(env: Any, name: str) -> dict[str, Any]:
    """A new account called ``name`` joins the main guild (GUILD_MEMBER_ADD); returns the member object."""
    user = env.fake.new_user(env.guild, name)
    member = env.fake.member(env.guild, user["id"])
    await env.fake.dispatch("GUILD_MEMBER_ADD", {**member, "guild_id": env.guild["id"]})
    return member


def name_cases(env: Any) -> list[Any]:
    """Cases opened for names (their reason starts with what the name is)."""
    return env.rows("SELECT * FROM cases WHERE reason LIKE 'nickname %' OR reason LIKE 'username %' "
                    "OR reason LIKE 'display name %'")


async def test_a_hostile_nickname_opens_one_case_and_one_review_card_naming_it(env):
    """A nickname the model flags in its frame opens a review case and one card quoting it; the same update again
    does nothing twice, and a clean join before it opens nothing."""
    member = await join(env, "quietperson")
    await asyncio.sleep(0.3)
    assert name_cases(env) == [] and env.review_posts() == []
    update = {**member, "nick": "identityhate", "guild_id": env.guild["id"]}
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", update)
    await env.fake.wait_until(lambda: len(env.review_posts()) == 1)
    (case,) = name_cases(env)
    assert case["action"] == "review" and case["member_id"] == member["user"]["id"]
    assert case["reason"].startswith(f"nickname 'identityhate': identity_attack 0.95 >= {IA_REVIEW:.2f}")
    assert "identityhate" in json.dumps(env.review_posts()[0].body)
    (item,) = env.rows("SELECT * FROM review_items WHERE case_number = ?", (case["number"],))
    assert item["message_id"] is None
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**update, "roles": [env.mod_role]})  # a role change only
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", update)
    await asyncio.sleep(0.3)
    assert len(name_cases(env)) == 1 and len(env.review_posts()) == 1


async def test_a_leet_slur_username_on_join_is_caught_by_the_slur_list_on_the_bare_name(env):
    """A username that is a leet slur is matched by the slur blocklist on the bare normalised name at join."""
    await join(env, "n1gger")
    await env.fake.wait_until(lambda: len(name_cases(env)) == 1)
    (case,) = name_cases(env)
    assert case["reason"] == "username 'n1gger': blocklist: slurs: nigger"


async def test_name_events_are_not_messages_and_never_count_as_spam(env):
    """Judging names records no message verdicts (name events never enter the spam or raid windows)."""
    member = await join(env, "someone")
    for nick in ("a1", "a2", "a3", "a4", "a5", "a6"):
        await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "nick": nick, "guild_id": env.guild["id"]})
    await asyncio.sleep(0.3)
    assert env.rows("SELECT * FROM verdicts") == [] and name_cases(env) == []
    assert env.bot.workflow.names.last_judged(env.guild["id"], member["user"]["id"]) == "a6"


async def test_a_hostile_global_display_name_change_is_judged_in_every_guild_where_no_nickname_hides_it(env):
    """A change of the account's global display name (seen by discord.py as on_user_update) is judged where the
    member has no nickname."""
    member = await join(env, "plainuser")
    await asyncio.sleep(0.2)
    user = {**member["user"], "global_name": "identityhate"}
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "user": user, "guild_id": env.guild["id"]})
    await env.fake.wait_until(lambda: len(name_cases(env)) == 1)
    (case,) = name_cases(env)
    assert case["reason"].startswith(f"display name 'identityhate': identity_attack 0.95 >= {IA_REVIEW:.2f}")


async def test_a_moderator_dismisses_a_name_card_and_a_member_cannot(env):
    """The name card takes the review card path: a member's click is refused, a moderator's Dismiss decides it."""
    member = await join(env, "x")
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "nick": "identityhate", "guild_id": env.guild["id"]})
    await env.fake.wait_until(lambda: len(name_cases(env)) == 1)
    (case,) = name_cases(env)
    (item,) = env.rows("SELECT id FROM review_items WHERE case_number = ?", (case["number"],))
    await env.fake.wait_until(lambda: any(m["channel_id"] == env.review and m["embeds"]
                                          for m in env.fake.messages.values()))
    card = env.card(f"Review #{item['id']} ")
    await env.fake.click(env.guild, env.bob, card, f"mod:review:{item['id']}:dismiss")
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (item["id"],))[0]["decision"] == "open"
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{item['id']}:dismiss")
    row = env.rows("SELECT decision, moderator_id FROM review_items WHERE id = ?", (item["id"],))[0]
    assert (row["decision"], row["moderator_id"]) == ("dismissed", env.mod["id"])
