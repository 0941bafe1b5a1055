"""Break-it: a reporter's words reach Discord markdown unescaped once a moderator decides the report's card."""

from __future__ import annotations

import re

import pytest

from tests.discord.helpers import dm_posts, ephemeral_text, user_opt

pytestmark = pytest.mark.discord

#: A masked link or a bold pair whose opening is not escaped: Discord renders it (embeds render masked links).
RENDERED = re.compile(r"(?<!\\)\[[^\]]*\]\(https?://|(?<!\\)\*\*[^*]+\*\*")
BAIT = "[appeal your warning here](https://evil.example/login) **now**"


async def test_warn_decided_on_a_report_card_shows_the_reporters_words_as_text(env):
    """Bob reports Alice with a reason holding a masked phishing link; the card escapes it (tested elsewhere).
    A moderator presses Warn on that card: the case reason becomes "review #1: <Bob's words>", and the mod-log
    entry and the warning DM Alice receives from the bot must show Bob's words as text, not as a clickable link
    (Slack escapes both)."""
    opt, resolved = user_opt(env, "member", env.alice)
    cb = await env.fake.slash(env.guild, env.bob, "report", [opt], resolved=resolved)
    done = await env.fake.submit_modal(env.guild, env.bob, cb, [BAIT])
    assert "was sent to the moderators" in ephemeral_text(done)
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Review #1 ")
                                          for m in env.fake.messages.values()))
    card = env.card("Review #1 ")
    fields = {f["name"]: f["value"] for f in card["embeds"][0]["fields"]}
    assert not RENDERED.search(fields["Reason"])  # the card itself is safe
    await env.fake.click(env.guild, env.mod, card, "mod:review:1:warn")
    await env.fake.wait_until(lambda: any(p.body["embeds"][0]["title"].startswith("Case #")
                                          for p in env.modlog_posts()))
    case_log = next(p.body["embeds"][0] for p in env.modlog_posts() if p.body["embeds"][0]["title"].startswith("Case #"))
    await env.fake.wait_until(lambda: dm_posts(env, env.alice))
    notice = dm_posts(env, env.alice)[0].body["embeds"][0]
    assert BAIT.split("(")[0][1:-1] in case_log["description"]  # Bob's words are there...
    assert not RENDERED.search(notice["description"]), notice["description"]
    assert not RENDERED.search(case_log["description"]), case_log["description"]  # ...as text
