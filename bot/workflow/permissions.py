"""The platform permissions the workflow checks, and their names in refusals.

Layer: ``bot.workflow`` (platform-neutral). Its own module so that both :mod:`bot.workflow.authz` (who may do
what) and :mod:`bot.workflow.sanction_kinds` (what each sanction needs) read them without importing each other.
"""

from __future__ import annotations

import enum


class Permission(enum.StrEnum):
    """A platform permission the workflow checks (names follow Discord's)."""

    MANAGE_MESSAGES = "manage_messages"
    MODERATE_MEMBERS = "moderate_members"
    KICK_MEMBERS = "kick_members"
    BAN_MEMBERS = "ban_members"
    MANAGE_SERVER = "manage_server"
    MANAGE_CHANNELS = "manage_channels"


#: Human names of permissions for refusals.
PERMISSION_NAMES = {
    Permission.MANAGE_MESSAGES: "Manage Messages (or a moderator role)",
    Permission.MODERATE_MEMBERS: "Moderate Members (Timeout Members)",
    Permission.KICK_MEMBERS: "Kick Members",
    Permission.BAN_MEMBERS: "Ban Members",
    Permission.MANAGE_SERVER: "Manage Server",
    Permission.MANAGE_CHANNELS: "Manage Channels",
}

__all__ = ["PERMISSION_NAMES", "Permission"]
