"""Wire tests: Kick, Ban and the raid card's bulk sanctions ask first with a reason modal (Discord interaction
response type 9, then a MODAL_SUBMIT interaction, type 5), against the fake Discord and the real discord.py client:
done once on submit with the typed reason on the case; a cancelled, expired, repeated, too long or
non-moderator's submit changes nothing and says why."""

from __future__ import annotations

import asyncio
from urllib.parse import unquote

import pytest

from tests.discord.fake_discord import MANAGE_CHANNELS, MANAGE_MESSAGES
from tests.discord.helpers import confirm, ephemeral_text, guild_requests, mod_cmd, modal_input, text_opt
from tests.discord.replies import member_with_role

pytestmark = pytest.mark.discord


async def review_card(env, text="borderline needs a human"):
    """Post a message the policy sends to review; return (message, outcome, card)."""
    msg, outcome = await env.post(env.alice, text)
    prefix = f"Review #{outcome.review_id} "
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(prefix)
                                          for m in env.fake.messages.values()))
    return msg, outcome, env.card(prefix)


def mod_cases(env):
    return [tuple(r) for r in env.rows("SELECT action, reason, status FROM cases WHERE moderator_id = ?",
                                       (env.mod["id"],))]


async def test_ban_opens_a_reason_modal_and_bans_once_on_submit_with_that_reason(env):
    """Ban opens a modal (nothing done yet) with a required reason prefilled from the card, at most 500
    characters; the submit bans once, the case's reason is what was typed, and the mod log, the audit log and
    /case show say it."""
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    assert modal.body["data"]["title"] == f"Ban member (review #{outcome.review_id})"
    field = modal_input(modal)
    assert field["required"] and field["max_length"] == 500 and field["min_length"] == 3
    assert field["value"].startswith(f"review #{outcome.review_id}: ")
    assert guild_requests(env, "PUT", "bans", env.alice) == []  # asking changes nothing
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items")] == [("open",)]
    answer = await env.fake.submit_modal(env.guild, env.mod, modal, ["spam raid, third time this week"],
                                         message=card)
    assert answer.body["type"] == 7 and answer.body["deferred"] == 6  # the card itself shows the decision
    decision = next(f["value"] for f in answer.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")
    assert "banned" in decision and env.mod["id"] in decision
    (ban,) = guild_requests(env, "PUT", "bans", env.alice)
    assert unquote(ban.headers["X-Audit-Log-Reason"]) == "spam raid, third time this week"
    assert mod_cases(env) == [("ban", "spam raid, third time this week", "applied")]
    logged = [p.body["embeds"][0] for p in env.modlog_posts()
              if p.body["embeds"][0]["title"].startswith(f"Review #{outcome.review_id}")]
    assert len(logged) == 1 and "Reason: spam raid, third time this week" in logged[0]["description"]
    number = env.rows("SELECT number FROM cases WHERE action = 'ban'")[0][0]
    shown = await mod_cmd(env, "show", text_opt("number", number, 4), group="case")
    assert shown.body["data"]["embeds"][0]["description"] == "spam raid, third time this week"


async def test_kick_asks_first_too_and_a_refused_click_opens_no_modal(env):
    """Kick asks first like Ban; a member without Kick Members who presses it gets a refusal, not a modal."""
    _, outcome, card = await review_card(env)
    refused = await env.fake.click(env.guild, env.bob, card, f"mod:review:{outcome.review_id}:kick")
    assert "You need Kick Members" in ephemeral_text(refused)
    _, answer = await confirm(env, card, f"mod:review:{outcome.review_id}:kick", "threats in DMs")
    assert answer.body["type"] == 7
    assert len(guild_requests(env, "DELETE", "members", env.alice)) == 1
    assert mod_cases(env) == [("kick", "threats in DMs", "applied")]


async def test_a_double_submit_bans_once(env):
    """The same modal submitted twice (a client retry) bans once; the second submit is told nothing was
    changed. Two moderators' modals on one card: one acts, the other is told who decided."""
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    mod2 = env.fake.new_user(env.guild, "mod2", roles=[env.mod_role])
    modal2 = await env.fake.click(env.guild, mod2, card, f"mod:review:{outcome.review_id}:ban")
    first = await env.fake.submit_modal(env.guild, env.mod, modal, ["slurs"], message=card)
    assert first.body["type"] == 7
    again = await env.fake.submit_modal(env.guild, env.mod, modal, ["slurs"], message=card)
    assert "expired" in ephemeral_text(again) and "Nothing was changed" in ephemeral_text(again)
    other = await env.fake.submit_modal(env.guild, mod2, modal2, ["slurs too"], message=card)
    assert "already decided (banned" in ephemeral_text(other)
    assert len(guild_requests(env, "PUT", "bans", env.alice)) == 1
    assert len(env.rows("SELECT 1 FROM cases WHERE action = 'ban'")) == 1


async def test_an_expired_or_abandoned_modal_changes_nothing(env):
    """A modal closed without submitting does nothing; one submitted after it expired (here 0.3 s) is answered
    "expired", and the card stays open for a new decision."""
    env.bot.get_cog("Review").confirm_timeout_s = 0.3
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    await asyncio.sleep(0.6)
    late = await env.fake.submit_modal(env.guild, env.mod, modal, ["too late"], message=card)
    assert "This confirmation expired" in ephemeral_text(late)
    assert guild_requests(env, "PUT", "bans", env.alice) == []
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items")] == [("open",)]
    assert mod_cases(env) == []
    env.bot.get_cog("Review").confirm_timeout_s = 600
    _, answer = await confirm(env, card, f"mod:review:{outcome.review_id}:ban", "asked again")
    assert answer.body["type"] == 7 and mod_cases(env) == [("ban", "asked again", "applied")]


async def test_a_submit_after_the_moderator_lost_the_permission_is_refused(env):
    """The checks run again at submit with the submitter's permissions then: a moderator whose role was taken away
    while the modal was open is refused, and nothing is done."""
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    env.fake.member(env.guild, env.mod["id"])["roles"] = []
    answer = await env.fake.submit_modal(env.guild, env.mod, modal, ["slurs"], message=card)
    assert "You need Ban Members" in ephemeral_text(answer)
    assert guild_requests(env, "PUT", "bans", env.alice) == []
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items")] == [("open",)]


async def test_a_non_moderator_submitting_a_moderators_modal_is_refused(env):
    """A submit of the moderator's modal sent by a member without Ban Members (a forged interaction with its custom
    id) is refused with that member's own permissions, and nothing is done."""
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    forged = await env.fake.submit_modal(env.guild, env.bob, modal, ["ban them"], message=card)
    assert "You need Ban Members" in ephemeral_text(forged)
    assert guild_requests(env, "PUT", "bans", env.alice) == [] and mod_cases(env) == []
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items")] == [("open",)]


async def test_a_reason_too_long_is_refused_clearly_and_changes_nothing(env):
    """A reason over 500 characters (from a client that ignores the input's max_length) gets an ephemeral answer
    naming the limit; no ban, the card stays open."""
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    with pytest.raises(ValueError):  # Discord's own client does not send it
        await env.fake.submit_modal(env.guild, env.mod, modal, ["x" * 600], message=card)
    answer = await env.fake.submit_modal(env.guild, env.mod, modal, ["x" * 600], message=card, checked=False)
    assert "That reason is 600 characters; at most 500 fit" in ephemeral_text(answer)
    assert guild_requests(env, "PUT", "bans", env.alice) == []
    assert [tuple(r) for r in env.rows("SELECT decision FROM review_items")] == [("open",)]


async def test_ban_all_on_a_raid_card_asks_first_and_puts_the_reason_on_every_case(env):
    """Ban all opens the reason modal (titled with the raiders' count); the submit bans every raider once, each
    ban case has the typed reason, and the mod log's one summary says it."""
    raiders = [env.fake.new_user(env.guild, f"raider{i}") for i in range(6)]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    modal, answer = await confirm(env, card, f"mod:raid:{env.guild['id']}:1:ban", "coordinated hate raid")
    assert modal.body["data"]["title"] == "Ban all 6 (raid #1)"
    assert modal_input(modal)["value"] == "raid #1 (flagged messages)"
    assert answer.body["data"]["content"].startswith("ban: 6 of 6")
    banned = {r.path.rsplit("/", 1)[1] for r in env.fake.find("PUT", rf"/guilds/{env.guild['id']}/bans/\d+")}
    assert banned == {u["id"] for u in raiders}
    assert [tuple(r) for r in env.rows("SELECT reason FROM cases WHERE action = 'ban'")] == \
        [("coordinated hate raid",)] * 6
    summary = [p.body["embeds"][0] for p in env.modlog_posts() if p.body["embeds"][0]["title"] == "Raid #1: ban all"]
    assert len(summary) == 1 and "Reason: coordinated hate raid" in summary[0]["description"]
    # ending lifts the raid's slowmode: Manage Channels, as /raidmode off (tests/discord/test_breakit29_authz.py)
    lead = await member_with_role(env, "lead", MANAGE_MESSAGES | MANAGE_CHANNELS, 4)
    end = await env.fake.click(env.guild, lead, card, f"mod:raid:{env.guild['id']}:1:end")  # does not ask
    assert end.body["type"] == 4 and "Raid mode ended" in end.body["data"]["content"]


async def test_a_modal_opened_before_a_restart_changes_nothing(env):
    """The bot restarted while the modal was open: its submit is answered "expired" and nothing is done; the
    card's Ban (a persistent button) asks again after the restart."""
    _, outcome, card = await review_card(env)
    modal = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")
    await env.stop()
    await env.start()
    late = await env.fake.submit_modal(env.guild, env.mod, modal, ["before the restart"], message=card)
    assert "This confirmation expired" in ephemeral_text(late)
    assert guild_requests(env, "PUT", "bans", env.alice) == [] and mod_cases(env) == []
    _, answer = await confirm(env, card, f"mod:review:{outcome.review_id}:ban", "after the restart")
    assert answer.body["type"] == 7 and mod_cases(env) == [("ban", "after the restart", "applied")]
