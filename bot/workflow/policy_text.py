"""The effective policy for people and for autocompletion: its whole JSON (as a file), its dotted keys, and the
warnings about a server that is not wired up yet. Used by ``policy check``, ``/policy show`` and ``/policy set``
(Discord) and ``/modpolicy`` (Slack).

Layer: ``bot.workflow`` (platform-neutral; standard library and ``bot.core`` only).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from bot.core.models import LABELS
from bot.core.policy import Policy, Tier
from bot.workflow.status import CHANNELS, unset_channels

#: Discord allows at most 25 autocomplete choices, each value at most 100 characters.
MAX_CHOICES = 25
MAX_CHOICE_CHARS = 100


def policy_json(policy: Policy) -> bytes:
    """The whole effective policy as indented UTF-8 JSON (``policy.model_dump(mode="json")``), for a file."""
    return (json.dumps(policy.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def policy_keys(doc: Mapping[str, object], prefix: str = "") -> list[str]:
    """Every dotted key of a policy document down to its values (``thresholds.insult.review``,
    ``server.review_channel``...), sorted; a table that is empty (``channels``) is a key itself."""
    out: list[str] = []
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out += policy_keys(v, key + ".")
        else:
            out.append(key)
    return sorted(out)


def matching_keys(keys: Iterable[str], typed: str, limit: int = MAX_CHOICES) -> list[str]:
    """The keys to offer for what was typed so far (case-insensitive): those starting with it first, then those
    containing it, at most ``limit``; keys longer than :data:`MAX_CHOICE_CHARS` are left out."""
    t = typed.strip().lower()
    keys = [k for k in keys if len(k) <= MAX_CHOICE_CHARS]
    first = [k for k in keys if k.lower().startswith(t)]
    then = [k for k in keys if t in k.lower() and k not in first]
    return (first + then)[:limit]


def channel_warnings(policy: Policy) -> list[str]:
    """One warning per unset channel: ``server.review_channel is not set: review cards are not posted``."""
    return [f"server.{key} is not set: {CHANNELS[key]} {'are' if key == 'review_channel' else 'is'} not posted"
            for key in unset_channels(policy)]


def switched_off_tiers(base: Policy, policy: Policy) -> list[str]:
    """One line per tier that ``base`` (the default policy) sets and ``policy`` switches off (``act = false`` or
    ``review = false`` in a server file or override), labels in :data:`~bot.core.models.LABELS` order, e.g.
    ``thresholds.insult.act is off: insult never acts on its score alone (review from 0.85)``.

    An act tier that is off still leaves ``[agreement] act``: a rule hit supporting the label plus the label's review
    tier takes the label's action; the line says so when that action is more than a review, and how to stop it.
    ``policy check`` prints these lines; ``/policy show`` puts them in its caption. Empty when nothing is switched
    off.
    """
    out: list[str] = []
    for label in LABELS:
        was, now = base.thresholds.get(label, Tier()), policy.thresholds.get(label, Tier())
        if was.review is not None and now.review is None:
            out.append(f"thresholds.{label}.review is off: {label}'s score no longer sends a message to review"
                       + (f" (it acts from {now.act:g})" if now.act is not None else ""))
        if was.act is not None and now.act is None:
            line = f"thresholds.{label}.act is off: {label} never acts on its score alone"
            if now.review is not None:
                line += f" (review from {now.review:g})"
            spec = policy.label_actions.get(label)
            if policy.agreement.act and now.review is not None and spec is not None and spec.action not in (
                    "log", "review"):
                line += (f"; with [agreement] act a rule hit supporting {label} still takes label_actions.{label} "
                         f"({spec.action}); label_actions.{label} = {{ action = \"review\" }} stops that")
            out.append(line)
    return out
