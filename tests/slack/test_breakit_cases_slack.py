"""Hostile words in Slack's ``/modcase`` (issue 28's "Bad input"), through the real slack-bolt app against the fake
Slack: each answer is a clear ephemeral sentence and nothing changes. Each test failed on main before its fix."""

from __future__ import annotations

import pytest

from tests.slack.test_app_wire import SlackEnv
from tests.slack.test_cases_slack import command, note

pytestmark = pytest.mark.slack


@pytest.mark.parametrize("text,needle", [("list page:²", "`page` must be a whole number"),
                                         ("show #²", "is not a case number"),
                                         ("show " + "9" * 4400, "is not a case number"),
                                         ("reason ³ new words", "is not a case number")])
async def test_modcase_with_a_digit_that_is_not_ascii_answers_instead_of_crashing(env, text, needle):
    """``page:²`` or case ``#²`` (Unicode digits that ``str.isdigit`` accepts but ``int`` does not), or a number too
    long for ``int``, is refused with a sentence; before, the handler raised and the moderator got no answer."""
    await env.start()
    await note(env, env.fake.owner.id, "rude")
    answer = await command(env, "/modcase", text)
    assert needle in answer, answer
    assert env.rows("SELECT reason FROM cases") == [("rude",)]


async def test_appeal_of_a_case_number_in_non_ascii_digits_gets_the_usage_line_not_a_modal(env):
    """``/appeal #²`` answers the usage line at once; before, it opened the modal and the member's submitted appeal
    failed on ``int('²')`` and was lost."""
    await env.start()
    fields = env.fake.command_payload("/appeal", "#²", user=env.fake.member.id, channel=env.fake.general.id)
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    (hook,) = await env.fake.wait_for_hook()
    assert hook.body["text"].startswith("Usage: /appeal")
    assert env.rows("SELECT COUNT(*) FROM appeals") == [(0,)]


async def modpolicy(env: SlackEnv, text: str) -> str:
    return await command(env, "/modpolicy", text, user=env.fake.admin.id)


async def test_modpolicy_set_of_a_channel_the_bot_cannot_post_in_is_refused(env):
    """``/modpolicy set server.review_channel`` naming a channel the bot is not in (or cannot see) is refused with
    the reason ``/modsetup`` gives; before, it was stored and review cards silently failed."""
    await env.start()
    lobby = env.fake.add_channel("lobby", members=[env.fake.admin.id], bot_member=False)
    secret = env.fake.add_channel("secret", private=True, members=[env.fake.admin.id], bot_member=False)
    text = await modpolicy(env, f"set server.review_channel {lobby.id}")
    assert "the bot is not in this channel" in text and "Nothing was changed" in text, text
    text = await modpolicy(env, f"set server.mod_log_channel <#{secret.id}|secret>")
    assert "the bot cannot see this channel" in text and "Nothing was changed" in text, text
    assert env.rows("SELECT COUNT(*) FROM policy_overrides") == [(0,)]


async def test_modpolicy_set_of_a_channel_mention_stores_its_id(env):
    """``<#C123|name>`` (how Slack sends a channel named in a command) is taken as that channel's id."""
    await env.start()
    cards = env.fake.add_channel("cards", members=[env.fake.admin.id])
    text = await modpolicy(env, f"set server.review_channel <#{cards.id}|cards>")
    assert text == f'Policy updated: `server.review_channel` = `"{cards.id}"`.', text
    assert env.bot is not None
    assert (await env.bot.policies.get("slack", env.fake.team_id)).server.review_channel == cards.id


async def test_mydata_export_pages_escape_slack_markup_so_the_pages_read_as_the_record(env):
    """A record holding Slack markup (a message with ``<!channel>``, ``<https://x|y>``, ``&``) sent in pages: each
    page escapes ``&``, ``<`` and ``>`` as Slack requires of message text, so what the member sees (and copies)
    joins into the record; before, the raw markup went out and Slack showed "@channel" and a link instead of it."""
    import html
    import json

    env.fake.bot_scopes.discard("files:write")
    await env.start()
    for i in range(12):
        await env.say(env.fake.member.id, f"identityhate {i} <!channel> look <https://evil.example|here> & "
                      + "a long rant about nothing " * 8)
    assert env.bot is not None
    record = json.loads(json.dumps(await env.bot.workflow.export_member(env.fake.team_id, env.fake.member.id),
                                   default=str))
    assert "<!channel>" in json.dumps(record, ensure_ascii=False)
    fields = env.fake.command_payload("/mydata", "export", user=env.fake.member.id, channel=env.fake.general.id)
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    (hook,) = await env.fake.wait_for_hook()
    assert "parts" in hook.body["text"]
    dm = env.fake.channels["D" + env.fake.member.id[1:]]
    pages = sorted((m for m in dm.messages.values() if "Your record, part" in m["text"]), key=lambda m: m["ts"])
    assert len(pages) >= 2 and all(len(p["text"]) < 4_000 for p in pages)
    assert not any("<!channel>" in p["text"] or "<https://" in p["text"] for p in pages)
    joined = "".join(html.unescape(p["text"].split("```")[1]) for p in pages)
    assert json.loads(joined) == record


async def test_modsetup_opens_its_modal_when_the_user_group_lookup_is_rate_limited(env):
    """``usergroups.list`` answering 429 with ``Retry-After: 4`` must not spend the 3 seconds a ``trigger_id``
    lives: the modal opens (offering users only) instead of "That took too long to open"."""
    await env.start()
    env.fake.rate_limit("usergroups.list", retry_after=4)
    before = len(env.fake.calls_of("views.open"))
    fields = env.fake.command_payload("/modsetup", "", user=env.fake.admin.id, channel=env.fake.general.id)
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    calls = await env.fake.wait_for("views.open", count=before + 1, timeout=8)
    assert calls[-1].response["ok"], calls[-1].response


async def test_modcase_reason_stores_what_the_moderator_typed_not_slacks_html_entities(env):
    """Slack sends a command's ``&``, ``<`` and ``>`` as ``&amp;``, ``&lt;``, ``&gt;``: ``/modcase reason 1 Tom &
    Jerry <3`` arrives as ``Tom &amp; Jerry &lt;3`` and must be stored as typed (before, the entities were stored,
    and every later view showed ``&amp;``); ``/modcase search`` reads the words the same way."""
    await env.start()
    number = await note(env, env.fake.owner.id, "rude")
    answer = await command(env, "/modcase", f"reason {number} Tom &amp; Jerry &lt;3")
    assert answer.startswith(f"Case #{number} now reads: Tom &amp; Jerry &lt;3"), answer  # escaped again for display
    assert env.rows("SELECT reason FROM cases WHERE number = ?", (number,)) == [("Tom & Jerry <3",)]
    found = await command(env, "/modcase", "search &amp; jerry")
    assert "(reason has “&amp; jerry”)" in found and f"\n#{number} " in found, found


def test_slack_message_text_is_read_back_from_slacks_html_entities():
    """A message event's text comes with ``&``, ``<``, ``>`` as entities (``Tom &amp; Jerry &lt;3``): the core
    message holds what the member typed (scored, recorded as evidence, shown in the report), while real markup
    (``<!channel>``, ``<@U1>``) still counts as a ping or a mention and a typed ``&lt;!channel&gt;`` does not."""
    from bot.adapters.slack.translate import to_core
    from bot.core.models import MemberRef

    author = MemberRef(id="U0000000009", name="ann")

    def core(text: str):
        event = {"channel": "C0000000001", "user": author.id, "text": text, "ts": "1700000000.000100"}
        fields = {"user": author.id, "text": text, "ts": event["ts"]}
        return to_core("T0000000001", event, fields, author=author)

    typed = core("Tom &amp; Jerry &lt;3 &lt;!channel&gt;")
    assert typed.text == "Tom & Jerry <3 <!channel>" and not typed.mentions_everyone
    ping = core("<!channel> hi <@U0000000002>")
    assert ping.mentions_everyone and [m.id for m in ping.mentions] == ["U0000000002"]


async def test_a_members_report_reason_cannot_ping_the_review_channel(env):
    """A member reports with the reason ``<!channel> <!here> look`` (typed as is in the modal, which Slack sends
    raw): the review card's message text (Slack's notification text, parsed for mentions) escapes it; before, the
    card's ``text`` carried ``<!channel>`` and pinged every moderator in the review channel."""
    import json

    await env.start()
    member = env.fake.member
    fields = env.fake.command_payload("/report", f"<@{member.id}|member>", user=env.fake.owner.id,
                                      channel=env.fake.general.id)
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    (opened,) = await env.fake.wait_for("views.open")
    view = opened.params["view"] if isinstance(opened.params["view"], dict) else json.loads(opened.params["view"])
    sub = env.fake.view_submission_payload(user=env.fake.owner.id, callback_id="mod_report",
                                           values={"text": {"value": {"type": "plain_text_input",
                                                                      "value": "<!channel> <!here> look"}}},
                                           private_metadata=view["private_metadata"])
    assert (await env.fake.deliver_interaction(env.url, sub)).status == 200
    await env.fake.wait_until(lambda: env.cards())
    (call,) = env.posted(env.review)
    posted = json.dumps(call.params, ensure_ascii=False)
    assert "<!channel>" not in posted and "<!here>" not in posted, posted
    assert env.rows("SELECT reason FROM review_items") == [("<!channel> <!here> look",)]


async def test_a_members_report_reason_shows_as_text_in_the_moderators_home_tab(env):
    """A report whose reason is ``<https://evil.example|Open your review card> <!here>`` (a member's words) is shown
    escaped in the moderators' Home queue; before, the Home tab rendered it as a disguised link."""
    from tests.slack.test_home_slack import open_home

    await env.start()
    assert env.bot is not None
    await env.bot.workflow.report(env.fake.owner.id, env.fake.team_id, env.fake.member.id,
                                  "<https://evil.example|Open your review card> <!here>")
    await env.fake.wait_until(lambda: env.cards())
    home = await open_home(env, env.mods.id)
    assert "Open review queue (moderators)" in home
    assert "<https://evil.example" not in home and "<!here>" not in home
    assert "&lt;https://evil.example|Open your review card&gt;" in home
