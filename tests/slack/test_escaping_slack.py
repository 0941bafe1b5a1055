"""Wire tests: what a person typed never becomes Slack markup in the bot's answers.

Slack parses ``<!channel>``, ``<!here>``, ``<@U…>``, ``<#C…>`` and ``<url|label>`` in a message's mrkdwn text and
decodes ``&amp;``, ``&lt;``, ``&gt;`` (https://api.slack.com/reference/surfaces/formatting#escaping: those three
are the only characters to escape). A refusal that echoes a key, a value or a filter, and a member's record that
shows a strike's reason, must show the words as typed: escaped, so they can neither ping the channel nor mention
someone nor render a link. The real slack-bolt app and slack_sdk client run against the fake Slack.
"""

from __future__ import annotations

import json
import re

import pytest

from bot.adapters.slack import blocks
from bot.adapters.slack.app import SlackHandlers
from bot.core.models import ActionKind
from bot.workflow.authz import Refused, Said
from tests.slack.test_app_wire import SlackEnv

pytestmark = pytest.mark.slack

#: Markup Slack would act on: a special mention, a user / channel / user-group mention or a link.
MARKUP = re.compile(r"<[!@#][^>]*>|<https?:[^>]*>")


async def command(env: SlackEnv, name: str, text: str, user: str) -> str:
    """Deliver a slash command over HTTP; the ephemeral answer's text."""
    fields = env.fake.command_payload(name, text, user=user, channel=env.fake.general.id)
    count = len(env.fake.hook_posts) + 1
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    hook = (await env.fake.wait_for_hook(count=count))[-1]
    return str(hook.body["text"])


def test_a_refusal_escapes_what_was_typed_and_keeps_its_own_mentions():
    """Refused.render escapes only the Said pieces: the workflow's own <@U1> stays a mention."""
    exc = Refused("<@U1> asked for `", Said("<!channel> & <@U2>"), "`.")
    assert str(exc) == "<@U1> asked for `<!channel> & <@U2>`."
    assert blocks.refusal(exc) == "<@U1> asked for `&lt;!channel&gt; &amp; &lt;@U2&gt;`."


def test_a_sentence_keeps_its_typed_pieces_when_cut_and_never_half_a_mention():
    """Sentence: str() joins the pieces; a start (``[:n]``) keeps the Said pieces (escaped when rendered) and drops
    a mention of its own that the cut would halve; other slices are plain text."""
    from bot.workflow.authz import Sentence

    s = Sentence("kick: 1 of 2. Not done: ", "<@U1>: ", Said("<!channel>"), " ranks at or above you.")
    assert str(s) == "kick: 1 of 2. Not done: <@U1>: <!channel> ranks at or above you."
    assert blocks.said(s) == "kick: 1 of 2. Not done: <@U1>: &lt;!channel&gt; ranks at or above you."
    assert blocks.said(s[:27]) == "kick: 1 of 2. Not done: "  # "<@U" would be half a mention
    assert blocks.said(s[:36]) == "kick: 1 of 2. Not done: <@U1>: &lt;!cha"
    assert type(s[1:4]) is str and s[1:4] == "ick"
    assert blocks.as_line("<!here> & <@U2>") == "&lt;!here&gt; &amp; &lt;@U2&gt;"  # plain text: escaped whole


async def test_modpolicy_refusals_show_the_typed_key_and_value_escaped(env):
    """/modpolicy show|set of an unknown key, and a value the policy refuses, echo the words escaped; nothing is
    stored. Slack sends a command's text with & < > escaped (should_escape false): the answer shows the same
    characters the admin typed, not their entities twice."""
    await env.start()
    admin = env.fake.admin.id
    text = await command(env, "/modpolicy", "show <!channel>", admin)
    assert text == "Unknown policy key `&lt;!channel&gt;`."
    text = await command(env, "/modpolicy", "show &lt;!here&gt;", admin)  # what Slack sends for a typed <!here>
    assert text == "Unknown policy key `&lt;!here&gt;`."
    text = await command(env, "/modpolicy", "set <@U0BOSS>.x 1", admin)
    assert "&lt;@U0BOSS&gt;" in text and not MARKUP.search(text)
    text = await command(env, "/modpolicy", "set server.mod_log_channel &lt;!channel&gt; &amp; *bold*", admin)
    assert text.startswith("Refused `server.mod_log_channel`") and not MARKUP.search(text), text
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]


async def test_modcase_refusals_show_bad_filters_escaped(env):
    """/modcase list with a date or an action that is no such thing (Slack sends a typed @here as <!here>, since
    the command escapes mentions) answers with the value escaped."""
    await env.start()
    mod = env.mods.id
    text = await command(env, "/modcase", "list since:<!here>", mod)
    assert text == "`since` must be a date like 2026-06-01 (year-month-day), not `&lt;!here&gt;`."
    text = await command(env, "/modcase", "list action:<!channel>", mod)
    assert text.startswith("Unknown action `&lt;!channel&gt;` (one of:") and not MARKUP.search(text)
    text = await command(env, "/modcase", "list until:<https://evil.example|click>", mod)
    assert "&lt;https://evil.example|click&gt;" in text and not MARKUP.search(text)
    text = await command(env, "/modcase", "show <!channel>", mod)
    assert text == "`&lt;!channel&gt;` is not a case number."


async def test_a_forged_button_is_refused_with_its_words_escaped(env):
    """A block_actions payload can be forged: a review button whose action names no decision is refused with the
    name escaped; the card stays open."""
    await env.start()
    await env.say(env.fake.member.id, "borderline take")
    (card,) = env.cards()
    for action_id in ("mod:review:1:<!channel>", "mod:review:1:<@U0BOSS>"):
        payload = env.fake.block_actions_payload(user=env.mods.id, channel=env.review.id, message_ts=card["ts"],
                                                 action_id=action_id)
        count = len(env.fake.hook_posts) + 1
        assert (await env.fake.deliver_interaction(env.url, payload)).status == 200
        text = str((await env.fake.wait_for_hook(count=count))[-1].body["text"])
        assert text.startswith("Unknown decision '&lt;") and not MARKUP.search(text), text
    assert env.rows("SELECT decision FROM review_items") == [("open",)]


async def strike_with_reason(env: SlackEnv, reason: str) -> None:
    """A moderator's warning of the member with ``reason`` (the real workflow and enforcer: DM, case, strike)."""
    assert env.bot is not None
    team = env.fake.team_id
    actor = await SlackHandlers(env.bot).actor(team, env.fake.admin.id)
    result = await env.bot.workflow.sanction(actor, team, env.fake.member.id, ActionKind.WARN, reason)
    assert result.ok, result.text


async def test_mystatus_shows_a_strike_reason_escaped(env):
    """/mystatus shows the member's strikes with their reasons as text: a reason with <!channel>, a mention and
    a link pings nobody and links nowhere."""
    await env.start()
    reason = "<!channel> see <@U0BOSS> at <https://evil.example|this> & *more*"
    await strike_with_reason(env, reason)
    text = await command(env, "/mystatus", "", env.fake.member.id)
    assert "*Active strikes:* 1" in text
    assert blocks.escape(reason) in text and not MARKUP.search(text), text
    dm = [m for m in env.fake.calls_of("chat.postMessage") if m.params.get("channel", "").startswith("D")]
    assert dm and all(not MARKUP.search(json.dumps(m.params.get("blocks") or []) + str(m.params.get("text")))
                      for m in dm)



async def test_mystatus_shows_every_strike_when_reasons_are_long(env):
    """Thirty strikes with reasons of 1,000 characters: /mystatus keeps a line for each (case number and expiry
    included) within one section's 3,000 characters, reasons shortened; none is dropped."""
    await env.start()
    for n in range(30):
        await strike_with_reason(env, f"reason {n} " + "x & y " * 160)
    text = await command(env, "/mystatus", "", env.fake.member.id)
    lines = text.split("\n")
    assert lines[0].startswith("*Active strikes:* 30") and lines[-1] == "*Open appeals:* none"
    strikes = lines[1:-1]
    assert len(strikes) == 30 and all(re.search(r"… \(case #\d+\), expires 20\d\d-", line) for line in strikes)
    assert [line.split()[3] for line in strikes] == [str(n) for n in range(30)]  # "1 point: reason <n> ..."
    assert len("\n".join(strikes)) <= 3000 and "&amp;" in strikes[0] and " & " not in text


PARTIAL_ENTITY = re.compile(r"&(?!amp;|lt;|gt;)")


async def test_a_review_card_for_a_long_message_of_markup_stays_within_block_kit(env):
    """A flagged message of 3,000 ``&``/``<`` characters (each 4-5 once escaped) gets its review card: the fake
    refuses blocks over Block Kit's limits, so the card posting at all shows the sections fit; the quoted text is
    shortened between entities, never inside one (no ``&am…``)."""
    await env.start()
    await env.say(env.fake.member.id, "identityhate " + "&<" * 1500)
    (card,) = env.cards()
    assert all(c.ok for c in env.fake.calls_of("chat.postMessage"))
    (text,) = [b["text"]["text"] for b in card["blocks"] if b["type"] == "section"
               and b["text"]["text"].startswith("*Text:*")]
    assert len(text) <= 3000 and text.endswith("\u2026") and not PARTIAL_ENTITY.search(text), text[-20:]
    assert "identityhate &amp;&lt;" in text


async def test_an_appeal_card_with_a_long_reason_and_appeal_of_markup_stays_within_block_kit(env):
    """A warning whose reason is 1,000 ``&`` and an appeal of 1,500 ``<&>`` characters: the appeal card posts (the
    fake refuses blocks over the limits), both texts shortened between entities, nothing markup."""
    await env.start()
    await strike_with_reason(env, "&" * 1000)
    sub = env.fake.view_submission_payload(user=env.fake.member.id, callback_id="mod_appeal",
                                           values={"text": {"value": {"type": "plain_text_input",
                                                                      "value": "<&>" * 500}}},
                                           private_metadata=f"{env.fake.team_id}:1")
    assert (await env.fake.deliver_interaction(env.url, sub)).status == 200
    await env.fake.wait_until(lambda: any("Appeal #1" in json.dumps(c.get("blocks")) for c in env.cards()))
    (card,) = [c for c in env.cards() if "Appeal #1" in json.dumps(c.get("blocks"))]
    texts = [b["text"]["text"] for b in card["blocks"] if b["type"] == "section"]
    assert texts[0].startswith(f"*Member:* <@{env.fake.member.id}>\n")  # the card's own mention
    assert all(len(t) <= 3000 and not PARTIAL_ENTITY.search(t) and not MARKUP.search(t.split("\n", 1)[1])
               for t in texts)
    assert texts[0].endswith("&amp;\u2026") and texts[1].startswith("*Appeal:*\n>&lt;&amp;&gt;")


async def test_a_case_list_of_reasons_full_of_markup_keeps_every_line(env):
    """/modcase list: ten cases whose reasons are 200 ``&``: each line's reason is shortened to 80 characters as
    shown (escaped), so all ten lines and the page hint fit the answer; none is cut off."""
    await env.start()
    for _ in range(12):
        await strike_with_reason(env, "&" * 200)
    text = await command(env, "/modcase", "list", env.mods.id)
    lines = text.split("\n")
    assert lines[0].endswith("page 1 of 2:") and lines[-1] == "Next page: the same command with `page:2`."
    cases = lines[1:-1]
    warned = [line for line in cases if " warn <@" in line]  # the ladder adds its own cases in between
    assert len(cases) == 10 and warned and all(line.endswith(": " + "&amp;" * 15 + "\u2026") for line in warned)
    assert not any(PARTIAL_ENTITY.search(line) for line in cases)


async def test_a_mod_log_entry_with_a_long_reason_keeps_its_moderator_line(env):
    """/modcase reason with 1,000 ``&`` (5,000 characters escaped): the mod-log post keeps every line, the
    moderator's mention included, within a section's 3,000 characters; the reason is shortened between entities."""
    await env.start()
    await strike_with_reason(env, "rude")
    text = await command(env, "/modcase", "reason 1 " + "&amp;" * 1000, env.mods.id)  # Slack sends & as &amp;
    assert text.startswith("Case #1 now reads: &amp;&amp;")
    assert env.rows("SELECT reason FROM cases WHERE number = 1") == [("&" * 1000,)]
    await env.fake.wait_until(lambda: any("reason changed" in (m.get("text") or "")
                                          for m in env.modlog.messages.values()))
    (post,) = [m for m in env.modlog.messages.values() if "reason changed" in (m.get("text") or "")]
    (section,) = [b["text"]["text"] for b in post["blocks"]]
    assert len(section) <= 3000 and not PARTIAL_ENTITY.search(section)
    assert section.endswith(f"\nModerator: <@{env.mods.id}>") and "&amp;\u2026" in section


async def test_the_members_notice_of_a_long_reason_of_markup_is_cut_between_entities(env):
    """The DM a member gets about a warning whose reason is 1,000 ``&``: its section and notification text fit
    Slack's limits, shortened between entities, and the Appeal button is there."""
    await env.start()
    await strike_with_reason(env, "&" * 1000)
    (notice,) = [c.params for c in env.fake.calls_of("chat.postMessage") if c.params["channel"].startswith("D")]
    section = notice["blocks"][0]["text"]["text"]
    assert len(section) <= 3000 and section.endswith("&amp;\u2026") and not PARTIAL_ENTITY.search(section)
    assert len(notice["text"]) <= 4000 and not PARTIAL_ENTITY.search(notice["text"])
    assert notice["blocks"][1]["elements"][0]["action_id"].startswith("mod:appeal:")


async def test_modcase_echoes_a_bad_page_and_stray_words_as_typed(env):
    """Slack sends ``<`` typed in a command as ``&lt;``: a bad ``page:`` and the words /modcase list does not take
    are echoed as typed (``&lt;`` once, never ``&amp;lt;``), without markup."""
    await env.start()
    text = await command(env, "/modcase", "list page:&lt;b&gt;", env.mods.id)
    assert text == "`page` must be a whole number from 1 to 100,000, not `&lt;b&gt;`."
    text = await command(env, "/modcase", "list &lt;!channel&gt; hello", env.mods.id)
    assert text.endswith("use `/modcase search &lt;!channel&gt; hello`.") and not MARKUP.search(text)


def code_block(text: str) -> str:
    """The one ``` block of an answer (exactly two fences: nothing inside closed it early), unescaped as Slack
    shows it."""
    assert text.count("```") == 2, text
    return blocks.unescape(text.split("```")[1])


async def test_mydata_export_inline_shows_the_record_escaped_in_one_code_block(env):
    """/mydata export of a short record answers inline: a flagged message holding ``<!channel>``, a mention, a link
    and a ``` (which would close the code block, so the rest rendered as mrkdwn) is shown escaped in one code
    block whose text, as Slack shows it, parses into the record (backticks written ``\\u0060``, the same JSON)."""
    await env.start()
    said = "identityhate <!channel> ``` *bold* <@U0BOSS> <https://evil.example|here> & done"
    await env.say(env.fake.member.id, said)
    assert env.bot is not None
    record = json.loads(json.dumps(await env.bot.workflow.export_member(env.fake.team_id, env.fake.member.id),
                                   default=str))
    assert said in json.dumps(record, ensure_ascii=False)
    text = await command(env, "/mydata", "export", env.fake.member.id)
    assert text.startswith("Everything this bot stores about you here:\n```") and not MARKUP.search(text), text
    assert json.loads(code_block(text)) == record


async def test_mydata_export_pages_keep_one_code_block_each_when_the_record_holds_backticks(env):
    """Without files:write a long record goes in pages: a message with ``` in it does not close a page's code
    block (each page has exactly its two fences), and the pages still join into the record."""
    env.fake.bot_scopes.discard("files:write")
    await env.start()
    for i in range(12):
        await env.say(env.fake.member.id, f"identityhate {i} ``` <!here> " + "a long rant about nothing " * 8)
    assert env.bot is not None
    record = json.loads(json.dumps(await env.bot.workflow.export_member(env.fake.team_id, env.fake.member.id),
                                   default=str))
    text = await command(env, "/mydata", "export", env.fake.member.id)
    assert "parts" in text
    dm = env.fake.channels["D" + env.fake.member.id[1:]]
    pages = sorted((m for m in dm.messages.values() if "Your record, part" in m["text"]), key=lambda m: m["ts"])
    assert len(pages) >= 2 and not any(MARKUP.search(p["text"]) for p in pages)
    assert json.loads("".join(code_block(p["text"]) for p in pages)) == record


async def test_modpolicy_show_of_a_value_with_backticks_and_markup_stays_one_code_block(env):
    """A policy value an admin typed with ``` and ``<!channel>`` in it: ``/modpolicy show`` of its key answers one
    code block (the value cannot close it) without markup, and it parses into the stored value."""
    await env.start()
    value = ["a```b", "<!channel> & <@U0BOSS>"]
    text = await command(env, "/modpolicy", "set identity_target.extra_terms " + json.dumps(value),
                         env.fake.admin.id)
    assert text.startswith("Policy updated") and not MARKUP.search(text), text
    text = await command(env, "/modpolicy", "show identity_target.extra_terms", env.mods.id)
    assert not MARKUP.search(text)
    assert json.loads(code_block(text)) == value


NOT_OURS = re.compile(r"<![^>]*>|<https?:[^>]*>")  # markup the bot never writes itself: a special mention, a link


async def test_a_raid_summary_shows_a_skipped_raiders_name_escaped_and_keeps_its_mentions(env):
    """"Remove all from channel" on a raid where one raider is a workspace admin named ``<!channel>`` and a link:
    that raider is skipped with the hierarchy refusal, whose name is shown escaped in the answer, on the raid
    card and in the mod log, while the summary's own mention of each raider (``<@U…>``) stays a mention."""
    from tests.slack.test_app_wire import card_text
    from tests.slack.test_confirm_slack import open_reason_modal, submit, told

    await env.start()
    boss = env.fake.add_user("<!channel> <https://evil.example|boss>", is_admin=True)
    raiders = [*(env.fake.add_user(f"raider{i}") for i in range(9)), boss]
    for user in raiders:
        env.fake.random.members.add(user.id)
        assert (await env.fake.deliver_event(env.url, env.fake.team_join_event(user))).status == 200
    await env.fake.wait_until(lambda: env.rows("SELECT COUNT(*) FROM raids")[0][0] >= 1)
    for user in raiders[:6]:
        await env.say(user.id, f"identityhate from {user.name}", channel=env.fake.random.id)
    await env.fake.wait_until(lambda: any("Remove all from channel" in card_text(c) for c in env.cards()))
    card = next(c for c in env.cards() if "Raid #" in card_text(c))
    admin = env.fake.admin.id
    view = await open_reason_modal(env, admin, card, f"mod:raid:{env.fake.team_id}:1:kick")
    assert (await submit(env, admin, view, "join raid")).status == 200
    await env.fake.wait_until(lambda: any(t.startswith("kick:") for t in told(env, admin)))
    (text,) = [t for t in told(env, admin) if t.startswith("kick:")]
    shown = f"<@{boss.id}>: {blocks.escape(boss.name)} ranks at or above you (role hierarchy)."
    assert text.startswith("kick: 9 of 10 raider(s). Not done: ") and shown in text, text
    assert not NOT_OURS.search(text)
    await env.fake.wait_until(lambda: any(shown in card_text(c) for c in env.cards()))  # the card's "Done" note
    assert not NOT_OURS.search(card_text(next(c for c in env.cards() if "Raid #" in card_text(c))))
    await env.fake.wait_until(lambda: any("kick all" in (m.get("text") or "") for m in env.modlog.messages.values()))
    (post,) = [m for m in env.modlog.messages.values() if "kick all" in (m.get("text") or "")]
    assert blocks.escape(boss.name) in card_text(post) and not NOT_OURS.search(card_text(post))


async def test_a_report_cards_notification_text_of_markup_is_cut_between_entities(env):
    """A report whose reason is 1,000 ``&`` (5,000 characters escaped): the card's notification text (``text``,
    which Slack parses for mentions) stays within 4,000 characters and is shortened between entities."""
    await env.start()
    assert env.bot is not None
    result = await env.bot.workflow.report(env.fake.admin.id, env.fake.team_id, env.fake.member.id, "&" * 1000,
                                           channel_id=env.fake.general.id)
    assert result.ok, result.text
    (card,) = env.cards()
    assert len(card["text"]) <= 4000 and card["text"].endswith("&amp;\u2026"), card["text"][-12:]
    assert not PARTIAL_ENTITY.search(card["text"])
