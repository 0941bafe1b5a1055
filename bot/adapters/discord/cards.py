"""Embeds for review cards, appeal cards and decisions.

Layer: ``bot.adapters.discord``. Pure functions of core values to ``discord.Embed``; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import discord

from bot.core.models import LABELS

#: Embed colours by state.
OPEN_COLOUR = discord.Colour.gold()
DONE_COLOUR = discord.Colour.green()
DISMISSED_COLOUR = discord.Colour.light_grey()


def spoiler(text: str, limit: int = 900) -> str:
    """Text hidden behind a spoiler (``||...||``), cut to ``limit`` characters; ``|`` escaped."""
    text = (text or "").replace("|", "\u2758")
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return f"||{text}||" if text.strip() else "*(no text)*"


def jump_url(guild_id: str, channel_id: str | None, message_id: str | None) -> str | None:
    """Discord link to a message, or ``None`` without ids."""
    if not channel_id or not message_id:
        return None
    return f"https://discord.com/channels/{guild_id}/{channel_id}/{message_id}"


def age(created: datetime | None, now: datetime | None = None) -> str:
    """``"3 days"``-style age of an account or membership."""
    if created is None:
        return "unknown"
    secs = max(0, int(((now or datetime.now(UTC)) - created).total_seconds()))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if secs >= size:
            n = secs // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{secs} seconds"


def score_lines(scores: Mapping[str, float | None], thresholds: Mapping[str, Any]) -> str:
    """One line per label: score next to its review / act thresholds; labels the model lacks say so."""
    lines = []
    for label in LABELS:
        if label not in scores:
            continue
        s = scores[label]
        tier = thresholds.get(label)
        rv = getattr(tier, "review", None)
        act = getattr(tier, "act", None)
        th = f"review {rv:.2f}" if rv is not None else "review off"
        th += f" / act {act:.2f}" if act is not None else " / act off"
        mark = "\N{BLACK SMALL SQUARE} " if s is not None and rv is not None and s >= rv else ""
        val = "missing" if s is None else f"{s:.2f}"
        lines.append(f"{mark}`{label}` **{val}** ({th})")
    return "\n".join(lines) or "not scored"


def review_card(*, review_id: int, server_id: str, source: str, member_id: str, member: discord.abc.User | None,
                joined_at: datetime | None, strikes: int, points: int, channel_id: str | None,
                message_id: str | None, text: str, scores: Mapping[str, float | None],
                thresholds: Mapping[str, Any], rules: Sequence[str], reason: str, case_number: int | None,
                failures: Sequence[str] = ()) -> discord.Embed:
    """The review card posted in the server's review channel."""
    embed = discord.Embed(title=f"Review #{review_id} ({source})", colour=OPEN_COLOUR, timestamp=datetime.now(UTC))
    created = discord.utils.snowflake_time(int(member_id)) if member_id.isdigit() else None
    name = f"{member} " if member is not None else ""
    embed.add_field(name="Member", value=f"{name}<@{member_id}> (`{member_id}`)\naccount {age(created)} old, "
                    f"joined {age(joined_at)} ago\nprior strikes: {strikes} ({points} points)", inline=False)
    where = f"<#{channel_id}>" if channel_id else "-"
    link = jump_url(server_id, channel_id, message_id)
    if link:
        where += f" \N{EM DASH} [jump to message]({link})"
    embed.add_field(name="Channel", value=where, inline=False)
    embed.add_field(name="Text", value=spoiler(text), inline=False)
    if scores:
        embed.add_field(name="Scores (threshold)", value=score_lines(scores, thresholds)[:1024], inline=False)
    embed.add_field(name="Rules fired", value=(", ".join(rules) or "none")[:1024], inline=False)
    embed.add_field(name="Reason", value=(reason or "-")[:1024], inline=False)
    if case_number is not None:
        embed.add_field(name="Case", value=f"#{case_number}")
    if failures:
        embed.add_field(name="Automatic action failed", value="\n".join(failures)[:1024], inline=False)
    embed.set_footer(text="status: open")
    return embed


def decided(embed: discord.Embed, *, outcome: str, moderator: discord.abc.User, when: datetime,
            dismissed: bool = False, note: str = "") -> discord.Embed:
    """A copy of a card stamped with who decided, when, and the outcome."""
    e = embed.copy()
    e.colour = DISMISSED_COLOUR if dismissed else DONE_COLOUR
    value = f"**{outcome}** by {moderator.mention} {discord.utils.format_dt(when, 'f')}"
    if note:
        value += f"\n{note}"
    e.add_field(name="Decision", value=value[:1024], inline=False)
    e.set_footer(text=f"status: {outcome}")
    return e


def appeal_card(*, appeal_id: int, case: Any, member_id: str, text: str) -> discord.Embed:
    """The appeal card posted in the review channel (buttons: Uphold / Overturn)."""
    embed = discord.Embed(title=f"Appeal #{appeal_id} of case #{case.number}", colour=discord.Colour.blurple(),
                          timestamp=datetime.now(UTC))
    embed.add_field(name="Member", value=f"<@{member_id}> (`{member_id}`)")
    embed.add_field(name="Case", value=f"#{case.number}: {case.action.label} ({case.status.value})\n{case.reason}"[:1024],
                    inline=False)
    embed.add_field(name="Appeal", value=spoiler(text, 1000), inline=False)
    embed.set_footer(text="status: open")
    return embed
