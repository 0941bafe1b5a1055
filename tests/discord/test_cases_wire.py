"""Wire tests: /case list and /case search (filters, dates, pages and their Previous/Next buttons, nothing found),
/case reason (audited; unknown and other servers' cases refused) and /member info, against the fake Discord."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt, user_opt

pytestmark = pytest.mark.discord


async def case_cmd(env, sub, *options, **kw):
    return await mod_cmd(env, sub, *options, group="case", **kw)


async def test_case_search_filters_by_member_and_action_and_pages(env):
    """Search by member and by action finds exactly those cases; 12 notes make two pages; no match says so."""
    for i in range(12):
        await mod_on(env, "note", env.alice, text_opt("text", f"watch {i}"))
    await mod_on(env, "warn", env.bob, text_opt("reason", "rude"))
    opt, resolved = user_opt(env, "member", env.alice)
    first = ephemeral_text(await case_cmd(env, "search", opt, resolved=resolved))
    assert first.startswith(f"12 matching cases (member <@{env.alice['id']}>), page 1 of 2:")
    assert first.count(f"log <@{env.alice['id']}>") == 10 and "watch 11" in first and "watch 1\n" not in first
    second = ephemeral_text(await case_cmd(env, "search", opt, text_opt("page", 2, 4), resolved=resolved))
    assert "page 2 of 2" in second and second.count("\n#") == 2 and "watch 0" in second
    warns = ephemeral_text(await case_cmd(env, "search", text_opt("action", "warn")))
    assert warns.startswith("1 matching case (action warn)") and f"warn <@{env.bob['id']}>" in warns
    mod_opt, mod_resolved = user_opt(env, "moderator", env.mod)
    by_mod = ephemeral_text(await case_cmd(env, "search", mod_opt, resolved=mod_resolved))
    assert by_mod.startswith(f"13 matching cases (by <@{env.mod['id']}>)")
    words = ephemeral_text(await case_cmd(env, "search", text_opt("text", "watch 7")))
    assert words.startswith("1 matching case (reason has “watch 7”)")
    none = ephemeral_text(await case_cmd(env, "search", text_opt("text", "no such words")))
    assert none == "No case matches these filters (reason has “no such words”)."
    past = ephemeral_text(await case_cmd(env, "search", opt, text_opt("page", 3, 4), resolved=resolved))
    assert "only 2 pages" in past
    bad = ephemeral_text(await case_cmd(env, "search", text_opt("action", "explode")))
    assert "Unknown action `explode`" in bad


async def test_case_reason_is_changed_and_audited(env):
    """/case reason replaces the reason, records old and new as a note case by the moderator, posts to the mod
    log; an unknown case, another server's number and a too long reason change nothing."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    text = ephemeral_text(await case_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", "slur in #general")))
    assert text == "Case #1 now reads: slur in #general (the change is recorded as case #2)."
    rows = env.rows("SELECT number, action, reason, moderator_id FROM cases ORDER BY number")
    assert rows[0]["reason"] == "slur in #general"
    assert (rows[1]["action"], rows[1]["moderator_id"]) == ("log", env.mod["id"])
    assert rows[1]["reason"] == "reason of case #1 changed from 'rude' to 'slur in #general'"
    await env.fake.wait_for("POST", rf"/channels/{env.modlog}/messages",
                            pred=lambda r: "reason changed" in str(r.body.get("embeds")))
    assert "There is no case #99" in ephemeral_text(await case_cmd(env, "reason", text_opt("number", 99, 4),
                                                                   text_opt("reason", "x")))
    other = ephemeral_text(await case_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", "x"),
                                          guild=env.other, user=env.fake.new_user(env.other, "othermod",
                                                                                  roles=[env.other["mod_role"]])))
    assert "There is no case #1 in this server" in other
    long = ephemeral_text(await case_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", "x" * 1001)))
    assert "at most 1,000" in long
    assert env.rows("SELECT reason FROM cases WHERE number = 1")[0][0] == "slur in #general"
    assert len(env.rows("SELECT * FROM cases")) == 2


async def test_case_reason_refused_for_members(env):
    """/case reason by a member without moderator rights changes nothing."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    text = ephemeral_text(await case_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", "x"),
                                         user=env.bob))
    assert "You need Manage Messages" in text
    assert env.rows("SELECT reason FROM cases")[0][0] == "rude"


async def test_member_info_shows_cases_strikes_and_notes(env):
    """/member info lists a member's cases by action, active strikes and points, notes and newest cases."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    await mod_on(env, "note", env.alice, text_opt("text", "second chance"))
    opt, resolved = user_opt(env, "member", env.alice)
    text = ephemeral_text(await env.fake.slash(env.guild, env.mod, "member", [
        {"name": "info", "type": 1, "options": [opt]}], resolved=resolved))
    lines = text.splitlines()
    assert lines[0] == f"<@{env.alice['id']}> (`{env.alice['id']}`): 2 cases (1 log, 1 warn)"
    assert lines[1].startswith("Active strikes: 1 strike")
    assert lines[2] == "Notes: 1; appeals: 0" and "second chance" in text and "rude" in text
    opt, resolved = user_opt(env, "member", env.bob)
    clean = ephemeral_text(await env.fake.slash(env.guild, env.mod, "member", [
        {"name": "info", "type": 1, "options": [opt]}], resolved=resolved))
    assert clean == f"<@{env.bob['id']}> has no cases, strikes or appeals in this server."


def set_case_day(env: Any, number: int, day: str) -> None:
    """Move case ``number`` of the main server to noon UTC of ``day`` (the mod log's own time format)."""
    con = sqlite3.connect(env.db)
    try:
        con.execute("UPDATE cases SET created_at = ? WHERE server_id = ? AND number = ?",
                    (f"{day}T12:00:00.000000+00:00", env.guild["id"], number))
        con.commit()
    finally:
        con.close()


def page_message(env: Any, header: str) -> dict[str, Any]:
    """The ephemeral answer message (as the fake stores it) whose content starts with ``header``."""
    found = [m for m in env.fake.messages.values() if m["flags"] & 64 and m["content"].startswith(header)]
    assert found, header
    return found[-1]


def buttons(msg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{label: button}`` of a message's buttons."""
    return {c["label"]: c for row in msg.get("components") or [] for c in row["components"]}


async def test_case_list_filters_by_moderator_action_label_and_dates(env):
    """/case list keeps exactly the cases matching every filter: moderator (automod too), action, label of the
    case's message, and a date range (both days included); an empty result and bad input say so."""
    await mod_on(env, "warn", env.bob, text_opt("reason", "rude"))  # 1
    await mod_on(env, "note", env.bob, text_opt("text", "watch him"))  # 2
    await env.post(env.alice, "you are identityhate garbage")  # 3: automod delete, labels identity_attack...
    await env.fake.wait_until(lambda: len(env.rows("SELECT * FROM cases")) == 3)
    set_case_day(env, 1, "2026-03-01")
    set_case_day(env, 2, "2026-03-15")
    set_case_day(env, 3, "2026-04-02")

    async def listing(*opts: dict[str, Any], resolved: dict[str, Any] | None = None) -> str:
        return ephemeral_text(await case_cmd(env, "list", *opts, resolved=resolved))

    def numbers(text: str) -> list[str]:
        return [ln.split()[0] for ln in text.splitlines()[1:]]

    everything = await listing()
    assert everything.startswith("3 cases, page 1 of 1:") and numbers(everything) == ["#3", "#2", "#1"]
    assert "2026-04-02 delete" in everything and "by automod" in everything
    automod = await listing(text_opt("label", "identity_attack"))
    assert automod.startswith("1 matching case (label identity_attack)") and numbers(automod) == ["#3"]
    assert numbers(await listing(text_opt("action", "warn"))) == ["#1"]
    mod_opt, mod_resolved = user_opt(env, "moderator", env.mod)
    assert numbers(await listing(mod_opt, resolved=mod_resolved)) == ["#2", "#1"]
    march = await listing(text_opt("since", "2026-03-01"), text_opt("until", "2026-03-15"))
    assert march.startswith("2 matching cases (from 2026-03-01, until 2026-03-15)") and numbers(march) == ["#2",
                                                                                                          "#1"]
    assert numbers(await listing(text_opt("since", "2026-03-02"))) == ["#3", "#2"]
    member_opt, resolved = user_opt(env, "member", env.bob)
    none = await listing(member_opt, text_opt("action", "ban"), resolved=resolved)
    assert none == f"No case matches these filters (member <@{env.bob['id']}>, action ban)."
    bad = await listing(text_opt("since", "March 1st"))
    assert bad == "`since` must be a date like 2026-06-01 (year-month-day), not `March 1st`."
    backwards = await listing(text_opt("since", "2026-04-01"), text_opt("until", "2026-03-01"))
    assert backwards == "`since` (2026-04-01) is after `until` (2026-03-01)."


async def test_case_list_of_another_server_shows_only_its_own_cases(env):
    """A moderator of the other server lists only that server's cases: none, said plainly."""
    await mod_on(env, "warn", env.bob, text_opt("reason", "rude"))
    other_mod = env.fake.new_user(env.other, "othermod", roles=[env.other["mod_role"]])
    text = ephemeral_text(await case_cmd(env, "list", guild=env.other, user=other_mod))
    assert text == "No cases in this server yet."


async def test_case_list_pages_turn_with_buttons_only_for_the_moderator_who_asked(env):
    """23 cases make 3 pages: the answer carries Previous (disabled on page 1) and Next; Next and Previous edit
    the same ephemeral message in place; another member's click is refused and moves nothing; one page alone has
    no buttons."""
    for i in range(23):
        await mod_on(env, "note", env.alice, text_opt("text", f"note {i}"))
    first = ephemeral_text(await case_cmd(env, "list"))
    assert first.startswith("23 cases, page 1 of 3:") and "note 22" in first and "note 12" not in first
    msg = page_message(env, "23 cases, page 1 of 3:")
    assert buttons(msg)["Previous"].get("disabled") is True and not buttons(msg)["Next"].get("disabled")
    nxt = buttons(msg)["Next"]["custom_id"]
    turned = await env.fake.click(env.guild, env.mod, msg, nxt)
    assert turned.body["type"] == 7 and turned.body["deferred"] == 6
    assert turned.body["data"]["content"].startswith("23 cases, page 2 of 3:")
    assert "note 12" in turned.body["data"]["content"] and "note 13" not in turned.body["data"]["content"]
    msg = env.fake.messages[msg["id"]]
    assert msg["content"].startswith("23 cases, page 2 of 3:")
    assert not buttons(msg)["Previous"].get("disabled") and not buttons(msg)["Next"].get("disabled")
    await env.fake.click(env.guild, env.mod, msg, buttons(msg)["Next"]["custom_id"])
    msg = env.fake.messages[msg["id"]]
    assert msg["content"].startswith("23 cases, page 3 of 3:") and msg["content"].count("\n#") == 3
    assert buttons(msg)["Next"].get("disabled") is True
    refused = await env.fake.click(env.guild, env.bob, msg, buttons(msg)["Previous"]["custom_id"])
    assert ephemeral_text(refused) == "Only the moderator who asked can turn these pages: use `/case list` yourself."
    assert env.fake.messages[msg["id"]]["content"].startswith("23 cases, page 3 of 3:")
    await env.fake.click(env.guild, env.mod, msg, buttons(msg)["Previous"]["custom_id"])
    assert env.fake.messages[msg["id"]]["content"].startswith("23 cases, page 2 of 3:")
    third = ephemeral_text(await case_cmd(env, "list", text_opt("page", 3, 4)))
    assert third.startswith("23 cases, page 3 of 3:")
    past = ephemeral_text(await case_cmd(env, "list", text_opt("page", 4, 4)))
    assert past == "There are only 3 pages of results."
    opt, resolved = user_opt(env, "member", env.bob)
    await mod_on(env, "warn", env.bob, text_opt("reason", "rude"))
    single = ephemeral_text(await case_cmd(env, "list", opt, resolved=resolved))
    assert single.startswith("1 matching case (member") and buttons(page_message(env, "1 matching case")) == {}


async def test_case_list_refused_for_members(env):
    """/case list by a member without moderator rights shows nothing."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    text = ephemeral_text(await case_cmd(env, "list", user=env.bob))
    assert "You need Manage Messages" in text and "rude" not in text


async def test_case_pager_survives_discord_refreshing_its_components():
    """discord.py refreshes a tracked view from an updated message by calling ``view._refresh(components)``
    (``ViewStore.update_from_message``); the pager once named its own button update ``_refresh()`` with no
    arguments, shadowing that method, so discord.py's call raised ``TypeError`` (found by mypy). Now that call
    passes and the pager's buttons keep the page's state: page 1 of 2 has no Previous and has a Next."""
    from types import SimpleNamespace

    from bot.workflow.cases import CaseFilter, CasePage
    from cogs.cases import CasePager

    page = CasePage(("#2 ...", "#1 ..."), page=1, pages=2, total=12)
    origin: Any = SimpleNamespace(user=SimpleNamespace(id=1))  # only origin.user.id is read on construction
    no_bot: Any = None  # the bot is used on a turn only
    pager = CasePager(bot=no_bot, origin=origin, filters=CaseFilter(), result=page)
    pager._refresh([])  # discord.py's own call, with the components of the updated message (none here)
    assert pager.previous.disabled and not pager.next.disabled
