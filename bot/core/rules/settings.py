"""Settings of the automod rules that run beside the model (the ``[rules]`` table of a server policy).

Layer: ``bot.core``. Imports the standard library, pydantic, ``re2`` and :mod:`bot.core.models` only.

Every model refuses unknown keys (``extra="forbid"``) and impossible values (negative windows, zero thresholds),
so a typo in ``bot/config/default.toml`` or a server file fails at load time with an error that names the field.

Actions are the policy's action names (``log``, ``review``, ``delete``, ``warn``, ``timeout``, ``kick``,
``ban``). ``None`` -- written ``"none"`` or ``""`` in TOML, which has no null -- makes a rule a *signal*: its
:class:`~bot.core.models.RuleHit` is recorded with ``action=None`` and the policy decides what it means.

Channel overrides: :meth:`RulesSettings.merged` layers a partial dict over a full settings object. Lists *extend*
(a channel's blocked terms add to the server's, de-duplicated, order kept), lists of named tables (blocklist
``lists``, ``regex`` rules) merge by ``name``, and scalars replace.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import re2
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from bot.core.models import LABELS, MAX_SENT_TIMEOUT_S, ActionKind

#: Longest regex pattern accepted, in characters (re2 programs grow with the pattern; 1000 is ample for automod).
MAX_PATTERN_CHARS = 1000


class RuleConfigError(ValueError):
    """A rule setting is unusable (e.g. a regex that does not compile). The message names the rule and pattern."""


def check_action(value: str | None) -> str | None:
    """Validate an action name; ``None``, ``""`` and ``"none"`` mean "signal only" and return ``None``.

    Raises:
        ValueError: unknown action, naming the allowed ones (from :meth:`ActionKind.parse`).
    """
    if value is None or value.strip().lower() in ("", "none"):
        return None
    return ActionKind.parse(value).label


def check_label(value: str | None) -> str | None:
    """Validate a detoxify label; ``None``, ``""`` and ``"none"`` return ``None``.

    Raises:
        ValueError: not one of :data:`bot.core.models.LABELS`.
    """
    if value is None or value.strip().lower() in ("", "none"):
        return None
    if value not in LABELS:
        raise ValueError(f"unknown label {value!r} (labels: {', '.join(LABELS)})")
    return value


def compile_pattern(pattern: str, *, name: str = "", case_sensitive: bool = False) -> re2._Regexp:
    """Compile ``pattern`` with RE2, the linear-time engine: no catastrophic backtracking is possible.

    RE2 refuses backreferences and lookaround; such patterns fail here, at load time, not at match time.

    Raises:
        RuleConfigError: the pattern is empty, longer than :data:`MAX_PATTERN_CHARS` or invalid; the message
            names the rule and the pattern.
    """
    label = f"regex rule {name!r}: " if name else ""
    if not pattern:
        raise RuleConfigError(f"{label}empty pattern")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise RuleConfigError(f"{label}pattern longer than {MAX_PATTERN_CHARS} characters: {pattern[:40]!r}...")
    opts = re2.Options()
    opts.log_errors = False
    opts.case_sensitive = case_sensitive
    try:
        return re2.compile(pattern, opts)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise RuleConfigError(f"{label}invalid pattern {pattern!r}: {reason}") from None


def _norm_term(term: str) -> str:
    """Casefold and collapse whitespace: the identity of a blocked / allowed term."""
    return " ".join(term.casefold().split())


def _clean_terms(terms: list[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for t in terms:
        key = _norm_term(t)
        if not key:
            raise ValueError("empty term")
        if key not in seen:
            seen.add(key)
            out.append(t.strip())
    return out


def _clean_domain(domain: str) -> str:
    d = domain.strip().lower()
    for prefix in ("https://", "http://"):
        d = d.removeprefix(prefix)
    d = d.split("/", 1)[0].removeprefix("www.").rstrip(".")
    if not d or "." not in d or any(c.isspace() for c in d):
        raise ValueError(f"not a domain: {domain!r} (write e.g. 'example.com')")
    return d


def _clean_domains(domains: list[str]) -> list[str]:
    return list(dict.fromkeys(_clean_domain(d) for d in domains))


#: An action name, validated; ``None`` for signal-only.
Action = Annotated[str | None, AfterValidator(check_action)]
#: A detoxify label, validated; ``None`` for none.
Label = Annotated[str | None, AfterValidator(check_label)]
#: Blocked / allowed terms: stripped, non-empty, de-duplicated case-insensitively.
Terms = Annotated[list[str], AfterValidator(_clean_terms)]
#: Domains: lower-case, scheme / ``www.`` / path removed.
Domains = Annotated[list[str], AfterValidator(_clean_domains)]
#: Invite codes, compared case-insensitively.
Invites = Annotated[list[str], AfterValidator(lambda v: [c.strip().lower() for c in v if c.strip()])]


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlocklistGroup(_Settings):
    """One named list of blocked terms with its own label and action (``[[rules.blocklist.lists]]``)."""

    name: str = Field(min_length=1, description="List name, shown in hit details (e.g. 'slurs').")
    terms: Terms = Field(
        default_factory=list,
        description="Words or phrases, matched whole-word after normalisation (leet, homoglyph and spaced forms "
        "match; a term never matches inside a longer word: 'ass' does not hit 'assistance').",
    )
    label: Label = Field(default=None, description="Detoxify label a hit supports (e.g. 'identity_attack').")
    action: Action = Field(default="review", description="Action for a hit; default 'review'.")


class BlocklistSettings(_Settings):
    """Blocked and allowed terms (``[rules.blocklist]``).

    ``terms`` is the unnamed default list (``label`` / ``action`` below apply to it and to a channel's extra
    terms); ``lists`` holds named groups. ``allow`` wins over every list: an allowed term never hits.
    """

    enabled: bool = Field(default=True, description="Switch the blocklist rule on or off.")
    terms: Terms = Field(default_factory=list, description="Default list of blocked words or phrases.")
    allow: Terms = Field(default_factory=list, description="Terms that never hit, even if blocked elsewhere.")
    label: Label = Field(default=None, description="Label supported by a hit on the default list.")
    action: Action = Field(default="review", description="Action for a hit on the default list.")
    lists: list[BlocklistGroup] = Field(default_factory=list, description="Named term groups.")

    @field_validator("lists")
    @classmethod
    def _unique_names(cls, v: list[BlocklistGroup]) -> list[BlocklistGroup]:
        names = [g.name for g in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate blocklist name(s): {', '.join(dupes)}")
        return v


class RegexRuleSettings(_Settings):
    """A moderator-written regex rule (``[[rules.regex]]``), run by RE2 (linear time, no backtracking)."""

    name: str = Field(min_length=1, description="Rule name, shown in hit details.")
    pattern: str = Field(description="RE2 syntax (no backreferences / lookaround); validated at load time.")
    action: Action = Field(default="review", description="Action for a hit; default 'review'.")
    label: Label = Field(default=None, description="Detoxify label a hit supports, if any.")
    case_sensitive: bool = Field(default=False, description="Default: case-insensitive.")
    target: Literal["original", "normalized", "both"] = Field(
        default="both",
        description="Text matched: the original, the normalised matching form (leet / homoglyphs folded) or both.",
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str, info: ValidationInfo) -> str:
        compile_pattern(v, name=str(info.data.get("name", "")))
        return v


class LinkSettings(_Settings):
    """Links and Discord invites (``[rules.links]``).

    Invites are found through spacing, percent-encoding, HTML entities and ``dot`` / ``slash`` spelling
    (``discord . gg / abc``, ``discord%2Egg%2Fabc``), for discord.gg, discord.com/invite, discordapp.com/invite and
    the usual redirectors (dsc.gg, discord.io, discord.me, discord.li, invite.gg).
    """

    enabled: bool = Field(default=True, description="Switch link and invite rules on or off.")
    block_invites: bool = Field(default=True, description="Hit on invites (except allowed_invites).")
    allowed_invites: Invites = Field(default_factory=list, description="Invite codes that pass (own server).")
    allowed_domains: Domains = Field(
        default_factory=list,
        description="If non-empty, every link to another domain hits ('link'). Subdomains of a listed domain pass. "
        "Empty: links pass unless blocked.",
    )
    blocked_domains: Domains = Field(default_factory=list, description="Domains (and subdomains) that always hit.")
    action: Action = Field(default="delete", description="Action for an invite or link hit; default 'delete'.")
    label: Label = Field(default=None, description="Label a hit supports; default none.")


class MentionSpamSettings(_Settings):
    """Mass mentions (``[rules.mention_spam]``).

    Counts every ping of a user (six pings of one member in a message count six), not counting bots, the
    implicit ping of a reply or the author. An
    ``@everyone`` / ``@here`` from an author without one of ``everyone_roles`` (and without the platform
    permission the adapter reports) adds ``everyone_weight``. A hit when the count exceeds ``max_mentions``.
    """

    enabled: bool = Field(default=True, description="Switch the rule on or off.")
    max_mentions: int = Field(
        default=5,
        ge=1,
        description="Most mentions allowed per message; repeated pings of one member count each time.",
    )
    everyone_weight: int = Field(default=1, ge=0, description="Mentions an unallowed @everyone counts as.")
    everyone_roles: list[str] = Field(default_factory=list, description="Role ids allowed to mention @everyone.")
    action: Action = Field(default="delete", description="Action for a hit; default 'delete'.")


class SpamSettings(_Settings):
    """Duplicate, crowd-duplicate and flood spam (``[rules.spam]``); windows in seconds of message time.

    Defaults follow python-discord's antispam rules (3 duplicates, 7 messages in 10 s). Crowd duplicates only
    count texts of at least ``crowd_min_chars`` characters and ``crowd_min_tokens`` words, so that many members
    saying "lol", "+1" or "thanks" is not spam.
    """

    enabled: bool = Field(default=True, description="Switch spam rules on or off.")
    duplicate_window_s: float = Field(default=30.0, gt=0, description="Window for same-member duplicates, s.")
    duplicate_count: int = Field(
        default=3,
        ge=2,
        description="Identical messages from one member in the window "
        "that make a hit (the message reaching the count and later ones hit).",
    )
    crowd_window_s: float = Field(default=60.0, gt=0, description="Window for many-member duplicates, s.")
    crowd_duplicate_count: int = Field(default=5, ge=2, description="Distinct members posting the same text.")
    crowd_min_chars: int = Field(default=20, ge=1, description="Shortest normalised text counted as a crowd dup.")
    crowd_min_tokens: int = Field(default=3, ge=1, description="Fewest words counted as a crowd duplicate.")
    flood_window_s: float = Field(default=10.0, gt=0, description="Window for flood, s.")
    flood_count: int = Field(default=7, ge=2, description="Messages from one member in the window that make a hit.")
    action: Action = Field(default="delete", description="Action for duplicate and flood hits.")
    short_text_chars: int = Field(
        default=20,
        ge=0,
        description="A normalised text shorter than this many characters is a short reply ('agreed', 'lol', "
        "'+1'). Repeats of a short reply by an established member (``RaidSettings.established_min_messages``) are "
        "a signal only (``duplicate_spam`` with no action); 0 switches this off.",
    )
    established_flood_count: int = Field(
        default=14,
        ge=2,
        description="Messages from an established member in ``flood_window_s`` that make an acting flood hit; "
        "from ``flood_count`` up to this the flood hit is a signal only. Set it equal to ``flood_count`` to "
        "treat every member alike.",
    )
    crowd_action: Action = Field(default="review", description="Action for a crowd-duplicate hit.")
    max_tracked: int = Field(default=20000, ge=100, description="Most members / texts tracked at once (memory cap).")


class NewAccountSettings(_Settings):
    """New-account signals (``[rules.new_account]``); 0 switches a check off."""

    enabled: bool = Field(default=True, description="Switch the signals on or off.")
    min_account_age_s: int = Field(default=7 * 86400, ge=0, description="Account younger than this: 'new_account'.")
    min_member_age_s: int = Field(default=3600, ge=0, description="Joined less than this ago: 'new_member'.")
    action: Action = Field(default=None, description="Default none: a signal for the policy.")


#: Longest raid mode and alert cooldown, s (30 days): the workflow dates them (now + this), and an infinite or
#: astronomically long one (``1e999`` is JSON for infinity) could not be dated: every raid and join burst after it
#: failed with OverflowError. Raid mode until switched off is ``/raidmode on``.
MAX_RAID_SPAN_S = 30 * 86400.0


class RaidSettings(_Settings):
    """Raid / brigade detection per channel or thread (``[rules.raid]``); times in seconds of message time."""

    enabled: bool = Field(default=True, description="Switch raid detection on or off.")
    window_s: float = Field(default=60.0, gt=0, le=MAX_RAID_SPAN_S, description="Sliding window of a burst, s.")
    flagged_burst: int = Field(default=5, ge=2, description="Distinct members with flagged messages in the window.")
    new_member_burst: int = Field(default=8, ge=2, description="Distinct new members posting in the window.")
    new_member_age_s: int = Field(
        default=86400, ge=0, description="Member (or account, if join time unknown) younger than this counts as new."
    )
    cooldown_s: float = Field(
        default=600.0,
        ge=0,
        le=MAX_RAID_SPAN_S,
        description="No second alert for the channel until this long "
        "after the burst's last flagged / new-member message.",
    )
    raid_mode: bool = Field(default=True, description="An alert switches raid mode on for the channel.")
    raid_mode_duration_s: float = Field(
        default=900.0, gt=0, le=MAX_RAID_SPAN_S,
        description="Raid mode lasts this long after the burst's last activity (at most 30 days; /raidmode on "
        "holds it until switched off).",
    )
    threshold_factor: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="In raid mode, score thresholds and count limits are multiplied by this (stricter).",
    )
    review_new_members: bool = Field(
        default=True, description="In raid mode, every new member's message goes to review."
    )
    established_min_messages: int = Field(
        default=2,
        ge=0,
        description="An established member has at least this many earlier messages in the server seen by the bot "
        "(this process, plus replays of a resumed scan; an adapter's ``is_first_message=False`` counts as one) "
        "and is not a new member by ``new_member_age_s``. Raid mode's stricter tiers and spam count limits skip "
        "established members (the mention limit is lowered for everyone), and their short repeated replies are "
        "not punished as spam.",
    )
    strict_for_established: bool = Field(
        default=False,
        description="True: raid mode's stricter tiers apply to every member, established ones included.",
    )
    max_tracked: int = Field(default=5000, ge=10, description="Most channels tracked at once (memory cap).")
    join_burst: int = Field(
        default=10, ge=0, description="Accounts joining within join_window_s that raise a join-burst raid alert "
        "(0: off)."
    )
    join_window_s: float = Field(default=30.0, gt=0, le=MAX_RAID_SPAN_S,
                                 description="Window of a join burst, s (at most 30 days).")
    timeout_raiders: bool = Field(
        default=False, description="During a raid, time out its new-member raiders automatically (every account of "
        "a join burst, and each new member posting flagged messages in a raid), one case each, carried out by the "
        "workflow."
    )
    raider_timeout_s: int = Field(
        default=3600, ge=60, le=MAX_SENT_TIMEOUT_S,
        description="Length of that timeout, s (at most 28 days less the 1 h clock-skew margin).",
    )


class ZalgoSettings(_Settings):
    """Zalgo text (stacked combining marks), detected by the normaliser (``[rules.zalgo]``)."""

    enabled: bool = Field(default=True, description="Switch the signal on or off.")
    action: Action = Field(default=None, description="Default none: a signal.")


class HostileEmojiSettings(_Settings):
    """A message that is only hostile emoji (a middle finger, a cursing face, a pile of poo) in reply to or
    mentioning another member (``[rules.hostile_emoji]``): the insult in words would be reviewed, and the model,
    which scores a lone middle finger toxicity 0.91 but a low insult, would let it pass."""

    enabled: bool = Field(default=True, description="Switch the rule on or off.")
    label: str | None = Field(default="insult", description="The label the hit supports (shown on the card).")
    action: Action = Field(default="review", description="Default review, as the same insult in words.")


class RulesSettings(_Settings):
    """All automod rule settings of a server (``[rules]``)."""

    blocklist: BlocklistSettings = Field(default_factory=BlocklistSettings)
    regex: list[RegexRuleSettings] = Field(default_factory=list)
    links: LinkSettings = Field(default_factory=LinkSettings)
    mention_spam: MentionSpamSettings = Field(default_factory=MentionSpamSettings)
    spam: SpamSettings = Field(default_factory=SpamSettings)
    new_account: NewAccountSettings = Field(default_factory=NewAccountSettings)
    raid: RaidSettings = Field(default_factory=RaidSettings)
    zalgo: ZalgoSettings = Field(default_factory=ZalgoSettings)
    hostile_emoji: HostileEmojiSettings = Field(default_factory=HostileEmojiSettings)

    @field_validator("regex")
    @classmethod
    def _unique_regex(cls, v: list[RegexRuleSettings]) -> list[RegexRuleSettings]:
        names = [r.name for r in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate regex rule name(s): {', '.join(dupes)}")
        return v

    def merged(self, partial: Mapping[str, Any]) -> RulesSettings:
        """These settings with ``partial`` (a ``[rules]``-shaped dict) layered on top.

        Lists extend (de-duplicated, order kept); lists of tables with a ``name`` merge by name; scalars and
        nested tables' scalars replace.

        Raises:
            pydantic.ValidationError: the result is invalid; the error names the field.
        """
        return RulesSettings.model_validate(merge_dicts(self.model_dump(), partial))


def merge_dicts(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``over`` into a copy of ``base`` with the list rules of :meth:`RulesSettings.merged`."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        cur = out.get(key)
        if isinstance(value, Mapping) and isinstance(cur, dict):
            out[key] = merge_dicts(cur, value)
        elif isinstance(value, list) and isinstance(cur, list):
            out[key] = _merge_lists(cur, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _merge_lists(cur: list[Any], new: list[Any]) -> list[Any]:
    out = list(cur)
    named = {item.get("name"): i for i, item in enumerate(out) if isinstance(item, dict) and "name" in item}
    for item in new:
        if isinstance(item, Mapping) and item.get("name") in named:
            i = named[item["name"]]
            out[i] = merge_dicts(out[i], item)
        elif isinstance(item, Mapping):
            out.append(copy.deepcopy(dict(item)))
        elif item not in out:
            out.append(item)
    return out
