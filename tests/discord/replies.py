"""Read an interaction's visible answer the way a member sees it, whether the bot answered at once or deferred.

The bot acknowledges every interaction within Discord's 3 seconds with a deferred response (type 5 "thinking", or
type 6 "deferred update" for a card button) and answers afterwards through the interaction webhook: a follow-up
message (``POST /webhooks/{app}/{token}``) or an edit of the original message (``PATCH
/webhooks/{app}/{token}/messages/@original``). :func:`settle` waits for that answer and returns it in the shape
of a direct response, ``{"type": 4 | 7, "data": <message>, "deferred": <callback type>}``, so a test reads the
answer the member saw and can still check that the callback was a deferral.
"""

from __future__ import annotations

from typing import Any

from tests.discord.fake_discord import Recorded


def token_of(cb: Recorded) -> str:
    """The interaction token of a recorded ``/interactions/{id}/{token}/callback`` request."""
    return cb.path.split("/")[3]


async def settle(fake: Any, cb: Recorded, *, timeout: float = 5.0) -> Recorded:
    """The visible answer of an interaction whose initial callback is ``cb`` (see the module doc)."""
    kind = (cb.body or {}).get("type")
    if kind not in (5, 6):
        return cb
    tok = token_of(cb)
    app = fake.app_id

    def found() -> list[Recorded]:
        return (fake.find("PATCH", rf"/webhooks/{app}/{tok}/messages/@original")
                + fake.find("POST", rf"/webhooks/{app}/{tok}"))

    await fake.wait_until(lambda: bool(found()), timeout=timeout)
    rec = found()[0]
    return Recorded(rec.method, rec.path, rec.query,
                    {"type": 7 if rec.method == "PATCH" else 4, "data": rec.body or {}, "deferred": kind},
                    rec.headers, rec.files, rec.response)


def answering(fake: Any) -> None:
    """Make the fake's interaction helpers (slash, click, modal submit) return the settled answer."""
    original = fake._interact

    async def interact(payload: dict[str, Any], timeout: float) -> Recorded:
        cb = await original(payload, timeout)
        return await settle(fake, cb, timeout=timeout)

    fake._interact = interact


MANAGE_GUILD = 1 << 5


async def member_with_role(env: Any, name: str, perms: int, position: int) -> dict[str, Any]:
    """A new member holding a new role with ``perms`` at ``position`` (the moderators' role is at 3, the bot's at
    5); waits until the bot's cache knows the role and the member."""
    from tests.discord.fake_discord import snowflake

    gid = env.guild["id"]
    role = {"id": snowflake(), "name": f"{name}-role", "permissions": str(perms), "position": position, "color": 0,
            "hoist": False, "managed": False, "mentionable": False, "flags": 0}
    env.guild["roles"].append(role)
    created = env.bot.wait_for("guild_role_create", check=lambda r: str(r.id) == role["id"], timeout=5)
    await env.fake.dispatch("GUILD_ROLE_CREATE", {"guild_id": gid, "role": role})
    await created
    user = env.fake.new_user(env.guild, name, roles=[role["id"]])
    member = env.fake.member(env.guild, user["id"])
    joined = env.bot.wait_for("member_join", check=lambda m: str(m.id) == user["id"], timeout=5)
    await env.fake.dispatch("GUILD_MEMBER_ADD", {**member, "guild_id": gid})
    await joined
    return user


async def server_admin(env: Any) -> dict[str, Any]:
    """A member with Manage Server (position 4: above the moderators, below the bot)."""
    return await member_with_role(env, "admin", MANAGE_GUILD, 4)
