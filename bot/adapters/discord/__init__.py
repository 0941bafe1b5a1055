"""Discord adapter: the bot process (``client``), translation, enforcement, cards and persistent views.

Layer: ``bot.adapters.discord`` (imports discord.py and ``bot.core``). Entry points: :func:`run` (blocking,
reads ``DISCORD_TOKEN``) and :func:`run_discord` (async, for the CLI).
"""

from __future__ import annotations

from bot.adapters.discord.client import ModBot, run, run_discord

__all__ = ("ModBot", "run", "run_discord")
