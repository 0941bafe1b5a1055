"""Wire tests: /case search (filters, pages, nothing found), /case reason (audited; unknown and other servers'
cases refused) and /member info, against the fake Discord."""

from __future__ import annotations

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
    assert first.startswith("12 matching case(s), page 1 of 2:")
    assert first.count(f"log <@{env.alice['id']}>") == 10 and "watch 11" in first and "watch 1\n" not in first
    second = ephemeral_text(await case_cmd(env, "search", opt, text_opt("page", 2, 4), resolved=resolved))
    assert "page 2 of 2" in second and second.count("\n#") == 2 and "watch 0" in second
    warns = ephemeral_text(await case_cmd(env, "search", text_opt("action", "warn")))
    assert warns.startswith("1 matching case(s)") and f"warn <@{env.bob['id']}>" in warns
    mod_opt, mod_resolved = user_opt(env, "moderator", env.mod)
    by_mod = ephemeral_text(await case_cmd(env, "search", mod_opt, resolved=mod_resolved))
    assert by_mod.startswith("13 matching case(s)")
    words = ephemeral_text(await case_cmd(env, "search", text_opt("text", "watch 7")))
    assert words.startswith("1 matching case(s)")
    none = ephemeral_text(await case_cmd(env, "search", text_opt("text", "no such words")))
    assert none == "No case matches these filters."
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
