"""The offline ``scan`` job: judge chat exports with the live pipeline and record every verdict.

Layer: composition root. Messages are replayed in timestamp order so spam and raid rules see real timing. Each
server is judged by its effective policy: the default, ``--policy`` files, and its own file in the servers folder
(:meth:`bot.core.policy_registry.PolicyRegistry.server_file`; a Discord export's guild uses
``discord-<guild id>.toml``), then the runtime overrides the mod log holds for it (an export's guild's or
workspace's ``/policy set``, read once at start: :meth:`~bot.core.policy_registry.PolicyRegistry.override_keys`),
exactly as the bots do.

A re-run under the same policy skips what is already recorded (the store's message keys), so a killed scan resumes
where it stopped; the recorded messages are replayed into the spam and raid windows
(:class:`bot.core.service.ModerationService`), so a raid that spans the restart is still one burst.

A re-run under ANOTHER policy (some input message recorded under another policy version than its server's now) is a
replay: every input message is re-judged by the same moderation service, in timestamp order, against a scratch mod
log, with the scores stored with the recorded verdicts (``known_scores``; the model loads only when some message
has no stored score of the same model name and version), the new set is kept in ``replay_verdicts`` next to the
recorded one (:mod:`bot.store.replays`), and the difference is printed and reported (:mod:`bot.jobs.replay`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import os
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from bot.core.models import LABELS, Message, Scores, Verdict
from bot.core.policy import Policy
from bot.core.ports import Scorer
from bot.core.records import ScanSummary, SetVerdict
from bot.core.service import ModerationService, Outcome
from bot.core.store_port import ModStore
from bot.eval.common import plain, table_console
from bot.jobs.jsonlines import json_line
from bot.settings import Settings

if TYPE_CHECKING:  # bot.runtime loads the service's parts; the scan imports it where it runs
    from bot.core.policy_registry import PolicyRegistry
    from bot.runtime import OverrideSnapshot

log = logging.getLogger(__name__)


def output_clash(paths: list[Path], *, out: Path | None, report: Path | None,
                 database: str | os.PathLike[str] | None = None) -> str | None:
    """Why ``--out`` / ``--report`` cannot be written where asked, or ``None``: an output that is one of the inputs
    would be truncated (``--out``, after the survey read it: the export lost) or replaced by the report; one on a
    file of the mod log ``database`` would destroy it; one inside an input folder would be read back as input by
    the judging pass; the two outputs on one file would overwrite each other. Symbolic links and ``..`` are
    resolved first."""
    from bot.store import describe, overwrites_database

    inputs = [Path(p).resolve() for p in paths]
    outputs = [(flag, Path(o)) for flag, o in (("--out", out), ("--report", report)) if o is not None]
    for flag, given in outputs:
        if database is not None and overwrites_database(given, database):
            return f"{flag} {given} is the mod log {describe(database)} (it would be overwritten); choose another file"
        target = given.resolve()
        for src in inputs:
            same = target == src or (target.exists() and src.exists() and os.path.samefile(target, src))
            if same:
                return f"{flag} {given} is an input of this scan (it would be overwritten); choose another file"
            if src.is_dir() and target.is_relative_to(src):
                return (f"{flag} {given} is inside the input folder {src} (the scan would read it back as input); "
                        "choose a file outside it")
    if len(outputs) == 2 and outputs[0][1].resolve() == outputs[1][1].resolve():
        return f"--out and --report name the same file ({outputs[0][1]}); choose two"
    return None


def output_problem(flag: str, path: Path) -> str | None:
    """Why the scan could not write ``path`` (``--out`` / ``--report``), found before anything is read: a folder,
    a missing folder that cannot be made, no permission. Probes by opening the file for appending (a file created
    by the probe is removed again) and makes missing parent folders, as the scan would."""
    if path.is_dir():
        return f"{flag} {path} is a folder; give a file name"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        return f"{flag} {path} cannot be written: {exc.strerror or exc}"
    return None


#: Servers whose policy files ``scan`` names on the terminal (the report lists every one).
SERVERS_LISTED = 20


async def run_scan(args: argparse.Namespace, settings: Settings, *, scorer: Scorer | None = None,
                   scorer_factory: Callable[[], Scorer] | None = None) -> int:
    """Run ``scan``; see ``python -m bot scan --help``. Returns the exit code. ``scorer``: an already loaded
    scorer; else ``scorer_factory`` (default ``load_scorer(settings)``) loads the model the settings name, after
    the input is read and only when some message needs scoring (not for a replay from stored scores, nor for a
    re-run over messages all recorded under the same policy).

    Every input is validated before the model loads: a missing path, an ``--out`` or ``--report`` that is an input
    (or inside an input folder: :func:`output_clash`), an invalid policy or input with no messages at all exits 2
    with a one-line error; so do model settings that name no model (:func:`bot.runtime.check_model`), before
    the mod log is opened or created. A message without an author or a time (a JSON line that lacks ``author`` or
    ``created_at``) is judged with the rate-based rules (flood, duplicates, raids, strikes and the escalation ladder)
    off for that message alone (:attr:`bot.core.models.Message.in_rate_windows`), with one warning counting them:
    the rules would see every anonymous line as one "unknown" member posting everything at once. The other
    messages of the scan are judged with those rules as usual.
    """
    from bot.ingest import IngestError
    from bot.ingest.stream import MessageStream
    from bot.runtime import build_policies

    console = Console(stderr=True, soft_wrap=True)  # one message, one line (paths are long)
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        console.print(f"[red]error:[/red] no such file or folder: {', '.join(str(p) for p in missing)}",
                      highlight=False)
        return 2
    clash = output_clash(args.paths, out=getattr(args, "out", None), report=getattr(args, "report", None),
                         database=settings.db_path)
    for flag, target in (("--out", getattr(args, "out", None)), ("--report", getattr(args, "report", None))):
        clash = clash or (output_problem(flag, Path(target)) if target is not None else None)
    if clash:
        console.print(f"[red]error:[/red] {clash}", highlight=False)
        return 2
    registry = build_policies(settings, extra_policy_files=tuple(args.policy))  # PolicyError before reading
    for path, why in registry.unread_files():  # meant for a server, read for none: that server gets the default
        console.print(Text.assemble(("warning:", "yellow"), f" {path}: no server reads this file: {why}"),
                      highlight=False)
    errors: list[IngestError] = []
    t0 = time.perf_counter()
    with MessageStream(list(args.paths), fmt=args.format, on_error=args.on_error, errors=errors) as stream:
        try:
            survey = stream.survey()  # the first pass: counts, servers, names; every malformed input reported
        except IngestError as exc:
            console.print(Text.assemble(("error:", "red"), " ", plain(exc)), highlight=False)
            return 2
        for err in errors:
            # the reason may quote the input (a bad time, a file name in an export): printed as written
            console.print(Text.assemble(("skipped:", "yellow"), " ", plain(err)), highlight=False)
        if not survey.messages:
            why = "no message could be read" if errors else "no messages found"
            console.print(f"[red]error:[/red] {why} in {', '.join(str(p) for p in args.paths)}", highlight=False)
            return 2
        total = survey.messages
        console.print(f"read {total:,} messages from {len(args.paths)} path(s) in {time.perf_counter() - t0:.1f} s")
        if survey.duplicates:
            console.print(f"[yellow]warning:[/yellow] {survey.duplicates:,} of {total:,} messages repeat a message id "
                          "read before (the same id in the same server is one message, whatever its time): each "
                          "is judged and written once, the first in time order", highlight=False)
        incomplete = survey.incomplete
        if incomplete:
            console.print(f"[yellow]warning:[/yellow] {incomplete:,} of {total:,} messages have no author or no "
                          "time (JSON lines without \"author\" or \"created_at\"): the rate-based rules (flood, "
                          "duplicates, raids, strikes and the escalation ladder) skip those messages",
                          highlight=False)
        servers = sorted(survey.servers)
        # the /policy set overrides of an export's guild or workspace (and its own) in the mod log, as the bot
        # applies them there: read once, before the model loads (a replay judges in a scratch mod log)
        registry.store = await _overrides_in_modlog(settings, servers)
        # each server's own file (<servers_dir>/<platform>-<id>.toml) is loaded and checked before the model loads
        policies = {s: await registry.get(*s) for s in servers}
        for (plat, sid), policy in list(policies.items())[:SERVERS_LISTED]:
            # which files judge each server, on the terminal too: a server whose own file is missing (a CSV export
            # names no guild: its folder's name is its id) was judged by the default without a word here
            own = registry.server_file(plat, sid)
            absent = registry.expected_file(plat, sid) if own is None else None
            files = " + ".join(str(f) for f in registry.files_for(plat, sid))
            console.print(Text(f"policy of {plat}/{sid}: {files} (version {policy.version})"
                               + (f"; no server file {absent}" if absent is not None else "")), highlight=False)
        if len(policies) > SERVERS_LISTED:
            console.print(f"(and {len(policies) - SERVERS_LISTED:,} more servers: the report lists them all)",
                          highlight=False)
        if scorer is None and scorer_factory is None:
            from bot.runtime import check_model

            check_model(settings)  # ScorerLoadError (exit 2) for a typo in --model, before the mod log is created
        ctx = _Scan(args=args, settings=settings, console=console, out=table_console(soft_wrap=True), messages=stream,
                    total=total, names=survey.names, servers=servers, policies=policies, errors=errors,
                    stateful=True, scorer_factory=scorer_factory, registry=registry)
        return await _run(ctx, scorer)


async def _overrides_in_modlog(settings: Settings, servers: list[tuple[str, str]]) -> OverrideSnapshot | None:
    """The runtime overrides (``/policy set``) that apply to ``servers`` in the scan's mod log (an export's: its
    guild's or workspace's, :meth:`bot.core.policy_registry.PolicyRegistry.override_keys`), or ``None`` when the
    mod log does not exist yet (nothing was set). Raises what opening the mod log raises."""
    from bot.runtime import OverrideSnapshot
    from bot.store import exists, open_store

    if not exists(settings.db_path):
        return None
    store = await open_store(settings.db_path)
    try:
        return await OverrideSnapshot.read(store, servers)
    finally:
        await store.close()


async def _run(ctx: _Scan, scorer: Scorer | None) -> int:
    try:
        if scorer is None and ctx.scorer_factory is None and ctx.settings.scorer_url:
            # a scoring service chooses its model, which the local settings do not name: ask it which one it serves
            # (GET /v1/model; nothing is loaded here) before stored scores are reused or a report names the model
            scorer = await asyncio.to_thread(ctx.load)
        plan = await _replay_plan(ctx, scorer)
        if plan is not None:
            return await _run_replay(ctx, plan, scorer)
        return await _run_first(ctx, scorer)
    except ScanStoreFailed as exc:
        ctx.console.print(f"[red]error:[/red] {exc}", highlight=False)
        return 2


class ScanStoreFailed(Exception):
    """The mod log failed for good during a scan (:class:`bot.core.errors.StoreRefused`, or a write error such as
    SQLite's "database or disk is full"): the scan stopped submitting messages. What was committed stays, and a
    later run resumes (recorded messages are skipped). ``str()`` is the one line ``scan`` prints (exit 2)."""

    def __init__(self, database: Path | str, cause: BaseException, judged: int, total: int) -> None:
        from bot.core.service import ScoringStopped

        self.database = str(database)
        self.cause = cause
        text = str(cause)
        when = ""
        if isinstance(cause, ScoringStopped):
            when = (" once the scorer answers; --record-scorer-errors records a message it always fails on with the "
                    "policy's on_scorer_error verdict instead")
        elif not text.startswith("mod log"):
            text = f"mod log {database}: {text or type(cause).__name__}"
        super().__init__(f"{text}; scan stopped after {judged:,} of {total:,} messages (what was recorded is kept; "
                         f"run the same scan again to resume{when})")


def _store_failure(exc: BaseException) -> bool:
    """An error no further message can get past, as opposed to a defect in judging: of the mod log itself
    (:class:`bot.core.errors.StoreError` or a ``sqlite3`` error), or a message the scorer failed on
    (:class:`bot.core.service.ScoringStopped`: a scan records no verdict without the model's scores)."""
    import sqlite3

    from bot.core.errors import StoreError
    from bot.core.service import ScoringStopped

    return isinstance(exc, (StoreError, sqlite3.Error, ScoringStopped))


@dataclass
class _Scan:
    """One ``scan`` invocation's inputs, read and validated."""

    args: argparse.Namespace
    settings: Settings
    #: stderr: progress, warnings, skipped input and errors.
    console: Console
    #: stdout: the results (summary, replay difference, files written), so ``scan ... > summary.txt`` keeps them.
    out: Console
    #: The input, re-iterable in time order (read again for each pass; never held whole).
    messages: Iterable[Message]
    #: Messages the survey read (the progress bar's total; copies across inputs counted each time).
    total: int
    #: Author id -> display name (for the summary's member table).
    names: dict[str, str]
    servers: list[tuple[str, str]]
    policies: dict[tuple[str, str], Policy]
    errors: list[Any]
    stateful: bool
    #: Every input message is already recorded under its server's current policy (no edit newer than recorded).
    nothing_new: bool = False
    #: ``(name, version)`` of the model the settings name, when known without loading it.
    identity: tuple[str, str] | None = None
    #: The languages that model reads (for the language check of messages judged from stored scores).
    languages: tuple[str, ...] | None = None
    #: Loads the model when needed (default ``load_scorer(settings)``).
    scorer_factory: Callable[[], Scorer] | None = None
    #: The policies judging this scan (files and the mod log's overrides as read at start), shared by its runtimes.
    registry: PolicyRegistry | None = None

    def load(self) -> Scorer:
        """Load the model (blocking: call it off the event loop)."""
        from bot.runtime import load_scorer

        return self.scorer_factory() if self.scorer_factory is not None else load_scorer(self.settings)

    def runtime_kwargs(self) -> dict[str, Any]:
        # the registry read before the model loaded: the servers' files and the overrides the mod log held then
        # (a replay's scratch mod log holds none; a runtime's own bridge would read those)
        return {"enforce": False, "stateful_rules": self.stateful, "extra_policy_files": tuple(self.args.policy),
                "server_files": True, "overrides": False, "policies": self.registry,
                "batch_size": self.args.batch_size}

    def piece_modes(self) -> dict[str, str]:
        return {p.version: p.scoring.pieces for p in self.policies.values()}

    @property
    def exit_code(self) -> int:
        return 1 if self.errors and self.args.on_error == "stop" else 0


@dataclass
class _Plan:
    """A replay: the recorded verdicts of the input, the stored scores that can be reused, and how many messages
    still need the model."""

    store: ModStore
    recorded: dict[tuple[str, str, str], SetVerdict]
    stale: int
    known: dict[tuple[str, ...], Scores]
    identity: tuple[str, str] | None
    need_model: int
    #: The languages the model of :attr:`identity` reads.
    languages: tuple[str, ...] | None = None


#: The live platforms' namespaces, where a scan from before imported histories were kept in ``"export"`` recorded
#: a JSONL history claiming a platform, or a Slack export naming its team (the planning notes such rows).
LIVE_NAMESPACES = ("discord", "slack")

#: Messages looked up in the mod log per query while planning (keys, recorded verdicts, edits).
PLAN_CHUNK = 2_000


def _chunks(messages: Iterable[Message], size: int = PLAN_CHUNK) -> Iterator[list[Message]]:
    """``messages`` in lists of at most ``size``."""
    it = iter(messages)
    while batch := list(itertools.islice(it, size)):
        yield batch


async def _run_first(ctx: _Scan, scorer: Scorer | None) -> int:
    """The first scan of messages (or a resumed one, under the policy that judged the recorded ones)."""
    from bot.runtime import open_runtime

    if scorer is None and ctx.nothing_new and ctx.identity is not None:
        from bot.scoring.stored import StoredScoresOnly

        # every message is recorded under this policy (a finished scan run again): nothing to score, no model
        scorer = StoredScoresOnly(*ctx.identity, languages=ctx.languages)
    async with open_runtime(ctx.settings, scorer=scorer, scorer_factory=ctx.scorer_factory,
                            **ctx.runtime_kwargs()) as rt:
        await rt.store.note_policy_versions(ctx.piece_modes())
        async with _output(ctx, rt.store) as output:
            t1 = time.perf_counter()
            await _replay(rt.service, ctx.messages, output.add, total=ctx.total,
                          show_progress=not ctx.args.no_progress, console=ctx.console,
                          database=ctx.settings.db_path,
                          record_scorer_errors=getattr(ctx.args, "record_scorer_errors", False))
            elapsed = time.perf_counter() - t1
            await _finish(ctx, rt, output, elapsed=elapsed)
    return ctx.exit_code


async def _replay_plan(ctx: _Scan, scorer: Scorer | None) -> _Plan | None:
    """``None`` unless some input message is recorded under another policy version than its server's now; then
    the replay's plan (with the mod log open: the caller closes ``plan.store``). Input messages also recorded
    under a live platform's namespace (:data:`LIVE_NAMESPACES`, same server and message id) are counted and noted
    on the console, once per server.

    The input is looked up in :data:`PLAN_CHUNK` pieces, so deciding holds no per-message state; a replay's plan
    holds the recorded verdicts and reusable scores of every input message (the diff needs them)."""
    from bot.core.pieces import scoring_pieces
    from bot.runtime import onnx_model
    from bot.scoring.stored import model_identity, model_languages
    from bot.store import exists, open_store

    if not exists(ctx.settings.db_path):
        return None
    store = await open_store(ctx.settings.db_path)
    try:
        s = ctx.settings
        # Under language routing (MODBOT_ROUTE_MODEL, or a scorer with ``route``) a stored score says which of
        # the two models produced it only per message, and scores recorded before routing came from the main
        # model alone (French scored by the English model): no stored score is reused, the scorer is loaded.
        # A scoring service that routes (``routes``), or has not said which model it serves (``None``: it was not
        # answering), is taken as routed too: its model is not known.
        routed = (getattr(scorer, "route", None) is not None or getattr(scorer, "routes", False) is not False
                  if scorer is not None else bool(s.route_model))
        # through a scoring service (MODBOT_SCORER_URL) the local model settings (MODBOT_MODEL, MODBOT_CHECKPOINT)
        # are ignored (the service chooses its model): they are neither read nor taken as the identity, which is
        # the service's own (the remote scorer :func:`_run` loads), else unknown
        remote = scorer is None and bool(s.scorer_url)
        identity = (None if routed or remote else (scorer.name, scorer.version) if scorer is not None
                    else model_identity(s.model, checkpoint=s.checkpoint, int8=s.int8,
                                        precision=s.precision if onnx_model(s) else None))
        # what the language check of a message judged from its stored scores reads (as when it was scored)
        declared = getattr(scorer, "languages", None) if scorer is not None else model_languages(
            s.model, checkpoint=s.checkpoint)
        languages = tuple(declared) if declared else None
        stale = n_messages = n_recorded = 0
        nothing_new = identity is not None
        live_copies: Counter[tuple[str, str]] = Counter()
        for chunk in _chunks(ctx.messages):
            keys = [m.key for m in chunk]
            recorded = await store.recorded_verdicts(keys)
            # the same message ids under a live platform's namespace: a scan from before imported histories were
            # kept in "export" (or the live bot itself) recorded them there
            live_keys = [(p, sid, mid) for plat, sid, mid in keys if plat == "export" for p in LIVE_NAMESPACES]
            if live_keys:
                live_copies.update((p, sid) for p, sid, _ in await store.recorded_verdicts(live_keys))
            n_messages += len(keys)
            n_recorded += len(recorded)
            stale += sum(1 for k, v in recorded.items() if v.policy_version != ctx.policies[(k[0], k[1])].version)
            if nothing_new and not stale and len(recorded) == len(keys):
                edits = await store.known_messages(keys)
                nothing_new = all(m.edited_at is None or ((recorded_edit := edits.get(m.key)) is not None
                                                           and m.edited_at <= recorded_edit)
                                  for m in chunk)
            else:
                nothing_new = False
        for (platform, sid), n in sorted(live_copies.items()):
            ctx.console.print(
                f"[yellow]note:[/yellow] {n:,} of these messages are also recorded under {platform}/{sid}, a live "
                "mod log (by a scan from before imported histories were kept apart, or by the live bot): this scan "
                f"records them under export/{sid} and leaves those rows as they are (the live bot's statistics, "
                "review queue and strikes still count what is there)", highlight=False)
        if not stale:
            if n_recorded == n_messages and identity is not None:
                ctx.nothing_new = nothing_new
                ctx.identity = identity
                ctx.languages = languages
            await store.close()
            return None
        all_recorded: dict[tuple[str, str, str], SetVerdict] = {}
        known: dict[tuple[str, ...], Scores] = {}
        need = 0
        for chunk in _chunks(ctx.messages):
            keys = [m.key for m in chunk]
            all_recorded.update(await store.recorded_verdicts(keys))
            stored = await store.stored_scores(keys, *identity) if identity else {}
            modes = await store.policy_pieces({pv for pv, _ in stored.values()})
            plans: list[tuple[str, ...] | None] = []  # None: exempt under its server's policy now (never scored)
            for m in chunk:
                policy = ctx.policies[(m.server.platform, m.server.id)]
                mode = policy.scoring.pieces
                # the plan the service looks its known scores up by (a long message's chunks end at max_chars)
                plan = scoring_pieces(m.text, sentences=mode == "sentences", max_chars=policy.scoring.max_chars)
                plans.append(None if policy.exemption(m) else plan)
                hit = stored.get(m.key)
                # a version never noted scored with the default plan ("sentences")
                if hit is not None and modes.get(hit[0], "sentences") == mode:
                    known[plan] = hit[1]
            need += sum(1 for plan in plans if plan is not None and plan[0].strip() and plan not in known)
        return _Plan(store=store, recorded=all_recorded, stale=stale, known=known, identity=identity,
                     need_model=need, languages=languages)
    except BaseException:
        await store.close()
        raise


async def _run_replay(ctx: _Scan, plan: _Plan, scorer: Scorer | None) -> int:
    """Re-judge every input message under the current policies, from stored scores, in a scratch mod log (so the
    replay's cases, strikes and raids never mix with the recorded ones), keep the new verdict set next to the
    recorded one, and print and report the difference."""
    import tempfile

    from bot.jobs.replay import compute_diff, print_diff
    from bot.runtime import open_runtime
    from bot.scoring.stored import StoredScoresOnly

    console = ctx.console
    try:
        versions = sorted({p.version for p in ctx.policies.values()})
        console.print(f"{plan.stale:,} of {ctx.total:,} messages were recorded under another policy: "
                      f"replaying them under {', '.join(versions)}", highlight=False)
        if plan.need_model or plan.identity is None:
            console.print(f"{plan.need_model:,} messages have no stored scores of this model: loading it",
                          highlight=False)
            if scorer is None:
                scorer = await asyncio.to_thread(ctx.load)
        else:
            scorer = StoredScoresOnly(*plan.identity, languages=plan.languages)
        with tempfile.TemporaryDirectory(prefix="modbot-replay-") as tmp:
            async with open_runtime(ctx.settings, scorer=scorer, db_path=Path(tmp) / "replay.db",
                                    **ctx.runtime_kwargs()) as rt:
                rt.service.known_scores = plan.known
                judged: dict[tuple[str, str, str], Verdict] = {}
                async with _output(ctx, rt.store, judged=judged) as output:
                    t1 = time.perf_counter()
                    await _replay(rt.service, ctx.messages, output.add, total=ctx.total,
                                  show_progress=not ctx.args.no_progress, console=console,
                                  record_scorer_errors=getattr(ctx.args, "record_scorer_errors", False))
                    elapsed = time.perf_counter() - t1
                    await plan.store.record_replay(list(judged.values()), model_version=scorer.version)
                    await plan.store.note_policy_versions(ctx.piece_modes())
                    ctx.out.print(f"\n[bold]replay finished[/bold]: {len(judged):,} messages re-judged in "
                                  f"{elapsed:.1f} s ({rt.service.stats['scored_texts']:,} texts scored by the "
                                  "model, the rest from stored scores); both verdict sets are kept in "
                                  f"{ctx.settings.db_path}", highlight=False)
                    diff = compute_diff(ctx.messages, plan.recorded, judged)
                    print_diff(ctx.out, diff)
                    await _finish(ctx, rt, output, elapsed=elapsed, diff=diff)
    finally:
        await plan.store.close()
    return ctx.exit_code


class _Output:
    """Where a scan's outcomes go as they come, in input order: each ``--out`` row is written at once, each report
    row spooled to a temporary JSONL file (``--report`` renders from it after the scan), and only counts are kept
    (and, for a replay, the new verdicts in ``judged``)."""

    def __init__(self, store: ModStore, out: IO[str] | None, spool: IO[str] | None,
                 judged: dict[tuple[str, str, str], Verdict] | None) -> None:
        self.store = store
        self.out = out
        self.spool = spool
        self.judged = judged
        #: Messages whose outcome came (the input after copies are dropped); ``new``: those judged now.
        self.total = 0
        self.new = 0

    async def add(self, o: Outcome) -> None:
        self.total += 1
        if not o.duplicate:
            self.new += 1
            if self.judged is not None:
                self.judged[o.verdict.message.key] = o.verdict
        if self.out is None and self.spool is None:
            return
        row = await _row(self.store, o)
        if row is None:
            return
        if self.out is not None:
            self.out.write(json_line({k: row[k] for k in _OUT_KEYS}) + "\n")
        if self.spool is not None:
            self.spool.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

    def report_rows(self) -> Iterator[dict[str, Any]]:
        """The spooled report rows, read back one at a time."""
        if self.spool is None:
            return
        self.spool.flush()
        self.spool.seek(0)
        for line in self.spool:
            yield json.loads(line)


#: The keys of one ``scan --out`` row (written by :func:`bot.jobs.jsonlines.json_line`: U+2028 / U+2029 escaped):
#: :meth:`Verdict.to_json`'s, then where the message is (``source``: Discord or Slack, ``server_id``, ``channel_id``, ``author_id``,
#: ``time``, the first 1,000 characters of its ``text``: ``bot.report.rows.message_fields``) and how far the model
#: read it (``score_status``, ``language``, as ``score`` gives them), so the file reads without the export beside it.
_OUT_KEYS = ("id", "channel", "author", "scores", "rule_hits", "flagged", "labels", "action", "source", "server_id",
             "channel_id", "author_id", "time", "text", "score_status", "language")


@asynccontextmanager
async def _output(ctx: _Scan, store: ModStore,
                  judged: dict[tuple[str, str, str], Verdict] | None = None) -> AsyncIterator[_Output]:
    """An :class:`_Output` for this scan: ``--out`` written to a temporary file beside it (its folder created),
    renamed over ``--out`` when the scan ends without an error (:func:`bot.report.page.replacing`: a new file is
    owner-only, 0600, as it holds members' message text; an existing one keeps its mode), removed when the scan
    stops with one (the previous ``--out``, if any, untouched: never half a file under its name); a spool for
    ``--report`` in a temporary folder; both closed after."""
    import tempfile

    from bot.report.page import replacing

    with contextlib.ExitStack() as stack:
        out = None
        if ctx.args.out:
            out = stack.enter_context(replacing(ctx.args.out))
        spool = None
        if ctx.args.report:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="modbot-scan-"))
            spool = stack.enter_context((Path(tmp) / "rows.jsonl").open("w+", encoding="utf-8"))
        yield _Output(store, out, spool, judged)


async def _finish(ctx: _Scan, rt: Any, output: _Output, *, elapsed: float,
                  diff: dict[str, Any] | None = None) -> None:
    """The summary (from ``rt``'s store: the mod log, or a replay's scratch) and ``--report`` (from the spooled
    rows); ``--out`` was written as the outcomes came."""
    args, console, store, servers = ctx.args, ctx.out, rt.store, ctx.servers
    if output.out is not None:
        output.out.flush()
    summary = await _summary(store, servers)
    _print_summary(console, summary, output.total, output.new, elapsed, ctx.names, replay=diff is not None)
    if args.report:
        from bot.report import display_path, policy_provenance, write_html_report

        # every alert recorded for these servers (as the summary counts them), not only this run's: a re-run
        # or a resumed scan replays recorded messages without re-raising their alerts
        raids = [{**asdict(r), "platform": platform}
                 for platform, server in servers for r in await store.list_raids(platform, server)]
        doc = {
            "title": "Moderation scan: " + ", ".join(display_path(p) for p in args.paths),
            "messages": summary.messages,
            "flagged": summary.flagged,
            "label_counts": dict(summary.flagged_per_label),
            "action_counts": dict(summary.actions),
            "raids": raids,
            "top_members": [(m.platform, m.server_id, m.member_id, m.points) for m in summary.top_members],
            "inputs": ", ".join(display_path(p) for p in args.paths),
            "model": f"{rt.scorer.name} {rt.scorer.version}",
            "policy_version": rt.policies.base.version,
            "policies": await policy_provenance(rt.policies, servers),
            "errors": len(ctx.errors) or None,
            "diff": diff,
        }
        write_html_report(args.report, doc, output.report_rows())
        console.print(f"report written to {args.report}")
    if args.out:
        console.print(f"verdicts written to {args.out}")


async def _replay(service: ModerationService, messages: Iterable[Message],
                  on_outcome: Callable[[Outcome], Awaitable[None]], *, total: int, show_progress: bool,
                  console: Console, database: Path | str = "the mod log", record_scorer_errors: bool = False) -> None:
    """Feed messages in order with a bounded number in flight (``4 * batch_size``), handing each outcome to
    ``on_outcome`` in input order as soon as it and those before it are done; nothing else is kept per message.
    ``total`` is the progress bar's length.

    Raises:
        ScanStoreFailed: A message's batch failed in the mod log, or the scorer failed on one of its messages
            (:func:`_store_failure`): no further message is submitted, those in flight finish or fail, and the
            first such error is raised (``database`` names the mod log).
    """
    failed: list[BaseException] = []
    # a verdict of the policy's on_scorer_error would be recorded as what the model found, and skipped as
    # recorded by every later run: a message the scorer fails on stops the scan instead (ScoringStopped), unless
    # the admin asked to get past one the scorer always fails on (--record-scorer-errors)
    service.stop_on_scorer_error = not record_scorer_errors
    await service.start()
    pending: deque[asyncio.Future[Outcome]] = deque()
    window = asyncio.Semaphore(4 * service.batch_size)
    judged = 0
    progress = Progress(TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                        TimeRemainingColumn(), console=console, disable=not show_progress, transient=False)
    started = time.perf_counter()

    async def drain(*, everything: bool) -> None:
        nonlocal judged
        while pending and (everything or pending[0].done()):
            fut = pending.popleft()
            if not fut.done():
                await asyncio.wait([fut])
            if fut.cancelled() or ((exc := fut.exception()) is not None and _store_failure(exc)):
                continue
            outcome = fut.result()  # a defect in judging is raised here
            judged += 1
            await on_outcome(outcome)

    with progress:
        task = progress.add_task("scan", total=total, rate="")

        def done(fut: asyncio.Future[Outcome]) -> None:
            window.release()
            if not fut.cancelled() and (exc := fut.exception()) is not None and _store_failure(exc):
                failed.append(exc)
            progress.advance(task)
            n = progress.tasks[0].completed
            progress.update(task, rate=f"{n / max(time.perf_counter() - started, 1e-6):,.0f} msg/s")

        try:
            for m in messages:
                await window.acquire()
                if failed:
                    break
                fut = service.submit(m)
                fut.add_done_callback(done)
                pending.append(fut)
                await drain(everything=False)
        finally:
            await service.close()
        await drain(everything=True)
    if failed:
        raise ScanStoreFailed(database, failed[0], judged, total)


async def _row(store: ModStore, o: Outcome) -> dict[str, Any] | None:
    """One ``scan --out`` row (plus the report's fields, :func:`bot.report.message_fields`); a duplicate (already
    recorded) comes from the stored verdict (``None`` when it has none)."""
    from bot.report import message_fields, verdict_fields

    m = o.verdict.message
    if o.duplicate:
        sv = await store.get_verdict(m.server.platform, m.server.id, m.id)
        if sv is None:
            return None
        row = {
            "id": m.id, "channel": m.channel.name or m.channel.id, "author": m.author.name or m.author.id,
            "scores": {lb: sv.scores.get(lb) for lb in LABELS},
            "rule_hits": [{"rule": h.get("rule"), "detail": h.get("detail"), "label": h.get("label")}
                          for h in sv.rule_hits],
            "flagged": sv.flagged, "labels": list(sv.labels), "action": sv.action.label,
            "policy_version": sv.policy_version, "shadow": sv.shadow, "score_status": sv.score_status,
            "language": sv.language,
        }
    else:
        row = {**o.verdict.to_json(), **verdict_fields(o.verdict), "language": o.verdict.language}
        if o.case_number is not None:
            row["case"] = o.case_number
    row.update(message_fields(m))  # names and ids, platform, server, time, text, link
    return row


async def _summary(store: ModStore, servers: list[tuple[str, str]]) -> ScanSummary:
    return await store.scan_summary(servers)


def _print_summary(console: Console, summary: Any, total: int, new: int, elapsed: float,
                   names: dict[str, str] | None = None, *, replay: bool = False) -> None:
    """The terminal summary: the run's line (not for a replay, which prints its own) and the recorded totals."""
    if not replay:
        rate = new / elapsed if elapsed > 0 else 0.0
        console.print(f"[bold]scan finished[/bold]: {total:,} messages in input, {new:,} judged now "
                      f"({total - new:,} already recorded) in {elapsed:.1f} s = {rate:,.0f} msg/s")
    t = Table(title="summary under the replayed policy" if replay else "summary (all recorded verdicts of these servers)")
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
        # per server: a member's points in one server never add to their points in another
        tm = Table(title="members with most strike points (per server)")
        tm.add_column("server")
        tm.add_column("member")
        tm.add_column("id")
        tm.add_column("points", justify="right")
        tm.add_column("strikes", justify="right")
        for m in summary.top_members[:10]:
            # names and ids as written: never rich markup, no escape sequence reaches the terminal
            tm.add_row(plain(f"{m.platform}/{m.server_id}"), plain((names or {}).get(m.member_id, m.member_id)),
                       plain(m.member_id), str(m.points), str(m.strikes))
        console.print(tm)
