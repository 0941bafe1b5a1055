"""Server policy: thresholds, actions, exemptions, strikes and automod rule settings.

Layer: ``bot.core``. Imports the standard library, pydantic and the core's own modules only.

A policy is layered like Red-DiscordBot's per-guild config and python-discord's filter defaults:
``bot/config/default.toml`` (every key, documented) < ``config/servers/<platform>-<server id>.toml`` (overrides only)
< runtime overrides stored in SQLite (set by ``/policy set``, audited). Every layer is validated with
``extra="forbid"`` so a typo is refused at load time, never ignored. Errors name the file, the key and the reason.
"""

from __future__ import annotations

import codecs
import copy
import functools
import hashlib
import json
import os
import re
import stat
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bot.config import DEFAULT_POLICY_PATH as PACKAGED_DEFAULT_POLICY
from bot.core.models import LABELS, MAX_SENT_TIMEOUT_S, MAX_TIMEOUT_S, ActionKind, ChannelRef, Message
from bot.core.pieces import DEFAULT_MAX_CHARS, PIECE_MODES
from bot.core.rules.settings import RulesSettings, Terms

#: The default policy, shipped as package data of ``bot.config`` (so an installed copy finds it too).
DEFAULT_POLICY_PATH = PACKAGED_DEFAULT_POLICY

SANCTIONS = ("log", "review", "delete", "warn", "timeout", "kick", "ban")

#: The strike points a sanction earns by default, per action name (``strikes.points``): the one place they are
#: written. A server's policy overrides any of them (``[strikes] points = { ban = 10 }``: the others keep these
#: values); ``bot/config/default.toml`` documents them; the sanction registry shows them per kind
#: (``bot.workflow.sanction_kinds.SanctionKind.strike_points``). An action left out (log, review) earns none.
DEFAULT_STRIKE_POINTS: Mapping[str, int] = MappingProxyType({"delete": 1, "warn": 1, "timeout": 2, "kick": 3,
                                                             "ban": 5})


class PolicyError(ValueError):
    """A policy file or override is invalid.

    ``str(error)`` is one line per problem: ``<source>: <key>: <reason>``.

    Attributes:
        source: The file (or ``"override"``) the bad value came from.
        key: Dotted key path of the (first) bad value (e.g. ``thresholds.toxicity.review``).
        reason: Why it is refused.
        problems: Every ``(key, reason)`` found in this source, the first one included (a file with four mistakes
            reports four, in one run).
    """

    def __init__(self, source: str, key: str, reason: str, more: Sequence[tuple[str, str]] = ()) -> None:
        self.source, self.key, self.reason = source, key, reason
        self.problems = [(key, reason), *more]
        super().__init__("\n".join(f"{source}: {k}: {r}" for k, r in self.problems))


#: A number in a policy file: an int or a float; a string ("0.5") or a boolean is refused, not coerced.
StrictNum = Annotated[float, Strict()]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tier(_Strict):
    """Two-tier threshold of one label: scores in [0, 1].

    ``review``: at or above, the message goes to the review queue. ``act``: at or above, the label's action is taken
    automatically. ``None`` switches a tier off. A policy file writes ``false`` for that (``insult = { act = false }``:
    review only), because TOML has no null and a tier a file leaves out keeps the value of the layer below; ``false``
    is read as ``None``, so the effective policy (and its version) is the same as with the tier never set.
    ``true`` is refused (a switched-on tier needs its score).
    """

    review: StrictNum | None = Field(default=None, ge=0.0, le=1.0)
    act: StrictNum | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("review", "act", mode="before")
    @classmethod
    def _switched_off(cls, v: object) -> object:
        if v is False:
            return None
        if v is True:
            raise ValueError("true is not a valid number: give a score in [0, 1], or false to switch the tier off")
        if isinstance(v, str):
            raise ValueError(f"{v!r} is not a valid number: give a score in [0, 1] without quotes, or false to "
                             "switch the tier off")
        return v

    @model_validator(mode="after")
    def _ordered(self) -> Tier:
        if self.review is not None and self.act is not None and self.act < self.review:
            raise ValueError(f"act ({self.act}) must not be below review ({self.review})")
        return self


class ActionSpec(_Strict):
    """An action with its parameters, as written in the policy (``{action = "timeout", duration_s = 3600}``)."""

    action: str
    duration_s: StrictInt | None = Field(default=None, ge=1, le=MAX_TIMEOUT_S)

    @field_validator("action")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in SANCTIONS:
            raise ValueError(f"unknown action {v!r} (allowed: {', '.join(SANCTIONS)})")
        return v

    @property
    def kind(self) -> ActionKind:
        """The :class:`ActionKind` of this spec."""
        return ActionKind.parse(self.action)


#: A Discord id (snowflake: 17-20 digits).
_DISCORD_ID = re.compile(r"\d{17,20}")
#: Slack ids: channels ``C...`` (public), ``G...`` (private), ``D...`` (DM); user groups ``S...``; users ``U...``/``W...``.
_SLACK_CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]{8,}")
_SLACK_ROLE_ID = re.compile(r"[SUW][A-Z0-9]{8,}")
#: Slack workspace roles a Slack member carries in ``MemberRef.roles`` (no id exists for them).
SLACK_WORKSPACE_ROLES = ("admin", "owner")


def _id_problem(value: str, what: str) -> str | None:
    """Why ``value`` is not a channel id (``what="channel"``) or a role / user group id (``"role"``), or None.
    ``""`` (not set) is fine."""
    if not value or _DISCORD_ID.fullmatch(value):
        return None
    if what == "channel" and _SLACK_CHANNEL_ID.fullmatch(value):
        return None
    if what == "role" and (_SLACK_ROLE_ID.fullmatch(value) or value in SLACK_WORKSPACE_ROLES):
        return None
    looks = "a name" if value.startswith(("#", "@")) or not value.isalnum() or value != value.upper() else "not an id"
    slack = "C0123ABCD" if what == "channel" else "a user group S0123ABCD, a user U0123ABCD, or admin / owner"
    return (f"{value!r} is {looks}; give the {what}'s id (Discord: 17-20 digits, Developer Mode > Copy "
            f"{what.title()} ID; Slack: {slack})")


#: Where each platform's id of a kind is found, for a refusal: ``(kind) -> (Discord's, Slack's)``.
_WHERE_ID = {
    "channel": ("Developer Mode > right-click the channel > Copy Channel ID", "C0123ABCD (private: G0123ABCD)"),
    "category": ("Developer Mode > right-click the category > Copy Category ID", "none: Slack has no categories"),
    "role": ("Developer Mode > right-click the role > Copy Role ID",
             "a user group S0123ABCD, a user U0123ABCD, or admin / owner"),
    "member": ("Developer Mode > right-click the member > Copy User ID", "U0123ABCD or W0123ABCD"),
}
_SLACK_MEMBER_ID = re.compile(r"[UW][A-Z0-9]{8,}")


def _not_an_id(value: str, what: str) -> str | None:
    """Why ``value`` cannot be a ``what`` id of any platform or export (a channel, category, role or member id in an
    exemption list or a channel override's key), or None. Ids of a JSON lines export may be any word, so only what
    no id is refused: blank, a name or mention (``#staff``, ``@Mods``, ``<#123>``, words with spaces) or a negative
    number; :func:`platform_id_problems` holds a server's own file to its platform's ids."""
    if value.strip() and not value.startswith(("#", "@", "<", "-")) and not any(ch.isspace() for ch in value):
        return None
    discord, slack = _WHERE_ID[what]
    looks = "blank" if not value.strip() else "a negative number" if value.startswith("-") else "a name or mention"
    return f"{value!r} is {looks}, not an id; give the {what}'s id (Discord: 17-20 digits, {discord}; Slack: {slack})"


def _ids_ok(values: list[str], what: str) -> list[str]:
    for v in values:
        if why := _not_an_id(v, what):
            raise ValueError(why)
    return values


class ServerSettings(_Strict):
    """Per-server wiring: where cards and the mod log go, who moderates, how long text is kept.

    ``review_channel`` and ``mod_log_channel`` are channel ids and ``moderator_roles`` role ids (Discord
    snowflakes; Slack channel ids ``C...``/``G...``, user group ids ``S...``, user ids ``U...``/``W...`` or the
    workspace roles ``admin`` / ``owner``); a name such as ``"#mod-review"`` is refused with the reason.
    """

    review_channel: str | None = None
    mod_log_channel: str | None = None
    moderator_roles: list[str] = Field(default_factory=list)
    retention_days: StrictInt = Field(default=30, ge=1, le=3650)
    excerpt_chars: StrictInt = Field(default=1000, ge=0, le=100_000)
    review_auto_actions: StrictBool = True
    warn_dm: StrictBool = True
    notify_sanctions: StrictBool = True

    @field_validator("review_channel", "mod_log_channel")
    @classmethod
    def _channel_id(cls, v: str | None) -> str | None:
        if v is not None and (why := _id_problem(v, "channel")):
            raise ValueError(why)
        return v

    @field_validator("moderator_roles")
    @classmethod
    def _role_ids(cls, v: list[str]) -> list[str]:
        for role in v:
            if why := _id_problem(role, "role"):
                raise ValueError(why)
        return v


class ExemptSettings(_Strict):
    """Who and where is not judged: role ids, channel ids (threads inherit their parent's), member ids, bots."""

    roles: list[str] = Field(default_factory=list)
    channels: list[str] = Field(default_factory=list)
    members: list[str] = Field(default_factory=list)
    bots: StrictBool = True

    @field_validator("roles")
    @classmethod
    def _roles(cls, v: list[str]) -> list[str]:
        return _ids_ok(v, "role")

    @field_validator("channels")
    @classmethod
    def _channels(cls, v: list[str]) -> list[str]:
        return _ids_ok(v, "channel")

    @field_validator("members")
    @classmethod
    def _members(cls, v: list[str]) -> list[str]:
        return _ids_ok(v, "member")


class IdentityTargetSettings(_Strict):
    """The target check of ``identity_attack`` (see :mod:`bot.core.identity_terms`).

    An identity attack targets people for who they are, so a message that names no identity (no group term, slur
    or othering phrase) is judged on ``identity_attack`` against ``untargeted`` instead of the label's own tiers.
    Its other labels (toxicity, insult, threat...) are judged as usual, and the score is recorded unchanged.
    """

    required: StrictBool = True
    untargeted: Tier = Field(default_factory=lambda: Tier(review=0.98))
    extra_terms: Terms = Field(default_factory=list)
    #: Also count a misspelt or run-together identity word as named (``"homosexuls"``, ``"blackpeople"``:
    #: :func:`bot.core.identity_terms.fuzzy_identity_reference`); decided on HateCheck dev (docs/model-card.md).
    fuzzy: StrictBool = True


class ScoringSettings(_Strict):
    """How a message is cut before the model scores it (:mod:`bot.core.pieces`, docs/performance.md).

    ``pieces``: ``"sentences"`` (default) scores the whole text and each sentence of four or more words, keeping per
    label the highest score, so a benign sentence in front of an attack cannot hide it; ``"whole"`` scores the whole
    text only: 1.4x fewer tokens on Discord chat (Komodo, counted with the model's tokenizer: 1.55x against 1.11x
    the whole texts' tokens, the rest being long-text windows), but padding can then dilute an attack (hateful
    recall on padded HateCheck 87.1% -> 79.9% with model ``c28d0016643b``).
    """

    pieces: str = "sentences"
    #: Characters of a message the model reads (the whole text in overlapping chunks, :mod:`bot.core.pieces`);
    #: 40,000 is Slack's longest message, so a live Discord or Slack message is always read whole.
    max_chars: StrictInt = Field(default=DEFAULT_MAX_CHARS, ge=4_000, le=1_000_000)
    #: What happens to a message longer than ``max_chars`` (``score_status = "truncated"``): ``"review"`` sends it
    #: to review, ``"allow"`` judges the part read as usual (the status is still recorded).
    on_truncated: str = "review"

    @field_validator("pieces")
    @classmethod
    def _mode(cls, v: str) -> str:
        if v not in PIECE_MODES:
            raise ValueError(f"must be one of {', '.join(repr(m) for m in PIECE_MODES)}")
        return v

    @field_validator("on_truncated")
    @classmethod
    def _truncated(cls, v: str) -> str:
        if v not in ("review", "allow"):
            raise ValueError("must be 'review' or 'allow'")
        return v


#: Values of ``[languages] unsupported``: see :class:`LanguageSettings`.
UNSUPPORTED_MODES = ("review", "review_suspect", "allow")


class LanguageSettings(_Strict):
    """Messages in a language the scoring model does not read (:mod:`bot.core.language`).

    The language is detected offline (py3langid) only for texts of at least ``min_letters`` letters (after URLs,
    mentions, code and emoji are removed) and called only at ``min_confidence`` or above, so emoji, code and a few
    words are never called foreign. A text the model does not read gets ``score_status = "unsupported_language"``
    and a signal-only ``language`` rule hit; rules and the model's labels still apply as usual, and ``unsupported``
    says what more happens, since a low score on such a text does not mean it is clean:

    - ``"review_suspect"`` (default): review when any rule fires (signals included) or any label scores at least
      ``suspect_score``;
    - ``"review"``: every such message goes to review;
    - ``"allow"``: nothing more (the status is still recorded).
    """

    detect: StrictBool = True
    unsupported: str = "review_suspect"
    suspect_score: StrictNum = Field(default=0.5, ge=0.0, le=1.0)
    min_letters: StrictInt = Field(default=20, ge=1)
    min_confidence: StrictNum = Field(default=0.9, ge=0.0, le=1.0)

    @field_validator("unsupported")
    @classmethod
    def _mode(cls, v: str) -> str:
        if v not in UNSUPPORTED_MODES:
            raise ValueError(f"must be one of {', '.join(repr(m) for m in UNSUPPORTED_MODES)}")
        return v


class AgreementSettings(_Strict):
    """Independent signals that agree (``[agreement]``).

    ``act``: a rule hit that supports a label (a blocklist list or regex rule with ``label``, e.g. the slur list's
    ``identity_attack``) *and* the model's score of that label at or above its review tier (after channel
    overrides, the untargeted tier and raid mode) ask for the label's ``label_actions`` action, as if the act tier
    had been reached. Either signal alone still only sends the message to review.
    """

    act: StrictBool = True


class LadderStep(_Strict):
    """One rung of the escalation ladder: crossing ``points`` active strike points triggers ``action``."""

    points: StrictInt = Field(ge=1)
    action: str
    duration_s: StrictInt | None = Field(default=None, ge=1, le=MAX_TIMEOUT_S)

    @field_validator("action")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in ("warn", "timeout", "kick", "ban"):
            raise ValueError(f"unknown ladder action {v!r} (allowed: warn, timeout, kick, ban)")
        return v


class StrikeSettings(_Strict):
    """Strikes: points per sanction, expiry, and the escalation ladder (Red-DiscordBot's warnings idea).

    ``points`` is every action's points: :data:`DEFAULT_STRIKE_POINTS` with the given ones over them (a policy that
    names one action keeps the defaults of the others).
    """

    enabled: StrictBool = True
    expire_after_s: StrictInt = Field(default=30 * 86400, ge=60, le=3650 * 86400)
    points: dict[str, StrictInt] = Field(default_factory=lambda: dict(DEFAULT_STRIKE_POINTS))
    ladder: list[LadderStep] = Field(default_factory=list)

    @field_validator("points")
    @classmethod
    def _points(cls, v: dict[str, int]) -> dict[str, int]:
        for k, p in v.items():
            if k not in SANCTIONS:
                raise ValueError(f"unknown action {k!r} in points")
            if p < 0:
                raise ValueError(f"points for {k!r} must be >= 0, got {p}")
        return {**DEFAULT_STRIKE_POINTS, **v}

    @field_validator("ladder")
    @classmethod
    def _sorted(cls, v: list[LadderStep]) -> list[LadderStep]:
        pts = [s.points for s in v]
        if len(set(pts)) != len(pts):
            raise ValueError("two ladder steps have the same points")
        return sorted(v, key=lambda s: s.points)


class ChannelOverride(_Strict):
    """Overrides for one channel or category: thresholds, exemption, extra blocked / allowed terms."""

    thresholds: dict[str, Tier] = Field(default_factory=dict)
    exempt: StrictBool = False
    block_terms: Terms = Field(default_factory=list)
    allow_terms: Terms = Field(default_factory=list)

    @field_validator("thresholds")
    @classmethod
    def _labels(cls, v: dict[str, Tier]) -> dict[str, Tier]:
        _check_labels(v)
        return v


def _check_labels(d: Mapping[str, object]) -> None:
    for k in d:
        if k not in LABELS:
            raise ValueError(f"unknown label {k!r} (labels: {', '.join(LABELS)})")


class NameSettings(_Strict):
    """``[names]``: judging members' display names and nicknames on join and on change (issue 25 item 16).

    ``enabled``: judge names at all. ``action``: what a flagged name does: ``"review"`` (default: a case and a
    review card, no sanction) or ``"none"`` (a note in the mod log only). A name is never sanctioned automatically.
    ``frame``: the neutral sentence the model reads the name in (``{name}`` is replaced); measured with
    ``python -m bench.name_scores``: bare names score high ("Mohammed" toxicity 0.92), framed ones ~0.02.
    """

    enabled: StrictBool = True
    action: str = "review"
    frame: str = "My name is {name}."

    @field_validator("action")
    @classmethod
    def _action(cls, v: str) -> str:
        if v not in ("review", "none"):
            raise ValueError("must be 'review' or 'none' (a name is never sanctioned automatically)")
        return v

    @field_validator("frame")
    @classmethod
    def _frame(cls, v: str) -> str:
        if v.count("{name}") != 1:
            raise ValueError("must contain {name} exactly once")
        return v


class Policy(_Strict):
    """The effective policy of one server. See ``bot/config/default.toml`` for every key and its meaning."""

    schema_version: StrictInt = Field(default=1, ge=1, le=1)
    shadow_mode: StrictBool = False
    on_scorer_error: str = "review"
    server: ServerSettings = Field(default_factory=ServerSettings)
    thresholds: dict[str, Tier] = Field(default_factory=dict)
    label_actions: dict[str, ActionSpec] = Field(default_factory=dict)
    exempt: ExemptSettings = Field(default_factory=ExemptSettings)
    strikes: StrikeSettings = Field(default_factory=StrikeSettings)
    channels: dict[str, ChannelOverride] = Field(default_factory=dict)
    categories: dict[str, ChannelOverride] = Field(default_factory=dict)
    rules: RulesSettings = Field(default_factory=RulesSettings)
    identity_target: IdentityTargetSettings = Field(default_factory=IdentityTargetSettings)
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    languages: LanguageSettings = Field(default_factory=LanguageSettings)
    agreement: AgreementSettings = Field(default_factory=AgreementSettings)
    names: NameSettings = Field(default_factory=NameSettings)

    @field_validator("on_scorer_error")
    @classmethod
    def _scorer_err(cls, v: str) -> str:
        if v not in ("allow", "review"):
            raise ValueError("must be 'allow' or 'review'")
        return v

    @field_validator("thresholds", "label_actions")
    @classmethod
    def _label_keys(cls, v: dict[str, Any]) -> dict[str, Any]:
        _check_labels(v)
        return v

    @field_validator("channels", "categories", mode="before")
    @classmethod
    def _override_keys(cls, v: object, info: ValidationInfo) -> object:
        if isinstance(v, dict):
            _ids_ok(list(v), "channel" if info.field_name == "channels" else "category")
        return v

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Policy:
        """A copy (pydantic's ``model_copy``) whose :attr:`version` is computed afresh (it may differ)."""
        copied = super().model_copy(update=update, deep=deep)
        copied.__dict__.pop("version", None)
        return copied

    @functools.cached_property
    def version(self) -> str:
        """First 12 hex digits of the SHA-256 of the canonical JSON of this policy (recorded with verdicts).

        Computed once per policy object (the model is frozen; the service asks for it several times per message)."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    def overrides_for(self, channel: ChannelRef) -> list[ChannelOverride]:
        """Channel overrides that apply, weakest first: category, parent channel (for threads), channel itself."""
        out: list[ChannelOverride] = []
        if channel.category_id and channel.category_id in self.categories:
            out.append(self.categories[channel.category_id])
        if channel.parent_id and channel.parent_id in self.channels:
            out.append(self.channels[channel.parent_id])
        if channel.id in self.channels:
            out.append(self.channels[channel.id])
        return out

    def thresholds_for(self, channel: ChannelRef) -> dict[str, Tier]:
        """Per-label tiers after channel / category overrides (an override's ``None`` tier inherits)."""
        tiers = dict(self.thresholds)
        for ov in self.overrides_for(channel):
            for label, t in ov.thresholds.items():
                base = tiers.get(label, Tier())
                tiers[label] = Tier(
                    review=t.review if "review" in t.model_fields_set else base.review,
                    act=t.act if "act" in t.model_fields_set else base.act,
                )
        return tiers

    def exemption(self, message: Message) -> str | None:
        """Why ``message`` is exempt (``"bot"``, ``"member"``, ``"role"``, ``"channel"``), or ``None``."""
        if message.author.is_bot and self.exempt.bots:
            return "bot"
        if message.author.id in self.exempt.members:
            return "member"
        if set(message.author.roles) & set(self.exempt.roles):
            return "role"
        ch = message.channel
        if ch.id in self.exempt.channels or (ch.parent_id and ch.parent_id in self.exempt.channels):
            return "channel"
        if any(ov.exempt for ov in self.overrides_for(ch)):
            return "channel"
        return None

    def check_for_server(self, server_id: str, source: str = "policy") -> None:
        """Refuse settings that are wrong for this particular server.

        Raises:
            PolicyError: ``server.moderator_roles`` holds the server's own id: on Discord that is the @everyone
                role, which would make every member a moderator.
        """
        if server_id in self.server.moderator_roles:
            raise PolicyError(source, "server.moderator_roles", f"contains the server id {server_id}, which is the "
                              "@everyone role: every member would be a moderator; list moderator role ids only")

    def warnings(self) -> list[str]:
        """Settings that load but will not be carried out as written, one line each (``policy check`` prints them).

        Today: a timeout longer than :data:`~bot.core.models.MAX_SENT_TIMEOUT_S` (28 days less a 1 h margin for
        clock skew), which is sent capped to that; the case's record says so too.
        """
        out: list[str] = []

        def walk(node: Any, path: str) -> None:
            if isinstance(node, dict):
                seconds = node.get("duration_s") if node.get("action") == "timeout" else None
                if isinstance(seconds, int) and seconds > MAX_SENT_TIMEOUT_S:
                    out.append(f"{path}: a timeout of {seconds} s is sent as {MAX_SENT_TIMEOUT_S} s (Discord's "
                               "28-day limit is measured on its own clock; 1 h is kept for clock skew)")
                for key, value in node.items():
                    walk(value, f"{path}.{key}" if path else str(key))
            elif isinstance(node, list):
                for i, value in enumerate(node):
                    walk(value, f"{path}[{i}]")

        walk(self.model_dump(mode="json"), "")
        return out

    def is_moderator(self, role_ids: list[str] | tuple[str, ...]) -> bool:
        """True when one of ``role_ids`` is a configured moderator role."""
        return bool(set(role_ids) & set(self.server.moderator_roles))


# ---------------------------------------------------------------- loading


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


@functools.cache
def _packaged_doc() -> dict[str, Any]:
    return tomllib.loads(PACKAGED_DEFAULT_POLICY.read_text(encoding="utf-8"))


@functools.cache
def _default_only_keys() -> tuple[str, ...]:
    """Dotted keys whose packaged default differs from the policy's own (empty) default: ``thresholds``,
    ``label_actions``, ``strikes.ladder``, ``rules.blocklist.lists``. A replacement default that leaves one out has it
    empty (no tier, no action, no ladder, no slur list), not the packaged value: :func:`check_replacement_default`.
    Unset channels (``""`` in the file, ``None`` in the model) are the same."""
    packaged = load_policy(PACKAGED_DEFAULT_POLICY).model_dump(mode="json")
    bare = Policy().model_dump(mode="json")
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if a == b or (a in ("", None) and b in ("", None)):
            return
        if isinstance(a, dict) and isinstance(b, dict) and b and set(a) == set(b):  # a settings table: its keys
            for key in a:
                walk(a[key], b[key], f"{path}.{key}" if path else key)
            return
        out.append(path)

    walk(packaged, bare, "")
    return tuple(out)


def check_replacement_default(path: Path, doc: Mapping[str, Any] | None = None) -> None:
    """Refuse a default policy other than the packaged one (``MODBOT_POLICY``) that leaves out a key the packaged
    default sets and the policy's own default leaves empty (:func:`_default_only_keys`). Such a file replaces the
    packaged default rather than being layered on it, so a file of a few changed keys (written like a server's
    file) gave a policy with no thresholds: the model flagged nothing, and ``policy check`` said OK.

    Raises:
        PolicyError: naming the file, each such key, and what to do instead; or what :func:`read_toml` raises.
    """
    try:
        if Path(path).resolve() == PACKAGED_DEFAULT_POLICY.resolve():
            return
    except OSError:
        pass
    data = read_toml(Path(path)) if doc is None else doc
    missing = []
    for key in _default_only_keys():
        node: Any = data
        for part in key.split("."):
            node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        if node is _MISSING:
            missing.append(key)
    if missing:
        why = ("missing: a default policy file replaces bot/config/default.toml (it is not layered on it), so this "
               "would be empty; copy it from there (empty if none is meant), or put your changes in a server's file "
               "or a --policy file")
        raise PolicyError(str(path), missing[0], why, more=[(k, why) for k in missing[1:]])


_MISSING = object()


def _unknown_key(loc: Sequence[Any]) -> str:
    """``"unknown key"``, with ``"; did you mean 'shadow_mode'?"`` when a key the packaged default policy has at the
    same place (it lists every key the bot understands) is a close spelling (:func:`difflib.get_close_matches`,
    cutoff 0.75)."""
    import difflib

    known: Any = _packaged_doc()
    for part in loc[:-1]:
        known = known.get(str(part)) if isinstance(known, dict) else None
    if not isinstance(known, dict) or not loc:
        return "unknown key"
    close = difflib.get_close_matches(str(loc[-1]), [str(k) for k in known], n=1, cutoff=0.75)
    return f"unknown key; did you mean {close[0]!r}?" if close else "unknown key"


def _reason(err: Any) -> str:
    """pydantic's message for one error, or what to write instead where a newcomer's usual mistake makes that
    message unhelpful: an id copied from Discord and written without quotes is a TOML number ("Input should be a
    valid string")."""
    value = err.get("input")
    if err["type"] == "string_type" and isinstance(value, int) and not isinstance(value, bool):
        return f'{value} is a number: write it in quotes ("{value}"); ids and texts are strings'
    return str(err["msg"])


def _validate(doc: dict[str, Any], source: str) -> Policy:
    try:
        return Policy.model_validate(doc)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"]) or "(root)"
            reason = _unknown_key(err["loc"]) if err["type"] == "extra_forbidden" else _reason(err)
            problems.append((key, reason.removeprefix("Value error, ")))
        # A label-keyed table's key check runs only once its values validate: report an unknown label beside the
        # other problems instead of after they are fixed (one run shows every mistake).
        for table in ("thresholds", "label_actions"):
            raw = doc.get(table)
            if isinstance(raw, dict) and any(key.startswith(f"{table}.") for key, _ in problems):
                for name in raw:
                    if name not in LABELS:
                        # the value's own complaint under an unknown label says nothing the label's does not
                        problems = [(k, r) for k, r in problems
                                    if k != f"{table}.{name}" and not k.startswith(f"{table}.{name}.")]
                        problems.append((table, f"unknown label {name!r} (labels: {', '.join(LABELS)})"))
        raise PolicyError(source, *problems[0], more=problems[1:]) from None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML policy file.

    Raises:
        PolicyError: the file is missing, unreadable (a folder, a named pipe or device, no permission), not
            UTF-8, or not valid TOML (the reason carries TOML's line and column), or nested too deeply for the
            parser. A leading UTF-8 byte order mark is skipped.
    """
    try:
        # opened without blocking and checked before reading: a FIFO (a named pipe) given as a policy or lying in
        # the servers folder as <platform>-<id>.toml blocked its open() until a writer came, so `policy check` and
        # a bot's start hung with no word
        with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not stat.S_ISREG(mode):
                raise PolicyError(str(path), "(file)", "is not a regular file (a named pipe, socket or device): "
                                  "name a TOML file")
            data = fh.read()
        # a UTF-8 byte order mark (Notepad, PowerShell 5's Out-File -Encoding utf8) is not part of the TOML: tomllib
        # read it as a statement and refused the file with "Invalid statement (at line 1, column 1)"
        return tomllib.loads(data.removeprefix(codecs.BOM_UTF8).decode("utf-8"))
    except FileNotFoundError:
        raise PolicyError(str(path), "(file)", "file not found") from None
    except IsADirectoryError:
        raise PolicyError(str(path), "(file)", "is a folder, not a TOML file") from None
    except OSError as exc:
        raise PolicyError(str(path), "(file)", f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PolicyError(str(path), "(syntax)", f"not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(str(path), "(syntax)", str(exc)) from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise PolicyError(str(path), "(syntax)", "arrays or inline tables nested too deeply to parse") from None


def load_policy(*paths: Path, overrides: Mapping[str, Any] | None = None,
                read: Callable[[Path], dict[str, Any]] = read_toml) -> Policy:
    """Load and validate a policy: the default file, then each override file in order, then dotted overrides.

    Each layer is validated on its own merged result, so an error names the file that introduced it.

    Args:
        paths: Policy files; the first is usually ``bot/config/default.toml``. Empty means the default file alone.
        overrides: ``{"thresholds.toxicity.review": 0.9, ...}`` runtime overrides (from SQLite).
        read: Reads one file's TOML (:func:`read_toml`; a registry passes the documents it read at start).

    Raises:
        PolicyError: naming file (or ``"override"``), key and reason.
    """
    files = list(paths) or [DEFAULT_POLICY_PATH]
    doc: dict[str, Any] = {}
    policy = Policy()
    for p in files:
        doc = _deep_merge(doc, read(Path(p)))
        policy = _validate(doc, str(p))
    if overrides:
        # The overrides are one layer: validated together, as the policy they make (a store lists them by key,
        # not in the order they were set, and two of them may need each other: thresholds.threat.review = 0.5
        # set before thresholds.threat.act = 0.6 is valid, act alone over the file's review 0.8 is not).
        for key, value in overrides.items():
            doc = set_dotted(doc, key, value)
        try:
            policy = _validate(doc, "override")
        except PolicyError as exc:
            keys = [k for k in overrides if k == exc.key or k.startswith(f"{exc.key}.") or
                    exc.key.startswith(f"{k}.")] or list(overrides)
            raise PolicyError(f"override {', '.join(keys)}", exc.key, exc.reason, more=exc.problems[1:]) from None
    return policy


def set_dotted(doc: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """Return a copy of ``doc`` with the dotted ``key`` set to ``value`` (``None`` removes the key: inherit)."""
    out = copy.deepcopy(dict(doc))
    parts = key.split(".")
    if not all(parts):
        raise PolicyError("override", key, "empty path segment")
    node = out
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return out


#: Where a policy names ids, and of which kind: ``(dotted key, kind, a table whose keys are the ids)``.
_ID_KEYS = (("server.review_channel", "channel", False), ("server.mod_log_channel", "channel", False),
            ("server.moderator_roles", "role", False), ("exempt.roles", "role", False),
            ("exempt.channels", "channel", False), ("exempt.members", "member", False),
            ("channels", "channel", True), ("categories", "category", True))


def platform_id_problems(doc: Mapping[str, Any], platform: str) -> list[tuple[str, str]]:
    """``(key, reason)`` for each id in ``doc`` (one file's or override's TOML, not merged) that is no id of
    ``platform`` (``"discord"``: snowflakes of 17-20 digits; ``"slack"``: ``C``/``G``/``D`` channels, ``S`` user
    groups, ``U``/``W`` users, ``admin`` / ``owner``, and no categories); any other platform: none. A server's own
    file names its server's ids, so a name (``Moderators``), a Slack id in a Discord server's file or a shortened
    id there matched no channel, role or member: the exemption or override silently did nothing.

    Values of the wrong type are left to the policy's own validation."""
    if platform not in ("discord", "slack"):
        return []
    out: list[tuple[str, str]] = []
    for key, what, keyed in _ID_KEYS:
        node: Any = doc
        for part in key.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if node is None:
            continue
        if keyed:
            values = [(f"{key}.{k}", k) for k in node] if isinstance(node, Mapping) else []
        elif isinstance(node, list):
            values = [(f"{key}.{i}", v) for i, v in enumerate(node)]
        else:
            values = [(key, node)]
        for where, value in values:
            if not isinstance(value, str) or not value:
                continue
            if platform == "discord":
                ok = bool(_DISCORD_ID.fullmatch(value))
            elif what == "channel":
                ok = bool(_SLACK_CHANNEL_ID.fullmatch(value))
            elif what == "role":
                ok = bool(_SLACK_ROLE_ID.fullmatch(value)) or value in SLACK_WORKSPACE_ROLES
            elif what == "member":
                ok = bool(_SLACK_MEMBER_ID.fullmatch(value))
            else:
                ok = False
            if not ok and platform == "slack" and what == "category":
                out.append((where, "Slack has no channel categories: [categories] applies to Discord servers"))
            elif not ok:
                name = "Discord" if platform == "discord" else "Slack"
                hint = _WHERE_ID[what][0 if platform == "discord" else 1]
                shape = "17-20 digits, " if platform == "discord" else ""
                out.append((where, f"{value!r} is not a {name} {what} id ({shape}{hint})"))
    return out


def ids_not_in_server(policy: Policy, base: Policy, roles: Collection[str], channels: Collection[str]) -> list[str]:
    """One line per id a server's own layers (its file, its overrides) name that the server does not have: a role
    of ``server.moderator_roles`` or ``exempt.roles`` not among ``roles``, a channel of ``exempt.channels`` or a
    ``[channels]`` / ``[categories]`` key not among ``channels`` (its channels, categories and threads the platform
    lists). Such an id matches nothing (a member's id copied for a role's, a deleted channel): the exemption,
    moderator role or override does nothing. Ids the server inherits unchanged from ``base`` (the default and
    ``--policy`` files, shared by every server) are not judged here."""
    out: list[str] = []
    for key, mine, theirs, known, what in (
            ("server.moderator_roles", policy.server.moderator_roles, base.server.moderator_roles, roles, "role"),
            ("exempt.roles", policy.exempt.roles, base.exempt.roles, roles, "role"),
            ("exempt.channels", policy.exempt.channels, base.exempt.channels, channels, "channel"),
            ("channels", list(policy.channels), list(base.channels), channels, "channel"),
            ("categories", list(policy.categories), list(base.categories), channels, "category")):
        if mine == theirs:
            continue
        for value in mine:
            if value not in known and value not in theirs:
                out.append(f"{key}: {value} is no {what} of this server, so it matches nothing (an id of "
                           f"something else, or a {what} deleted?)")
    return out


def server_policy_path(servers_dir: Path, platform: str, server_id: str) -> Path:
    """Path of a server's override file: ``<servers_dir>/<platform>-<server_id>.toml``."""
    return servers_dir / f"{platform}-{server_id}.toml"


def server_of_policy_file(path: Path) -> tuple[str, str] | None:
    """``(platform, server id)`` a server's file is named for (``<platform>-<server id>.toml``, the inverse of
    :func:`server_policy_path`), or ``None`` for a name without a ``-`` and a server id after it."""
    platform, _, server_id = Path(path).stem.partition("-")
    return (platform, server_id) if server_id else None
