"""Wire tests: automod through the real discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

from bot.core.policy import load_policy

pytestmark = pytest.mark.discord


async def test_identity_attack_deleted_card_posted_case_recorded(env):
    """An identity attack is deleted, a review card is posted and an applied case is recorded."""
    fake = env.fake
    msg = await fake.post(env.guild, env.general, env.alice, "you are identityhate garbage")
    await fake.wait_for("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")
    card = await fake.wait_for("POST", rf"/channels/{env.review}/messages")
    embed = card.body["embeds"][0]
    assert embed["title"].startswith("Review #")
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "||you are identityhate garbage||" == fields["Text"]
    tier = load_policy().thresholds["identity_attack"]
    assert "identity_attack" in fields["Scores (threshold)"]
    assert f"(review from {tier.review:.2f}, act from {tier.act:.2f})" in fields["Scores (threshold)"]
    assert "sexual_explicit" not in fields["Scores (threshold)"]  # only the labels that mattered
    ids = [c["custom_id"] for row in card.body["components"] for c in row["components"]]
    assert any(i.endswith(":dismiss") for i in ids) and all(len(i) < 100 for i in ids)
    await env.settle()
    await fake.wait_until(lambda: env.rows("SELECT status FROM cases")[0]["status"] == "applied")
    rows = env.rows("SELECT number, member_id, action, status, message_id FROM cases")
    assert [(r["member_id"], r["action"], r["status"], r["message_id"]) for r in rows] == [
        (env.alice["id"], "delete", "applied", msg["id"])]


async def test_missing_permission_on_delete_recorded_as_failed(env):
    """A 403/50013 on delete marks the case failed with the reason, the mod log says why, the bot keeps going."""
    fake = env.fake
    fake.fail("DELETE", rf"/channels/{env.general}/messages/\d+", status=403, code=50013)
    msg, outcome = await env.post(env.alice, "identityhate one")
    case = env.rows("SELECT status, failure FROM cases WHERE number = ?", (outcome.case_number,))[0]
    assert (case["status"], case["failure"]) == ("failed", "delete: Missing Permissions (50013)")
    log_post = next(p for p in env.modlog_posts() if "FAILED" in p.body["embeds"][0]["title"])
    assert "Missing Permissions (50013)" in log_post.body["embeds"][0]["description"]
    msg2, outcome2 = await env.post(env.bob, "identityhate two")
    await fake.wait_for("DELETE", rf"/channels/{env.general}/messages/{msg2['id']}")
    assert env.rows("SELECT status FROM cases WHERE number = ?", (outcome2.case_number,))[0]["status"] == "applied"


async def test_edit_into_abuse_caught_once(env):
    """A clean message edited into abuse is caught; editing it again adds no second strike."""
    msg, first = await env.post(env.alice, "hello there friends")
    assert first.verdict.flagged is False
    msg, second = await env.post(env.alice, "identityhate edit", edit_of=msg)
    assert second.verdict.flagged and second.strike_added
    await env.fake.wait_for("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")
    _, third = await env.post(env.alice, "identityhate edited again", edit_of=msg)
    assert third.strike_added is False
    assert len(env.rows("SELECT * FROM strikes WHERE member_id = ?", (env.alice["id"],))) == 1


async def test_same_message_create_twice_one_verdict(env):
    """The same MESSAGE_CREATE delivered twice gives one verdict, one case, one delete."""
    msg, first = await env.post(env.alice, "identityhate dup")
    waiter = env.bot.wait_for("moderation_outcome", check=lambda o: o.verdict.message.id == msg["id"], timeout=5)
    await env.fake.dispatch("MESSAGE_CREATE", msg)
    second = await waiter
    assert (first.duplicate, second.duplicate) == (False, True)
    assert len(env.rows("SELECT * FROM verdicts WHERE message_id = ?", (msg["id"],))) == 1
    assert len(env.rows("SELECT * FROM cases WHERE message_id = ?", (msg["id"],))) == 1
    assert len(env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")) == 1


async def test_raid_of_new_members_one_alert_and_slowmode(env):
    """Ten new members posting abuse within seconds raise one raid alert and switch on slowmode."""
    raiders = [env.fake.new_user(env.guild, f"raider{i}") for i in range(10)]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    alerts = [p for p in env.modlog_posts() if p.body["embeds"][0]["title"].startswith("Raid alert")]
    assert len(alerts) == 1
    slow = env.fake.find("PATCH", rf"/channels/{env.general}")
    assert [r.body["rate_limit_per_user"] for r in slow] == [30]
    assert len(env.rows("SELECT * FROM raids")) == 1


async def test_uncached_message_edit_is_judged(env):
    """An edit of a message the bot never saw (not cached) is still judged through the raw edit event."""
    msg = env.fake.message_payload(env.guild, env.general, env.alice, "old text")
    waiter = env.bot.wait_for("moderation_outcome", check=lambda o: o.verdict.message.id == msg["id"], timeout=5)
    await env.fake.edit(msg, "identityhate after edit")
    outcome = await waiter
    assert outcome.verdict.message.edited_at is not None and outcome.verdict.flagged
    await env.fake.wait_for("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")


async def test_startup_problems_reported_to_mod_log(env):
    """Missing permissions and a disabled Message Content intent are posted to the mod log at startup."""
    await env.stop()
    bot_role = next(r for r in env.guild["roles"] if r["name"] == "ModBot")
    bot_role["permissions"] = str(int(bot_role["permissions"]) & ~((1 << 1) | (1 << 2)))  # no kick, no ban
    env.fake.app_flags = 0
    await env.start()
    post = await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages")
    text = post.body["embeds"][0]["description"]
    assert "missing permissions: kick_members, ban_members" in text and "Message Content intent" in text
    assert env.fake.identifies[-1]["intents"] & (1 << 15) == 0
