"""Interaction plumbing shared by the cogs: acknowledge first, translate the member into an :class:`Actor`, answer.

Layer: ``bot.adapters.discord``.

Discord gives an application 3 seconds to acknowledge an interaction (a late answer is refused with 10062,
"Unknown interaction", and the member sees "This interaction failed"); a second initial response is refused with
40060. So every handler that does more than open a modal calls :func:`ack` first (a deferred response), then does
its work (REST calls may wait on rate limits), then answers with :func:`answer` (a follow-up or an edit of the
original message), which works for 15 minutes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.adapters.discord.cards import CONTENT_MAX, cut, refusal
from bot.core.policy import Policy
from bot.workflow.authz import Actor, Permission, Refused

log = logging.getLogger(__name__)

#: discord.py permission flag -> the workflow's permission.
PERMISSION_FLAGS = {
    "manage_messages": Permission.MANAGE_MESSAGES,
    "moderate_members": Permission.MODERATE_MEMBERS,
    "kick_members": Permission.KICK_MEMBERS,
    "ban_members": Permission.BAN_MEMBERS,
    "manage_guild": Permission.MANAGE_SERVER,
    "manage_channels": Permission.MANAGE_CHANNELS,
}


def actor_of(interaction: discord.Interaction, policy: Policy) -> Actor:
    """The member behind an interaction, with their SERVER-level permissions (computed by discord.py from their
    roles; Administrator grants all), the position of their highest role, ownership, and whether they hold one of
    the policy's ``server.moderator_roles``. Outside a server: an actor with no permissions."""
    user = interaction.user
    guild = interaction.guild
    if guild is None or not isinstance(user, discord.Member):
        return Actor(str(user.id), getattr(user, "display_name", ""))
    perms = user.guild_permissions
    held = frozenset(p for flag, p in PERMISSION_FLAGS.items() if perms.administrator or getattr(perms, flag))
    roles = [str(r.id) for r in user.roles if r.id != guild.id]
    timed_out = user.is_timed_out()  # Discord masks a timed-out member's permissions; so does the moderator role
    return Actor(id=str(user.id), name=user.display_name, permissions=held, rank=user.top_role.position,
                 is_owner=guild.owner_id == user.id, moderator_role=policy.is_moderator(roles) and not timed_out)


async def ack(interaction: discord.Interaction, *, update: bool = False) -> None:
    """Acknowledge within Discord's 3 seconds: a deferred update of the clicked message (``update``), else a
    deferred ephemeral answer ("thinking"). Does nothing when already acknowledged."""
    if interaction.response.is_done():
        return
    if update:
        await interaction.response.defer()
    else:
        await interaction.response.defer(ephemeral=True, thinking=True)


async def answer(interaction: discord.Interaction, text: str = "", **kwargs: Any) -> None:
    """Answer ephemerally: the initial response when not yet acknowledged, else a follow-up."""
    text = cut(text, CONTENT_MAX)
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, **kwargs)
    else:
        await interaction.response.send_message(text, ephemeral=True, **kwargs)


async def guarded(interaction: discord.Interaction, work: Callable[[], Awaitable[None]], *,
                  update: bool = False) -> None:
    """Acknowledge, run ``work``; a :class:`Refused` becomes its sentence, anything else is logged and answered
    with "Something went wrong; it was logged." Nothing raised reaches discord.py."""
    try:
        await ack(interaction, update=update)
    except discord.HTTPException as exc:  # too late already (10062): nothing can be shown to the member
        log.warning("interaction could not be acknowledged: %s", exc)
        return
    try:
        await work()
    except Refused as exc:
        await answer(interaction, refusal(exc))
    except Exception:
        log.exception("interaction failed", extra={"server": interaction.guild_id})
        await answer(interaction, "Something went wrong; it was logged.")


def add_to_modbot_group(bot: commands.Bot | commands.AutoShardedBot,
                        command: app_commands.Command[Any, ..., Any] | app_commands.Group, extension: str) -> None:
    """Add an ``app_commands.Command`` to the ``/modbot`` group that ``cogs.admin`` defines.

    Raises:
        RuntimeError: ``cogs.admin`` is not loaded yet (``extension`` names the one that needs it).
    """
    group = bot.tree.get_command("modbot")
    if not isinstance(group, discord.app_commands.Group):
        raise RuntimeError(f"{extension} needs cogs.admin (the /modbot group) loaded first")
    group.add_command(command)


def remove_from_modbot_group(bot: commands.Bot | commands.AutoShardedBot, name: str) -> None:
    """Remove ``/modbot <name>`` again (an extension's teardown; a reload adds it afresh)."""
    group = bot.tree.get_command("modbot")
    if isinstance(group, discord.app_commands.Group):
        group.remove_command(name)
