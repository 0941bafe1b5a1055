"""Break-it (session 35): member-facing flows (appeals) through the real discord.py client against the fake."""

from __future__ import annotations

from typing import Any

import pytest

from tests.discord.helpers import mod_on, text_opt

pytestmark = pytest.mark.discord


async def test_the_appeal_card_shows_the_whole_appeal_the_modal_accepted(env: Any) -> None:
    """The appeal modal takes up to 1,500 characters, and the mod log keeps them all; the appeal card is the only
    place a moderator reads them, and it cut the appeal at 1,000 characters, so the moderator upheld or overturned
    without the end of the member's appeal (here, the part that says why), and nothing told the member."""
    await mod_on(env, "warn", env.alice, text_opt("reason", "spam"))
    text = "I was quoting the rules to a newcomer. " * 40 + "PROOF: see the screenshot in ticket 4711."
    text = text[-1500:]
    assert len(text) == 1500
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", 1, 4)])
    await env.fake.submit_modal(env.guild, env.alice, cb, [text])
    await env.fake.wait_until(lambda: any(m["embeds"] and m["embeds"][0]["title"].startswith("Appeal #")
                                          for m in env.fake.messages.values()))
    embed = env.card("Appeal #")["embeds"][0]
    shown = " ".join([embed.get("description") or ""] + [f["value"] for f in embed["fields"]])
    assert "ticket 4711" in shown
