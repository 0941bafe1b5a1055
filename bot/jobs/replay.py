"""What a policy change does to recorded messages: the diff between two verdict sets, for ``scan``'s replay.

Layer: composition root helpers (no I/O but the console). ``scan`` of messages already recorded under another
policy version re-judges them (:mod:`bot.jobs.scan`) and :func:`compute_diff` compares the recorded verdict of each
message (``before``, a :class:`bot.core.records.SetVerdict`) with the new one (``after``, a
:class:`bot.core.models.Verdict`). The result is a plain ``dict`` (JSON-ready) that the terminal
(:func:`print_diff`) and the HTML report (``doc["diff"]``, :func:`bot.report.build_report_data`) show.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from bot.core.models import LABELS, ChannelRef, Message, Verdict
from bot.core.records import SetVerdict
from bot.eval.common import plain

#: Change kinds, strongest first: a message gets the first that applies.
NEWLY_FLAGGED = "newly flagged"
NO_LONGER_FLAGGED = "no longer flagged"
ACTION_CHANGED = "action changed"
LABELS_CHANGED = "labels changed"
CHANGES = (NEWLY_FLAGGED, NO_LONGER_FLAGGED, ACTION_CHANGED, LABELS_CHANGED)
#: Changed messages printed in the terminal (the report lists them all).
PRINTED = 20


def change_of(before: SetVerdict, after: Verdict) -> str | None:
    """The kind of change from ``before`` to ``after`` (one of :data:`CHANGES`), or ``None`` when the flag, the
    strongest action and the labels are all the same."""
    if after.flagged and not before.flagged:
        return NEWLY_FLAGGED
    if before.flagged and not after.flagged:
        return NO_LONGER_FLAGGED
    if before.action != after.action.label:
        return ACTION_CHANGED
    if set(before.labels) != set(after.labels):
        return LABELS_CHANGED
    return None


def _side(flagged: bool, action: str, labels: Sequence[str], rules: Sequence[str], version: str) -> dict[str, Any]:
    return {"flagged": flagged, "action": action, "labels": list(labels), "rules": list(rules),
            "policy_version": version}


def _table_channel(channel: ChannelRef) -> str:
    """The row of the per-channel table ``channel``'s messages count in: its own id, except a Slack thread reply's
    virtual channel (``"<channel id>:<thread ts>"``, :mod:`bot.adapters.slack.translate`,
    :mod:`bot.ingest.slack_export`), which counts in its channel: it carries that channel's name, so a row of its
    own would show the channel twice. A Discord thread is a channel with its own name and keeps its own row."""
    parent = channel.parent_id
    if channel.is_thread and parent and channel.id.startswith(f"{parent}:"):
        return parent
    return channel.id


def compute_diff(messages: Iterable[Message], before: Mapping[tuple[str, str, str], SetVerdict],
                 after: Mapping[tuple[str, str, str], Verdict]) -> dict[str, Any]:
    """Compare two verdict sets of the same messages.

    Args:
        messages: The scanned messages (their names, channels and texts label the diff), in time order.
        before: The recorded verdicts by message key (messages without one count as ``first_time``).
        after: The new verdicts by message key (messages without one are skipped).

    Returns:
        ``{"before_versions": [str], "after_versions": [str], "compared": int, "first_time": int,
        "unchanged": int, "counts": {change kind: int}, "flagged_before": int, "flagged_after": int,
        "actions_before": {action: int}, "actions_after": {action: int},
        "per_label": {label: {"gained": int, "lost": int}}, "per_channel": [row], "per_member": [row],
        "messages": [{"key", "id", "time", "member_id", "member", "channel_id", "channel", "platform",
        "server_id", "text", "change", "before": {...}, "after": {...}}]}``; a row of ``per_channel`` /
        ``per_member`` is ``{"id", "name", change kind: int...}``, most changes first. ``gained`` counts messages
        flagged after with a label they did not carry before; ``lost`` the reverse.
    """
    counts: Counter[str] = Counter()
    gained: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    per_channel: dict[str, Counter[str]] = {}
    per_member: dict[str, Counter[str]] = {}
    channel_names: dict[str, str] = {}
    member_names: dict[str, str] = {}
    actions_before: Counter[str] = Counter()
    actions_after: Counter[str] = Counter()
    versions_before: Counter[str] = Counter()
    versions_after: Counter[str] = Counter()
    changed: list[dict[str, Any]] = []
    compared = first_time = flagged_before = flagged_after = 0
    seen: set[tuple[str, str, str]] = set()
    for m in messages:
        if m.key in seen or m.key not in after:
            continue
        seen.add(m.key)
        a = after[m.key]
        b = before.get(m.key)
        if b is None:
            first_time += 1
            continue
        compared += 1
        versions_before[b.policy_version] += 1
        versions_after[a.policy_version] += 1
        flagged_before += b.flagged
        flagged_after += a.flagged
        actions_before[b.action] += 1
        actions_after[a.action.label] += 1
        kind = change_of(b, a)
        if kind is None:
            continue
        counts[kind] += 1
        was = set(b.labels) if b.flagged else set()
        now = set(a.labels) if a.flagged else set()
        gained.update(now - was)
        lost.update(was - now)
        where = _table_channel(m.channel)
        channel_names[where] = m.channel.name or where
        member_names[m.author.id] = m.author.name or m.author.id
        per_channel.setdefault(where, Counter())[kind] += 1
        per_member.setdefault(m.author.id, Counter())[kind] += 1
        changed.append({
            "key": list(m.key), "id": m.id, "time": m.created_at.isoformat() if m.created_at else None, "member_id": m.author.id,
            "member": m.author.name or m.author.id, "channel_id": m.channel.id,
            "channel": m.channel.name or m.channel.id, "platform": m.server.platform, "server_id": m.server.id,
            "text": m.text, "change": kind,
            "before": _side(b.flagged, b.action, b.labels, b.rules, b.policy_version),
            "after": _side(a.flagged, a.action.label, a.labels, [h.rule for h in a.rule_hits], a.policy_version),
        })

    def rows(per: dict[str, Counter[str]], names: dict[str, str]) -> list[dict[str, Any]]:
        out = [{"id": k, "name": names.get(k, k), **{c: v.get(c, 0) for c in CHANGES}} for k, v in per.items()]
        return sorted(out, key=lambda r: (-sum(r[c] for c in CHANGES), r["name"]))

    return {
        "before_versions": [v for v, _ in versions_before.most_common()],
        "after_versions": [v for v, _ in versions_after.most_common()],
        "compared": compared, "first_time": first_time, "unchanged": compared - sum(counts.values()),
        "counts": {c: counts.get(c, 0) for c in CHANGES},
        "flagged_before": flagged_before, "flagged_after": flagged_after,
        "actions_before": dict(sorted(actions_before.items())), "actions_after": dict(sorted(actions_after.items())),
        "per_label": {lb: {"gained": gained.get(lb, 0), "lost": lost.get(lb, 0)}
                      for lb in (*LABELS, *sorted(set(gained) | set(lost) - set(LABELS)))
                      if gained.get(lb) or lost.get(lb)},
        "per_channel": rows(per_channel, channel_names),
        "per_member": rows(per_member, member_names),
        "messages": changed,
    }


def print_diff(console: Console, diff: Mapping[str, Any]) -> None:
    """Print the diff: totals, per label, channel and member, then the first :data:`PRINTED` changed messages."""
    before = ", ".join(diff["before_versions"]) or "-"
    after = ", ".join(diff["after_versions"]) or "-"
    c = diff["counts"]
    console.print(f"\n[bold]policy change[/bold] {before} -> {after}: {diff['compared']:,} recorded messages "
                  f"re-judged; flagged {diff['flagged_before']:,} -> {diff['flagged_after']:,}; "
                  f"{c[NEWLY_FLAGGED]:,} newly flagged, {c[NO_LONGER_FLAGGED]:,} no longer flagged, "
                  f"{c[ACTION_CHANGED]:,} with another action, {c[LABELS_CHANGED]:,} with other labels"
                  + (f"; {diff['first_time']:,} judged for the first time" if diff["first_time"] else ""),
                  highlight=False)
    if not any(c.values()):
        console.print("no verdict changes")
        return
    acts = sorted(set(diff["actions_before"]) | set(diff["actions_after"]))
    t = Table(title="actions (recorded -> now)")
    t.add_column("action")
    t.add_column("recorded", justify="right")
    t.add_column("now", justify="right")
    for a in acts:
        t.add_row(a, f"{diff['actions_before'].get(a, 0):,}", f"{diff['actions_after'].get(a, 0):,}")
    console.print(t)
    if diff["per_label"]:
        t = Table(title="per label (flagged messages)")
        t.add_column("label")
        t.add_column("gained", justify="right")
        t.add_column("lost", justify="right")
        for label, v in diff["per_label"].items():
            t.add_row(label, f"{v['gained']:,}", f"{v['lost']:,}")
        console.print(t)
    for title, key in (("per channel", "per_channel"), ("per member", "per_member")):
        t = Table(title=f"{title} (top 10)")
        t.add_column(title.split()[1])
        for kind in CHANGES:
            t.add_column(kind, justify="right")
        for r in diff[key][:10]:
            # names, ids and texts are the members' words: as written, never markup or escape sequences
            t.add_row(plain(f"{r['name']} ({r['id']})" if r["name"] != r["id"] else r["id"]),
                      *(f"{r[k]:,}" for k in CHANGES))
        console.print(t)
    t = Table(title=f"changed messages (first {min(PRINTED, len(diff['messages']))} of {len(diff['messages']):,})")
    for col in ("change", "member", "channel", "text", "recorded", "now"):
        t.add_column(col)
    for r in diff["messages"][:PRINTED]:
        text = r["text"] if len(r["text"]) <= 80 else r["text"][:79] + "…"
        t.add_row(r["change"], plain(r["member"]), plain(r["channel"]), plain(text), _describe(r["before"]),
                  _describe(r["after"]))
    console.print(t)


def _describe(side: Mapping[str, Any]) -> str:
    if not side["flagged"]:
        return "not flagged"
    return side["action"] + (f" ({', '.join(side['labels'] or side['rules'])})" if side["labels"] or side["rules"]
                             else "")
