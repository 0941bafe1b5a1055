"""Wire tests: review cards and their persistent buttons."""

from __future__ import annotations

import pytest

from tests.discord.fake_discord import MANAGE_MESSAGES
from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord


async def flagged(env, text="identityhate card"):
    msg, outcome = await env.post(env.alice, text)
    await env.fake.wait_for("POST", rf"/channels/{env.review}/messages")
    return msg, outcome, env.card(f"Review #{outcome.review_id} ")


@pytest.mark.parametrize("how", ["manage_messages_role", "policy_moderator_role"])
async def test_moderator_dismiss_updates_card_and_case(env, how):
    """Dismiss by a moderator (a role with Manage Messages, or a policy moderator role) acknowledges at once with a
    deferred update, then edits the card and overturns the case."""
    _, outcome, card = await flagged(env)
    if how == "manage_messages_role":
        user = await member_with_role(env, "helper", MANAGE_MESSAGES, 2)
    else:
        user = env.fake.new_user(env.guild, "helper", roles=[env.mod_role])
    cb = await env.fake.click(env.guild, user, card, f"mod:review:{outcome.review_id}:dismiss")
    assert cb.body["type"] == 7 and cb.body["deferred"] == 6
    decision = next(f for f in cb.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")
    assert "dismissed" in decision["value"] and user["id"] in decision["value"]
    assert all(c["disabled"] for row in cb.body["data"]["components"] for c in row["components"])
    item = env.rows("SELECT decision, moderator_id FROM review_items WHERE id = ?", (outcome.review_id,))[0]
    assert (item["decision"], item["moderator_id"]) == ("dismissed", user["id"])
    case = env.rows("SELECT status FROM cases WHERE number = ?", (outcome.case_number,))[0]
    assert case["status"] == "overturned"
    assert env.rows("SELECT pardoned_at FROM strikes")[0]["pardoned_at"] is not None


async def test_non_moderator_click_refused_nothing_changes(env):
    """A member without Manage Messages or the moderator role gets an ephemeral refusal; nothing changes."""
    _, outcome, card = await flagged(env)
    before = env.rows("SELECT * FROM review_items")
    cb = await env.fake.click(env.guild, env.bob, card, f"mod:review:{outcome.review_id}:ban")
    assert cb.body["type"] == 4 and cb.body["data"]["flags"] == 64
    assert "You need Ban Members" in cb.body["data"]["content"]
    assert [dict(r) for r in env.rows("SELECT * FROM review_items")] == [dict(r) for r in before]
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == []


async def test_card_posted_before_restart_still_works(env):
    """After a restart, a button on a card posted before it still works (DynamicItem)."""
    _, outcome, card = await flagged(env)
    await env.stop()
    await env.start()
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:investigating")
    assert cb.body["type"] == 7
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))[0][0] == "investigating"


async def test_timeout_select_times_member_out(env):
    """Picking a duration on the card times the member out and opens an applied timeout case."""
    _, outcome, card = await flagged(env, "borderline insult here")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:timeout", values=["3600"])
    assert cb.body["type"] == 7
    patch = env.fake.find("PATCH", rf"/guilds/{env.guild['id']}/members/{env.alice['id']}")
    assert len(patch) == 1 and patch[0].body["communication_disabled_until"]
    rows = env.rows("SELECT action, status, moderator_id FROM cases WHERE moderator_id IS NOT NULL")
    assert [tuple(r) for r in rows] == [("timeout", "applied", env.mod["id"])]


async def test_other_server_review_id_refused(env):
    """A review id of another server is refused on this server's card; nothing changes."""
    _, outcome, card = await flagged(env)
    other_user = env.fake.new_user(env.other, "othermod", roles=[env.other["mod_role"]])
    foreign = dict(card, channel_id=env.fake.channel(env.other, "general"))
    cb = await env.fake.click(env.other, other_user, foreign, f"mod:review:{outcome.review_id}:ban")
    assert cb.body["data"]["flags"] == 64 and "does not exist in this server" in cb.body["data"]["content"]
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))[0][0] == "open"


async def test_card_decided_after_retention_erased_the_text_says_so(env):
    """A card still open when retention erased its message's text is dismissed: the edited card's Text field says
    the text was erased from the mod log (it said "(no text)", as if the member had posted none)."""
    from datetime import UTC, datetime, timedelta

    _, outcome, card = await flagged(env)
    text = next(f for f in card["embeds"][0]["fields"] if f["name"] == "Text")["value"]
    assert "identityhate card" in text
    assert await env.bot.store.purge_expired_text(datetime.now(UTC) + timedelta(days=1)) == 1
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:dismiss")
    fields = {f["name"]: f["value"] for f in cb.body["data"]["embeds"][0]["fields"]}
    assert fields["Text"] == "*(text erased from the mod log: its retention period ended, or the member asked)*"
