"""Render the workflow's views as Slack Block Kit, within Block Kit's limits.

Layer: ``bot.adapters.slack``. Pure functions of ``bot.workflow.views`` values to ``(fallback text, blocks)``.

Block Kit limits (Slack's reference, "Blocks" and element pages): 50 blocks per message, section text 3,000
characters, header 150, 10 section fields of 2,000, 10 context elements, 25 elements per actions block, button text
75, ``action_id`` 255, button ``value`` 2,000; modal titles 24. Action ids are namespaced like Discord's custom
ids: ``mod:review:<review id>:<decision>``, ``mod:appeal:<team>:<case>``, ``mod:appealdecide:<appeal id>:<uphold|
overturn>``, ``mod:raid:<team>:<raid id>:<action>``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.core.models import LABELS, ActionKind
from bot.workflow import words
from bot.workflow.authz import Refused, Sentence
from bot.workflow.confirm import Confirmation
from bot.workflow.fit import fit_escaped, fit_texts, report_lines
from bot.workflow.ports import Capability, MemberNotice
from bot.workflow.sanction_kinds import REGISTRY, SanctionKind, Style
from bot.workflow.views import LogEntry, RaidCard, ReviewCard

SECTION_MAX = 3000
HEADER_MAX = 150
BUTTON_TEXT_MAX = 75
BLOCKS_MAX = 50
TEXT_MAX = 4000
#: Characters of a case's or flag's reason on a card, escaped (a moderator's reason holds up to 1,000 characters,
#: which ``&`` or ``<`` make up to 5,000 once escaped).
REASON_SHOWN_MAX = 1400
#: Characters of a quoted member's text on a card (escaped, with its ``>`` marks), inside a section's 3,000.
TEXT_QUOTE_MAX = 2600

#: What a Slack app can always do (the enforcer adds ``DELETE`` with an admin token): no kick from the workspace,
#: no ban or timeout; removing from a channel stands in for a kick.
SLACK_CAN: frozenset[Capability] = frozenset({Capability.DM, Capability.REMOVE_FROM_CHANNEL, Capability.EPHEMERAL})
#: The registry's neutral button looks as Slack's (Slack has ``primary`` and ``danger`` only).
STYLES: dict[Style, str | None] = {Style.PRIMARY: "primary", Style.DANGER: "danger", Style.SECONDARY: None,
                                   Style.SUCCESS: None}
#: Raid card buttons that are no sanction: action -> label. The bulk sanctions come from the registry.
RAID_EXTRAS: dict[str, str] = {"pause_invites": "Pause invites (24 h)", "end": "End raid mode"}


def _label(kind: SanctionKind, raid: bool = False) -> str:
    """A registry kind's button label on Slack: its channel stand-in's where Slack has only that ("Remove from
    channel" for a kick)."""
    if REGISTRY.by_channel(kind, SLACK_CAN):
        return (kind.raid_channel_label if raid else kind.channel_label) or (kind.raid_label if raid else kind.label)
    return kind.raid_label if raid else kind.label


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def escape(text: str) -> str:
    """Escape Slack's mrkdwn control characters (``&``, ``<``, ``>``) so a member's text cannot ping or link."""
    return (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_json(text: str) -> str:
    """JSON ``text`` for inside a mrkdwn ``` block: a backtick as ``\\u0060`` (the same JSON value; backticks occur
    only inside JSON strings, and a typed ``` there would close the block, so the rest rendered as mrkdwn), then
    :func:`escape`: Slack's formatting reference asks for ``&``, ``<`` and ``>`` escaped in all message text and
    does not promise that a code block stops ``<!channel>``, a mention or a link, so they are escaped there too;
    Slack shows the entities as the characters, so what the member sees and copies is the JSON."""
    return escape(text.replace("`", "\\u0060"))


def refusal(exc: Refused) -> str:
    """A refusal's sentence as mrkdwn: what the person typed (its :class:`~bot.workflow.authz.Said` pieces)
    through :func:`escape`, the workflow's own mentions (``<@U1>``, ``<#C1>``) kept."""
    return exc.render(escape)


def said(text: str) -> str:
    """A workflow answer as mrkdwn: a :class:`~bot.workflow.authz.Sentence` with its typed pieces through
    :func:`escape` and its own mentions kept; plain text as written (the workflow's own words)."""
    return text.render(escape) if isinstance(text, Sentence) else text


def as_line(text: str) -> str:
    """A note or mod-log line as mrkdwn: a :class:`~bot.workflow.authz.Sentence` with its typed pieces through
    :func:`escape` and its own mentions kept; plain text escaped whole (it may quote a member or the platform)."""
    return text.render(escape) if isinstance(text, Sentence) else escape(text)


def unescape(text: str) -> str:
    """Undo the escaping Slack applies to the text it sends (a slash command's text, a message): ``&lt;``,
    ``&gt;`` and ``&amp;`` back to ``<``, ``>``, ``&`` (nothing else is an entity to Slack)."""
    return (text or "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _quoted(text: str) -> str:
    return escape(text).replace("\n", "\n>")


def quote(label: str, text: str, limit: int = SECTION_MAX) -> str:
    """``*label:*`` and a member's ``text`` as a mrkdwn block quote (each line opens with ``>``), escaped, in at
    most ``limit`` characters: a long text is cut with "…" between its characters, never inside an entity
    (``&amp;``)."""
    head = f"*{label}:*\n>"
    return head + fit_escaped(text, limit - len(head), _quoted, empty="")


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": cut(text, SECTION_MAX) or " "}}


def header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": cut(text, HEADER_MAX)}}


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": cut(text, SECTION_MAX)}]}


def button(text: str, action_id: str, style: str | None = None, value: str = "") -> dict[str, Any]:
    b: dict[str, Any] = {"type": "button", "text": {"type": "plain_text", "text": cut(text, BUTTON_TEXT_MAX)},
                         "action_id": action_id[:255], "value": (value or action_id)[:2000]}
    if style:
        b["style"] = style
    return b


def _age(dt: datetime | None) -> str:
    if dt is None:
        return "unknown"
    return words.duration((datetime.now(UTC) - dt).total_seconds())


def _channel(ref: str | None) -> str:
    if not ref:
        return "-"
    channel, _, thread = ref.partition(":")
    return f"<#{channel}>" + (" (thread)" if thread else "")


def review(card: ReviewCard) -> tuple[str, list[dict[str, Any]]]:
    """A review card (automod, report or appeal) with its buttons, or stamped with its decision."""
    if card.appeal_id is not None:
        return appeal(card)
    title = f"Review #{card.review_id} ({card.source})"
    ev = card.evidence
    out = [header(title),
           section(f"*Member:* <@{card.member_id}> (`{card.member_id}`), first seen {_age(card.member_joined_at)} "
                   f"ago, prior strikes: {words.strikes(card.strikes, card.points)}\n*Channel:* {_channel(card.channel_id)}"),
           section(quote("Text", ev.text, TEXT_QUOTE_MAX) if ev.text
                   else f"*Text:* _{words.text_erased(ev.erased_after_days)}_" if ev.erased else "*Text:* _(none)_")]
    if card.member_home_server:
        out.append(context(external_member(card.member_home_server)))
    if ev.scores:
        lines = []
        ordered = {label: ev.scores[label] for label in LABELS if label in ev.scores}
        for label in words.labels_that_mattered(ordered, ev.tiers):
            s = ev.scores[label]
            rv, act = ev.tiers.get(label, (None, None))
            mark = ":small_red_triangle: " if s is not None and rv is not None and s >= rv else ""
            applied = f" ({words.tier(rv, act)})" if ev.tiers else ""  # empty: not recorded, so not claimed
            lines.append(f"{mark}`{label}` *{s:.2f}*{applied}")
        if ev.raid_mode:
            lines.append("_raid mode's stricter tiers applied_")
        out.append(section("*Scores (tier applied):*\n" + "\n".join(lines)))
    if ev.score_status not in ("ok", ""):
        out.append(context(f"model: `{ev.score_status}`: the model's labels are not a full reading"))
    fired = fit_escaped(", ".join(map(words.rule_hit, ev.rules)), REASON_SHOWN_MAX, escape) if ev.rules else "none"
    why = fit_escaped(card.reason, REASON_SHOWN_MAX, escape) if card.reason else "-"
    out.append(section(f"*Rules fired:* {fired}\n*Reason:* {why}"
                       + (f"\n*Case:* #{card.case_number}" if card.case_number is not None else "")))
    if card.reports:
        out.append(section("*Reports:*\n" + report_lines(card.reports, SECTION_MAX - 20, escape)))
    if card.notes and card.decision is None:
        out.append(context("Notes: " + "; ".join(as_line(n) for n in card.notes)))
    if card.decision is None or not card.final:
        buttons = [button(_label(k), f"mod:review:{card.review_id}:{k.key}", STYLES[k.style])
                   for k in REGISTRY if k.on_card and k.key not in card.capabilities_missing]
        out.append({"type": "actions", "block_id": f"review-{card.review_id}", "elements": buttons})
    if card.decision is not None:
        out.append(section(f"*Decision:* *{card.decision}* by <@{card.decided_by}>"
                           + ("\n" + "\n".join(as_line(n) for n in card.notes) if card.notes else "")))
    # the message text is Slack's notification text, parsed for mentions: a reported member's words must not ping
    return fit_escaped(f"{title}: {card.reason}", TEXT_MAX, escape), out[:BLOCKS_MAX]


def external_member(home: str) -> str:
    """What a card says about a member of another workspace (Slack Connect, ``home``: their workspace's id):
    what Slack lets this workspace do for them, and what it does not."""
    return (f":globe_with_meridians: *Member of another workspace* (Slack Connect, `{escape(home)}`): their account "
            "is managed by their own workspace. From here: delete their messages, warn them (a DM, which their "
            "organisation's settings may refuse; the case then says so) and remove them from this channel. "
            "*Not possible here:* deactivating their account or removing them from their workspace; to keep them "
            "out of every shared channel, ask their workspace's admins or stop sharing the channel.")


def appeal(card: ReviewCard) -> tuple[str, list[dict[str, Any]]]:
    """An appeal card (Uphold / Overturn)."""
    action = card.case_action.label if card.case_action is not None else "?"
    title = f"Appeal #{card.appeal_id} of case #{card.case_number}"
    out = [header(title),
           section(f"*Member:* <@{card.member_id}>\n*Case:* #{card.case_number}: {action}\n"
                   + (fit_escaped(card.reason, REASON_SHOWN_MAX, escape) if card.reason else "")),
           section(quote("Appeal", card.evidence.text, TEXT_QUOTE_MAX))]
    if card.decision is None:
        out.append({"type": "actions", "block_id": f"appeal-{card.appeal_id}", "elements": [
            button("Uphold", f"mod:appealdecide:{card.appeal_id}:uphold"),
            button("Overturn", f"mod:appealdecide:{card.appeal_id}:overturn", "primary")]})
    else:
        out.append(section(f"*Decision:* *{card.decision}* by <@{card.decided_by}>"
                           + ("\n" + "\n".join(as_line(n) for n in card.notes) if card.notes else "")))
    return title, out


def log_entry(entry: LogEntry) -> tuple[str, list[dict[str, Any]]]:
    """A mod-log post; member and moderator ids become mentions. Every line is kept within the section's 3,000
    characters: the text lines (escaped) share the room the title and the mention lines leave, the longest
    shortened first, between entities."""
    fixed: dict[int, str] = {}
    for i, line in enumerate(entry.lines):
        head, _, rest = line.partition(": ")
        if head in ("Member", "Moderator") and rest[:1] in ("U", "W") and rest.isalnum():
            fixed[i] = f"{head}: <@{rest}>"
        elif head == "Channel" and rest[:1] in ("C", "G"):
            fixed[i] = f"{head}: {_channel(rest)}"
    icon = ":red_circle: " if entry.failed else ""
    title = f"{icon}*{fit_escaped(entry.title, HEADER_MAX, escape)}*"
    texts = [line for i, line in enumerate(entry.lines) if i not in fixed]
    room = SECTION_MAX - len(title) - sum(map(len, fixed.values())) - len(entry.lines)  # a newline before each
    shown = iter(fit_texts(texts, max(room, len(texts)), as_line, empty=""))
    lines = [fixed[i] if i in fixed else next(shown) for i in range(len(entry.lines))]
    return fit_escaped(entry.title, TEXT_MAX, escape), [section("\n".join([title, *lines]))]


def raid(card: RaidCard) -> tuple[str, list[dict[str, Any]]]:
    """The single raid card with its bulk actions (only those Slack supports, e.g. remove from channel)."""
    kinds = {"join_burst": "join burst", "flagged_burst": "flagged messages", "new_member_burst": "new members"}
    title = f"Raid #{card.raid_id}: {kinds.get(card.reason, card.reason)}" + (" (ended)" if card.closed else "")
    out = [header(title),
           section(f"{len(card.members)} member(s), {card.messages} flagged message(s) in {_channel(card.channel_id)};"
                   f" {card.deleted} deleted.\n*Members:* " + " ".join(f"<@{m}>" for m in card.members[:60])
                   + (f" +{len(card.members) - 60} more" if len(card.members) > 60 else ""))]
    if card.notes:  # the last 8, sharing the context's room, each cut between entities and mentions
        notes = card.notes[-8:]
        out.append(context("; ".join(fit_texts(notes, SECTION_MAX - 2 * len(notes), as_line, empty=""))))
    labels = {**{k.key: _label(k, raid=True) for k in REGISTRY.raid_kinds()}, **RAID_EXTRAS}
    if not card.closed:
        out.append({"type": "actions", "block_id": f"raid-{card.raid_id}", "elements": [
            button(labels[a], f"mod:raid:{card.server_id}:{card.raid_id}:{a}", "danger" if a != "end" else None)
            for a in card.actions_offered if a in labels]})
    return title, out


def notice(n: MemberNotice) -> tuple[str, list[dict[str, Any]]]:
    """The DM a member gets about a case, with an Appeal button, about how their appeal of it was decided, or
    correcting its notice (the reason says what did not happen)."""
    what = {ActionKind.WARN: "You were warned", ActionKind.KICK: "You were removed from a channel"}.get(
        n.action, f"Moderation action: {n.action.label}")
    if n.appeal:  # how the member's appeal was decided (the reason says it)
        what = f"Your appeal was {'accepted' if n.appeal == 'overturned' else 'declined'}"
    elif n.correction:
        what = "Correction"
    text = f"{what} in {n.server_name or 'this workspace'} (case #{n.case_number}): {n.reason or 'no reason given'}"
    out = [section(fit_escaped(text, SECTION_MAX, escape))]
    if n.appealable:
        out.append({"type": "actions", "block_id": f"notice-{n.case_number}", "elements": [
            button("Appeal", f"mod:appeal:{n.server_id}:{n.case_number}")]})
    return fit_escaped(text, TEXT_MAX, escape), out


def text_modal(callback_id: str, title: str, label: str, metadata: str, *, min_length: int = 3,
               max_length: int = 1000) -> dict[str, Any]:
    """A modal with one multi-line text input (report reason, appeal text); ``metadata`` (at most 3,000
    characters, Slack's limit: callers keep it within) travels back on submit."""
    return {"type": "modal", "callback_id": callback_id, "title": {"type": "plain_text", "text": cut(title, 24)},
            "submit": {"type": "plain_text", "text": "Send"}, "private_metadata": metadata,
            "blocks": [{"type": "input", "block_id": "text", "label": {"type": "plain_text", "text": label},
                        "element": {"type": "plain_text_input", "action_id": "value", "multiline": True,
                                    "min_length": min_length, "max_length": max_length}}]}


#: Slack's limits for a modal: title, submit and close 24 characters; ``plain_text_input`` up to 3,000 characters,
#: its placeholder 150.
MODAL_TITLE_MAX = 24
INPUT_MAX = 3000
PLACEHOLDER_MAX = 150


def reason_modal(callback_id: str, asked: Confirmation, metadata: str) -> dict[str, Any]:
    """The reason modal of a decision that asks first (:class:`bot.workflow.confirm.Confirmation`): its title
    (cut to Slack's 24 characters, whole in the first block), one required multi-line input prefilled with the
    workflow's reason (block ``reason``, action ``value``). ``metadata``: at most 3,000 characters (callers keep
    it small)."""
    title = asked.title if len(asked.title) <= MODAL_TITLE_MAX else f"Confirm: {asked.submit}"
    element: dict[str, Any] = {"type": "plain_text_input", "action_id": "value", "multiline": True,
                               "min_length": asked.min_length, "max_length": min(asked.max_length, INPUT_MAX),
                               "placeholder": {"type": "plain_text", "text": cut(asked.placeholder, PLACEHOLDER_MAX)}}
    if asked.default:
        element["initial_value"] = asked.default
    return {"type": "modal", "callback_id": callback_id,
            "title": {"type": "plain_text", "text": cut(title, MODAL_TITLE_MAX)},
            "submit": {"type": "plain_text", "text": cut(asked.submit, MODAL_TITLE_MAX)},
            "close": {"type": "plain_text", "text": "Cancel"}, "private_metadata": metadata,
            "blocks": [section(f"*{escape(asked.title)}*"),
                       {"type": "input", "block_id": "reason", "label": {"type": "plain_text", "text": asked.label},
                        "element": element}]}
