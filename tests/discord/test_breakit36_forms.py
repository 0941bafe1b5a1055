"""Break-it: a member's appeal or report typed into its form while the bot restarts (a deploy, a crash) is not lost,
through the real discord.py client against the fake Discord. discord.py hands a modal submit only to the modal
object that opened it, in memory; the bot kept none across a restart (nor after the 15 minutes it waited), so the
member's text was dropped without a word and Discord told them "Something went wrong"."""

from __future__ import annotations

import pytest

from tests.discord.helpers import dm_posts, ephemeral_text, mod_on, text_opt, user_opt
from tests.discord.test_workflow_wire import dm_interaction

pytestmark = pytest.mark.discord


async def test_an_appeal_written_in_the_dm_across_a_restart_is_filed(env):
    """Alice is banned; she presses Appeal in the notice DM and writes her appeal. The bot restarts before she
    submits it: the appeal is filed all the same (her whole text), she is told so, and its card reaches the
    review channel."""
    await mod_on(env, "ban", env.alice, text_opt("reason", "spam links"))
    assert len(dm_posts(env, env.alice)) == 1
    notice_msg = next(m for m in env.fake.messages.values()
                      if m["channel_id"] == env.fake.dm_channels[env.alice["id"]])
    custom = notice_msg["components"][0]["components"][0]["custom_id"]
    opened = await dm_interaction(env, env.alice, {"custom_id": custom, "component_type": 2}, 3, message=notice_msg)
    assert opened.body["type"] == 9
    modal = opened.body["data"]
    field = modal["components"][0]["components"][0]["custom_id"]
    await env.stop()
    await env.start()
    text = "it was my little brother on my account, " * 10
    done = await dm_interaction(env, env.alice, {"custom_id": modal["custom_id"], "components": [
        {"type": 1, "components": [{"type": 4, "custom_id": field, "value": text}]}]}, 5)
    assert "appeal of case #1 was filed" in done.body["data"]["content"]
    assert [tuple(r) for r in env.rows("SELECT case_number, member_id, text, status FROM appeals")] == [
        (1, env.alice["id"], text, "open")]
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #1")
                                          for m in env.fake.messages.values()))


async def test_a_report_written_across_a_restart_is_filed_about_the_reported_message(env):
    """Alice opens "Report to moderators" on Bob's message and writes why; the bot restarts before she submits:
    the report is recorded about that member and message, and she is told it was sent."""
    msg, _ = await env.post(env.bob, "some rude but unscored text")
    opened = await env.fake.slash(env.guild, env.alice, "Report to moderators", [], cmd_type=3,
                                  target_id=msg["id"], resolved={"messages": {msg["id"]: msg}})
    assert opened.body["type"] == 9
    await env.stop()
    await env.start()
    done = await env.fake.submit_modal(env.guild, env.alice, opened, ["keeps baiting people"])
    assert "was sent to the moderators" in ephemeral_text(done)
    rows = env.rows("SELECT source, member_id, message_id, channel_id, reason FROM review_items")
    assert [tuple(r) for r in rows] == [("report", env.bob["id"], msg["id"], env.general, "keeps baiting people")]


async def test_a_member_report_written_across_a_restart_is_filed(env):
    """/report about Bob (no message), submitted after a restart: recorded about Bob."""
    opt, resolved = user_opt(env, "member", env.bob)
    opened = await env.fake.slash(env.guild, env.alice, "report", [opt], resolved=resolved)
    await env.stop()
    await env.start()
    done = await env.fake.submit_modal(env.guild, env.alice, opened, ["keeps insulting me in DMs"])
    assert "was sent to the moderators" in ephemeral_text(done)
    rows = env.rows("SELECT source, member_id, message_id, reason FROM review_items")
    assert [tuple(r) for r in rows] == [("report", env.bob["id"], None, "keeps insulting me in DMs")]
