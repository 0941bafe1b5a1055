"""Wire tests: on Discord, what a member typed (a report's reason, a message, a display name) is shown as text on the
moderators' review card, never as Discord markdown: a masked link ``[prize](https://…)`` would render as a link
in an embed (mentions cannot ping: the bot sends with ``allowed_mentions`` none). The real discord.py client
against the fake Discord; the escaping is ``discord.utils.escape_markdown(as_needed=True)``, so a plain reason
(``identity_attack 0.97 >= 0.95``) reads as before."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.discord.test_commands_wire import ephemeral_text

pytestmark = pytest.mark.discord

#: Markdown Discord would render from a member's words: a masked link, or a bold pair, whose opening is not
#: escaped by a backslash.
RENDERED = re.compile(r"(?<!\\)\[[^\]]*\]\(https?://|(?<!\\)\*\*[^*]+\*\*")


async def test_a_report_card_shows_the_reporters_words_and_the_members_name_as_text(env):
    """A report whose reason is a masked link and bold, about a member whose display name is a masked link, and a
    message of the same: the card's Reason, Member and Text fields show them escaped (no link renders)."""
    bait = "[claim your prize](https://evil.example) **now**"
    target = env.fake.new_user(env.guild, "[support](https://evil.example)",
                               created=datetime.now(UTC) - timedelta(days=400))
    msg, _ = await env.post(target, f"hello {bait}")
    cb = await env.fake.slash(env.guild, env.alice, "Report to moderators", [], cmd_type=3, target_id=msg["id"],
                              resolved={"messages": {msg["id"]: msg}})
    done = await env.fake.submit_modal(env.guild, env.alice, cb, [bait])
    assert "was sent to the moderators" in ephemeral_text(done)
    card = await env.fake.wait_for("POST", rf"/channels/{env.review}/messages")
    fields = {f["name"]: f["value"] for f in card.body["embeds"][0]["fields"]}
    assert fields["Reason"] == r"\[claim your prize\](https://evil.example) \*\*now**"
    assert fields["Member"].startswith(r"\[support\](https://evil.example) <@")
    assert fields["Text"] == r"||hello \[claim your prize\](https://evil.example) \*\*now**||"
    assert not [v for k, v in fields.items() if k in ("Reason", "Member", "Text") and RENDERED.search(v)], fields
    assert [tuple(r) for r in env.rows("SELECT reason FROM review_items")] == [(bait,)]  # stored as typed


async def test_a_review_cards_rules_fired_shows_a_quoted_match_as_text(env):
    """A server's regex rule whose match quotes the member (a masked link and bold): the review card's "Rules
    fired" field shows the match escaped (no link renders), within Discord's 1,024 characters; the rule name stays."""
    env.write_policy(env.guild, env.review, env.modlog,
                     '[[rules.regex]]\nname = "prize_bait"\npattern = "\\\\[claim.*now\\\\*\\\\*"\n'
                     'action = "review"\n')
    env.bot.policies.invalidate()
    bait = "[claim your prize](https://evil.example) **now**"
    _, outcome = await env.post(env.alice, f"hello {bait}")
    assert outcome.review_id is not None
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith(
        f"Review #{outcome.review_id} ") for m in env.fake.messages.values()))
    fields = {f["name"]: f["value"] for f in env.card(f"Review #{outcome.review_id} ")["embeds"][0]["fields"]}
    fired = fields["Rules fired"]
    assert fired.startswith("regex: prize_bait: ") and r"\[claim your prize\](https://evil.example) \*\*now" in fired
    assert not RENDERED.search(fired) and len(fired) <= 1024, fired


async def test_a_raid_summary_shows_a_skipped_raiders_name_as_text(env):
    """"Ban all" on a raid where one raider ranks above the moderator and is named with a masked link: that raider
    is skipped with the hierarchy refusal; the answer, the raid card's "Done" note and the mod-log summary show
    the name escaped (no link renders) and keep the summary's own mentions."""
    from bot.adapters.discord.cards import md
    from tests.discord.helpers import confirm

    senior = await env.fake.add_role(env.guild, "Senior", 0, 4)  # above the Moderators role (position 3)
    boss = env.fake.new_user(env.guild, "[support](https://evil.example)", roles=[senior["id"]])
    raiders = [*(env.fake.new_user(env.guild, f"raider{i}") for i in range(5)), boss]
    for user in raiders:
        await env.post(user, f"identityhate raid {user['id']}")
    await env.bot.workflow.drain()
    card = next(m for m in env.fake.messages.values() if m["embeds"] and m["embeds"][0]["title"].startswith("Raid #"))
    _, answer = await confirm(env, card, f"mod:raid:{env.guild['id']}:1:ban", "coordinated hate raid")
    text = answer.body["data"]["content"]
    shown = f"<@{boss['id']}>: {md(boss['username'])} ranks at or above you (role hierarchy)."
    assert text.startswith("ban: 5 of 6 raider(s). Not done: ") and shown in text and not RENDERED.search(text), text
    summary = [p.body["embeds"][0] for p in env.modlog_posts() if p.body["embeds"][0]["title"] == "Raid #1: ban all"]
    assert len(summary) == 1 and shown in summary[0]["description"], summary
    assert not RENDERED.search(summary[0]["description"])
    await env.fake.wait_until(lambda: any(shown in f["value"] for m in env.fake.messages.values() if m["embeds"]
                                          and m["embeds"][0]["title"].startswith("Raid #1")
                                          for f in m["embeds"][0].get("fields", [])))


async def test_a_refusal_shows_a_members_name_as_text_and_a_typed_key_as_typed(env):
    """``/mod warn`` of a member who ranks above the moderator and is named with a masked link: the refusal shows
    the name escaped; a typed policy key inside the sentence's inline code is shown as typed (Discord shows a
    backslash in code as is, so only a backtick, which would close the code, is replaced)."""
    from bot.adapters.discord.cards import md, refusal
    from bot.workflow.authz import Refused, Said
    from tests.discord.helpers import mod_on, text_opt

    senior = await env.fake.add_role(env.guild, "Senior", 0, 4)
    boss = env.fake.new_user(env.guild, "[support](https://evil.example)", roles=[senior["id"]])
    text = ephemeral_text(await mod_on(env, "warn", boss, text_opt("reason", "rude")))
    assert text == f"{md(boss['username'])} ranks at or above you (role hierarchy). Nothing was changed.", text
    assert refusal(Refused("Unknown policy key `", Said("server.mod_log_channel`[x](https://e.x)"), "`.")) == \
        "Unknown policy key `server.mod_log_channel\u02cb[x](https://e.x)`."


async def test_a_flagged_name_in_the_mod_log_is_shown_as_text(env):
    """A nickname the model flags that is also a masked link and bold: the mod log's "Flagged name" entry and the
    card's Reason show it escaped (no link renders); the case keeps the name as it is."""
    from tests.discord.test_names_wire import join

    member = await join(env, "quietperson")
    nick = "[identityhate](https://evil.example) **x**"
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "nick": nick, "guild_id": env.guild["id"]})
    await env.fake.wait_until(lambda: any(p.body["embeds"][0]["title"] == "Flagged name" for p in env.modlog_posts()))
    (entry,) = [p.body["embeds"][0] for p in env.modlog_posts() if p.body["embeds"][0]["title"] == "Flagged name"]
    assert r"'\[identityhate\](https://evil.example) \*\*x**'" in entry["description"], entry["description"]
    assert not RENDERED.search(entry["description"])
    await env.fake.wait_until(lambda: len(env.review_posts()) == 1)
    fields = {f["name"]: f["value"] for f in env.review_posts()[0].body["embeds"][0]["fields"]}
    assert not RENDERED.search(fields["Reason"]) and not RENDERED.search(fields["Text"]), fields
    assert [tuple(r) for r in env.rows("SELECT reason FROM cases")][0][0].startswith(f"nickname {nick!r}: ")


async def test_case_list_and_member_info_show_a_named_members_words_as_text(env):
    """A flagged nickname that is a masked link opens a case whose reason quotes it: ``/case list`` and ``/member
    info`` show that reason escaped (no link renders), the rest of the line as before."""
    from tests.discord.helpers import mod_cmd, user_opt
    from tests.discord.test_names_wire import join

    member = await join(env, "quietperson")
    nick = "[identityhate](https://evil.example)"
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "nick": nick, "guild_id": env.guild["id"]})
    await env.fake.wait_until(lambda: len(env.review_posts()) == 1)
    listed = ephemeral_text(await mod_cmd(env, "list", group="case"))
    assert r"nickname '\[identityhate\](https://evil.example)': identity_attack" in listed, listed
    opt, resolved = user_opt(env, "member", member["user"])
    info = ephemeral_text(await mod_cmd(env, "info", opt, resolved=resolved, group="member"))
    assert r"nickname '\[identityhate\](https://evil.example)'" in info, info
    assert not RENDERED.search(listed) and not RENDERED.search(info)


def test_an_appeal_card_shows_the_cases_reason_and_the_appeal_as_text():
    """The appeal card (a pure rendering): the appealed case's reason quoting a flagged name, and the member's
    appeal, are shown escaped; the field keeps Discord's 1,024 characters."""
    from bot.adapters.discord.cards import appeal_embed
    from bot.core.models import ActionKind
    from bot.workflow.views import Evidence, ReviewCard

    card = ReviewCard(review_id=3, server_id="1", source="appeal", member_id="2", appeal_id=1, case_number=7,
                      case_action=ActionKind.REVIEW, reason="nickname '[x](https://evil.example)': insult " + "*" * 2000,
                      evidence=Evidence(text="please [read this](https://evil.example)"))
    fields = {f.name: f.value or "" for f in appeal_embed(card).fields}
    assert fields["Case"].startswith("#7: review\nnickname '\\[x\\](https://evil.example)': insult *")
    assert len(fields["Case"]) <= 1024 and fields["Appeal"] == "||please \\[read this\\](https://evil.example)||"
    assert not RENDERED.search(fields["Case"]) and not RENDERED.search(fields["Appeal"])
