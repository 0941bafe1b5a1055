"""Command line: ``python -m bot scan|score|policy check|eval|bench|purge|discord|slack``.

Layer: composition root (the command line). Parses arguments into :class:`Settings` and calls the job; the jobs
build the store, the scorer, the policies and the moderation service through :mod:`bot.runtime`. Inputs are
validated before the model loads. Exit codes: 0 success, 1 the job failed (or, for ``score``, some lines could
not be judged), 2 bad input (config, model, export, database) with a one-line message on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.core.errors import StoreError
from bot.settings import Settings, SettingsError, database

log = logging.getLogger("bot")

DB_HELP = ("the mod log: a SQLite file path or a postgresql:// URL (default: $MODBOT_DB, else "
           "$XDG_DATA_HOME/modbot/modlog.db, i.e. ~/.local/share/modbot/modlog.db)")


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every command without a description its one-line help as the description, so ``COMMAND --help`` says
    what the command does above its options (argparse prints the help only in the parent's command list)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                text = helps.get(name)
                if not sub.description and text:
                    sub.description = text[:1].upper() + text[1:] + "."
                _describe(sub)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m bot``."""
    p = argparse.ArgumentParser(prog="python -m bot", description="Community moderation bot for Discord and Slack.")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more log detail: -v what the bot does (INFO), -vv everything (DEBUG); default warnings")
    p.add_argument("--log-format", choices=["text", "json"], default="text",
                   help="log lines on stderr as text (default) or JSON lines for log collectors")
    p.add_argument("--model", help="embedded (default), original, unbiased, multilingual, original-small, "
                   "unbiased-small, or local (with --checkpoint and --config-dir)")
    p.add_argument("--checkpoint", type=Path, help="local detoxify checkpoint (with --model local)")
    p.add_argument("--config-dir", type=Path, help="local huggingface config + tokenizer folder (with --model local)")
    p.add_argument("--bf16", action="store_true", help="score under bfloat16 autocast (fast only with AMX)")
    p.add_argument("--int8", action="store_true", help="int8 dynamic quantisation of the model's Linear layers")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("scan", help="judge chat exports offline and record every verdict")
    s.add_argument("paths", nargs="+", type=Path, help="export files or folders")
    s.add_argument("--policy", type=Path, action="append", default=[],
                   help="policy file layered on the default (repeatable; each server's own file in the servers folder "
                        "is layered on top)")
    s.add_argument("--db", help=DB_HELP)
    s.add_argument("--out", type=Path, help="write one JSON line per message")
    s.add_argument("--report", type=Path, help="write an HTML report")
    s.add_argument("--format", default="auto", choices=["auto", "discord-json", "discord-csv", "slack-export", "jsonl"],
                   help="export format (default auto: from each file's name and content)")
    s.add_argument("--on-error", default="skip", choices=["skip", "stop"],
                   help="a malformed export, file or line: reported and skipped (default), or stop the scan")
    s.add_argument("--batch-size", type=int, default=256, help="largest batch of messages per model call (default 256)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar (the summary is still printed)")
    s.add_argument("--record-scorer-errors", action="store_true",
                   help="a message the scorer fails on is recorded with the policy's on_scorer_error verdict "
                        "(score_status scorer_error, never re-judged by a later run) instead of stopping the scan")

    sc = sub.add_parser("score", help='score JSON lines {"id", "text"} from stdin',
                        description='Read JSON lines {"id", "text"} from stdin and write one JSON line per non-blank '
                                    "input line (blank lines are skipped) to stdout, in order: the model's scores, "
                                    "score_status, language, rule hits and the action under the policy. \"id\" is the "
                                    "input's own, echoed as given; a line without one (or with \"id\": null) is "
                                    'answered as "line:N", N its line number counting blank lines, a string, so it '
                                    "never equals a numeric id such as 3 on another line. A line that cannot be "
                                    'judged (not JSON, or no string "text") gets {"id", "error"} in its place, the '
                                    "lines after it are still judged, and the exit status is then 1. Input is UTF-8, "
                                    "or UTF-16 / UTF-32 behind a byte order mark (Windows PowerShell's > writes "
                                    "UTF-16LE); lines end at \\n, CRLF too.")
    sc.add_argument("--policy", type=Path, action="append", default=[],
                    help="policy file layered on the default (repeatable)")
    sc.add_argument("--batch-size", type=int, default=256, help="largest batch of lines per model call (default 256)")
    sc.add_argument("texts", nargs="*", metavar="TEXT",
                    help="texts to score instead of standard input (ids 1, 2, ...): python -m bot score \"you idiot\"")

    pol = sub.add_parser("policy", help="policy tools")
    pol_sub = pol.add_subparsers(dest="policy_command", required=True)
    pc = pol_sub.add_parser("check", help="validate a policy file: OK, or what is wrong; warns about unset channels "
                            "and notes each tier of the default the file switches off (act = false)")
    pc.add_argument("file", type=Path, nargs="?",
                    help="policy file layered on the default (default: check the default policy itself)")
    pc.add_argument("--json", action="store_true", help="also print the effective policy as JSON on stdout")

    ev = sub.add_parser("eval", help="quality harness: hatecheck, olid, mhc, scene")
    ev.add_argument("kind", choices=["hatecheck", "olid", "mhc", "scene"], help="which evaluation set")
    ev.add_argument("file", type=Path, nargs="*",
                    help="data file(s) or folder; scene: default the bundled probe set bot/eval/data/scene_cases.csv")
    ev.add_argument("--artifact", type=Path, metavar="DIR",
                    help="score with this model artifact directory (python -m bot.training --out DIR) instead of "
                         "the configured model")
    ev.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also score with this artifact directory and print a paired comparison (McNemar's exact "
                         "test, paired bootstrap 95%% intervals) against the model under test")
    ev.add_argument("--baseline-threshold", type=float,
                    help="the baseline's threshold (default: the same as the model's; olid: the baseline "
                         "artifact's own calibrated toxicity threshold)")
    ev.add_argument("--threshold", type=float, help="identity_attack / toxicity threshold (default: the policy's)")
    ev.add_argument("--policy", type=Path, action="append", default=[], metavar="FILE",
                    help="policy file layered on the default, as score's --policy (repeatable): scene is judged "
                         "under it; hatecheck and mhc take its identity_attack review tier and target check")
    ev.add_argument("--baseline-policy", type=Path, action="append", default=[], metavar="FILE",
                    help="scene only: judge the baseline under the default plus this file (repeatable) instead "
                         "of --policy, e.g. a new model with re-calibrated tiers against the old model at its own")
    ev.add_argument("--batch-size", type=int, default=64, help="texts per model call (default 64)")
    ev.add_argument("--pad", action="store_true",
                    help="hatecheck/mhc: put one benign sentence before every case (evasion test)")

    bk = sub.add_parser("backup", help="write an online copy of the mod log (SQLite: sqlite3 backup API)")
    bk.add_argument("--db", help=DB_HELP)
    bk.add_argument("--out", type=Path, help="the copy (default: <db>.bak-<schema version>-<UTC timestamp>)")

    b = sub.add_parser("bench", help="throughput and latency benchmark (needs $MODBOT_SHARED/data/chats, default "
                       "../shared/data/chats); bench store: the store's write path; bench precision: the int8 check "
                       "(python -m bot bench --help)")
    b.add_argument("rest", nargs=argparse.REMAINDER)

    sv = sub.add_parser("serve", help="Perspective-compatible scoring service (python -m bot serve --help)")
    sv.add_argument("rest", nargs=argparse.REMAINDER)

    pu = sub.add_parser("purge", help="erase message text older than the retention period (verdicts and cases stay)")
    pu.add_argument("--db", help=DB_HELP)
    pu.add_argument("--days", type=int, help="retention in days for every server (default: each server's own "
                    "server.retention_days: its file in MODBOT_SERVERS_DIR, its /policy set overrides, else the "
                    "default policy's)")

    rp = sub.add_parser("report", help="render the mod log (open reviews, cases, members, raids, appeals, stats) "
                        "as one self-contained HTML page")
    rp.add_argument("--db", help=DB_HELP)
    rp.add_argument("--out", type=Path, default=Path("mod-log.html"), help="HTML file to write (default mod-log.html)")
    rp.add_argument("--server", action="append", metavar="[PLATFORM:]ID",
                    help="only this server (repeatable), e.g. discord:880000000000000001: a page for one server's "
                         "moderators holds nothing of the other servers of the mod log (default: every server)")

    d = sub.add_parser("discord", help="run the Discord bot (DISCORD_TOKEN from the environment)",
                       description="Run the Discord bot. Needs DISCORD_TOKEN; see docs/discord-setup.md.")
    d.add_argument("--db", help=DB_HELP)

    sl = sub.add_parser("slack", help="run the Slack app (SLACK_BOT_TOKEN; SLACK_APP_TOKEN for Socket Mode or "
                        "SLACK_SIGNING_SECRET for the HTTP Events API (MODBOT_SLACK_MODE=http when both are set); see "
                        "docs/slack-setup.md)",
                        description="Run the Slack app. Needs SLACK_BOT_TOKEN, and SLACK_APP_TOKEN (Socket Mode) or "
                        "SLACK_SIGNING_SECRET (the HTTP Events API; MODBOT_SLACK_MODE=http picks it when both are set); "
                        "optional SLACK_ADMIN_USER_TOKEN lets it "
                        "delete members' messages. See docs/slack-setup.md.")
    sl.add_argument("--db", help=DB_HELP)
    _describe(p)
    return p


def _settings(args: argparse.Namespace) -> Settings:
    s = Settings.from_env()
    changes: dict[str, Any] = {}
    if getattr(args, "model", None):
        changes["model"] = args.model
    if getattr(args, "checkpoint", None):
        changes["checkpoint"] = args.checkpoint
    if getattr(args, "config_dir", None):
        changes["config_dir"] = args.config_dir
    if getattr(args, "bf16", False):
        changes["bf16"] = True
    if getattr(args, "int8", False):
        changes["int8"] = True
    if getattr(args, "db", None) is not None:  # --db "" is refused, never read as "the default"
        changes["db_path"] = database(args.db)  # SettingsError (one line) for an unsupported URL
    if getattr(args, "command", None) in ("scan", "discord", "slack"):
        changes["announce_store"] = True
    if changes:
        from dataclasses import replace

        s = replace(s, **changes)
    if getattr(args, "command", None) in ("score", "discord", "slack"):  # scan and eval check their input first
        from bot.runtime import check_model

        check_model(s)  # a typo in --model is refused before anything connects or the mod log is created
    if getattr(args, "command", None) in ("scan", "discord", "slack"):  # the commands that create the mod log
        from bot.settings import ensure_db_folder

        ensure_db_folder(s.db_path)
    return s


def _misplaced_global_option(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The one-line error for an option of ``python -m bot`` itself (``--model``, ``-v``, ``--log-format``...)
    written after the command (``scan ... --model embedded``), which argparse reports only as "unrecognized
    arguments"; ``None`` when there is none (argparse then reports whatever else is wrong)."""
    known, extras = parser.parse_known_args(argv) if "-h" not in argv and "--help" not in argv else (None, [])
    if known is None or not extras:
        return None
    own = {opt for action in parser._actions for opt in action.option_strings}
    for extra in extras:
        name = extra.split("=", 1)[0]
        if name in own or (name.startswith("-v") and set(name[1:]) == {"v"}):
            return (f"error: {name} is an option of python -m bot itself: put it before the command "
                    f"(python -m bot {name}{'' if name.startswith('-v') or name in ('--bf16', '--int8') else ' ...'} "
                    f"{known.command} ...)")
    return None


#: Options of ``python -m bot`` itself that take a value (the others are flags).
_GLOBAL_VALUED = ("--log-format", "--model", "--checkpoint", "--config-dir")
#: What ``serve`` reads instead of each global option (``bench`` always measures the embedded model).
_SERVE_INSTEAD = {"--model": "MODBOT_MODEL={}", "--checkpoint": "MODBOT_CHECKPOINT={}",
                  "--config-dir": "MODBOT_CONFIG_DIR={}", "--bf16": "MODBOT_BF16=1", "--int8": "MODBOT_INT8=1"}


def _global_option_before_own_parser(argv: list[str]) -> str | None:
    """The one-line error for an option of ``python -m bot`` itself written before ``serve`` or ``bench``
    (``python -m bot --model multilingual serve``, ``-v serve --port 0``): those commands parse their own options
    and would drop it (``serve`` exited 1 without a word; ``bench`` measured the default model). ``None`` when the
    command is another, or ``serve`` / ``bench`` comes first."""
    given: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in _GLOBAL_VALUED:
            if not eq:
                i += 1
                value = argv[i] if i < len(argv) else ""
            given.append((name, value))
        elif name in ("--verbose", "--bf16", "--int8") or (len(arg) > 1 and arg[0] == "-" and set(arg[1:]) == {"v"}):
            given.append((arg, None))
        else:
            break
        i += 1
    if not given or i >= len(argv) or argv[i] not in ("serve", "bench"):
        return None
    command = argv[i]
    shown = " ".join(name if value is None else f"{name} {value}" for name, value in given)
    if command == "bench":
        return (f"error: {shown}: bench takes no option of python -m bot before it (it always measures the embedded "
                "model and logs nothing more); write bench's own options after it (python -m bot bench --help)")
    instead = [_SERVE_INSTEAD[name].format(value) for name, value in given if name in _SERVE_INSTEAD]
    hint = (f"; for the model set {', '.join(instead)} (serve reads its model from the environment)" if instead
            else "")
    return (f"error: {shown}: serve takes no option of python -m bot before it (it logs warnings and its own "
            f"lines){hint}; write serve's options after it (python -m bot serve --help)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    before = _global_option_before_own_parser(argv)
    if before is not None:
        print(before, file=sys.stderr)  # noqa: T201
        return 2
    if argv[:1] == ["bench"]:  # the benchmark has its own options (python -m bot bench --help)
        from bot.jobs.bench import main as bench_main

        return bench_main(argv[1:])
    if argv[:1] == ["serve"]:  # the scoring service has its own options and imports no torch on its way
        from bot.serve.options import preload

        loading = preload(argv[1:])  # the model loads while the web stack is imported and the port bound
        from bot.serve.app import main as serve_main

        return serve_main(argv[1:], loading)
    parser = build_parser()
    misplaced = _misplaced_global_option(parser, argv)
    if misplaced is not None:
        print(misplaced, file=sys.stderr)  # noqa: T201
        return 2
    args = parser.parse_args(argv)
    _setup_logging(args.verbose, args.log_format)
    from bot.core.errors import StoreBusy, StoreError, StoreRefused
    from bot.core.policy import PolicyError
    from bot.eval import EvalInputError
    from bot.scoring import ScorerLoadError

    try:
        if args.command == "scan":
            from bot.jobs.scan import run_scan

            return asyncio.run(run_scan(args, _settings(args)))
        if args.command == "score":
            from bot.jobs.score import OutputError, run_score

            if args.texts:  # texts on the command line: the same JSON lines, ids 1, 2, ...
                sys.stdin = io.TextIOWrapper(io.BytesIO("".join(
                    json.dumps({"id": n, "text": t}) + "\n" for n, t in enumerate(args.texts, start=1)).encode()),
                    encoding="utf-8")
            elif sys.stdin is not None and sys.stdin.isatty():  # typed by hand: say what to type, answer each line
                print('score: reading JSON lines {"id": 1, "text": "..."} from the terminal, each answered when '  # noqa: T201
                      "entered; end with Ctrl-D (or pass texts as arguments: python -m bot score \"some text\")",
                      file=sys.stderr)
            for stream, name in ((sys.stdin, "standard input"), (sys.stdout, "standard output")):
                if stream is None:  # started with it closed (``<&-``, ``>&-``): Python has no stream for it
                    print(f"error: score: the {name} is closed; score reads JSON lines on standard input and "  # noqa: T201
                          "writes one JSON line per line to standard output", file=sys.stderr)
                    return 2
            # read as bytes whatever the locale and newline mode (bot.jobs.score.input_lines): lines end at "\n"
            # only, a byte order mark names the encoding, a byte that is not UTF-8 fails its own line alone
            if isinstance(sys.stdout, io.TextIOWrapper):  # and written as UTF-8 JSON lines whatever the locale
                sys.stdout.reconfigure(encoding="utf-8")
            try:
                return asyncio.run(run_score(args, _settings(args), sys.stdin, sys.stdout))
            except OutputError as exc:  # a full disk under ``> file``: stdout then points at devnull, as below
                print(f"error: score: standard output could not be written ({exc}); the output is incomplete",  # noqa: T201
                      file=sys.stderr)
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 1
        if args.command == "policy":
            return _policy_check(args, _settings(args))
        if args.command == "eval":
            return _eval(args, _settings(args))
        if args.command == "bench":
            from bot.jobs.bench import main as bench_main

            return bench_main(args.rest)
        if args.command == "purge":
            return asyncio.run(_purge(args, _settings(args)))
        if args.command == "report":
            return asyncio.run(_report(args, _settings(args)))
        if args.command == "backup":
            return asyncio.run(_backup(args, _settings(args)))
        if args.command == "slack":
            return _slack(_settings(args))
        if args.command == "discord":
            return _discord(_settings(args))
    except PolicyError as exc:
        print(_policy_error_text(exc), file=sys.stderr)  # noqa: T201
        return 2
    except ScorerLoadError as exc:
        print(f"error: the model could not be loaded: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except EvalInputError as exc:
        print(f"error: eval: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except FileNotFoundError as exc:
        print(f"error: file not found: {exc.filename or exc}", file=sys.stderr)  # noqa: T201
        return 2
    except (StoreRefused, StoreBusy) as exc:  # one line naming the database (password hidden) and the cause
        print(f"error: {exc.database}: cannot be used as the mod-log database: {exc.cause}", file=sys.stderr)  # noqa: T201
        return 2
    except StoreError as exc:  # a malformed migration file; a scan stopped on a refused write (ScanStoreFailed)
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except sqlite3.DatabaseError as exc:  # includes OperationalError: a folder, no permission, not a SQLite file
        where = getattr(args, "db", None) or "the mod-log database"
        print(f"error: {where}: cannot be used as the mod-log database: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (``... | head``): stop quietly; point stdout at devnull so the interpreter's final
        # flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 1


def _setup_logging(verbosity: int, fmt: str = "text") -> None:
    """Warnings on stderr (``-v`` INFO, ``-vv`` DEBUG), text or JSON lines: :func:`bot.logs.setup_logging`."""
    from bot.logs import setup_logging

    setup_logging(verbosity, fmt)


def _policy_error_text(exc: Exception) -> str:
    """``error: invalid policy: ...``, one line per problem."""
    lines = str(exc).splitlines() or [""]
    if len(lines) == 1:
        return f"error: invalid policy: {lines[0]}"
    return "\n".join([f"error: invalid policy ({len(lines)} problems):", *(f"  {ln}" for ln in lines)])


def _discord(settings: Settings) -> int:
    """Run the Discord bot: token and policies are checked before anything connects or the model loads."""
    from bot.runtime import build_policies

    if not (settings.discord_token or os.environ.get("DISCORD_TOKEN")):
        where = "the bot token: Developer Portal > your application > Bot > Reset Token; docs/discord-setup.md"
        print(f"error: discord: DISCORD_TOKEN is not set ({where})", file=sys.stderr)  # noqa: T201
        return 2
    build_policies(settings)  # PolicyError (exit 2) before connecting
    from bot.adapters.discord.client import run as run_discord

    # a moderation bot never joins voice: discord.py's "PyNaCl / davey is not installed" warnings are noise
    logging.getLogger("discord.client").addFilter(lambda r: "voice will NOT be supported" not in r.getMessage())

    _graceful_sigterm()
    try:
        run_discord(settings=settings)
    except StoreError as exc:  # a write refused for good: the bot closed; one line, exit 2
        print(f"error: discord: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except SystemExit as exc:
        if isinstance(exc.code, str):  # run() names the cause: bad token, no network, refused intents
            print(f"error: discord: {exc.code}", file=sys.stderr)  # noqa: T201
            return 1
        raise
    return 0


def _graceful_sigterm() -> None:
    """Treat SIGTERM (systemd, containers, Procfile runners) like Ctrl-C: the bot drains its queue and carries out
    judged verdicts before it closes (asyncio and discord.py handle SIGINT gracefully).

    A process started in the background of a shell script inherits SIGINT *ignored* (POSIX shells without job
    control do that to ``cmd &``), and Python then keeps it ignored: the SIGINT this handler sends was dropped and
    the bot ran on after SIGTERM for ever. So an ignored SIGINT gets Python's default handler back first."""
    import signal

    def stop(*_: object) -> None:
        _STOPPED_BY_SIGTERM.append(True)
        os.kill(os.getpid(), signal.SIGINT)

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, stop)


#: Set when SIGTERM asked the bot to stop: a requested stop exits 0, an interrupt from the keyboard 130.
_STOPPED_BY_SIGTERM: list[bool] = []


def _slack(settings: Settings) -> int:
    """Run the Slack app: tokens, transport and policies are checked before anything connects or the model loads."""
    from bot.adapters.slack.run import SlackSettings, run_slack
    from bot.runtime import build_policies

    try:
        slack = SlackSettings.from_env()
    except SystemExit as exc:
        print(f"error: slack: {exc.code}", file=sys.stderr)  # noqa: T201
        return 2
    build_policies(settings).validate_servers("slack")  # PolicyError (exit 2) before connecting
    _graceful_sigterm()
    try:
        asyncio.run(run_slack(slack, settings))
    except KeyboardInterrupt:
        return 0 if _STOPPED_BY_SIGTERM else 130
    except StoreError as exc:  # a write refused for good: the bot closed; one line, exit 2
        print(f"error: slack: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except Exception as exc:  # noqa: BLE001 - one line naming the cause, no traceback (issue 20)
        print(f"error: slack: {type(exc).__name__}: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    return 0


def _same_folder(a: Path, b: Path) -> bool:
    """``a`` and ``b`` are one folder (resolved; a folder that does not exist is no folder)."""
    try:
        return a.resolve(strict=True) == b.resolve(strict=True)
    except OSError:
        return False


def _policy_check(args: argparse.Namespace, settings: Settings) -> int:
    from bot.core.policy import check_replacement_default, load_policy, server_of_policy_file
    from bot.workflow.policy_text import channel_warnings, switched_off_tiers

    files = [settings.default_policy] + ([args.file] if args.file else [])
    policy = load_policy(*files)
    check_replacement_default(settings.default_policy)  # MODBOT_POLICY replaces the packaged default: whole
    named = server_of_policy_file(args.file) if args.file else None
    if named is not None:  # a server's file (<platform>-<server id>.toml): what the bot refuses for it at start
        policy.check_for_server(named[1], str(args.file))
    notes = switched_off_tiers(load_policy(settings.default_policy), policy) if args.file else []
    unread = None
    if args.file and _same_folder(args.file.parent, settings.servers_dir):
        # a file in the servers folder is a server's file: its name is checked too (a bot or scan reads
        # discord-<id>.toml only: a .TOML or a name instead of the id ran the server on the default policy)
        from bot.core.policy_registry import file_server

        by_name = file_server(args.file.name)
        if isinstance(by_name, str):
            unread = f"{args.file}: no server reads this file: {by_name}"
        else:  # what the bot refuses at start for this server (moderator_roles holding its id: @everyone)
            policy.check_for_server(by_name[1], str(args.file))
            from bot.core.policy_registry import PolicyRegistry

            PolicyRegistry.check_own_ids(args.file)  # ids of its platform: a role's name matched no role
    if args.json:
        doc = policy.model_dump(mode="json")
        sys.stdout.write(json.dumps({"files": [str(f) for f in files], "version": policy.version, "policy": doc},
                                    indent=2) + "\n")
        sys.stdout.flush()  # inside main's try, so a closed pipe (``| head``) is a quiet exit, not a traceback
    for line in policy.warnings():
        print(f"warning: {line}", file=sys.stderr)  # noqa: T201
    if unread is not None:
        print(f"warning: {unread}", file=sys.stderr)  # noqa: T201
    for warning in channel_warnings(policy):
        print(f"warning: {warning} (set it in the server's file or with /policy set)", file=sys.stderr)  # noqa: T201
    ok = f"OK: valid policy, version {policy.version} ({', '.join(str(f) for f in files)})"
    for note in notes:  # tiers the file switches off (act = false): said in words, beside the OK line
        print(f"note: {note}", file=sys.stderr if args.json else sys.stdout)  # noqa: T201
    print(ok, file=sys.stderr if args.json else sys.stdout)  # noqa: T201 - stdout stays pure JSON with --json
    return 0


def _eval(args: argparse.Namespace, settings: Settings) -> int:
    from bot.core.policy import check_replacement_default, load_policy
    from bot.eval import EvalInputError, check_input, run_eval
    from bot.runtime import load_artifact_scorer, load_scorer

    if args.baseline_policy and (args.kind != "scene" or args.baseline is None):
        raise EvalInputError("--baseline-policy needs --baseline and applies to scene only (hatecheck, olid and mhc "
                             "take --baseline-threshold)")
    if not args.file:
        if args.kind != "scene":
            raise EvalInputError(f"{args.kind} needs its data file or folder (from ../shared/data, e.g. "
                                 "hatecheck/hatecheck_dev_70pct.csv or olid/); only scene has a bundled default")
        from bot.eval.scene import SCENE_CASES

        args.file = [SCENE_CASES]
    for f in args.file:  # every input checked before the model loads
        check_input(args.kind, f, args.threshold)
    if args.baseline_threshold is not None and not 0.0 <= args.baseline_threshold <= 1.0:
        raise EvalInputError(f"baseline threshold {args.baseline_threshold} is outside [0, 1]")
    for d in (args.artifact, args.baseline):
        if d is not None and not (d / "manifest.json").is_file():
            raise EvalInputError(f"{d}: not a model artifact directory (no manifest.json)")
    policy = load_policy(settings.default_policy, *args.policy)  # PolicyError names the file, key and reason
    check_replacement_default(settings.default_policy)
    for extra in args.baseline_policy:
        load_policy(settings.default_policy, extra)  # checked before any model loads
    threshold = args.threshold
    if args.kind == "olid":
        # OLID: each model's toxicity head at its own calibrated threshold (its artifact's thresholds.json),
        # unless --threshold / --baseline-threshold say otherwise; read before any model loads.
        from bot.eval import artifact_threshold

        if threshold is None and args.artifact is not None:
            threshold = artifact_threshold(args.artifact, "toxicity")
        if args.baseline_threshold is None and args.baseline is not None:
            args.baseline_threshold = artifact_threshold(args.baseline, "toxicity")
    if threshold is None and args.kind != "olid":
        # HateCheck: a case is predicted hateful when identity_attack reaches the default policy's review tier.
        # OLID (None): the toxicity head at the model's own calibrated threshold (bot/model/artifact).
        tier = policy.thresholds.get("identity_attack")
        threshold = tier.review if tier and tier.review is not None else 0.5
    scorer = load_artifact_scorer(args.artifact, settings) if args.artifact else load_scorer(settings)
    baseline = load_artifact_scorer(args.baseline, settings) if args.baseline else None
    for f in args.file:
        run_eval(args.kind, f, threshold=threshold, batch_size=args.batch_size, scorer=scorer, pad=args.pad,
                 policy=policy, baseline=baseline, baseline_threshold=args.baseline_threshold, settings=settings,
                 policy_files=tuple(args.policy),
                 baseline_policy_files=tuple(args.baseline_policy) if args.baseline_policy else None)
    return 0


async def _report(args: argparse.Namespace, settings: Settings) -> int:
    """``report``: the live mod log as HTML (:mod:`bot.report_live`); never creates a database."""
    from bot.report_live import select_servers, write_modlog_report
    from bot.store import describe, exists, open_store, overwrites_database

    if overwrites_database(args.out, settings.db_path):
        print(f"error: --out {args.out} is the mod log {describe(settings.db_path)} (the report would overwrite it); "  # noqa: T201
              "choose another file", file=sys.stderr)
        return 2
    if not exists(settings.db_path):
        print(f"error: {describe(settings.db_path)}: no such database; nothing to report", file=sys.stderr)  # noqa: T201
        return 2
    store = await open_store(settings.db_path, create=False)
    try:
        servers = None
        if args.server:
            try:
                servers = select_servers(await store.modlog_servers(), args.server)
            except LookupError as exc:
                print(f"error: {describe(settings.db_path)}: {exc.args[0]}", file=sys.stderr)  # noqa: T201
                return 2
        n = await write_modlog_report(store, args.out, servers=servers)
    except OSError as exc:
        print(f"error: {args.out}: cannot be written: {exc.strerror or exc}", file=sys.stderr)  # noqa: T201
        return 2
    finally:
        await store.close()
    print(f"mod log of {n} server(s) written to {args.out}")  # noqa: T201
    return 0


async def _backup(args: argparse.Namespace, settings: Settings) -> int:
    from bot.core.errors import StoreRefused
    from bot.store import open_store

    store = await open_store(settings.db_path, create=False)
    try:
        where = await store.backup(str(args.out) if args.out is not None else None)
    except StoreRefused as exc:  # the copy, not the mod log, was refused: say so (the mod log is untouched)
        cause = exc.cause.removeprefix("backup failed: ")  # the line says "failed" once
        to = "" if exc.database == store.location else f" to {exc.database}"  # PostgreSQL: no copy was begun
        print(f"error: backup of {store.location}{to} failed: {cause}", file=sys.stderr)  # noqa: T201
        return 2
    finally:
        await store.close()
    print(f"backed up {store.location} to {where}")  # noqa: T201
    return 0


async def _purge(args: argparse.Namespace, settings: Settings) -> int:
    """``purge``: erase message text past the retention period, ``--days`` for every server, else each server's own
    ``server.retention_days`` (its effective policy, as the bot's own retention: :mod:`bot.workflow.retention`)."""
    from datetime import UTC, datetime, timedelta

    from bot.core.policy import load_policy
    from bot.runtime import build_policies
    from bot.store import describe, exists, open_store
    from bot.workflow.retention import Retention
    from bot.workflow.words import plural

    if args.days is not None and not 1 <= args.days <= 3650:  # the policy's server.retention_days allows the same
        print("error: --days must be between 1 and 3650", file=sys.stderr)  # noqa: T201
        return 2
    if args.days is None:
        load_policy(settings.default_policy)  # checked before the mod log is opened (PolicyError: exit 2)
    if not exists(settings.db_path):  # purging never creates a database (a typo in --db would)
        print(f"error: {describe(settings.db_path)}: no such database; nothing to purge", file=sys.stderr)  # noqa: T201
        return 2
    store = await open_store(settings.db_path, create=False)  # purging never creates a database (a typo would)
    failed: list[tuple[str, str]] = []
    try:
        if args.days is not None:
            n = await store.purge_expired_text(datetime.now(UTC) - timedelta(days=args.days))
            period = f"older than {plural(args.days, 'day')}"
        else:
            retention = Retention(None, store, build_policies(settings, store=store))
            n = await retention.purge()  # a server it could not purge is logged on stderr, naming the reason
            failed = retention.failed
            period = "past each server's retention period"
    finally:
        await store.close()
    print(f"purged the text of {plural(n, 'message')} {period} from {store.location}")  # noqa: T201
    if failed:
        print(f"error: the text of {plural(len(failed), 'server')} was not purged (see above); fix the "  # noqa: T201
              "cause and run purge again", file=sys.stderr)
        return 1
    return 0
