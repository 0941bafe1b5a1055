"""Small helpers shared by the wire tests: building slash options and reading callbacks."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from tests.discord.fake_discord import snowflake


def user_opt(env: Any, name: str, user: dict[str, Any], guild: dict[str, Any] | None = None) -> tuple[dict, dict]:
    """An option of type 6 with its ``resolved`` entry (member included when they are in the guild)."""
    member = env.fake.member(guild or env.guild, user["id"])
    resolved: dict[str, Any] = {"users": {user["id"]: user}}
    if member:
        resolved["members"] = {user["id"]: {k: v for k, v in member.items() if k != "user"}}
    return {"name": name, "type": 6, "value": user["id"]}, resolved


def ephemeral_text(cb: Any) -> str:
    """The content of an ephemeral channel-message callback (type 4, flag 64); fails otherwise."""
    assert cb.body["type"] == 4 and cb.body["data"]["flags"] & 64, cb.body
    return cb.body["data"]["content"]


def text_opt(name: str, value: Any, type_: int = 3) -> dict[str, Any]:
    """A string (3) or integer (4) option."""
    return {"name": name, "type": type_, "value": value}


async def mod_cmd(env: Any, sub: str, *options: dict[str, Any], user: dict[str, Any] | None = None,
                  resolved: dict[str, Any] | None = None,
                  guild: dict[str, Any] | None = None, group: str = "mod") -> Any:
    """Invoke ``/<group> <sub>`` (default: the moderator, whose Moderators role grants Manage Messages); returns the
    callback. The member's permissions are computed by the fake from roles and overwrites."""
    return await env.fake.slash(guild or env.guild, user or env.mod, group,
                                [{"name": sub, "type": 1, "options": list(options)}], resolved=resolved)


async def mod_on(env: Any, sub: str, target: dict[str, Any], *extra: dict[str, Any], **kw: Any) -> Any:
    """``/mod <sub> member:<target> ...`` by the moderator."""
    opt, resolved = user_opt(env, "member", target)
    return await mod_cmd(env, sub, opt, *extra, resolved=resolved, **kw)


def guild_requests(env: Any, method: str, what: str, user: dict[str, Any]) -> list[Any]:
    """Recorded ``method /guilds/<main>/<what>/<user id>`` requests."""
    return env.fake.find(method, rf"/guilds/{env.guild['id']}/{what}/{user['id']}")


def dm_posts(env: Any, user: dict[str, Any]) -> list[Any]:
    """Messages the bot sent to ``user``'s DM channel."""
    cid = env.fake.dm_channels.get(user["id"])
    return env.fake.find("POST", rf"/channels/{cid}/messages") if cid else []


def until(cb_patch: Any) -> datetime:
    """The ``communication_disabled_until`` of a recorded member PATCH."""
    return datetime.fromisoformat(cb_patch.body["communication_disabled_until"])


async def give_role_above_bot(env: Any, user: dict[str, Any]) -> str:
    """Create a role above the bot's (position 10 > 5) and give it to ``user``; waits for the bot's cache."""
    gid = env.guild["id"]
    role_id = snowflake()
    created = asyncio.ensure_future(env.bot.wait_for("guild_role_create", check=lambda r: str(r.id) == role_id,
                                                     timeout=5))
    role = await env.fake.add_role(env.guild, "Admins", 0, 10, role_id=role_id)
    await created
    member = env.fake.member(env.guild, user["id"])
    member["roles"].append(role["id"])
    updated = asyncio.ensure_future(env.bot.wait_for("member_update", check=lambda b, a: a.id == int(user["id"]), timeout=5))
    await env.fake.dispatch("GUILD_MEMBER_UPDATE", {**member, "guild_id": gid})
    await updated
    assert str(env.bot.get_guild(int(gid)).get_member(int(user["id"])).top_role.id) == role["id"]
    return role["id"]


def modal_input(cb: Any) -> dict[str, Any]:
    """The (one) text input of the modal a type 9 callback opened."""
    assert cb.body["type"] == 9, cb.body
    return next(c for row in cb.body["data"]["components"] for c in [row, *row.get("components", []),
                                                                      row.get("component") or {}]
                if c.get("type") == 4)


async def confirm(env: Any, card: dict[str, Any], custom_id: str, reason: str | None = None, *,
                  user: dict[str, Any] | None = None, guild: dict[str, Any] | None = None,
                  timeout: float = 5.0) -> tuple[Any, Any]:
    """Press a button that asks first (Kick, Ban, a raid's bulk sanction), check that the reason modal opened, and
    submit it with ``reason`` (default: the prefilled reason). Returns (the modal callback, the settled answer)."""
    guild, user = guild or env.guild, user or env.mod
    modal = await env.fake.click(guild, user, card, custom_id)
    field = modal_input(modal)
    answer = await env.fake.submit_modal(guild, user, modal, [field["value"] if reason is None else reason],
                                         message=card, timeout=timeout)
    return modal, answer
