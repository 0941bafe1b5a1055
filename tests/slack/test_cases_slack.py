"""Wire tests: ``/modcase list|search|show|reason`` and ``/modmember info`` (the twins of Discord's ``/case`` and
``/member info``) through the real slack-bolt app against the fake Slack: filters, dates, pages, escaping, the
audited reason change, and refusals for members, unknown and other workspaces' cases."""

from __future__ import annotations

import sqlite3

import pytest

from bot.workflow.authz import Actor, Permission
from tests.slack.test_app_wire import SlackEnv

pytestmark = pytest.mark.slack


async def command(env: SlackEnv, name: str, text: str, user: str | None = None) -> str:
    """Deliver a slash command over HTTP; the ephemeral answer's text."""
    fields = env.fake.command_payload(name, text, user=user or env.mods.id, channel=env.fake.general.id)
    count = len(env.fake.hook_posts) + 1
    assert (await env.fake.deliver_command(env.url, fields)).status == 200
    hook = (await env.fake.wait_for_hook(count=count))[-1]
    assert hook.body["response_type"] == "ephemeral"
    return hook.body["text"]


def mention(user_id: str, name: str = "x") -> str:
    """A mention as Slack sends it in a command's text (``should_escape: true``)."""
    return f"<@{user_id}|{name}>"


async def note(env: SlackEnv, member: str, text: str, team: str | None = None) -> int:
    """A moderator's note (a ``log`` case) through the workflow; its case number."""
    assert env.bot is not None
    mod = Actor(env.mods.id, permissions=frozenset({Permission.MANAGE_MESSAGES}))
    result = await env.bot.workflow.note(mod, team or env.fake.team_id, member, text)
    return int(result.case_number or 0)


def set_day(env: SlackEnv, number: int, day: str) -> None:
    con = sqlite3.connect(env.db)
    try:
        con.execute("UPDATE cases SET created_at = ? WHERE server_id = ? AND number = ?",
                    (f"{day}T12:00:00.000000+00:00", env.fake.team_id, number))
        con.commit()
    finally:
        con.close()


def numbers(text: str) -> list[str]:
    return [ln.split()[0] for ln in text.splitlines()[1:] if ln.startswith("#")]


async def test_modcase_list_filters_dates_and_pages(env):
    """/modcase list keeps the cases matching every filter (member mention, by:, by:automod, action:, label:,
    since:/until:), pages by ten with a line saying how to reach the next page, and says plainly when nothing
    matches or a filter is wrong."""
    await env.start()
    member, other = env.fake.member.id, env.fake.owner.id
    await env.say(member, "identityhate, all of you")  # case 1: automod, labels identity_attack, toxicity
    for i in range(11):
        await note(env, other, f"note {i}")  # cases 2..12
    set_day(env, 1, "2026-03-01")
    set_day(env, 2, "2026-03-10")
    first = await command(env, "/modcase", "list")
    assert first.startswith("12 cases, page 1 of 2:") and numbers(first) == [f"#{n}" for n in range(12, 2, -1)]
    assert first.endswith("Next page: the same command with `page:2`.")
    second = await command(env, "/modcase", "list page:2")
    assert second.startswith("12 cases, page 2 of 2:") and numbers(second) == ["#2", "#1"]
    assert "Next page" not in second
    mine = await command(env, "/modcase", f"list {mention(member, 'member')}")
    assert mine.startswith(f"1 matching case (member <@{member}>), page 1 of 1:") and numbers(mine) == ["#1"]
    assert "by automod" in mine and "[identity_attack" in mine
    assert numbers(await command(env, "/modcase", "list by:automod")) == ["#1"]
    assert numbers(await command(env, "/modcase", "list label:identity_attack")) == ["#1"]
    by_mod = await command(env, "/modcase", f"list by:{mention(env.mods.id, 'mod')} action:log")
    assert by_mod.startswith(f"11 matching cases (by <@{env.mods.id}>, action log)")
    march = await command(env, "/modcase", "list since:2026-03-01 until:2026-03-10")
    assert numbers(march) == ["#2", "#1"]
    none = await command(env, "/modcase", f"list {mention(other)} action:ban")
    assert none == f"No case matches these filters (member <@{other}>, action ban)."
    assert await command(env, "/modcase", "list since:yesterday") == \
        "`since` must be a date like 2026-06-01 (year-month-day), not `yesterday`."
    assert await command(env, "/modcase", "list page:3") == "There are only 2 pages of results."
    assert await command(env, "/modcase", "list action:explode") == \
        "Unknown action `explode` (one of: log, review, delete, warn, timeout, kick, ban)."
    assert "takes filters only" in await command(env, "/modcase", "list rude words")
    assert await command(env, "/modcase", "list by:bob") == "`by:` takes a mention (`by:@name`) or `automod`."


async def test_modcase_search_matches_words_and_escapes_members_text(env):
    """/modcase search finds the words in reasons; a reason holding Slack markup is shown escaped (no ping)."""
    await env.start()
    await note(env, env.fake.member.id, "spam links <!channel> again")
    await note(env, env.fake.member.id, "friendly")
    text = await command(env, "/modcase", "search spam <!channel>")
    assert text.startswith("1 matching case (reason has “spam &lt;!channel&gt;”)")
    assert "spam links &lt;!channel&gt; again" in text and "<!channel>" not in text
    assert await command(env, "/modcase", "search nothing-like-this") == \
        "No case matches these filters (reason has “nothing-like-this”)."


async def test_modcase_show_and_reason_are_scoped_and_audited(env):
    """/modcase show gives one case in full; /modcase reason changes it, records a note case and posts to the mod
    log; unknown numbers and another workspace's case are refused and change nothing."""
    await env.start()
    await note(env, env.fake.member.id, "first", team="T0OTHER")  # another workspace's case #1
    number = await note(env, env.fake.member.id, "rude")
    assert number == 1
    shown = await command(env, "/modcase", "show #1")
    assert shown.startswith("*Case #1: log (applied)*") and "Reason: rude" in shown
    assert f"Member: <@{env.fake.member.id}>" in shown and f"Moderator: <@{env.mods.id}>" in shown
    changed = await command(env, "/modcase", "reason 1 spam in #general")
    assert changed == "Case #1 now reads: spam in #general (the change is recorded as case #2)."
    assert env.rows("SELECT reason FROM cases WHERE server_id = ? AND number = 1", (env.fake.team_id,)) == [
        ("spam in #general",)]
    assert env.rows("SELECT reason FROM cases WHERE server_id = 'T0OTHER'") == [("first",)]
    posts = await env.fake.wait_until(lambda: [m for m in env.modlog.messages.values()
                                               if "reason changed" in (m.get("text") or "")])
    assert posts
    assert await command(env, "/modcase", "show 99") == "There is no case #99 in this server."
    assert await command(env, "/modcase", "reason 99 x") == "There is no case #99 in this server. Nothing was changed."
    assert "at most 1,000" in await command(env, "/modcase", "reason 1 " + "x" * 1001)
    assert await command(env, "/modcase", "show one") == "`one` is not a case number."
    assert (await command(env, "/modcase", "explode")).startswith("Usage: /modcase list")
    assert len(env.rows("SELECT * FROM cases")) == 3


async def test_modmember_info_shows_the_record(env):
    """/modmember info @member: cases by action, strikes, notes and the newest cases, as on Discord."""
    await env.start()
    await note(env, env.fake.member.id, "second chance")
    member = env.fake.member.id
    text = await command(env, "/modmember", f"info {mention(member, 'member')}")
    lines = text.splitlines()
    assert lines[0] == f"<@{member}> (`{member}`): 1 case (1 log)"
    assert lines[2] == "Notes: 1; appeals: 0" and "second chance" in text
    clean = await command(env, "/modmember", f"info {mention(env.fake.owner.id)}")
    assert clean == f"<@{env.fake.owner.id}> has no cases, strikes or appeals in this server."
    assert await command(env, "/modmember", "info bob") == "Usage: /modmember info @member"


@pytest.mark.parametrize("name,text", [("/modcase", "list"), ("/modcase", "show 1"), ("/modcase", "reason 1 x"),
                                       ("/modmember", "info <@U0000000001|x>")])
async def test_case_commands_are_refused_for_members(env, name, text):
    """An ordinary member is refused server-side by every case command; nothing is shown or changed."""
    await env.start()
    await note(env, env.fake.owner.id, "rude")
    answer = await command(env, name, text, user=env.fake.member.id)
    assert answer.startswith("You need Manage Messages") and "rude" not in answer
    assert env.rows("SELECT reason FROM cases") == [("rude",)]


def page_buttons(eph: dict) -> dict[str, dict]:
    """``{label: button}`` of an ephemeral answer's page buttons."""
    return {e["text"]["text"]: e for b in eph.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]}


async def click(env: SlackEnv, user: str, eph: dict, label: str) -> dict:
    """Click a page button of an ephemeral answer; the response_url post the app made."""
    button = page_buttons(eph)[label]
    count = len(env.fake.hook_posts) + 1
    payload = env.fake.ephemeral_actions_payload(user=user, ephemeral=eph, action_id=button["action_id"],
                                                 value=button["value"], block_id="pages")
    assert (await env.fake.deliver_interaction(env.url, payload)).status == 200
    return (await env.fake.wait_for_hook(count=count))[-1].body


async def test_modcase_list_pages_turn_in_place_only_for_the_moderator_who_asked(env):
    """23 cases: the ephemeral answer has Next only; Next replaces it in place with page 2 (Previous and Next);
    another member's click is refused and changes nothing; a single page has no buttons."""
    await env.start()
    for i in range(23):
        await note(env, env.fake.member.id, f"note {i}")
    text = await command(env, "/modcase", f"list {mention(env.fake.member.id)}")
    assert text.startswith("23 matching cases")
    (eph,) = [e for e in env.fake.ephemerals if (e.get("text") or "").startswith("23 matching cases")]
    assert eph["user"] == env.mods.id and list(page_buttons(eph)) == ["Next"]
    body = await click(env, env.mods.id, eph, "Next")
    assert body["replace_original"] is True
    assert eph["text"].startswith(f"23 matching cases (member <@{env.fake.member.id}>), page 2 of 3:")
    assert "note 12" in eph["text"] and "note 13" not in eph["text"]
    assert list(page_buttons(eph)) == ["Previous", "Next"]
    refused = await click(env, env.fake.admin.id, eph, "Previous")
    assert refused["text"] == "Only the moderator who asked can turn these pages: use `/modcase list` yourself."
    assert refused["replace_original"] is False and "page 2 of 3" in eph["text"]
    await click(env, env.mods.id, eph, "Next")
    assert "page 3 of 3" in eph["text"] and list(page_buttons(eph)) == ["Previous"]
    await click(env, env.mods.id, eph, "Previous")
    assert "page 2 of 3" in eph["text"]
    await note(env, env.fake.owner.id, "alone")
    single = await command(env, "/modcase", f"list {mention(env.fake.owner.id)}")
    assert single.startswith("1 matching case")
    assert page_buttons([e for e in env.fake.ephemerals if (e.get("text") or "").startswith("1 matching")][0]) == {}
