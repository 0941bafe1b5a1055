"""Tests of the fake Discord itself: it refuses what Discord refuses, with Discord's status and error codes, and
sends the gateway events Discord sends. Driven by the real discord.py client (a plain ``discord.Client`` with a
``CommandTree``), or by raw aiohttp where discord.py hides the wire detail (headers, error trees)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord
import pytest
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket

from tests.discord.fake_discord import (
    ADMINISTRATOR,
    BAN_MEMBERS,
    BOT_PERMS,
    INTERACTION_DEADLINE_S,
    KICK_MEMBERS,
    MANAGE_CHANNELS,
    MANAGE_GUILD,
    MANAGE_MESSAGES,
    MANAGE_THREADS,
    MODERATE_MEMBERS,
    SEND_MESSAGES,
    TOKEN_TTL_S,
    VIEW_CHANNEL,
    FakeDiscord,
    snowflake,
)

pytestmark = pytest.mark.discord

#: Intents for the probe client: guilds, members, moderation, guild messages, DMs, message content.
PROBE_INTENTS = discord.Intents(guilds=True, members=True, moderation=True, guild_messages=True, dm_messages=True,
                                message_content=True)


class Probe(discord.Client):
    """A stock discord.Client with a CommandTree (global commands answer guild interactions)."""

    def __init__(self, intents: discord.Intents) -> None:
        super().__init__(intents=intents, guild_ready_timeout=0.05, chunk_guilds_at_startup=False)
        self.tree = app_commands.CommandTree(self, fallback_to_global=True)
        self.ready = asyncio.Event()

    async def on_ready(self) -> None:
        self.ready.set()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Identify again at once: discord.py's default sleeps 5 s before every IDENTIFY but the first (pacing a
        real client against Discord's identify limit), which the tests that re-identify would only wait out; the
        probe's own hook is the documented way to control that pacing."""


@asynccontextmanager
async def serve(monkeypatch: pytest.MonkeyPatch, **kw: Any) -> AsyncIterator[SimpleNamespace]:
    """A fake with one guild (alice: no roles; mod: Moderators; bot: ModBot role) with discord.py pointed at it."""
    async with FakeDiscord(**kw) as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.rest_base)
        monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway))
        guild = fake.add_guild("G")
        yield SimpleNamespace(fake=fake, guild=guild, general=fake.channel(guild, "general"),
                              alice=fake.new_user(guild, "alice"),
                              mod=fake.new_user(guild, "mod", roles=[guild["mod_role"]]))


@asynccontextmanager
async def running(w: SimpleNamespace, setup: Callable[[Probe], object] | None = None,
                  intents: discord.Intents = PROBE_INTENTS) -> AsyncIterator[Probe]:
    """Start a :class:`Probe` against the fake (``setup`` adds commands first) and wait for on_ready."""
    client = Probe(intents)
    if setup:
        setup(client)
    task = asyncio.create_task(client.start("fake-token"))
    ready = asyncio.create_task(client.ready.wait())
    done, _ = await asyncio.wait({task, ready}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    assert ready in done, "probe client did not become ready"
    try:
        yield client
    finally:
        await client.close()
        await asyncio.wait({task}, timeout=5)


@pytest.fixture
async def world(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SimpleNamespace]:
    """A fake with one guild and a connected probe client (``world.client``)."""
    async with serve(monkeypatch) as w, running(w) as client:
        w.client = client
        w.g = client.get_guild(int(w.guild["id"]))
        yield w


async def raw(fake: FakeDiscord, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
    """One REST request with aiohttp (no discord.py): (status, headers, parsed JSON body or None)."""
    async with aiohttp.ClientSession() as s, s.request(method, fake.rest_base + path, json=body,
                                                       headers={"Authorization": "Bot x"}) as r:
        text = await r.text()
        return r.status, dict(r.headers), (json.loads(text) if text else None)


def code_of(exc: discord.HTTPException) -> tuple[int, int]:
    """(HTTP status, Discord error code) of a discord.py exception."""
    return exc.status, exc.code


def command(client: Probe, name: str, body: Callable[[discord.Interaction], Any]) -> asyncio.Future[Any]:
    """Register a global slash command running ``body``; the returned future gets its result or exception."""
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def callback(interaction: discord.Interaction) -> None:
        try:
            done.set_result(await body(interaction))
        except Exception as exc:  # noqa: BLE001 - the test inspects what discord.py raised
            done.set_exception(exc)

    client.tree.add_command(app_commands.Command(name=name, description="probe", callback=callback))
    return done


# ---------------------------------------------------------------- interactions
def test_defaults_are_discords() -> None:
    """Without arguments the interaction deadline is Discord's 3.0 s and tokens live 15 minutes."""
    fake = FakeDiscord()
    assert (fake.interaction_deadline, fake.token_ttl) == (INTERACTION_DEADLINE_S, TOKEN_TTL_S) == (3.0, 900.0)


async def test_late_initial_response_is_unknown_interaction(monkeypatch):
    """A first response after the deadline raises discord.NotFound 10062 and creates no message."""
    async with serve(monkeypatch, interaction_deadline=0.2) as w:
        async def slow(interaction):
            await asyncio.sleep(0.4)
            await interaction.response.send_message("too late")
        with_setup: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: with_setup.setdefault("f", command(c, "slow", slow))):
            cb = await w.fake.slash(w.guild, w.alice, "slow", [])
            with pytest.raises(discord.NotFound) as exc:
                await asyncio.wait_for(with_setup["f"], 5)
    assert code_of(exc.value) == (404, 10062) and exc.value.text == "Unknown interaction"
    assert cb.error_code == 10062
    assert not any(m["content"] == "too late" for m in w.fake.messages.values())


async def test_second_response_already_acknowledged(monkeypatch):
    """A second initial response to one interaction raises HTTPException 400/40060; the first one stands."""
    async with serve(monkeypatch) as w:
        async def twice(interaction):
            await interaction.response.send_message("first")
            await discord.InteractionResponse(interaction).send_message("second")  # bypasses discord.py's guard
        futs: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: futs.setdefault("f", command(c, "twice", twice))):
            await w.fake.slash(w.guild, w.alice, "twice", [])
            with pytest.raises(discord.HTTPException) as exc:
                await asyncio.wait_for(futs["f"], 5)
    assert code_of(exc.value) == (400, 40060)
    assert exc.value.text == "Interaction has already been acknowledged."
    assert [r.error_code for r in w.fake.find("POST", r"/interactions/.*/callback")] == [None, 40060]


@pytest.mark.parametrize("ack", ["none", "defer", "expired"])
async def test_followup_needs_ack_and_live_token(monkeypatch, ack):
    """A follow-up works after an ack; without one, or after the token's lifetime, it is 404 Unknown Webhook."""
    async with serve(monkeypatch, token_ttl=0.3) as w:
        async def followup(interaction):
            if ack != "none":
                await interaction.response.defer(thinking=True)
            if ack == "expired":
                await asyncio.sleep(0.5)
            return await interaction.followup.send("later", wait=True)
        futs: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: futs.setdefault("f", command(c, "later", followup))):
            await w.fake.send_interaction(_command_payload(w, "later"))
            if ack == "defer":
                msg = await asyncio.wait_for(futs["f"], 5)
                assert msg.content == "later"
                original = w.fake.find("POST", r"/interactions/.*/callback")[0]
                assert original.response == 200
                return
            with pytest.raises(discord.NotFound) as exc:
                await asyncio.wait_for(futs["f"], 5)
    assert code_of(exc.value) == (404, 10015) and exc.value.text == "Unknown Webhook"


async def test_response_within_deadline_accepted(monkeypatch):
    """A response within Discord's deadline is accepted (200) and recorded without an error code."""
    async with serve(monkeypatch) as w:
        async def quick(interaction):
            await interaction.response.send_message("on time", ephemeral=True)
        futs: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: futs.setdefault("f", command(c, "quick", quick))):
            cb = await w.fake.slash(w.guild, w.alice, "quick", [])
            await asyncio.wait_for(futs["f"], 5)
    assert (cb.response, cb.error_code) == (200, None)


# ---------------------------------------------------------------- rate limits
async def test_rate_limit_429_is_retried_by_discord_py(world):
    """discord.py waits retry_after after a 429 and retries; the message lands on the second try."""
    path = rf"/channels/{world.general}/messages"
    world.fake.rate_limit("POST", path, retry_after=0.4)
    start = time.monotonic()
    msg = await world.g.get_channel(int(world.general)).send("after the wait")
    elapsed = time.monotonic() - start
    assert msg.content == "after the wait" and str(msg.id) in world.fake.messages
    assert [r.response for r in world.fake.find("POST", path)] == [429, 200]
    assert elapsed >= 0.4


async def test_rate_limit_wire_shape_and_early_retry(world):
    """A 429 carries Via, Retry-After and X-RateLimit-* headers and Discord's body; a retry too early is 429 again."""
    path = f"/channels/{world.general}/messages"
    world.fake.rate_limit("POST", path, retry_after=0.5, bucket="b1", scope="shared", code=20028)
    status, headers, body = await raw(world.fake, "POST", path, {"content": "x"})
    assert status == 429
    assert body == {"message": "You are being rate limited.", "retry_after": 0.5, "global": False, "code": 20028}
    assert headers["Via"] == "1.1 google" and headers["Retry-After"] == "1"
    assert (headers["X-RateLimit-Limit"], headers["X-RateLimit-Remaining"]) == ("5", "0")
    assert headers["X-RateLimit-Bucket"] == "b1" and headers["X-RateLimit-Scope"] == "shared"
    assert 0 < float(headers["X-RateLimit-Reset-After"]) <= 0.5
    assert float(headers["X-RateLimit-Reset"]) > time.time()
    status, _, early = await raw(world.fake, "POST", path, {"content": "x"})
    assert status == 429 and 0 < early["retry_after"] < 0.5
    await asyncio.sleep(early["retry_after"] + 0.05)  # the body's value is rounded to milliseconds
    status, _, _ = await raw(world.fake, "POST", path, {"content": "x"})
    assert status == 200


async def test_global_rate_limit_retried(world):
    """A global 429 (X-RateLimit-Global, scope global) is retried by discord.py after the global wait."""
    path = rf"/guilds/{world.guild['id']}/members/{world.alice['id']}"
    world.fake.rate_limit("GET", path, retry_after=0.3, global_=True)
    status, headers, body = await raw(world.fake, "GET", path)
    assert status == 429 and body["global"] is True
    assert headers["X-RateLimit-Global"] == "true" and headers["X-RateLimit-Scope"] == "global"
    member = await world.g.fetch_member(int(world.alice["id"]))
    assert member.name == "alice"
    assert [r.response for r in world.fake.find("GET", path)][-1] == 200


async def test_rate_limited_interaction_callback_retried(monkeypatch):
    """discord.py's webhook adapter also waits out a 429 on the interaction callback; the reply is accepted."""
    async with serve(monkeypatch) as w:
        w.fake.rate_limit("POST", r"/interactions/\d+/.*/callback", retry_after=0.3)
        async def reply(interaction):
            await interaction.response.send_message("ok")
        futs: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: futs.setdefault("f", command(c, "reply", reply))):
            await w.fake.send_interaction(_command_payload(w, "reply"))
            await asyncio.wait_for(futs["f"], 5)
    assert [r.response for r in w.fake.find("POST", r"/interactions/.*/callback")] == [429, 200]


def _command_payload(w: SimpleNamespace, name: str, user: dict[str, Any] | None = None) -> dict[str, Any]:
    p = w.fake.interaction_base(w.guild, user or w.alice, w.general)
    p.update(type=2, data={"id": snowflake(), "name": name, "type": 1, "options": [], "guild_id": w.guild["id"],
                           "resolved": {}})
    return p


# ---------------------------------------------------------------- size limits
def _embed(**kw: Any) -> discord.Embed:
    e = discord.Embed(title=kw.pop("title", "t"), description=kw.pop("description", None))
    for name, value in kw.pop("fields", []):
        e.add_field(name=name, value=value)
    if "footer" in kw:
        e.set_footer(text=kw.pop("footer"))
    return e


OVERSIZED = [
    ("content", {"content": "x" * 2001}, "content"),
    ("title", {"embed": _embed(title="t" * 257)}, "embeds.0.title"),
    ("description", {"embed": _embed(description="d" * 4097)}, "embeds.0.description"),
    ("field_name", {"embed": _embed(fields=[("n" * 257, "v")])}, "embeds.0.fields.0.name"),
    ("field_value", {"embed": _embed(fields=[("n", "v" * 1025)])}, "embeds.0.fields.0.value"),
    ("fields", {"embed": _embed(fields=[("n", "v")] * 26)}, "embeds.0.fields"),
    ("footer", {"embed": _embed(footer="f" * 2049)}, "embeds.0.footer.text"),
    ("total", {"embeds": [_embed(description="d" * 4000), _embed(description="d" * 2001)]}, "embeds"),
]


@pytest.mark.parametrize("case,kwargs,where", OVERSIZED, ids=[c[0] for c in OVERSIZED])
async def test_oversized_message_refused(world, case, kwargs, where):
    """Each Discord size limit on message create gives 400/50035 Invalid Form Body naming the field."""
    channel = world.g.get_channel(int(world.general))
    with pytest.raises(discord.HTTPException) as exc:
        await channel.send(**kwargs)
    assert code_of(exc.value) == (400, 50035) and "Invalid Form Body" in str(exc.value)
    assert f"In {where}" in exc.value.text
    assert not any(m["author"]["id"] == world.fake.bot_user["id"] for m in world.fake.messages.values())


def _button(custom_id: str) -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": "b", "custom_id": custom_id}


COMPONENTS = [
    ("eleven_embeds", None, ["embeds"]),
    ("custom_id", [{"type": 1, "components": [_button("c" * 101)]}], ["components", "0", "components", "0",
                                                                      "custom_id"]),
    ("six_rows", [{"type": 1, "components": [_button(f"r{i}")]} for i in range(6)], ["components"]),
    ("six_buttons", [{"type": 1, "components": [_button(f"b{i}") for i in range(6)]}], ["components", "0",
                                                                                       "components"]),
    ("options", [{"type": 1, "components": [{"type": 3, "custom_id": "s", "options": [
        {"label": str(i), "value": str(i)} for i in range(26)]}]}], ["components", "0", "components", "0",
                                                                      "options"]),
    ("option_label", [{"type": 1, "components": [{"type": 3, "custom_id": "s", "options": [
        {"label": "l" * 101, "value": "v"}]}]}], ["components", "0", "components", "0", "options", "0", "label"]),
    ("placeholder", [{"type": 1, "components": [{"type": 3, "custom_id": "s", "placeholder": "p" * 151,
                                                 "options": [{"label": "l", "value": "v"}]}]}],
     ["components", "0", "components", "0", "placeholder"]),
]


@pytest.mark.parametrize("case,components,where", COMPONENTS, ids=[c[0] for c in COMPONENTS])
async def test_component_limits_wire_errors(world, case, components, where):
    """> 10 embeds, custom_id > 100, > 5 rows, > 5 buttons in a row, > 25 select options, an option label over
    100, a select placeholder over 150: 400/50035 with the errors tree naming the field."""
    payload = {"content": "x", "components": components} if components is not None else {
        "content": "x", "embeds": [{"title": "t"}] * 11}  # discord.py refuses 11 embeds itself
    status, _, body = await raw(world.fake, "POST", f"/channels/{world.general}/messages", payload)
    assert status == 400 and body["code"] == 50035 and body["message"] == "Invalid Form Body"
    node = body["errors"]
    for key in where:
        node = node[key]
    assert node["_errors"][0]["code"].startswith("BASE_TYPE_")


async def test_oversized_interaction_reply_and_followup_refused(monkeypatch):
    """An oversized embed in a callback is 50035 and does not ack; a valid retry then works, and an oversized
    follow-up and edit of the original are refused too."""
    async with serve(monkeypatch) as w:
        async def body(interaction):
            errors = []
            try:
                await interaction.response.send_message(embed=_embed(description="d" * 5000))
            except discord.HTTPException as exc:
                errors.append(code_of(exc))
            await interaction.response.send_message("fits")
            for call in (lambda: interaction.followup.send("x" * 2001),
                         lambda: interaction.edit_original_response(content="y" * 2001)):
                try:
                    await call()
                except discord.HTTPException as exc:
                    errors.append(code_of(exc))
            return errors
        futs: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: futs.setdefault("f", command(c, "big", body))):
            await w.fake.slash(w.guild, w.alice, "big", [])
            errors = await asyncio.wait_for(futs["f"], 5)
    assert errors == [(400, 50035)] * 3
    assert [m["content"] for m in w.fake.messages.values() if m["author"]["id"] == w.fake.app_id] == ["fits"]


async def test_oversized_edit_and_empty_message_refused(world):
    """Editing a message past 2000 characters is 50035; an empty message is 50006."""
    channel = world.g.get_channel(int(world.general))
    msg = await channel.send("short")
    with pytest.raises(discord.HTTPException) as exc:
        await msg.edit(content="z" * 2001)
    assert code_of(exc.value) == (400, 50035)
    assert world.fake.messages[str(msg.id)]["content"] == "short"
    status, _, body = await raw(world.fake, "POST", f"/channels/{world.general}/messages", {"content": ""})
    assert (status, body["code"]) == (400, 50006)


# ---------------------------------------------------------------- permissions
async def test_member_permissions_from_roles_and_overwrites(monkeypatch):
    """An interaction from a Moderators member carries Ban Members; an overwrite denying it removes the bit; a
    member without roles has neither; discord.py reads them as interaction.permissions."""
    async with serve(monkeypatch) as w:
        seen: list[discord.Permissions] = []

        def setup(c: Probe) -> None:
            async def perms(interaction: discord.Interaction) -> None:
                seen.append(interaction.permissions)
                await interaction.response.send_message("ok", ephemeral=True)
            c.tree.add_command(app_commands.Command(name="perms", description="p", callback=perms))

        async with running(w, setup):
            await w.fake.slash(w.guild, w.mod, "perms", [])
            await w.fake.slash(w.guild, w.alice, "perms", [])
            await w.fake.set_overwrite(w.guild, w.general, w.guild["mod_role"], deny=BAN_MEMBERS)
            await w.fake.slash(w.guild, w.mod, "perms", [])
    mod, alice, denied = seen
    assert mod.ban_members and mod.kick_members and mod.moderate_members and mod.manage_messages
    assert not alice.ban_members and not alice.manage_messages and alice.send_messages
    assert not denied.ban_members and denied.kick_members


def test_permission_algorithm_order(monkeypatch):
    """Base from roles; @everyone overwrite, then role overwrites combined, then the member's overwrite wins;
    administrator and the owner get everything; no VIEW_CHANNEL means nothing in that channel."""
    fake = FakeDiscord()
    guild = fake.add_guild()
    general = fake.channel(guild, "general")
    mod_role = guild["mod_role"]
    mod = fake.new_user(guild, "mod", roles=[mod_role])
    ch = next(c for c in guild["channels"] if c["id"] == general)

    def ow(target: str, allow: int = 0, deny: int = 0) -> dict[str, Any]:
        return {"id": target, "type": 0, "allow": str(allow), "deny": str(deny)}

    ch["permission_overwrites"] = [ow(guild["id"], deny=SEND_MESSAGES), ow(mod_role, allow=SEND_MESSAGES)]
    assert fake.permissions(guild, mod["id"], general) & SEND_MESSAGES
    ch["permission_overwrites"].append({"id": mod["id"], "type": 1, "allow": "0", "deny": str(SEND_MESSAGES)})
    assert not fake.permissions(guild, mod["id"], general) & SEND_MESSAGES
    ch["permission_overwrites"] = [ow(mod_role, deny=VIEW_CHANNEL)]
    assert fake.permissions(guild, mod["id"], general) == 0
    assert fake.permissions(guild, fake.owner["id"], general) & BAN_MEMBERS
    next(r for r in guild["roles"] if r["id"] == mod_role)["permissions"] = str(ADMINISTRATOR)
    assert fake.permissions(guild, mod["id"], general) & MANAGE_GUILD  # administrator overrides the deny
    mod_member = fake.member(guild, mod["id"])
    assert mod_member is not None
    mod_member["communication_disabled_until"] = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    next(r for r in guild["roles"] if r["id"] == mod_role)["permissions"] = str(MANAGE_MESSAGES)
    ch["permission_overwrites"] = []
    assert fake.permissions(guild, mod["id"], general) == VIEW_CHANNEL | (1 << 16)  # timed out: view and history


async def test_app_permissions_follow_bot_role(monkeypatch):
    """app_permissions is the bot's computed permission set in the channel."""
    async with serve(monkeypatch) as w:
        payload = _command_payload(w, "x")
        assert int(payload["app_permissions"]) & BOT_PERMS == BOT_PERMS
        await w.fake.set_overwrite(w.guild, w.general, w.fake.role(w.guild, "ModBot")["id"], deny=MANAGE_MESSAGES)
        assert not int(_command_payload(w, "x")["app_permissions"]) & MANAGE_MESSAGES


async def _set_bot_perms(w: SimpleNamespace, change: Callable[[int], int]) -> None:
    """Change the bot role's permissions and wait until the probe client has the GUILD_ROLE_UPDATE."""
    bot_role = w.fake.role(w.guild, "ModBot")
    updated = asyncio.ensure_future(w.client.wait_for("guild_role_update", timeout=5))
    await w.fake.set_role_permissions(w.guild, bot_role["id"], change(int(bot_role["permissions"])))
    await updated


async def _strip_bot(w: SimpleNamespace, bits: int) -> None:
    await _set_bot_perms(w, lambda p: p & ~bits)


async def _give_bot(w: SimpleNamespace, bits: int) -> None:
    await _set_bot_perms(w, lambda p: p | bits)


@pytest.mark.parametrize("bit,action", [
    (MANAGE_MESSAGES, "delete_other"), (BAN_MEMBERS, "ban"), (KICK_MEMBERS, "kick"),
    (MODERATE_MEMBERS, "timeout"), (MANAGE_CHANNELS, "slowmode")])
async def test_rest_needs_permission(world, bit, action):
    """Without the permission each moderation call raises discord.Forbidden 50013 and changes nothing."""
    alice_msg = await world.fake.post(world.guild, world.general, world.alice, "hello")
    await _strip_bot(world, bit)
    assert not getattr(world.g.me.guild_permissions, _PERM_NAME[bit])
    channel = world.g.get_channel(int(world.general))
    alice = world.g.get_member(int(world.alice["id"]))
    calls = {"delete_other": lambda: channel.get_partial_message(int(alice_msg["id"])).delete(),
             "ban": lambda: world.g.ban(alice), "kick": lambda: world.g.kick(alice),
             "timeout": lambda: alice.timeout(timedelta(minutes=5)),
             "slowmode": lambda: channel.edit(slowmode_delay=30)}
    with pytest.raises(discord.Forbidden) as exc:
        await calls[action]()
    assert code_of(exc.value) == (403, 50013)
    assert alice_msg["id"] in world.fake.messages and world.fake.member(world.guild, world.alice["id"])
    assert world.fake.bans == {} or world.fake.bans.get(world.guild["id"]) == {}


_PERM_NAME = {MANAGE_MESSAGES: "manage_messages", BAN_MEMBERS: "ban_members", KICK_MEMBERS: "kick_members",
              MODERATE_MEMBERS: "moderate_members", MANAGE_CHANNELS: "manage_channels"}


async def test_own_message_delete_needs_no_manage_messages(world):
    """The bot deletes its own message without Manage Messages (204)."""
    await _strip_bot(world, MANAGE_MESSAGES)
    msg = await world.g.get_channel(int(world.general)).send("mine")
    await msg.delete()
    assert str(msg.id) not in world.fake.messages


@pytest.mark.parametrize("action", ["ban", "kick", "timeout"])
@pytest.mark.parametrize("target", ["higher_role", "equal_role", "owner"])
async def test_role_hierarchy_enforced(world, action, target):
    """Kick, ban and timeout of a member whose top role is >= the bot's, or of the owner: Forbidden 50013."""
    if target == "owner":
        user = world.fake.owner
        world.fake.add_member(world.guild, user)
    else:
        role = await world.fake.add_role(world.guild, "Top", 0, 10 if target == "higher_role" else 5)
        user = world.fake.new_user(world.guild, "top", roles=[role["id"]])
    obj = discord.Object(int(user["id"]))
    calls = {"ban": lambda: world.g.ban(obj), "kick": lambda: world.g.kick(obj),
             "timeout": lambda: world.client.http.edit_member(world.g.id, obj.id, communication_disabled_until=(
                 datetime.now(UTC) + timedelta(minutes=5)).isoformat())}
    with pytest.raises(discord.Forbidden) as exc:
        await calls[action]()
    assert code_of(exc.value) == (403, 50013)
    assert world.fake.member(world.guild, user["id"]) is not None


async def test_timeout_limit_28_days(world):
    """A timeout 28 days ahead is accepted (GUILD_MEMBER_UPDATE arrives); 29 days is 400/50035."""
    alice = world.g.get_member(int(world.alice["id"]))
    with pytest.raises(discord.HTTPException) as exc:
        await alice.timeout(timedelta(days=29))
    assert code_of(exc.value) == (400, 50035)
    assert world.fake.member(world.guild, world.alice["id"])["communication_disabled_until"] is None
    updated = asyncio.ensure_future(world.client.wait_for("member_update", timeout=5))
    await alice.timeout(timedelta(days=28) - timedelta(minutes=1))
    _, after = await updated
    assert after.is_timed_out() and after.timed_out_until > discord.utils.utcnow() + timedelta(days=27)


async def test_bulk_delete_rules(world):
    """Bulk delete sends ids as ints; 1 or 101 ids is 50035; an id older than 14 days is 50034; 2 fresh ids
    delete both and MESSAGE_DELETE_BULK reaches discord.py."""
    channel = world.g.get_channel(int(world.general))
    a = await world.fake.post(world.guild, world.general, world.alice, "a")
    b = await world.fake.post(world.guild, world.general, world.alice, "b")
    path = f"/channels/{world.general}/messages/bulk-delete"
    for ids in ([int(a["id"])], [int(a["id"]) + i for i in range(101)]):
        status, _, body = await raw(world.fake, "POST", path, {"messages": ids})
        assert (status, body["code"]) == (400, 50035)
    old = snowflake(datetime.now(UTC) - timedelta(days=15))
    with pytest.raises(discord.HTTPException) as exc:
        await channel.delete_messages([discord.Object(int(a["id"])), discord.Object(int(old))])
    assert code_of(exc.value) == (400, 50034) and a["id"] in world.fake.messages
    got = asyncio.ensure_future(world.client.wait_for("raw_bulk_message_delete", timeout=5))
    await channel.delete_messages([discord.Object(int(a["id"])), discord.Object(int(b["id"]))])
    event = await got
    assert event.message_ids == {int(a["id"]), int(b["id"])}
    sent = world.fake.find("POST", path)[-1].body["messages"]
    assert all(isinstance(i, int) for i in sent)
    assert a["id"] not in world.fake.messages and b["id"] not in world.fake.messages


# ---------------------------------------------------------------- channels the bot cannot see
async def test_hidden_and_deleted_channels(world):
    """An overwrite denying the bot VIEW_CHANNEL gives Forbidden 50001 on send; without SEND_MESSAGES 50013;
    a deleted channel 404 10003."""
    channel = world.g.get_channel(int(world.general))
    bot_role = world.fake.role(world.guild, "ModBot")["id"]
    await world.fake.set_overwrite(world.guild, world.general, bot_role, deny=VIEW_CHANNEL)
    with pytest.raises(discord.Forbidden) as exc:
        await channel.send("hidden")
    assert code_of(exc.value) == (403, 50001) and exc.value.text == "Missing Access"
    await world.fake.set_overwrite(world.guild, world.general, bot_role, deny=SEND_MESSAGES)
    with pytest.raises(discord.Forbidden) as exc:
        await channel.send("muted")
    assert code_of(exc.value) == (403, 50013)
    world.fake.deleted_channels.add(world.general)
    with pytest.raises(discord.NotFound) as gone:
        await channel.send("gone")
    assert code_of(gone.value) == (404, 10003)


# ---------------------------------------------------------------- DMs
@pytest.mark.parametrize("who", ["member", "stranger", "closed"])
async def test_dm_rules(world, who):
    """A DM to a member works; to a user sharing no guild with the bot, or with DMs closed: Forbidden 50007.
    Opening the DM channel itself always works."""
    if who == "stranger":
        user_data = world.fake.new_user(None, "stranger")
    else:
        user_data = world.alice
    if who == "closed":
        world.fake.close_dms(user_data["id"])
    user = await world.client.fetch_user(int(user_data["id"]))
    dm = await user.create_dm()
    assert dm.recipient.id == int(user_data["id"])
    if who == "member":
        msg = await user.send("hello")
        assert world.fake.messages[str(msg.id)]["channel_id"] == str(dm.id)
        return
    with pytest.raises(discord.Forbidden) as exc:
        await user.send("hello")
    assert code_of(exc.value) == (403, 50007) and exc.value.text == "Cannot send messages to this user"


# ---------------------------------------------------------------- gateway events after REST actions
async def test_ban_dispatches_ban_add_and_member_remove(world):
    """guild.ban: GUILD_BAN_ADD (on_member_ban) and GUILD_MEMBER_REMOVE arrive; the ban is stored with the
    audit-log reason; fetch_ban finds it; unban sends GUILD_BAN_REMOVE; a second unban is 404 10026."""
    alice = world.g.get_member(int(world.alice["id"]))
    banned = asyncio.ensure_future(world.client.wait_for("member_ban", timeout=5))
    removed = asyncio.ensure_future(world.client.wait_for("raw_member_remove", timeout=5))
    await world.g.ban(alice, reason="spam links", delete_message_seconds=0)
    guild, user = await banned
    assert (guild.id, user.id) == (world.g.id, alice.id)
    assert (await removed).user.id == alice.id and world.g.get_member(alice.id) is None
    ban = await world.g.fetch_ban(alice)
    assert ban.reason == "spam links"
    unbanned = asyncio.ensure_future(world.client.wait_for("member_unban", timeout=5))
    await world.g.unban(alice)
    assert (await unbanned)[1].id == alice.id
    with pytest.raises(discord.NotFound) as exc:
        await world.g.fetch_ban(alice)
    assert code_of(exc.value) == (404, 10026)
    with pytest.raises(discord.NotFound) as exc:
        await world.g.unban(alice)
    assert code_of(exc.value) == (404, 10026)


async def test_ban_deletes_recent_messages(world):
    """A ban with delete_message_seconds removes the user's recent messages and sends MESSAGE_DELETE_BULK."""
    msg = await world.fake.post(world.guild, world.general, world.alice, "spam")
    got = asyncio.ensure_future(world.client.wait_for("raw_bulk_message_delete", timeout=5))
    await world.g.ban(discord.Object(int(world.alice["id"])), delete_message_seconds=3600)
    assert (await got).message_ids == {int(msg["id"])} and msg["id"] not in world.fake.messages


async def test_bulk_ban(world):
    """POST /guilds/{g}/bulk-ban bans what it can: already-banned and above-the-bot users are failed_users."""
    await _give_bot(world, MANAGE_GUILD)
    top = await world.fake.add_role(world.guild, "Top", 0, 10)
    boss = world.fake.new_user(world.guild, "boss", roles=[top["id"]])
    world.fake.add_ban(world.guild, world.fake.new_user(None, "old"))
    old_id = next(iter(world.fake.bans[world.guild["id"]]))
    users = [discord.Object(int(u)) for u in (world.alice["id"], boss["id"], old_id)]
    result = await world.g.bulk_ban(users)
    assert [u.id for u in result.banned] == [int(world.alice["id"])]
    assert sorted(u.id for u in result.failed) == sorted([int(boss["id"]), int(old_id)])
    assert set(world.fake.bans[world.guild["id"]]) == {world.alice["id"], old_id}


async def test_kick_timeout_channel_edit_and_delete_events(world):
    """Kick -> GUILD_MEMBER_REMOVE; timeout -> GUILD_MEMBER_UPDATE; slowmode -> CHANNEL_UPDATE; delete ->
    MESSAGE_DELETE: each reaches discord.py."""
    c = world.client
    mod = world.g.get_member(int(world.mod["id"]))
    updated = asyncio.ensure_future(c.wait_for("member_update", timeout=5))
    await mod.timeout(timedelta(minutes=10))
    assert (await updated)[1].is_timed_out()
    ch_updated = asyncio.ensure_future(c.wait_for("guild_channel_update", timeout=5))
    await world.g.get_channel(int(world.general)).edit(slowmode_delay=15)
    assert (await ch_updated)[1].slowmode_delay == 15
    msg = await world.fake.post(world.guild, world.general, world.alice, "bye")
    deleted = asyncio.ensure_future(c.wait_for("raw_message_delete", timeout=5))
    await world.g.get_channel(int(world.general)).get_partial_message(int(msg["id"])).delete()
    assert (await deleted).message_id == int(msg["id"])
    removed = asyncio.ensure_future(c.wait_for("raw_member_remove", timeout=5))
    await world.g.kick(discord.Object(int(world.alice["id"])))
    assert (await removed).user.id == int(world.alice["id"])
    names = [e for e, _ in world.fake.events]
    assert {"GUILD_MEMBER_UPDATE", "CHANNEL_UPDATE", "MESSAGE_DELETE", "GUILD_MEMBER_REMOVE"} <= set(names)


async def test_events_filtered_by_intents(monkeypatch):
    """A client without the moderation intent gets no GUILD_BAN_ADD; without message_content guild messages
    arrive with empty content."""
    intents = discord.Intents(guilds=True, members=True, guild_messages=True)
    async with serve(monkeypatch) as w, running(w, intents=intents) as client:
        got = asyncio.ensure_future(client.wait_for("message", timeout=5))
        await w.fake.post(w.guild, w.general, w.alice, "secret words")
        assert (await got).content == ""
        guild = client.get_guild(int(w.guild["id"]))
        assert guild is not None
        await guild.ban(discord.Object(int(w.alice["id"])))
        (session,) = w.fake.sessions.values()
        sent = [json.loads(f)["t"] for _, f in session.buffer]
    assert "GUILD_MEMBER_REMOVE" in sent and "GUILD_BAN_ADD" not in sent
    assert ("GUILD_BAN_ADD", {"guild_id": w.guild["id"], "user": w.alice}) in w.fake.events


# ---------------------------------------------------------------- threads, forums, incident actions
async def test_threads_and_forum_posts(world):
    """A member's thread and forum post reach discord.py (THREAD_CREATE); messages in them arrive; the bot can
    post in a thread and set its slowmode (PATCH rate_limit_per_user); posting into a forum itself is 50008."""
    c = world.client
    created = asyncio.ensure_future(c.wait_for("thread_create", timeout=5))
    thread, _ = await world.fake.create_thread(world.guild, world.general, world.alice, "help")
    t = await created
    assert (t.id, t.parent_id, t.type) == (int(thread["id"]), int(world.general), discord.ChannelType.public_thread)
    got = asyncio.ensure_future(c.wait_for("message", check=lambda m: m.content == "in thread", timeout=5))
    await world.fake.post(world.guild, thread["id"], world.alice, "in thread")
    assert (await got).channel.id == t.id
    sent = await t.send("bot reply")
    assert world.fake.messages[str(sent.id)]["channel_id"] == thread["id"]
    edited = await t.edit(slowmode_delay=20)
    assert edited.slowmode_delay == 20 and thread["rate_limit_per_user"] == 20
    forum_id = world.fake.add_channel(world.guild, "forum", type_=15)
    forum_created = asyncio.ensure_future(c.wait_for("guild_channel_create", timeout=5))
    await world.fake.dispatch("CHANNEL_CREATE", world.fake.find_channel(forum_id)[1])
    assert isinstance(await forum_created, discord.ForumChannel)
    created = asyncio.ensure_future(c.wait_for("thread_create", timeout=5))
    first = asyncio.ensure_future(c.wait_for("message", check=lambda m: m.content == "my question", timeout=5))
    post, starter = await world.fake.create_thread(world.guild, forum_id, world.alice, "Question", "my question")
    assert (await created).parent_id == int(forum_id)
    assert (await first).id == int(post["id"]) == int(starter["id"])
    forum = world.g.get_channel(int(forum_id))
    mine = await forum.create_thread(name="Rules", content="read me")
    assert mine.thread.parent_id == int(forum_id) and mine.message.content == "read me"
    status, _, body = await raw(world.fake, "POST", f"/channels/{forum_id}/messages", {"content": "x"})
    assert (status, body["code"]) == (400, 50008)


async def test_thread_slowmode_needs_manage_threads(world):
    """Without Manage Threads the bot cannot set a thread's slowmode (50013)."""
    created = asyncio.ensure_future(world.client.wait_for("thread_create", timeout=5))
    thread, _ = await world.fake.create_thread(world.guild, world.general, world.alice, "t")
    await created
    await _strip_bot(world, MANAGE_THREADS)
    with pytest.raises(discord.Forbidden) as exc:
        await world.g.get_thread(int(thread["id"])).edit(slowmode_delay=5)
    assert code_of(exc.value) == (403, 50013) and thread["rate_limit_per_user"] == 0


async def test_incident_actions_pause_invites_and_dms(world):
    """guild.edit(invites_disabled_until=, dms_disabled_until=) stores both (needs Manage Server, else 50013);
    more than 24 hours ahead is 400/50035."""
    until = discord.utils.utcnow() + timedelta(hours=2)
    with pytest.raises(discord.Forbidden) as exc:
        await world.g.edit(invites_disabled_until=until)
    assert code_of(exc.value) == (403, 50013)
    await _give_bot(world, MANAGE_GUILD)
    await world.g.edit(invites_disabled_until=until, dms_disabled_until=until)
    stored = world.fake.incidents[world.guild["id"]]
    assert datetime.fromisoformat(stored["invites_disabled_until"]) == until
    assert datetime.fromisoformat(stored["dms_disabled_until"]) == until
    put = world.fake.find("PUT", rf"/guilds/{world.guild['id']}/incident-actions")[-1]
    assert put.response == 200
    with pytest.raises(discord.HTTPException) as too_far:
        await world.g.edit(invites_disabled_until=until + timedelta(days=1))
    assert code_of(too_far.value) == (400, 50035)
    await world.g.edit(invites_disabled_until=None)
    assert world.fake.incidents[world.guild["id"]]["invites_disabled_until"] is None


# ---------------------------------------------------------------- RESUME
async def test_resume_replays_missed_message(world):
    """After the connection drops (4000), a MESSAGE_CREATE dispatched while disconnected is replayed on RESUME
    and reaches on_message; the client resumed rather than identifying again."""
    c = world.client
    resumed = asyncio.ensure_future(c.wait_for("resumed", timeout=5))
    await world.fake.drop_connection(4000, hold_resume=True)
    await world.fake.post(world.guild, world.general, world.alice, "while you were away")
    assert world.fake.connected() == 0
    got = asyncio.ensure_future(c.wait_for("message", check=lambda m: m.content == "while you were away",
                                           timeout=5))
    world.fake.allow_resume()
    await got
    await resumed
    assert len(world.fake.identifies) == 1
    (resume,) = world.fake.resumes
    assert resume["replayed"] == ["MESSAGE_CREATE"]


async def test_unknown_session_gets_invalid_session_and_reidentifies(world):
    """A RESUME naming a session the fake forgot gets op 9 (false); discord.py then identifies afresh."""
    ready = asyncio.ensure_future(world.client.wait_for("ready", timeout=10))
    await world.fake.drop_connection(4000, hold_resume=True)
    world.fake.sessions.clear()
    world.fake.allow_resume()
    await ready
    assert len(world.fake.identifies) == 2 and world.fake.resumes == []


async def test_op7_reconnect_resumes_the_session(world):
    """After op 7 RECONNECT discord.py resumes the same session (no second IDENTIFY) and keeps receiving events."""
    resumed = asyncio.ensure_future(world.client.wait_for("resumed", timeout=5))
    await world.fake.request_reconnect()
    await resumed
    assert len(world.fake.identifies) == 1 and len(world.fake.resumes) == 1
    got = asyncio.ensure_future(world.client.wait_for("message", check=lambda m: m.content == "still here",
                                                      timeout=5))
    await world.fake.post(world.guild, world.general, world.alice, "still here")
    await got


async def test_history_newest_first_and_needs_read_message_history(world):
    """channel.history pages newest first with before=; limit over 100 is 50035; without Read Message History
    discord.py gets Forbidden 50013."""
    posted = [(await world.fake.post(world.guild, world.general, world.alice, f"m{i}"))["id"] for i in range(3)]
    channel = world.g.get_channel(int(world.general))
    assert [str(m.id) async for m in channel.history(limit=2)] == posted[::-1][:2]
    assert [str(m.id) async for m in channel.history(before=discord.Object(int(posted[2])))] == posted[1::-1]
    status, _, body = await raw(world.fake, "GET", f"/channels/{world.general}/messages?limit=101")
    assert (status, body["code"]) == (400, 50035)
    await world.fake.set_overwrite(world.guild, world.general, world.fake.role(world.guild, "ModBot")["id"],
                                   deny=1 << 16)  # Read Message History (also granted by @everyone)
    with pytest.raises(discord.Forbidden) as exc:
        [m async for m in channel.history(limit=1)]
    assert code_of(exc.value) == (403, 50013)


async def test_modal_limits_and_no_modal_answering_a_modal(monkeypatch):
    """A modal whose text input breaks Discord's limits (placeholder over 100, max_length over 4,000) is 50035 and
    does not ack; a valid one opens (type 9); the fake's client refuses a value over the input's max_length (as
    Discord's does); answering the submit with another modal is refused, a message is fine."""
    async with serve(monkeypatch) as w:
        submitted: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        class Ask(discord.ui.Modal, title="Reason"):
            def __init__(self, **text: Any) -> None:
                super().__init__(custom_id="probe:modal")
                self.add_item(discord.ui.TextInput(label="Why", **text))

            async def on_submit(self, interaction: discord.Interaction) -> None:
                try:
                    await interaction.response.send_modal(Ask(max_length=10))
                except discord.HTTPException as exc:
                    await interaction.response.send_message("no modal from a modal", ephemeral=True)
                    submitted.set_result(code_of(exc))

        async def body(interaction):
            errors = []
            for bad in ({"placeholder": "p" * 101}, {"max_length": 4001}):
                try:
                    await interaction.response.send_modal(Ask(**bad))
                except discord.HTTPException as exc:
                    errors.append(code_of(exc))
            await interaction.response.send_modal(Ask(max_length=10, min_length=2))
            return errors
        futs: dict[str, asyncio.Future[Any]] = {}
        async with running(w, lambda c: futs.setdefault("f", command(c, "ask", body))):
            await w.fake.slash(w.guild, w.alice, "ask", [])
            assert await asyncio.wait_for(futs["f"], 5) == [(400, 50035)] * 2
            calls = w.fake.find("POST", r"/interactions/.*/callback")
            assert [c.response for c in calls] == [400, 400, 200]
            cb = calls[-1]
            assert cb.body["type"] == 9
            with pytest.raises(ValueError):
                await w.fake.submit_modal(w.guild, w.alice, cb, ["x" * 11])
            await w.fake.submit_modal(w.guild, w.alice, cb, ["fine"])
            assert await asyncio.wait_for(submitted, 5) == (400, 50035)
            await w.fake.wait_until(lambda: len(w.fake.find("POST", r"/interactions/.*/callback")) == 5)
    *_, refused, answer = w.fake.find("POST", r"/interactions/.*/callback")
    assert (refused.response, refused.body["type"]) == (400, 9)
    assert answer.body["type"] == 4 and answer.body["data"]["content"] == "no modal from a modal"


async def test_autocomplete_choices_limits(monkeypatch):
    """An autocomplete answer with 26 choices, or a choice name over 100 characters, is 400/50035 and does not
    ack; 25 choices of 100 characters are taken (callback type 8)."""
    async with serve(monkeypatch) as w:
        answers: list[list[app_commands.Choice[str]]] = [
            [app_commands.Choice(name=f"k{i}", value=f"k{i}") for i in range(26)],
            [app_commands.Choice(name="n" * 101, value="v")],
            [app_commands.Choice(name="n" * 100, value="v" * 100) for _ in range(25)],
        ]  # discord.py sends each as it is (a refused one is logged)

        def setup(client: Probe) -> None:
            async def pick(interaction: discord.Interaction, key: str) -> None:
                await interaction.response.send_message(key)

            async def complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
                return answers.pop(0)

            cmd: app_commands.Command[Any, ..., None] = app_commands.Command(name="pick", description="probe",
                                                                             callback=pick)
            cmd.autocomplete("key")(complete)
            client.tree.add_command(cmd)

        async with running(w, setup):
            for sent in range(1, 4):
                await w.fake.send_interaction({**w.fake.interaction_base(w.guild, w.alice, w.general), "type": 4,
                                               "data": {"id": "1", "name": "pick", "type": 1, "guild_id": w.guild["id"],
                                                        "options": [{"name": "key", "type": 3, "value": "k",
                                                                     "focused": True}]}})
                await w.fake.wait_until(lambda n=sent: len(w.fake.find("POST", r"/interactions/.*/callback")) == n)
    calls = w.fake.find("POST", r"/interactions/.*/callback")
    assert [c.response for c in calls] == [400, 400, 200] and calls[-1].body["type"] == 8
