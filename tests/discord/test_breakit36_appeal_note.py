"""Break-it: a member could appeal a moderators' note about them (``/mod note``; its number is in their
``/mydata export``): the appeal was filed, "a moderator will look at it", and the moderators got an appeal card
with Uphold / Overturn for a record that sanctions nothing and carries no strike. Through the real discord.py
client against the fake Discord."""

from __future__ import annotations

import pytest

from tests.discord.helpers import ephemeral_text, mod_on, text_opt

pytestmark = pytest.mark.discord


async def test_a_note_about_a_member_cannot_be_appealed_but_their_warning_can(env):
    """A note (case #1) and a warning (case #2) about Alice: appealing #1 is refused with the reason and nothing is
    filed or carded; appealing #2 is filed."""
    await mod_on(env, "note", env.alice, text_opt("text", "watch for alts"))
    await mod_on(env, "warn", env.alice, text_opt("reason", "spam"))
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", 1, 4)])
    text = ephemeral_text(await env.fake.submit_modal(env.guild, env.alice, cb, ["I did nothing wrong"]))
    assert text == ("Case #1 cannot be appealed: case #1 only records a note (no sanction, no strike): there is "
                    "nothing to appeal"), text
    assert env.rows("SELECT * FROM appeals") == [] and env.review_posts() == []
    cb = await env.fake.slash(env.guild, env.alice, "appeal", [text_opt("case", 2, 4)])
    text = ephemeral_text(await env.fake.submit_modal(env.guild, env.alice, cb, ["I did nothing wrong"]))
    assert "appeal of case #2 was filed" in text
