"""Break-it: the DM a member gets before a kick or a ban (sent first, while the bot still shares a server with
them) is corrected when Discord then refuses the kick or ban, through the real discord.py client against the fake
Discord. Each test failed before its fix."""

from __future__ import annotations

import pytest

from tests.discord.helpers import dm_posts, ephemeral_text, mod_on, text_opt

pytestmark = pytest.mark.discord


@pytest.mark.parametrize(("sub", "method", "route", "title"), [
    ("kick", "DELETE", "members", "Kicked"), ("ban", "PUT", "bans", "Banned")])
async def test_a_refused_kick_or_ban_sends_a_correction_after_its_notice(env, sub, method, route, title):
    """Discord refuses the kick (or ban) with 403 Missing Permissions after Alice was told "Kicked in ...": she gets
    a second DM saying it did not happen (no Appeal button: there is nothing to appeal), and the failed case
    records both DMs. Before, she kept the notice of a kick that never happened, and the case said nothing of it."""
    env.fake.fail(method, rf"/guilds/{env.guild['id']}/{route}/{env.alice['id']}")
    cb = await mod_on(env, sub, env.alice, text_opt("reason", "raiding"))
    assert ephemeral_text(cb).startswith(f"Case #1: {sub} <@{env.alice['id']}> FAILED: "), ephemeral_text(cb)
    await env.fake.wait_until(lambda: len(dm_posts(env, env.alice)) >= 2)
    notice, correction = (p.body for p in dm_posts(env, env.alice))
    assert notice["embeds"][0]["title"].startswith(f"{title} in ")
    embed = correction["embeds"][0]
    assert embed["title"].startswith("Correction: case #1 in "), embed
    assert embed["description"] == (f"The {sub} of case #1 did not go through: please disregard the message that "
                                    "said it was done.")
    assert not correction.get("components")
    (status, failure), = [tuple(r) for r in env.rows("SELECT status, failure FROM cases")]
    assert status == "failed"
    assert failure.endswith(f"dm: sent before the {sub}, which failed; a correction was sent"), failure
