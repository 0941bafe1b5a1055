"""New-account and new-member signals.

Layer: ``bot.core``. Standard library only (plus the core's own modules).
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import BaseModel

from bot.core.models import Message, RuleHit
from bot.core.rules._util import epoch_s
from bot.core.rules.base import RuleContext, Stage
from bot.core.rules.settings import NewAccountSettings, RaidSettings, RulesSettings


def _age_s(since: datetime | None, now: datetime) -> float | None:
    return None if since is None else epoch_s(now) - epoch_s(since)


def new_account_hits(message: Message, settings: NewAccountSettings, now: datetime | None = None) -> list[RuleHit]:
    """Signals for a young account or a recent join.

    Args:
        message: The message; ``author.created_at`` / ``author.joined_at`` are read (unknown ones are skipped).
        settings: The server's ``[rules.new_account]``.
        now: Reference time; default ``message.created_at`` (so replays use message time, not the wall clock).

    Returns:
        Nothing for a message without a time (no ``now`` and no ``created_at``: no age can be measured);
        ``new_account`` when the account is younger than ``min_account_age_s``, ``new_member`` when the member
        joined less than ``min_member_age_s`` ago (a threshold of 0 switches that check off). ``detail`` gives
        the age and the threshold in seconds; ``action`` is ``settings.action`` (default ``None``: a signal).

    Raises:
        ValueError: a datetime is naive.
    """
    at = now or message.created_at
    if not settings.enabled or at is None:
        return []
    hits: list[RuleHit] = []
    checks = (
        ("new_account", "account", message.author.created_at, settings.min_account_age_s),
        ("new_member", "member", message.author.joined_at, settings.min_member_age_s),
    )
    for rule, what, since, minimum in checks:
        age = _age_s(since, at)
        if minimum > 0 and age is not None and age < minimum:
            hits.append(
                RuleHit(rule=rule, detail=f"{what} age {max(0, int(age))}s < {minimum}s", action=settings.action)
            )
    return hits


def is_new_member(message: Message, settings: RaidSettings, now: datetime | None = None) -> bool:
    """Whether the author counts as a new member for raid detection.

    The member joined less than ``settings.new_member_age_s`` ago; when the join time is unknown, the account's
    creation time is used instead; with neither known, or no time for the message, the member is not new.

    Raises:
        ValueError: a datetime is naive.
    """
    at = now or message.created_at
    if at is None:
        return False
    since = message.author.joined_at or message.author.created_at
    age = _age_s(since, at)
    return age is not None and age < settings.new_member_age_s


class NewAccountRule:
    """``new_account`` / ``new_member``: :func:`new_account_hits` at message time (``ctx.at``)."""

    name: ClassVar[str] = "new_account"
    stages: ClassVar[frozenset[Stage]] = frozenset({Stage.ORDERED})
    settings_model: ClassVar[type[BaseModel]] = NewAccountSettings
    hit_names: ClassVar[tuple[str, ...]] = ("new_account", "new_member")

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings.new_account

    def check(self, ctx: RuleContext) -> list[RuleHit]:
        return new_account_hits(ctx.message, self.settings, ctx.at)
