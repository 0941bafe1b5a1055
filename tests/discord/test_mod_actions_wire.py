"""Wire tests: /mod kick|ban|unban|pardon|note, /case list, role hierarchy and server-side permission checks."""

from __future__ import annotations

import pytest

from tests.discord.helpers import (
    dm_posts,
    ephemeral_text,
    give_role_above_bot,
    guild_requests,
    mod_cmd,
    mod_on,
    text_opt,
    user_opt,
)

pytestmark = pytest.mark.discord


def cases(env):
    return [tuple(r) for r in env.rows("SELECT number, member_id, action, status, moderator_id FROM cases "
                                       "ORDER BY number")]


async def test_kick_sends_delete_member_and_records_case(env):
    """/mod kick sends DELETE /guilds/{g}/members/{u}, records an applied kick case and a 3-point strike."""
    cb = await mod_on(env, "kick", env.alice, text_opt("reason", "raiding"))
    assert ephemeral_text(cb) == f"Case #1: kick <@{env.alice['id']}> done."
    kicks = guild_requests(env, "DELETE", "members", env.alice)
    assert len(kicks) == 1 and kicks[0].headers.get("X-Audit-Log-Reason") == "raiding"
    assert cases(env) == [(1, env.alice["id"], "kick", "applied", env.mod["id"])]
    assert [tuple(r) for r in env.rows("SELECT points, case_number FROM strikes")] == [(3, 1)]
    assert guild_requests(env, "PATCH", "members", env.alice) == []  # kick outranks the 3-point ladder timeout


@pytest.mark.parametrize("member_left", [False, True])
async def test_ban_sends_put_ban_even_after_member_left(env, member_left):
    """/mod ban sends PUT /guilds/{g}/bans/{u} (no message purge), for members and users who already left."""
    target = env.alice
    if member_left:
        target = env.fake.new_user(env.other, "elsewhere")  # a user who is not (any more) in this server
    opt = {"name": "member", "type": 6, "value": target["id"]}
    cb = await mod_cmd(env, "ban", opt, text_opt("reason", "scam links"), resolved={"users": {target["id"]: target}})
    assert ephemeral_text(cb).endswith("done.")
    (ban,) = guild_requests(env, "PUT", "bans", target)
    assert ban.query == {"delete_message_seconds": "0"}
    assert cases(env) == [(1, target["id"], "ban", "applied", env.mod["id"])]
    assert env.rows("SELECT points FROM strikes")[0][0] == 5


async def test_unban_sends_delete_ban_and_records_case(env):
    """/mod unban sends DELETE /guilds/{g}/bans/{u} and records a no-sanction case naming the unban."""
    env.fake.add_ban(env.guild, env.bob, "spam")  # Discord answers 10026 Unknown Ban when unbanning a non-banned user
    cb = await mod_cmd(env, "unban", text_opt("user_id", env.bob["id"]), text_opt("reason", "served time"))
    assert ephemeral_text(cb) == f"Unbanned <@{env.bob['id']}> (case #1)."
    assert len(guild_requests(env, "DELETE", "bans", env.bob)) == 1
    row = env.rows("SELECT action, status, reason, moderator_id FROM cases")[0]
    assert tuple(row) == ("log", "applied", "unban: served time", env.mod["id"])


@pytest.mark.parametrize("user_id", ["not-a-number", "1" * 21])
async def test_unban_bad_id_refused(env, user_id):
    """/mod unban with a non-numeric or over-long id is refused; nothing is sent or stored."""
    cb = await mod_cmd(env, "unban", text_opt("user_id", user_id), text_opt("reason", "x"))
    assert "numeric Discord id" in ephemeral_text(cb)
    assert env.fake.find("DELETE", r"/guilds/.*/bans/.*") == [] and cases(env) == []


async def test_pardon_removes_active_strikes(env):
    """/mod pardon marks the case pardoned and its strikes pardoned; /mystatus then shows none."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    cb = await mod_cmd(env, "pardon", text_opt("case", 1, 4))
    assert ephemeral_text(cb) == "Case #1 pardoned (1 strike(s))."
    assert env.rows("SELECT status FROM cases")[0][0] == "pardoned"
    assert [tuple(r) for r in env.rows("SELECT pardoned_by FROM strikes")] == [(env.mod["id"],)]
    status = await env.fake.slash(env.guild, env.alice, "mystatus", [])
    assert status.body["data"]["embeds"][0]["fields"][0]["value"] == "none"


@pytest.mark.parametrize("case", [7, 0, 10**12])
async def test_pardon_unknown_case_refused(env, case):
    """/mod pardon of a case this server does not have answers an error; no strike changes."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "rude"))
    cb = await mod_cmd(env, "pardon", text_opt("case", case, 4))
    assert f"no case #{case}" in ephemeral_text(cb)
    assert env.rows("SELECT pardoned_at FROM strikes")[0][0] is None


async def test_note_records_case_without_sanction(env):
    """/mod note records an applied 'log' case with the text; nothing is sent to the member or Discord."""
    before = len(env.fake.requests)
    cb = await mod_on(env, "note", env.alice, text_opt("text", "asked about the rules twice"))
    assert ephemeral_text(cb) == "Note saved as case #1."
    assert cases(env) == [(1, env.alice["id"], "log", "applied", env.mod["id"])]
    assert env.rows("SELECT reason FROM cases")[0][0] == "asked about the rules twice"
    assert env.rows("SELECT * FROM strikes") == [] and dm_posts(env, env.alice) == []
    sent = [r for r in env.fake.requests[before:] if r.path.startswith("/guilds/")]
    assert sent == []


@pytest.mark.parametrize("who,expect", [("alice", ["#1", "#3"]), (None, ["#3", "#2", "#1"])])
async def test_case_list_by_member(env, who, expect):
    """/case list member:<m> lists only that member's cases of this server (newest first); without: all."""
    await mod_on(env, "note", env.alice, text_opt("text", "first"))
    await mod_on(env, "note", env.bob, text_opt("text", "second"))
    await mod_on(env, "note", env.alice, text_opt("text", "third"))
    other_mod = env.fake.new_user(env.other, "othermod", roles=[env.other["mod_role"]])
    await mod_on(env, "note", other_mod, text_opt("text", "other server"), guild=env.other, user=other_mod)
    opts, resolved = [], None
    if who:
        opt, resolved = user_opt(env, "member", env.alice)
        opts = [opt]
    cb = await mod_cmd(env, "list", *opts, group="case", resolved=resolved)
    head, *lines = ephemeral_text(cb).splitlines()
    assert head.endswith("page 1 of 1:")
    assert [ln.split()[0] for ln in lines] == sorted(expect, reverse=True)
    assert "other server" not in ephemeral_text(cb)
    if who:
        assert all(env.alice["id"] in ln for ln in lines)


@pytest.mark.parametrize("sub,extra", [("ban", []), ("kick", []), ("timeout", [text_opt("minutes", 10, 4)])])
async def test_role_hierarchy_refused_before_anything_is_done(env, sub, extra):
    """Sanctioning a member ranked above the moderator (and the bot) is refused server-side with the hierarchy
    reason before any Discord call; no case, no strike."""
    await give_role_above_bot(env, env.alice)
    cb = await mod_on(env, sub, env.alice, *extra, text_opt("reason", "x"))
    assert "(role hierarchy)" in ephemeral_text(cb)
    assert env.rows("SELECT * FROM cases") == []
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == []
    assert env.fake.find("DELETE", r"/guilds/.*/members/.*") == []
    assert env.fake.find("PATCH", r"/guilds/.*/members/.*") == []
    assert env.rows("SELECT * FROM strikes") == []


@pytest.mark.parametrize("sub,extra", [("ban", []), ("kick", []), ("warn", []), ("note", [])])
async def test_non_moderator_direct_invocation_refused(env, sub, extra):
    """A member without Manage Messages or the moderator role invoking /mod directly is refused ephemerally."""
    arg = text_opt("text" if sub == "note" else "reason", "because")
    cb = await mod_on(env, sub, env.alice, *extra, arg, user=env.bob)
    assert "You need " in ephemeral_text(cb) and "Nothing was changed" in ephemeral_text(cb)
    assert env.fake.find("PUT", r"/guilds/.*/bans/.*") == []
    assert env.fake.find("DELETE", r"/guilds/.*/members/.*") == []
    assert cases(env) == [] and env.rows("SELECT * FROM strikes") == [] and dm_posts(env, env.alice) == []


async def test_deleting_a_message_twice_is_marked_gone_not_just_refused(env):
    """Discord answers a second DELETE of one message 404 Unknown Message (10008): the enforcer marks that result
    ``extra[GONE]``, so the workflow can count the delete as done (a stop after the first delete; an author who
    deleted first) instead of recording a failure."""
    from bot.core.ports import GONE

    msg, _ = await env.post(env.alice, "hello there, nice weather")
    first = await env.bot.enforcer.delete_message(env.guild["id"], env.general, msg["id"])
    second = await env.bot.enforcer.delete_message(env.guild["id"], env.general, msg["id"])
    assert first.ok and not first.extra.get(GONE)
    assert not second.ok and second.extra.get(GONE) == "1" and "10008" in second.reason
