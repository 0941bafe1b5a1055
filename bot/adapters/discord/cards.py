"""Render the workflow's views (review cards, mod-log entries, raid cards) as Discord embeds, within Discord's limits.

Layer: ``bot.adapters.discord``. Pure functions of ``bot.workflow.views`` values to ``discord.Embed``; no I/O.

Discord's limits (API reference, "Embed Limits" and "Create Message"): message content 2000 characters, embed title
256, description 4096, field name 256, field value 1024, footer 2048, at most 25 fields, 6000 characters in all the
embeds of a message; custom ids 100 characters. :func:`fit` enforces the embed limits on every embed we send.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import discord

from bot.core.models import LABELS
from bot.workflow import words
from bot.workflow.authz import Refused, Said, Sentence
from bot.workflow.fit import fit_escaped, report_lines
from bot.workflow.views import LogEntry, RaidCard, ReviewCard

CONTENT_MAX = 2000
TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_MAX = 2048
FIELDS_MAX = 25
EMBED_TOTAL_MAX = 6000
CUSTOM_ID_MAX = 100

OPEN_COLOUR = discord.Colour.gold()
DONE_COLOUR = discord.Colour.green()
DISMISSED_COLOUR = discord.Colour.light_grey()
FAILED_COLOUR = discord.Colour.red()


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def fit(embed: discord.Embed) -> discord.Embed:
    """Make ``embed`` valid for Discord: every part within its limit, at most 25 fields, 6000 characters in all
    (trailing fields are dropped, then the description is shortened, with a note that something was cut)."""
    if embed.title:
        embed.title = cut(embed.title, TITLE_MAX)
    if embed.description:
        embed.description = cut(embed.description, DESCRIPTION_MAX)
    fields = [(cut(f.name or "-", FIELD_NAME_MAX), cut(f.value or "-", FIELD_VALUE_MAX), f.inline)
              for f in embed.fields][:FIELDS_MAX]
    embed.clear_fields()
    for name, value, inline in fields:
        embed.add_field(name=name, value=value, inline=inline)
    if embed.footer and embed.footer.text:
        embed.set_footer(text=cut(embed.footer.text, FOOTER_MAX))
    while len(embed) > EMBED_TOTAL_MAX and embed.fields:
        embed.remove_field(len(embed.fields) - 1)
    if len(embed) > EMBED_TOTAL_MAX and embed.description:
        embed.description = cut(embed.description, max(1, len(embed.description) - (len(embed) - EMBED_TOTAL_MAX)))
    return embed


def md(text: str) -> str:
    """What a person typed (a member's message, a report's reason, a display name) as Discord markdown that shows
    it as text: ``discord.utils.escape_markdown(as_needed=True)`` (discord.py's own: a masked link
    ``[prize](https://…)``, bold, headers and quotes are escaped, a lone ``_`` as in ``identity_attack`` is left),
    then every square bracket it left (:data:`_BARE_BRACKET`): its masked-link rule misses a link text holding a
    newline and escapes only the outer bracket of ``[[x]](url)``, both of which Discord still shows as links.
    Mentions are not escaped: the bot sends with ``allowed_mentions`` none, so they cannot ping."""
    return _BARE_BRACKET.sub(r"\\\1", discord.utils.escape_markdown(text or "", as_needed=True))


#: A square bracket not already escaped (an even number of backslashes, none included, before it).
_BARE_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*[\[\]])")


def _markdown(parts: tuple[str, ...]) -> str:
    out: list[str] = []
    code = False  # inside the sentence's own inline code (`…`): Discord shows a backslash there as typed
    for part in parts:
        if isinstance(part, Said):
            out.append(part.replace("`", "\u02cb") if code else md(part))
        else:
            out.append(part)
            code ^= part.count("`") % 2 == 1
    return "".join(out)


def refusal(exc: Refused) -> str:
    """A refusal's sentence as Discord markdown: what the person typed or is called (its
    :class:`~bot.workflow.authz.Said` pieces) through :func:`md`, or, inside the sentence's own inline code, as
    typed with a backtick (which would close the code) shown as ``ˋ``; the workflow's own words as written."""
    return _markdown(exc.parts)


def said(text: str) -> str:
    """A workflow sentence as Discord markdown: a :class:`~bot.workflow.authz.Sentence`'s typed pieces (a raider's
    display name in a raid summary) as :func:`refusal` shows them; plain text as is."""
    return _markdown(text.parts) if isinstance(text, Sentence) else text


def spoiler(text: str, limit: int = 900) -> str:
    """A member's text hidden behind a spoiler (``||...||``): ``|`` replaced (so it cannot close the spoiler), the
    rest through :func:`md`, in at most ``limit`` characters as shown (cut between escapes, never after a lone
    backslash)."""
    text = (text or "").replace("|", "\u2758")
    text = fit_escaped(text, limit, md, empty="")
    return f"||{text}||" if text.strip() else "*(no text)*"


def spoilers(text: str, limit: int = FIELD_VALUE_MAX - 4, parts: int = 3) -> list[str]:
    """A member's long text as :func:`spoiler` pieces of at most ``limit`` characters each (between them, at most
    ``parts``; the last one cut with "…" when even they are too few), for consecutive embed fields: a field holds
    1,024 characters, and an appeal (1,500 characters, escaped) does not fit in one."""
    raw = (text or "").replace("|", "\u2758")
    shown: list[str] = []
    while raw.strip() and len(shown) < parts - 1 and len(md(raw)) > limit:
        lo, hi = 1, len(raw)  # the longest start of raw whose escaped form fits (cut between escapes)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if len(md(raw[:mid])) <= limit else (lo, mid - 1)
        shown.append(f"||{md(raw[:lo])}||")
        raw = raw[lo:]
    if raw.strip() or not shown:
        shown.append(spoiler(raw, limit))
    return shown


def jump_url(guild_id: str, channel_id: str | None, message_id: str | None) -> str | None:
    """Discord link to a message, or ``None`` without ids."""
    if not channel_id or not message_id:
        return None
    return f"https://discord.com/channels/{guild_id}/{channel_id}/{message_id}"


def age(created: datetime | None, now: datetime | None = None) -> str:
    """``"3 days"``-style age of an account or membership."""
    if created is None:
        return "unknown"
    return words.duration(((now or datetime.now(UTC)) - created).total_seconds())


def score_lines(scores: Mapping[str, float | None], tiers: Mapping[str, tuple[float | None, float | None]],
                raid_mode: bool = False) -> str:
    """One line per label that mattered (:func:`bot.workflow.words.labels_that_mattered`): its score next to the
    tiers that applied, in words ("review from 0.78, act from 0.95"); no tier words when ``tiers`` is empty (not
    known: a card rebuilt from the mod log)."""
    lines = []
    ordered = {label: scores[label] for label in LABELS if label in scores}
    for label in words.labels_that_mattered(ordered, tiers):
        s = scores[label]
        rv, act = tiers.get(label, (None, None))
        mark = "\N{BLACK SMALL SQUARE} " if s is not None and rv is not None and s >= rv else ""
        applied = f" ({words.tier(rv, act)})" if tiers else ""
        lines.append(f"{mark}`{label}` **{s:.2f}**{applied}")
    if lines and raid_mode:
        lines.append("*raid mode's stricter tiers applied*")
    return "\n".join(lines) or "not scored"


def review_embed(card: ReviewCard) -> discord.Embed:
    """The review card (automod, report or appeal) as posted in the review channel."""
    if card.appeal_id is not None:
        return appeal_embed(card)
    colour = OPEN_COLOUR if card.decision is None else (
        DISMISSED_COLOUR if card.decision.startswith("dismissed") else DONE_COLOUR)
    embed = discord.Embed(title=f"Review #{card.review_id} ({card.source})", colour=colour,
                          timestamp=datetime.now(UTC))
    created = card.member_created_at or (discord.utils.snowflake_time(int(card.member_id))
                                         if card.member_id.isdigit() else None)
    name = f"{md(card.member_name)} " if card.member_name else ""
    embed.add_field(name="Member", value=f"{name}<@{card.member_id}> (`{card.member_id}`)\naccount {age(created)} "
                    f"old, joined {age(card.member_joined_at)} ago\nprior strikes: "
                    f"{words.strikes(card.strikes, card.points)}", inline=False)
    where = f"<#{card.channel_id}>" if card.channel_id else "-"
    link = jump_url(card.server_id, card.channel_id, card.message_id)
    if link:
        where += f" \N{EM DASH} [jump to message]({link})"
    embed.add_field(name="Channel", value=where, inline=False)
    embed.add_field(name="Text", value=f"*{words.text_erased(card.evidence.erased_after_days)}*" if card.evidence.erased
                    else spoiler(card.evidence.text), inline=False)
    ev = card.evidence
    if ev.scores:
        embed.add_field(name="Scores (threshold)", value=score_lines(ev.scores, ev.tiers, ev.raid_mode),
                        inline=False)
    if ev.score_status not in ("ok", ""):
        embed.add_field(name="Model", value=f"`{ev.score_status}`: the model's labels are not a full reading",
                        inline=False)
    # a rule's detail can quote the member (a regex match, an invite code, a link's host): shown as text
    fired = fit_escaped(", ".join(map(words.rule_hit, ev.rules)), FIELD_VALUE_MAX, md) if ev.rules else "none"
    embed.add_field(name="Rules fired", value=fired, inline=False)
    embed.add_field(name="Reason", value=fit_escaped(card.reason, FIELD_VALUE_MAX, md) if card.reason else "-",
                    inline=False)  # a report's reason is a member's words
    if card.reports:
        embed.add_field(name="Reports", value=report_lines(card.reports, FIELD_VALUE_MAX, md), inline=False)
    if card.case_number is not None:
        embed.add_field(name="Case", value=f"#{card.case_number}")
    if card.notes and card.decision is None:
        embed.add_field(name="Notes", value="\n".join(map(said, card.notes)), inline=False)
    _decision(embed, card)
    return fit(embed)


def appeal_embed(card: ReviewCard) -> discord.Embed:
    """The appeal card (buttons: Uphold / Overturn)."""
    embed = discord.Embed(title=f"Appeal #{card.appeal_id} of case #{card.case_number}",
                          colour=discord.Colour.blurple() if card.decision is None else DONE_COLOUR,
                          timestamp=datetime.now(UTC))
    embed.add_field(name="Member", value=f"<@{card.member_id}> (`{card.member_id}`)")
    action = card.case_action.label if card.case_action is not None else "?"
    head = f"#{card.case_number}: {action}\n"  # the case's reason may quote the member (a flagged name)
    embed.add_field(name="Case", value=head + fit_escaped(card.reason, FIELD_VALUE_MAX - len(head), md, empty=""),
                    inline=False)
    for i, part in enumerate(spoilers(card.evidence.text)):  # the whole appeal: the moderator decides on it
        embed.add_field(name="Appeal" if i == 0 else "Appeal (continued)", value=part, inline=False)
    _decision(embed, card)
    return fit(embed)


def _decision(embed: discord.Embed, card: ReviewCard) -> None:
    if card.decision is None:
        embed.set_footer(text="status: open")
        return
    when = discord.utils.format_dt(card.decided_at or datetime.now(UTC), "f")
    value = f"**{card.decision}** by <@{card.decided_by}> {when}"
    if card.notes:  # a note may quote a member's display name (its typed pieces escaped)
        value += "\n" + "\n".join(map(said, card.notes))
    embed.add_field(name="Decision", value=value, inline=False)
    embed.set_footer(text=f"status: {card.decision}")


def log_embed(entry: LogEntry) -> discord.Embed:
    """A mod-log entry; member and moderator ids become mentions."""
    colours = {"raid": discord.Colour.dark_red(), "policy": discord.Colour.blue(), "review": discord.Colour.blue(),
               "appeal": discord.Colour.blue(), "problem": FAILED_COLOUR}
    colour = FAILED_COLOUR if entry.failed else colours.get(entry.kind, discord.Colour.orange())
    embed = discord.Embed(title=entry.title, colour=colour, timestamp=datetime.now(UTC))
    lines = []
    for line in entry.lines:
        head, _, rest = line.partition(": ")
        if head in ("Member", "Moderator") and rest.isdigit():
            line = f"{head}: <@{rest}> ({rest})"
        elif head == "Channel" and rest.isdigit():
            line = f"{head}: <#{rest}>"
        lines.append(said(line))
    embed.description = "\n".join(lines)
    return fit(embed)


def _mentions(members: Sequence[str], limit: int = FIELD_VALUE_MAX) -> str:
    """``members`` as mentions, space-separated, as many whole ones as fit in ``limit`` characters (a field value's
    room) with ``"+N more"`` for the rest: about 40 snowflake mentions fit, and :func:`fit`'s cut would leave half
    a mention (``<@1234``) at the end. ``"-"`` for none."""
    shown: list[str] = []
    used = 0
    for i, m in enumerate(members):
        mention = f"<@{m}>"
        more = f" +{len(members) - i - 1} more" if i < len(members) - 1 else ""
        if used + len(mention) + 1 + len(more) > limit:
            return " ".join(shown) + f" +{len(members) - i} more"
        shown.append(mention)
        used += len(mention) + 1
    return " ".join(shown) or "-"


def raid_embed(card: RaidCard) -> discord.Embed:
    """The single card of a raid: who, how many messages, what was done, until when."""
    title = f"Raid #{card.raid_id}: " + {"join_burst": "join burst", "flagged_burst": "flagged messages",
                                           "new_member_burst": "new members"}.get(card.reason, card.reason)
    if card.closed:
        title += " (ended)"
    embed = discord.Embed(title=title, colour=DISMISSED_COLOUR if card.closed else discord.Colour.dark_red(),
                          timestamp=datetime.now(UTC))
    where = f"<#{card.channel_id}>" if card.channel_id else "the whole server"
    embed.description = (f"{len(card.members)} member(s), {card.messages} flagged message(s) in {where} since "
                         f"{discord.utils.format_dt(card.started_at, 'T')}; {card.deleted} deleted in bulk.")
    embed.add_field(name="Members", value=_mentions(card.members), inline=False)
    if card.raid_mode_until and not card.closed:
        embed.add_field(name="Raid mode", value=f"until {discord.utils.format_dt(card.raid_mode_until, 'T')}")
    if card.slowmode_s:
        embed.add_field(name="Slowmode", value=words.duration(card.slowmode_s))
    if card.invites_paused:
        embed.add_field(name="Invites", value="paused")
    if card.notes:
        embed.add_field(name="Done", value="\n".join(map(said, card.notes[-8:])), inline=False)
    return fit(embed)
