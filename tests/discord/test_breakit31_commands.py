"""Break-it (session 31): moderators' slash commands through the real discord.py client against the fake."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, mod_on, text_opt
from tests.discord.test_breakit29_escaping import RENDERED

pytestmark = pytest.mark.discord

BAIT = "[see the appeal](https://evil.example/login) **now**"


async def test_case_show_shows_a_reason_as_text(env):
    """/case list escapes a case's reason (a reason may quote a member), as the mod log and the member's notice do;
    /case show put the reason in the embed's description as typed, so a masked link in it was a live link."""
    cb = await mod_on(env, "warn", env.alice, text_opt("reason", BAIT))
    assert "Case #1: warn" in ephemeral_text(cb)
    shown = await mod_cmd(env, "show", text_opt("number", 1, 4), group="case")
    embed = shown.body["data"]["embeds"][0]
    assert "see the appeal" in embed["description"]
    assert not RENDERED.search(embed["description"]), embed["description"]


async def test_a_changed_reasons_mod_log_entry_shows_the_new_reason_as_text(env):
    """/case reason answers with the new reason escaped, but its mod-log entry wrote it as a plain line, so a
    masked link in it was a live link in the mod log (every other entry quotes a reason as typed words)."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "spam"))
    cb = await mod_cmd(env, "reason", text_opt("number", 1, 4), text_opt("reason", BAIT), group="case")
    assert "now reads" in ephemeral_text(cb)
    await env.fake.wait_until(lambda: any("reason changed" in p.body["embeds"][0]["title"]
                                          for p in env.modlog_posts()))
    entry = next(p.body["embeds"][0] for p in env.modlog_posts() if "reason changed" in p.body["embeds"][0]["title"])
    assert "see the appeal" in entry["description"]
    assert not RENDERED.search(entry["description"]), entry["description"]


async def test_a_note_longer_than_a_reason_is_refused_not_cut(env):
    """A case's text holds at most 1,000 characters: /mod warn and /case reason refuse a longer one (nothing
    recorded), but /mod note answered "Note saved" and kept the first 1,000 characters, the rest lost unseen."""
    text = "seen posting scam links in three channels; " * 35  # 1,505 characters
    cb = await mod_on(env, "note", env.alice, text_opt("text", text))
    assert "1,505 characters; at most 1,000" in ephemeral_text(cb)
    assert env.rows("SELECT number FROM cases") == []


async def test_unban_by_an_id_in_other_digits_is_refused(env):
    """``str.isdigit`` holds for Arabic-Indic (and other Unicode) digits and ``int`` reads them, so /mod unban with
    the id typed in them unbanned the user on Discord but recorded the case under an id no other record has (not
    found by /case list member:, /member info, nor the member's /mydata; the answer's mention did not render)."""
    banned = env.fake.new_user(None, "banned")
    env.fake.add_ban(env.guild, banned, "spam")
    typed = banned["id"].translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    cb = await mod_cmd(env, "unban", text_opt("user_id", typed), text_opt("reason", "served"))
    assert "numeric Discord id" in ephemeral_text(cb)
    assert not env.fake.find("DELETE", rf"/guilds/{env.guild['id']}/bans/")
    assert env.rows("SELECT member_id FROM cases") == []


async def test_an_unban_reason_longer_than_a_case_holds_is_refused_not_cut(env):
    """/mod warn|kick|ban refuse a reason over 1,000 characters before acting; /mod unban lifted the ban and kept
    the first 993 characters of the reason in its case ("unban: " + reason, cut to 1,000), while the mod log
    showed all of it."""
    banned = env.fake.new_user(None, "banned")
    env.fake.add_ban(env.guild, banned, "spam")
    reason = "appeal accepted after a long talk with the member and two witnesses; " * 16  # 1,104 characters
    cb = await mod_cmd(env, "unban", text_opt("user_id", banned["id"]), text_opt("reason", reason))
    assert "1,104 characters; at most 1,000" in ephemeral_text(cb)
    assert not env.fake.find("DELETE", rf"/guilds/{env.guild['id']}/bans/")
    assert env.rows("SELECT member_id FROM cases") == []
