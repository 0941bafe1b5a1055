"""Break-it: a member who used ``/mydata forget`` keeps their standing ("your active strikes and case history still
count"), and their strikes still escalate; but a moderator looking them up saw a clean record: ``/member info``
said "0 cases" beside their active strikes, and ``/case list member:`` found nothing, because their cases now
name the keyed pseudonym. Through the real discord.py client against the fake Discord."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt, user_opt

pytestmark = pytest.mark.discord


async def forget(env, user):
    cb = await env.fake.slash(env.guild, user, "mydata", [{"name": "forget", "type": 1, "options": [
        {"name": "confirm", "type": 3, "value": "FORGET"}]}])
    assert "records now read" in ephemeral_text(cb)


async def test_member_info_and_case_list_find_a_forgotten_members_cases(env):
    """Alice is warned twice (cases #1 and #2) and Bob once (#3); Alice runs /mydata forget. /member info @Alice
    lists her 2 warnings beside her 2 active strikes, /case list member:@Alice and /case search member:@Alice
    find cases #2 and #1, and Bob's record is unchanged."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "spam one"))
    await mod_on(env, "warn", env.alice, text_opt("reason", "spam two"))
    await mod_on(env, "warn", env.bob, text_opt("reason", "rude"))
    await forget(env, env.alice)
    opt, resolved = user_opt(env, "member", env.alice)
    info = ephemeral_text(await env.fake.slash(env.guild, env.mod, "member", [
        {"name": "info", "type": 1, "options": [opt]}], resolved=resolved))
    lines = info.splitlines()
    assert lines[0] == f"<@{env.alice['id']}> (`{env.alice['id']}`): 2 cases (2 warn)", info
    assert lines[1].startswith("Active strikes: 2 strikes")
    assert "spam one" in info and "spam two" in info and "rude" not in info
    for sub in ("list", "search"):
        listed = ephemeral_text(await mod_cmd(env, sub, opt, resolved=resolved, group="case"))
        assert listed.startswith(f"2 matching cases (member <@{env.alice['id']}>), page 1 of 1:"), listed
        assert [ln.split()[0] for ln in listed.splitlines()[1:]] == ["#2", "#1"]
    bob_opt, bob_resolved = user_opt(env, "member", env.bob)
    bob = ephemeral_text(await mod_cmd(env, "list", bob_opt, resolved=bob_resolved, group="case"))
    assert bob.startswith("1 matching case (member") and "#3" in bob
