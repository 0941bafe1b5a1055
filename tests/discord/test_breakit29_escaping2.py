"""Break-it (session 29): the refused-unban mod-log entry shows the moderator's reason as markdown."""

from __future__ import annotations

import re

import pytest

from tests.discord.helpers import ephemeral_text, mod_cmd, text_opt
from tests.discord.test_breakit29_escaping import RENDERED

pytestmark = pytest.mark.discord

BAIT = "[see the appeal](https://evil.example/login) **now**"


async def test_a_refused_unbans_mod_log_entry_shows_the_reason_as_text(env):
    """Case reasons show as text in the mod log (9e06f38), as the applied unban's entry does
    (Sentence("Reason: ", Said(reason))); the refused unban's new entry (65aa7fe) writes f"Reason: {reason}", so
    a masked link in it is rendered clickable in the mod-log embed."""
    banned = env.fake.new_user(None, "banned")
    env.fake.add_ban(env.guild, banned, "spam")
    env.fake.fail("DELETE", rf"/guilds/{env.guild['id']}/bans/{banned['id']}")
    admin = env.fake.new_user(env.guild, "admin2", roles=[env.mod_role])
    cb = await mod_cmd(env, "unban", text_opt("user_id", banned["id"]), text_opt("reason", BAIT), user=admin)
    assert "Unban failed" in ephemeral_text(cb)
    entry = next(p.body["embeds"][0] for p in env.modlog_posts() if "unban (FAILED)" in p.body["embeds"][0]["title"])
    assert "see the appeal" in entry["description"]
    assert not RENDERED.search(entry["description"]), entry["description"]


@pytest.mark.parametrize("bait", ["[appeal your\nwarning here](https://evil.example/login)",
                                  "[[appeal your warning here]](https://evil.example/login)"])
async def test_a_reporters_newline_or_nested_masked_link_reaches_the_warned_member_unescaped(env, bait):
    """md() is discord.utils.escape_markdown(as_needed=True), which leaves a masked link alone when its text holds a
    newline, and escapes only the outer bracket of a nested one (``\\[[x]](url)``: Discord's link rule, whose text
    may hold ``]`` followed by another ``]``, still reads ``[x]](url)`` as a link). The project's own oracle
    (RENDERED) sees the first; the DM the warned member receives holds the reporter's clickable link."""
    from tests.discord.helpers import dm_posts, user_opt
    opt, resolved = user_opt(env, "member", env.alice)
    cb = await env.fake.slash(env.guild, env.bob, "report", [opt], resolved=resolved)
    done = await env.fake.submit_modal(env.guild, env.bob, cb, [bait])
    assert "was sent to the moderators" in ephemeral_text(done)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Review #1 ")
                                          for m in env.fake.messages.values()))
    card = env.card("Review #1 ")
    await env.fake.click(env.guild, env.mod, card, "mod:review:1:warn")
    await env.fake.wait_until(lambda: dm_posts(env, env.alice))
    notice = dm_posts(env, env.alice)[0].body["embeds"][0]["description"]
    # no "[" left unescaped that opens "...](https://" (an escaped "\\[" is plain text)
    assert not re.search(r"\[[^\[]*?\]\(https?://", notice.replace("\\[", "")), notice
