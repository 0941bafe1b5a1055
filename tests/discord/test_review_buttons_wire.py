"""Wire tests: the review card's Delete / Warn / Kick / Ban / Investigating buttons, the appeal card's Uphold,
and forged custom ids naming another server's review item or appeal."""

from __future__ import annotations

import pytest

from tests.discord.helpers import confirm, dm_posts, ephemeral_text, guild_requests, mod_cmd, mod_on, text_opt

pytestmark = pytest.mark.discord


async def review_card(env, text="borderline needs a human"):
    """Post a message the policy sends to review (not auto-actioned); return (message, outcome, card)."""
    msg, outcome = await env.post(env.alice, text)
    assert outcome.review_id is not None
    prefix = f"Review #{outcome.review_id} "
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(prefix)
                                          for m in env.fake.messages.values()))
    return msg, outcome, env.card(prefix)


def decision_field(cb):
    return next(f["value"] for f in cb.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")


def disabled(cb):
    return {c["disabled"] for row in cb.body["data"]["components"] for c in row["components"]}


# button, expected REST (method, path template), review decision, sanction case action or None, strike points
BUTTONS = [
    ("delete", ("DELETE", "/channels/{ch}/messages/{msg}"), "deleted", None, 1),
    ("warn", ("POST", "/channels/{dm}/messages"), "warned", "warn", 1),
    ("kick", ("DELETE", "/guilds/{g}/members/{u}"), "kicked", "kick", 3),
    ("ban", ("PUT", "/guilds/{g}/bans/{u}"), "banned", "ban", 5),
]


@pytest.mark.parametrize("button,rest,decision,action,points", BUTTONS)
async def test_card_sanction_buttons(env, button, rest, decision, action, points):
    """Each sanction button calls the right route, decides the item, opens the case and adds the strike."""
    msg, outcome, card = await review_card(env)
    if button in ("kick", "ban"):  # they ask first: the reason modal, submitted with its prefilled reason
        _, cb = await confirm(env, card, f"mod:review:{outcome.review_id}:{button}")
    else:
        cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:{button}")
    assert cb.body["type"] == 7 and disabled(cb) == {True}
    assert env.mod["id"] in decision_field(cb) and "FAILED" not in decision_field(cb)
    method, template = rest
    path = template.format(ch=env.general, msg=msg["id"], g=env.guild["id"], u=env.alice["id"],
                           dm=env.fake.dm_channels.get(env.alice["id"], "none"))
    assert len(env.fake.find(method, path)) == 1
    if action in ("kick", "ban"):  # the sanction also removes the message
        assert len(env.fake.find("DELETE", rf"/channels/{env.general}/messages/{msg['id']}")) == 1
    item = env.rows("SELECT decision, moderator_id FROM review_items WHERE id = ?", (outcome.review_id,))[0]
    assert tuple(item) == (decision, env.mod["id"])
    mod_cases = [tuple(r) for r in env.rows("SELECT action, status FROM cases WHERE moderator_id = ?",
                                            (env.mod["id"],))]
    assert mod_cases == ([(action, "applied")] if action else [])
    strikes = [tuple(r) for r in env.rows("SELECT points, message_id FROM strikes")]
    assert strikes == [(points, msg["id"])]


async def test_card_warn_dm_names_case_and_review(env):
    """Warn from a card DMs the member the review reason with the new case number and an Appeal button."""
    _, outcome, card = await review_card(env)
    await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:warn")
    number = env.rows("SELECT number FROM cases WHERE action = 'warn'")[0][0]
    (dm,) = dm_posts(env, env.alice)
    assert dm.body["embeds"][0]["description"].startswith(f"review #{outcome.review_id}:")
    assert dm.body["components"][0]["components"][0]["custom_id"] == f"mod:appeal:{env.guild['id']}:{number}"


async def test_investigating_keeps_card_open_then_ban_works(env):
    """Investigating stamps the card but keeps its buttons; a later Ban still decides the item."""
    _, outcome, card = await review_card(env)
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:investigating")
    assert "investigating" in decision_field(cb) and disabled(cb) == {False}
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == [] and env.fake.find("DELETE", r"/guilds/.*") == []
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))[0][0] == "investigating"
    await confirm(env, card, f"mod:review:{outcome.review_id}:ban")
    assert len(guild_requests(env, "PUT", "bans", env.alice)) == 1
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (outcome.review_id,))[0][0] == "banned"


async def test_second_decision_refused(env):
    """A card already decided refuses another button; no second sanction is sent."""
    _, outcome, card = await review_card(env)
    await confirm(env, card, f"mod:review:{outcome.review_id}:kick")
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:ban")  # no modal opens
    assert "already decided (kicked" in ephemeral_text(cb)
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == []


async def appeal_card(env):
    """Alice appeals her automod case; returns (case number, appeal id, appeal card)."""
    _, outcome = await env.post(env.alice, "identityhate appeal this")
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", outcome.case_number, 4)])
    await env.fake.submit_modal(env.guild, env.alice, cb, ["I was quoting someone"])
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    return outcome.case_number, env.rows("SELECT id FROM appeals")[0][0], env.card("Appeal #")


async def test_appeal_uphold_keeps_case_and_strike(env):
    """Uphold marks the appeal upheld, keeps the case and its strike, lifts nothing, and closes the card."""
    number, appeal_id, card = await appeal_card(env)
    cb = await env.fake.click(env.guild, env.mod, card, f"mod:appealdecide:{appeal_id}:uphold")
    assert cb.body["type"] == 7 and "upheld" in decision_field(cb) and disabled(cb) == {True}
    row = env.rows("SELECT status, moderator_id FROM appeals")[0]
    assert tuple(row) == ("upheld", env.mod["id"])
    assert env.rows("SELECT status FROM cases WHERE number = ?", (number,))[0][0] == "applied"
    assert env.rows("SELECT pardoned_at FROM strikes")[0][0] is None
    assert env.fake.find("DELETE", r"/guilds/.*/bans/.*") == [] and env.fake.find("PATCH", r"/guilds/.*") == []


@pytest.mark.parametrize("custom_id", ["mod:appealdecide:{appeal}:overturn", "mod:review:{review}:timeout"])
async def test_forged_custom_id_of_other_server_refused(env, custom_id):
    """A moderator of server B pressing a forged id naming server A's appeal or review changes nothing."""
    number, appeal_id, card = await appeal_card(env)
    review_id = env.rows("SELECT id FROM review_items WHERE source = 'automod'")[0][0]
    other_mod = env.fake.new_user(env.other, "othermod", roles=[env.other["mod_role"]])
    # discord.py only dispatches ids present on the message, so the forged message carries the component
    source = card if "appeal" in custom_id else env.card(f"Review #{review_id} ")
    forged = dict(source, channel_id=env.fake.channel(env.other, "review"))
    cb = await env.fake.click(env.other, other_mod, forged, custom_id.format(appeal=appeal_id, review=review_id), values=["600"] if "timeout" in custom_id else None)
    assert "does not exist in this server" in ephemeral_text(cb)
    assert env.rows("SELECT status FROM appeals")[0][0] == "open"
    assert env.rows("SELECT decision FROM review_items WHERE id = ?", (review_id,))[0][0] == "open"
    assert env.rows("SELECT status FROM cases WHERE number = ?", (number,))[0][0] == "applied"
    assert env.fake.find("PATCH", r"/guilds/.*/members/.*") == []


async def test_other_servers_moderator_cannot_pardon_by_case_number(env):
    """/mod pardon in server B with server A's case number finds no case; A's strike stays active."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    other_mod = env.fake.new_user(env.other, "othermod", roles=[env.other["mod_role"]])
    cb = await mod_cmd(env, "pardon", text_opt("case", 1, 4), guild=env.other, user=other_mod)
    assert "no case #1" in ephemeral_text(cb)
    assert env.rows("SELECT pardoned_at FROM strikes")[0][0] is None
    assert env.rows("SELECT status FROM cases")[0][0] == "applied"
