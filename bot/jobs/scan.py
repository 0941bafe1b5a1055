"""The offline ``scan`` job: judge chat exports with the live pipeline and record every verdict.

Layer: composition root. Messages are replayed in timestamp order so spam and raid rules see real timing. A re-run
skips what is already recorded (the store's message keys), so a killed scan resumes where it stopped; the recorded
messages are replayed into the spam and raid windows (:class:`bot.core.service.ModerationService`), so a raid that
spans the restart is still one burst.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from bot.core.models import LABELS, Message
from bot.core.ports import Scorer
from bot.core.service import ModerationService, Outcome
from bot.settings import Settings

log = logging.getLogger(__name__)


async def run_scan(args: argparse.Namespace, settings: Settings, *, scorer: Scorer | None = None) -> int:
    """Run ``scan``; see ``python -m bot scan --help``. Returns the exit code. ``scorer``: an already loaded
    scorer (default: the model ``settings`` names, loaded after the input is read).

    Every input is validated before the model loads: a missing path, an invalid policy or input with no messages
    at all exits 2 with a one-line error. Input without authors or times (JSON lines that lack ``author`` or
    ``created_at``) is judged with the rate-based rules (flood, duplicates, raids, strikes and the escalation ladder)
    off, with one warning: on such input they would only see one "unknown" member posting everything at once.
    """
    from bot.ingest import IngestError, read_messages
    from bot.ingest.jsonl import lacks_author_or_time
    from bot.runtime import build_policies, open_runtime

    console = Console(stderr=True, soft_wrap=True)  # one message, one line (paths are long)
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        console.print(f"[red]error:[/red] no such file or folder: {', '.join(str(p) for p in missing)}",
                      highlight=False)
        return 2
    build_policies(settings, extra_policy_files=tuple(args.policy), server_files=False)  # PolicyError before reading
    errors: list[IngestError] = []
    t0 = time.perf_counter()
    try:
        messages = read_messages(list(args.paths), fmt=args.format, on_error=args.on_error, errors=errors)
    except IngestError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False)
        return 2
    for err in errors:
        console.print(f"[yellow]skipped:[/yellow] {err}", highlight=False)
    if not messages:
        why = "no message could be read" if errors else "no messages found"
        console.print(f"[red]error:[/red] {why} in {', '.join(str(p) for p in args.paths)}", highlight=False)
        return 2
    console.print(f"read {len(messages):,} messages from {len(args.paths)} path(s) in {time.perf_counter() - t0:.1f} s")
    incomplete = sum(1 for m in messages if lacks_author_or_time(m))
    if incomplete:
        console.print(f"[yellow]warning:[/yellow] {incomplete:,} of {len(messages):,} messages have no author or no "
                      "time (JSON lines without \"author\" or \"created_at\"): the rate-based rules (flood, "
                      "duplicates, raids, strikes and the escalation ladder) are off for this scan", highlight=False)
    async with open_runtime(settings, enforce=False, stateful_rules=not incomplete,
                            extra_policy_files=tuple(args.policy), server_files=False, overrides=False,
                            batch_size=args.batch_size, scorer=scorer) as rt:
        store, scorer, service = rt.store, rt.scorer, rt.service
        t1 = time.perf_counter()
        outcomes = await _replay(service, messages, show_progress=not args.no_progress, console=console)
        elapsed = time.perf_counter() - t1
        rows = await _rows(store, outcomes)
        if args.out:
            _write_jsonl(args.out, rows)
        servers = sorted({(m.server.platform, m.server.id) for m in messages})
        summary = await _summary(store, servers)
        new = sum(1 for o in outcomes if not o.duplicate)
        names = {m.author.id: m.author.name for m in messages if m.author.name}
        _print_summary(console, summary, len(messages), new, elapsed, names)
        if args.report:
            from bot.report import policy_provenance, write_html_report

            # every alert recorded for these servers (as the summary counts them), not only this run's: a re-run
            # or a resumed scan replays recorded messages without re-raising their alerts
            raids = [r for platform, server in servers for r in await store.list_raids(platform, server)]
            doc = {
                "title": "Moderation scan: " + ", ".join(str(p) for p in args.paths),
                "messages": summary.messages,
                "flagged": summary.flagged,
                "label_counts": dict(summary.flagged_per_label),
                "action_counts": dict(summary.actions),
                "raids": raids,
                "top_members": [(m, pts) for m, pts, _n in summary.top_members],
                "inputs": ", ".join(str(p) for p in args.paths),
                "model": f"{scorer.name} {scorer.version}",
                "policy_version": rt.policies.base.version,
                "policies": await policy_provenance(rt.policies, servers),
                "errors": len(errors) or None,
            }
            write_html_report(args.report, doc, rows)
            console.print(f"report written to {args.report}")
        if args.out:
            console.print(f"verdicts written to {args.out}")
    return 1 if errors and args.on_error == "stop" else 0


async def _replay(service: ModerationService, messages: list[Message], *, show_progress: bool,
                  console: Console) -> list[Outcome]:
    """Feed messages in order with a bounded number in flight; return outcomes in input order."""
    await service.start()
    futures: list[asyncio.Future[Outcome]] = []
    window = asyncio.Semaphore(4 * service.batch_size)
    progress = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                        TimeRemainingColumn(), console=console, disable=not show_progress, transient=False)
    started = time.perf_counter()
    with progress:
        task = progress.add_task("scan", total=len(messages), rate="")

        def done(_fut: asyncio.Future[Outcome]) -> None:
            window.release()
            progress.advance(task)
            n = progress.tasks[0].completed
            progress.update(task, rate=f"{n / max(time.perf_counter() - started, 1e-6):,.0f} msg/s")

        for m in messages:
            await window.acquire()
            fut = service.submit(m)
            fut.add_done_callback(done)
            futures.append(fut)
        await service.close()
    return [f.result() for f in futures]


async def _rows(store: Any, outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """One ``scan --out`` row per message (plus the report's fields, :func:`bot.report.message_fields`);
    duplicates (already recorded) come from the stored verdict."""
    from bot.report import message_fields, verdict_fields

    rows: list[dict[str, Any]] = []
    for o in outcomes:
        m = o.verdict.message
        if o.duplicate:
            sv = await store.get_verdict(m.server.platform, m.server.id, m.id)
            if sv is None:
                continue
            row = {
                "id": m.id, "channel": m.channel.name or m.channel.id, "author": m.author.name or m.author.id,
                "scores": {lb: sv.scores.get(lb) for lb in LABELS},
                "rule_hits": [{"rule": h.get("rule"), "detail": h.get("detail"), "label": h.get("label")}
                              for h in sv.rule_hits],
                "flagged": sv.flagged, "labels": list(sv.labels), "action": sv.action.label,
                "policy_version": sv.policy_version, "shadow": sv.shadow,
            }
        else:
            row = {**o.verdict.to_json(), **verdict_fields(o.verdict)}
            if o.case_number is not None:
                row["case"] = o.case_number
        row.update(message_fields(m))  # names and ids, platform, server, time, text, link
        rows.append(row)
    return rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            out = {k: r[k] for k in ("id", "channel", "author", "scores", "rule_hits", "flagged", "labels", "action")}
            fh.write(json.dumps(out, ensure_ascii=False) + "\n")


async def _summary(store: Any, servers: list[tuple[str, str]]) -> Any:
    return await store.scan_summary(servers)


def _print_summary(console: Console, summary: Any, total: int, new: int, elapsed: float,
                   names: dict[str, str] | None = None) -> None:
    rate = new / elapsed if elapsed > 0 else 0.0
    console.print(f"\n[bold]scan finished[/bold]: {total:,} messages in input, {new:,} judged now "
                  f"({total - new:,} already recorded) in {elapsed:.1f} s = {rate:,.0f} msg/s")
    t = Table(title="summary (all recorded verdicts of these servers)")
    t.add_column("what")
    t.add_column("count", justify="right")
    t.add_row("messages", f"{summary.messages:,}")
    pct = 100 * summary.flagged / summary.messages if summary.messages else 0.0
    t.add_row("flagged", f"{summary.flagged:,} ({pct:.2f}%)")
    for label in LABELS:
        t.add_row(f"  flagged {label}", f"{summary.flagged_per_label.get(label, 0):,}")
    for action, n in sorted(Counter(summary.actions).items()):
        t.add_row(f"  action {action}", f"{n:,}")
    t.add_row("raids", f"{summary.raids:,}")
    console.print(t)
    if summary.top_members:
        tm = Table(title="members with most strike points")
        tm.add_column("member")
        tm.add_column("id")
        tm.add_column("points", justify="right")
        tm.add_column("strikes", justify="right")
        for member, points, strikes in summary.top_members[:10]:
            tm.add_row((names or {}).get(member, member), member, str(points), str(strikes))
        console.print(tm)
