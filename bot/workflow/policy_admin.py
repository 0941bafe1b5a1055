"""One policy command for every platform: show the effective policy (or one key of it), set or reset a server
override, and the setup step (review channel, mod-log channel, moderators) that writes several overrides at once.

Layer: ``bot.workflow`` (platform-neutral). Discord's ``/policy show|set|reset`` and ``/modbot setup``
(``cogs/moderation.py``, ``cogs/setup.py``) and Slack's ``/modpolicy`` and ``/modsetup``
(``bot/adapters/slack/policy.py``) call these; the adapters only read the platform's input, check what only the
platform can tell (whether the bot can post in a channel) and render the answer (a file where it is long).

Reading the policy needs Manage Messages (or a moderator role); changing it needs Manage Server (Slack: a workspace
admin), checked here server-side. Every change goes through the policy registry's ``set_override`` (validated,
audited, cache refreshed), makes the desk try its channels again and is posted to the mod log. Bad input raises
:class:`~bot.workflow.authz.Refused` with the sentence to show: an unknown key, an invalid value (nothing is
stored), a setup with nothing picked or with problems (nothing is stored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.models import ActionKind
from bot.core.policy import Policy, PolicyError
from bot.workflow.authz import Actor, Escape, Permission, Refused, Said, authorize
from bot.workflow.policy_text import switched_off_tiers
from bot.workflow.views import LogEntry


class PolicyWriter(Protocol):
    """The policy registry (:class:`bot.core.policy_registry.PolicyRegistry`): reads and validated overrides."""

    async def get(self, platform: str, server_id: str) -> Policy:
        """The effective policy of a server."""
        ...

    async def set_override(self, platform: str, server_id: str, key: str, value: Any,
                           moderator_id: str | None) -> Policy:
        """Store an override (``None`` resets it). Raises :class:`PolicyError`; nothing is stored then."""
        ...


class PolicyDesk(Protocol):
    """What a policy change needs of the platform's desk."""

    async def post_mod_log(self, server_id: str, entry: LogEntry) -> bool:
        """Post an entry to the server's mod-log channel (``False`` when it could not)."""
        ...

    def forget_problems(self) -> None:
        """Try the review and mod-log channels again (a change may have fixed them)."""
        ...


def parse_value(raw: str) -> Any:
    """A typed override value: JSON when it parses (``0.9``, ``true``, ``["123"]``), else the plain string (also
    for JSON nested too deeply to parse, which the policy then refuses like any other wrong value)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


def policy_part(policy: Policy, key: str | None) -> Any:
    """The effective policy as JSON data, or the part under a dotted ``key`` (``thresholds.insult``).

    Raises:
        Refused: no such key.
    """
    doc: Any = policy.model_dump(mode="json")
    for part in (key.split(".") if key else []):
        if not isinstance(doc, dict) or part not in doc:
            raise Refused("Unknown policy key `", Said(key or ""), "`.")
        doc = doc[part]
    return doc


@dataclass(frozen=True, slots=True)
class PolicyShow:
    """The answer to ``policy show``: ``inline`` text (a code block, then ``notes``) when it fits, else a file:
    ``filename`` with ``data`` (indented UTF-8 JSON, never cut) and the ``caption`` to send with it (ending in
    ``:``), to be followed by ``notes``: ``""`` or one line per switched-off tier, each a code span after a newline.
    """

    inline: str | None
    filename: str
    data: bytes
    caption: str
    notes: str = ""


def show_policy(actor: Actor, policy: Policy, server_id: str, key: str | None = None, *,
                inline_max: int, place: str = "server", fence: str = "```json", code: Escape = str,
                base: Policy | None = None) -> PolicyShow:
    """The effective policy (or one key) for a moderator: one key whose JSON has at most ``inline_max`` characters
    is shown inline; the whole policy (about 5,000 characters) or a large section goes as a file.

    With ``base`` (the default policy the server's layers go over), the whole policy and keys under ``thresholds``
    also say, one code-formatted line each, which tiers of ``base`` this server switches off
    (:func:`~bot.workflow.policy_text.switched_off_tiers`; the JSON shows such a tier as ``null``): after the
    inline block, and in :attr:`PolicyShow.notes` for the adapter to send after the file's caption.

    Args:
        inline_max: The platform's room for a code block (Discord 1,900, Slack 2,900 characters).
        place: What the platform calls a server, for the caption (``"workspace"`` on Slack).
        fence: How the inline code block opens (Slack shows a language word as text: ``"```"`` there).
        code: Makes the inline JSON safe inside the platform's code block (Slack: ``blocks.code_json``, which
            escapes it and writes backticks as ``\\u0060``); ``inline_max`` counts the JSON as shown.

    Raises:
        Refused: not a moderator, or an unknown key.
    """
    authorize(actor, ActionKind.LOG)
    doc = policy_part(policy, key)
    text = code(json.dumps(doc, indent=1, ensure_ascii=False))
    name = f"policy-{server_id}{'-' + key if key else ''}.json"
    data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    notes = [n for n in (switched_off_tiers(base, policy) if base is not None else [])
             if key is None or n.startswith((f"{key}.", f"{key} "))]
    said = "".join(f"\n{code_span(n)}" for n in notes)
    caption = f"The effective policy{f' `{key}`' if key else ''} of this {place} ({len(data):,} bytes):"
    inline = f"{fence}\n{text}\n```{said}" if key and len(text) + len(said) <= inline_max else None
    return PolicyShow(inline, name, data, caption, said)


def code_span(text: str) -> str:
    """``text`` as one inline code span (backticks in it become ``'``), for a note beside the policy's JSON."""
    return "`" + text.replace("`", "'") + "`"


def authorize_change(actor: Actor) -> None:
    """Changing the policy needs Manage Server (Slack: a workspace admin). Raises :class:`Refused`."""
    authorize(actor, ActionKind.REVIEW, permission=Permission.MANAGE_SERVER)


#: The keys that name a channel the bot must post in (``policy set`` of one is a setup: checked like one).
CHANNEL_KEYS = ("server.review_channel", "server.mod_log_channel")
#: A channel mention as the platforms write it in text: Discord ``<#123>``, Slack ``<#C123|name>``.
CHANNEL_MENTION = re.compile(r"^<#([A-Za-z0-9]+)(?:\|[^>]*)?>$")
#: Why the bot cannot post in a channel (the platform's answer: ``the bot lacks send_messages in <#1>``), or
#: ``None`` when it can.
ChannelCheck = Callable[[str], Awaitable[str | None]]


def channel_value(value: Any) -> Any:
    """A channel key's value as the policy stores it: a channel mention becomes its id, and a bare Discord id
    (parsed by :func:`parse_value` as a JSON number) its digits; anything else as given (the policy judges it)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return str(value)
    if isinstance(value, str) and (m := CHANNEL_MENTION.match(value.strip())):
        return m.group(1)
    return value


#: The keys that list channels (``policy set`` of one reads channel mentions, as Discord writes a picked channel).
CHANNEL_LIST_KEYS = ("exempt.channels",)
#: A channel mention inside text: Discord ``<#123>``, Slack ``<#C123|name>``; the id in group 1.
_CHANNEL_MENTIONS = re.compile(r"<#([A-Za-z0-9]+)(?:\|[^>]*)?>")


def channel_ids(value: Any) -> Any:
    """A channel list key's value as the policy stores it: the channels of a text (mentions, ids, separated by
    spaces or commas: ``<#1> <#2>``, ``1, 2``), or of a list, as ids, once each and in order; anything else as
    given (the policy judges it: a name such as ``#general`` is refused with the reason)."""
    if isinstance(value, str):
        items: list[Any] = [part for part in re.split(r"[\s,]+", _CHANNEL_MENTIONS.sub(r" \1 ", value)) if part]
        if not items:  # blank: not a way to empty the list (that is [])
            return value
    elif isinstance(value, list):
        items = [channel_value(v) for v in value]
    else:
        return value
    return list(dict.fromkeys(items)) if all(isinstance(v, str) for v in items) else items


#: The keys that name roles (Discord role ids; Slack user-group and user ids): ``policy set`` of one reads mentions
#: and names through the platform's :data:`RoleLookup`.
ROLE_KEYS = ("server.moderator_roles", "exempt.roles")
#: A role mention as Discord writes it in text (also what a string option holds when a role is picked): ``<@&123>``.
ROLE_MENTION = re.compile(r"<@&(\d+)>")
#: The ids of the server's roles that a reference names: a role id (from a mention or typed), else a role name
#: (the platform decides how names match; Discord: case-insensitive, ``@`` optional). Empty: no such role.
RoleLookup = Callable[[str], Awaitable[list[str]]]


@dataclass(frozen=True, slots=True)
class RoleWords:
    """How a platform's roles keys are written and named (:func:`role_ids`).

    Attributes:
        mention: A mention in text, its id in group 1 (Discord ``<@&123>``; Slack ``<!subteam^S1|@mods>`` and
            ``<@U1>``).
        noun: What a name names, in a refusal of a name two share ("role"; Slack "user group"), ``many`` its
            plural.
        missing: What a reference names, in a refusal of one that names nothing ("role"; Slack "user group or
            member").
        place: What the platform calls a server ("server"; Slack "workspace").
        takes: What the value may be, in a refusal.
    """

    mention: re.Pattern[str] = ROLE_MENTION
    noun: str = "role"
    many: str = "roles"
    missing: str = "role"
    place: str = "server"
    takes: str = "roles: mentions (@role), ids or names"


#: Discord's words (the default).
DISCORD_ROLES = RoleWords()


async def role_ids(value: Any, lookup: RoleLookup, key: str = "server.moderator_roles", *,
                   words: RoleWords = DISCORD_ROLES) -> list[str]:
    """A roles key's value as the policy stores it: the ids, once each and in order, of the roles named by role
    mentions, ids and names (``<@&1> <@&2>, Senior Mods, 3`` or a JSON list of them); names are separated by
    commas (a name may hold spaces), mentions need no separator. ``[]`` stays empty (no moderator roles).
    ``words``: the platform's mention syntax and nouns (Slack: user groups and members, :class:`RoleWords`).

    Raises:
        Refused: a value that is not text or a list of texts and ids, a reference no role of the server has, or a
            name two roles share (the words typed are quoted; nothing is stored); or what ``lookup`` raises.
    """
    items = value if isinstance(value, list) else [value]
    refs: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise Refused(f"`{key}` takes {words.takes}. Nothing was changed.")
        text, start = str(item), 0
        for m in words.mention.finditer(text):  # in the order typed: names before, the mention, then on
            refs += [part.strip() for part in text[start:m.start()].split(",") if part.strip()]
            refs.append(m.group(1))
            start = m.end()
        refs += [part.strip() for part in text[start:].split(",") if part.strip()]
    found: list[str] = []
    for ref in refs:
        ids = list(dict.fromkeys(await lookup(ref)))
        if not ids:
            raise Refused(f"There is no {words.missing} `", Said(ref), f"` in this {words.place}. Nothing was changed.")
        if len(ids) > 1:
            raise Refused(f"{len(ids)} {words.many} are called `", Said(ref), f"`: pick the {words.noun} (@",
                          Said(ref.removeprefix("@")), ") or give its id. Nothing was changed.")
        found.append(ids[0])
    return list(dict.fromkeys(found))


async def change_policy(policies: PolicyWriter, desk: PolicyDesk, platform: str, actor: Actor, server_id: str,
                        key: str, value: Any, *, check_channel: ChannelCheck | None = None,
                        lookup_role: RoleLookup | None = None, role_words: RoleWords = DISCORD_ROLES,
                        escape: Escape = str) -> str:
    """Set one override (``value=None`` resets ``key`` to the file's value), audited and posted to the mod log.
    Returns the answer (``Policy updated: `key` = `0.9`.``).

    Args:
        check_channel: For a :data:`CHANNEL_KEYS` key, the platform's check that the bot can post in the channel
            (the same as the setup's); the value is first read with :func:`channel_value`.
        lookup_role: For a :data:`ROLE_KEYS` key, the platform's roles by mention, id or name; the value is read
            with :func:`role_ids` (without it, the value goes to the policy as given); ``role_words``: how the
            platform writes and names them.
        escape: Makes the key and value typed safe in the answer's markup (Slack: ``blocks.escape``); the mod
            log gets them as plain text (each desk escapes its own).

    Raises:
        Refused: not allowed to change the policy, the key or value is invalid, the bot cannot post in the
            channel named, or a role named is not the server's (nothing is stored).
    """
    authorize_change(actor)
    if key in ROLE_KEYS and value is not None and lookup_role is not None:
        value = await role_ids(value, lookup_role, key, words=role_words)
    if key in CHANNEL_LIST_KEYS and value is not None:
        value = channel_ids(value)
    if key in CHANNEL_KEYS and value is not None:
        value = channel_value(value)
        problem = await check_channel(value) if check_channel is not None and isinstance(value, str) else None
        if problem:
            raise Refused(f"Cannot use that: {problem}. Nothing was changed.")
    try:
        await policies.set_override(platform, server_id, key, value, actor.id)
    except PolicyError as exc:
        raise Refused("Refused `", Said(exc.key), "`: ", Said(exc.reason), ". Nothing was changed.") from None
    desk.forget_problems()
    def what(show: Escape) -> str:
        return f"`{show(key)}` = `{show(json.dumps(value))}`" if value is not None else f"`{show(key)}` reset"

    await desk.post_mod_log(server_id, LogEntry(title="Policy change", lines=(what(str), f"Moderator: {actor.id}"),
                                                moderator_id=actor.id, kind="policy"))
    return f"Policy updated: {what(escape)}."


@dataclass(frozen=True, slots=True)
class SetupChange:
    """One override of a setup: the dotted ``key``, its ``value``, and how the answer ``shows`` it
    (``review channel: <#C1>``)."""

    key: str
    value: Any
    shows: str


def with_moderators(policy: Policy, ids: Sequence[str]) -> list[str]:
    """``server.moderator_roles`` with ``ids`` added (kept once, in order): a setup adds moderators, never drops
    them (``policy reset server.moderator_roles`` does)."""
    return list(dict.fromkeys([*policy.server.moderator_roles, *ids]))


async def apply_setup(policies: PolicyWriter, desk: PolicyDesk, platform: str, actor: Actor, server_id: str,
                      changes: Sequence[SetupChange], problems: Sequence[str] = ()) -> str:
    """Write a setup's overrides one by one (each validated and audited like ``policy set``), make the desk try
    its channels again and post the setup to the mod log. Returns the answer (``Set up: review channel: <#1>.``).

    Args:
        problems: What the adapter found wrong with the picks (``the bot is not in <#C1>``); any refuses all.

    Raises:
        Refused: not allowed to change the policy; nothing picked; ``problems``; or a value the policy refuses
            (the answer says which keys were written before it).
    """
    authorize_change(actor)
    if not changes and not problems:
        raise Refused("Pick a review channel, a mod-log channel or moderators. Nothing was changed.")
    if problems:
        raise Refused("Cannot use that: " + "; ".join(problems) + ". Nothing was changed.")
    done: list[str] = []
    for change in changes:
        try:
            await policies.set_override(platform, server_id, change.key, change.value, actor.id)
        except PolicyError as exc:
            raise Refused("Refused `", Said(exc.key), "`: ", Said(exc.reason), ". "
                          + (f"Done before it: {', '.join(done)}." if done else "Nothing was changed.")) from None
        done.append(change.key)
    desk.forget_problems()
    text = "Set up: " + "; ".join(c.shows for c in changes) + "."
    # the mod log names the keys and values (plain text: each desk escapes it), not the answer's mentions
    await desk.post_mod_log(server_id, LogEntry(title="Setup", lines=(
        *(f"{c.key} = {json.dumps(c.value)}" for c in changes), f"Moderator: {actor.id}"),
        moderator_id=actor.id, kind="policy"))
    return text
