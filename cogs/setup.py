"""``/modbot setup``: wire a server up without editing a file: the review channel, the mod-log channel and a
moderator role, picked with Discord's own channel and role pickers, validated, and written as server overrides.

Layer: cogs (discord.py extension, loaded after ``cogs.admin``, whose ``/modbot`` group it adds ``setup`` to).
Changing the policy needs Manage Server (checked server-side by the workflow). Each chosen channel must be a text
channel of this server where the bot can see, post and embed (its own permissions there, overwrites included);
otherwise the answer says what is missing and nothing is changed. :func:`bot.workflow.policy_admin.apply_setup`
(shared with Slack's ``/modsetup``) writes the values through the policy registry's ``set_override`` (validated and
audited like ``/policy set``) and posts the change to the mod log.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.adapters.discord.interact import actor_of, add_to_modbot_group, answer, guarded, remove_from_modbot_group
from bot.adapters.discord.translate import PLATFORM
from bot.workflow.policy_admin import SetupChange, apply_setup, with_moderators

if TYPE_CHECKING:
    from bot.adapters.discord.client import ModBot

log = logging.getLogger(__name__)

#: What the bot needs in the review and mod-log channels (cards are embeds with buttons).
CHANNEL_NEEDS = ("view_channel", "send_messages", "embed_links", "read_message_history")


def channel_problem(channel: discord.abc.GuildChannel, me: discord.Member) -> str | None:
    """Why the bot cannot post cards in ``channel`` (the permissions it lacks there), or ``None``."""
    have = channel.permissions_for(me)
    missing = [p for p in CHANNEL_NEEDS if not getattr(have, p)]
    return f"the bot lacks {', '.join(missing)} in {channel.mention}" if missing else None


def setup_command(bot: ModBot) -> app_commands.Command:
    """The ``setup`` subcommand, bound to ``bot``."""

    @app_commands.describe(review_channel="Where review cards are posted (moderators only)",
                           mod_log_channel="Where cases, raid alerts and failed actions are logged",
                           moderator_role="A role whose members may moderate (added to the list)")
    async def setup(interaction: discord.Interaction, review_channel: discord.TextChannel | None = None,
                    mod_log_channel: discord.TextChannel | None = None,
                    moderator_role: discord.Role | None = None) -> None:
        async def work() -> None:
            guild = interaction.guild
            assert guild is not None
            policy = await bot.policy(guild.id)
            problems = [p for ch in (review_channel, mod_log_channel) if ch is not None
                        and (p := channel_problem(ch, guild.me))]
            if moderator_role is not None and moderator_role.is_default():
                problems.append("@everyone cannot be the moderator role")
            changes: list[SetupChange] = []
            if review_channel is not None:
                changes.append(SetupChange("server.review_channel", str(review_channel.id),
                                           f"review channel: {review_channel.mention}"))
            if mod_log_channel is not None:
                changes.append(SetupChange("server.mod_log_channel", str(mod_log_channel.id),
                                           f"mod-log channel: {mod_log_channel.mention}"))
            if moderator_role is not None:
                changes.append(SetupChange("server.moderator_roles", with_moderators(policy, [str(moderator_role.id)]),
                                           f"moderator role: {moderator_role.mention}"))
            await answer(interaction, await apply_setup(bot.policies, bot.desk, PLATFORM, actor_of(interaction, policy),
                                                        str(guild.id), changes, problems))

        await guarded(interaction, work)

    return app_commands.Command(name="setup", description="Pick the review and mod-log channels and a moderator role",
                                callback=setup)


async def setup(bot: ModBot) -> None:
    """Extension entry point: add ``setup`` to the ``/modbot`` group of ``cogs.admin``."""
    add_to_modbot_group(bot, setup_command(bot), "cogs.setup")


async def teardown(bot: ModBot) -> None:
    """Extension exit: remove the subcommand again (a reload adds it afresh)."""
    remove_from_modbot_group(bot, "setup")
