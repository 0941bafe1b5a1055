"""Break-it: ``/purge`` in a channel whose history the bot may not read (an overwrite denies it Read Message
History, as on an announcements or staff channel) answered "Something went wrong; it was logged", which tells a
moderator nothing they can fix. Through the real discord.py client against the fake Discord."""

from __future__ import annotations

import asyncio

import pytest

from tests.discord.fake_discord import READ_MESSAGE_HISTORY
from tests.discord.helpers import ephemeral_text, text_opt

pytestmark = pytest.mark.discord


async def test_purge_where_the_bot_cannot_read_history_says_what_to_fix(env):
    """The bot's role is denied Read Message History in #general: /purge there says the bot lacks it in that
    channel, nothing is deleted and no case is opened."""
    await env.post(env.alice, "hello")
    bot_role = next(r for r in env.guild["roles"] if r["name"] == "ModBot")
    updated = asyncio.ensure_future(env.bot.wait_for("guild_channel_update",
                                                     check=lambda b, a: str(a.id) == env.general, timeout=5))
    await env.fake.set_overwrite(env.guild, env.general, bot_role["id"], deny=READ_MESSAGE_HISTORY)
    await updated
    text = ephemeral_text(await env.fake.slash(env.guild, env.mod, "purge", [text_opt("count", 5, 4)]))
    assert text == (f"The bot cannot read the messages of <#{env.general}>: it needs View Channel and Read Message "
                    "History there. Nothing was deleted."), text
    assert env.fake.find("POST", rf"/channels/{env.general}/messages/bulk-delete") == []
    assert env.rows("SELECT * FROM cases") == []
