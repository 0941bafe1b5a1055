"""Break-it: a member's display name quoted in a ladder step's refusal reaches Discord markdown unescaped (the card's
Decision field and the mod log), through the real discord.py client against the fake."""

from __future__ import annotations

import re

import pytest

from tests.discord.replies import member_with_role
from tests.discord.test_review_buttons_wire import review_card

pytestmark = pytest.mark.discord

#: A masked link whose opening is not escaped: Discord renders it (embeds render masked links).
RENDERED = re.compile(r"(?<!\\)\[[^\]]*\]\(https?://")
NICK = "[free nitro](https://evil.example)"


async def test_a_display_name_in_a_withheld_ladder_steps_note_shows_as_text(env):
    """Alice holds a cosmetic role ranked above the moderators' and calls herself a masked phishing link. The
    moderator deletes three of her flagged messages from their cards; the third crosses the ladder's "timeout 1
    hour", which the moderator may not take on someone ranked at or above them. The note on the card's Decision
    and in the mod log quotes her name ("<name> ranks at or above you"): it must show as text, not as a link."""
    veteran = await member_with_role(env, "veteran", 0, 4)  # only for its role, at position 4 (the bot is at 5)
    role_id = env.fake.member(env.guild, veteran["id"])["roles"][0]
    member = env.fake.member(env.guild, env.alice["id"])
    member["roles"] = [role_id]
    member["nick"] = NICK
    updated = env.bot.wait_for("member_update", check=lambda b, a: str(a.id) == env.alice["id"], timeout=5)
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "guild_id": env.guild["id"]})
    await updated
    for i in range(3):
        _, outcome, card = await review_card(env, f"borderline needs a human {i}")
        cb = await env.fake.click(env.guild, env.mod, card, f"mod:review:{outcome.review_id}:delete")
    decision = next(f["value"] for f in cb.body["data"]["embeds"][0]["fields"] if f["name"] == "Decision")
    assert "ranks at or above you" in decision and "free nitro" in decision
    assert not RENDERED.search(decision), decision
    await env.fake.wait_until(lambda: any("ranks at or above you" in (p.body["embeds"][0].get("description") or "")
                                          for p in env.modlog_posts()))
    log = next(p.body["embeds"][0]["description"] for p in env.modlog_posts()
               if "ranks at or above you" in (p.body["embeds"][0].get("description") or ""))
    assert not RENDERED.search(log), log
