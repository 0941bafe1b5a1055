"""``python -m bot serve``'s options and its model loading, kept free of the web stack so the model can start
loading before aiohttp, prometheus-client and the policy code are imported.

:func:`preload` is called by ``bot.cli`` first thing for ``serve``: it reads the options and the environment and
starts loading the model in a background thread, so that loading (onnxruntime, numpy and tokenizers imports, the
ONNX Runtime session, which releases the GIL while it builds) runs while the main thread imports the web stack,
checks the options and binds the port. ``bot.serve.app.main`` then takes the loading over (and starts one itself
when called without it). Start-up figures: docs/perspective-migration.md.

Layer: composition root helper (standard library; ``bot.settings`` and ``bot.runtime`` inside the thread).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.serve.keys import KeyRing

if TYPE_CHECKING:
    from bot.core.ports import Scorer
    from bot.settings import Settings

#: Perspective's per-comment limit (UTF-8 bytes), the default of ``--max-comment-bytes``; also
#: :data:`bot.serve.perspective.MAX_COMMENT_BYTES`.
MAX_COMMENT_BYTES = 20_480
#: Largest request body by default (bytes): room for a native batch of many chat messages; larger gets 413.
MAX_BODY_BYTES = 1_048_576


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and any loopback address however written (``127.0.0.5``,
    ``0:0:0:0:0:0:0:1``); a name other than ``localhost`` is not resolved and counts as not loopback."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
#: Seconds a connection may stay idle, or take to send a request line and headers, before it is closed: aiohttp's
#: own ``run_app`` default (its connection handler's default is an hour, so a slowloris client that opens connections
#: and sends nothing would hold them, and file descriptors, for that long). Longer than nginx's 60 s upstream
#: keep-alive, so a proxy never reuses a connection the service is closing.
IDLE_TIMEOUT_S = 75.0
#: Seconds a request's body may take to arrive after its headers (408 after it): a 1 MiB body at 1 Mbit/s.
BODY_TIMEOUT_S = 10.0
#: Connections one client address may hold open at once by default (``--max-connections-per-address``): room for
#: a bot's connection pool and a proxy's keep-alive connections, far below what exhausts file descriptors.
MAX_CONNECTIONS_PER_ADDRESS = 64
#: File descriptors kept free under the soft ``RLIMIT_NOFILE`` by the default ``--max-connections`` (the model,
#: its threads, logs and the listening sockets need some).
FD_RESERVE = 256


def default_max_connections() -> int:
    """The default ``--max-connections``: the soft ``RLIMIT_NOFILE`` less :data:`FD_RESERVE` (so a flood of
    connections is answered 503 before ``accept()`` runs out of descriptors), at least 64 and at most 100,000."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return 100_000
    return max(64, min(100_000, soft - FD_RESERVE))
#: ``time.perf_counter()`` when this module was imported (first thing ``python -m bot serve`` does): the ready
#: line's "s after start".
STARTED = time.perf_counter()


def build_parser() -> argparse.ArgumentParser:
    """Options of ``python -m bot serve``."""
    p = argparse.ArgumentParser(prog="python -m bot serve",
                                description="Perspective-compatible scoring service (docs/perspective-migration.md)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; another address "
                   "needs an API key)")
    p.add_argument("--port", type=int, default=8080, help="port (0: any free port; it is printed)")
    p.add_argument("--port-file", type=Path, help="write the port to this file once listening")
    p.add_argument("--keys-file", type=Path, default=None,
                   help="API keys, one per line (name:key); default $MODBOT_SERVE_KEYS_FILE; also $MODBOT_SERVE_KEYS")
    p.add_argument("--rate", type=float, default=50.0, help="requests per second per key (default 50)")
    p.add_argument("--burst", type=int, default=100, help="requests at once per key (default 100)")
    p.add_argument("--max-comment-bytes", type=int, default=MAX_COMMENT_BYTES,
                   help="Perspective's per-comment limit in UTF-8 bytes (default 20480)")
    p.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES, help="largest request body (default 1 MiB)")
    p.add_argument("--policy", action="append", default=[], metavar="NAME=FILE",
                   help="a named policy for the native endpoint's \"policy\" field (repeatable)")
    p.add_argument("--runtime", choices=("auto", "onnx", "torch"), default=None,
                   help="model runtime (default $MODBOT_RUNTIME or auto)")
    p.add_argument("--precision", choices=("auto", "fp32", "int8"), default=None,
                   help="precision of the model on ONNX Runtime (default $MODBOT_PRECISION or auto: int8 only where "
                        "the CPU has VNNI and a recorded paired check changed no verdict; the choice is printed)")
    p.add_argument("--scorer", default=None,
                   help="module:factory returning a Scorer instead of the model (development and tests; default "
                        "$MODBOT_SERVE_SCORER)")
    p.add_argument("--batch-wait-ms", type=float, default=0.0,
                   help="milliseconds a batch waits for more requests after its first one (default 0: none; the "
                        "batch grows by itself while the model works)")
    p.add_argument("--batch-refill-ms", type=float, default=None,
                   help="milliseconds a batch waits, at most, for as many requests as the previous batch answered "
                        "(default 50, and at most a tenth of that batch's model time; 0: never; see "
                        "bot.serve.batcher.MicroBatcher)")
    p.add_argument("--batch-chars", type=int, default=4_000,
                   help="characters of texts per forward pass at most (default 4000; 0: no bound): what does not "
                        "fit waits for the next pass, shortest requests first, so short requests never wait behind "
                        "a run of long ones (bot.serve.batcher)")
    p.add_argument("--batch-slice-chars", type=int, default=1_000,
                   help="a message of more characters (with its sentence pieces) is scored in slices of about this "
                        "size over several passes, between other requests (default 1000; 0: never sliced)")
    p.add_argument("--batch-workers", type=int, default=None,
                   help="forward passes scored at once, each in its own thread (default: 2 on ONNX Runtime with 2 "
                        "or more CPUs, each pass with half the model threads; 1 otherwise; see serve_workers). With "
                        "MODBOT_ONNX_THREADS set, set this too: the two multiply")
    p.add_argument("--drain-s", type=float, default=20.0, help="longest wait for in-flight requests on SIGTERM")
    p.add_argument("--idle-timeout-s", type=float, default=IDLE_TIMEOUT_S,
                   help="close a connection idle (or still sending its request line and headers) this long "
                        f"(default {IDLE_TIMEOUT_S:g} s; keep it longer than a proxy's upstream keep-alive)")
    p.add_argument("--body-timeout-s", type=float, default=BODY_TIMEOUT_S,
                   help=f"answer 408 to a request whose body has not arrived this long after its headers "
                        f"(default {BODY_TIMEOUT_S:g} s)")
    p.add_argument("--max-connections", type=int, default=None,
                   help="connections open at once from all clients; one more is answered 503 and closed (default: "
                        f"the open-file limit less {FD_RESERVE}, at least 64; 0: no cap)")
    p.add_argument("--max-connections-per-address", type=int, default=MAX_CONNECTIONS_PER_ADDRESS,
                   help="connections one client address (an IPv6 client: its /64) may hold open at once; one more is "
                        "answered 429 and closed "
                        f"(default {MAX_CONNECTIONS_PER_ADDRESS}; 0: no cap; behind a proxy every connection comes "
                        "from the proxy's address: set it above the proxy's upstream connections)")
    return p


def factory(spec: str) -> Callable[[], Scorer]:
    """The zero-argument callable ``module:attr`` names.

    Raises:
        ValueError: ``spec`` is not ``module:attr``, or the module or attribute cannot be imported.
    """
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ValueError(f"--scorer {spec!r}: expected module:factory")
    try:
        made: Callable[[], Scorer] = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"--scorer {spec!r}: {exc}") from exc
    return made


def check_options(args: argparse.Namespace, settings: Settings) -> tuple[KeyRing, dict[str, Path]]:
    """The API keys and the named policy files of ``args``, after the checks that need no policy code (the
    policy files themselves are read by ``bot.serve.app.main``).

    Raises:
        bot.serve.keys.KeyConfigError: the keys file or variable is unusable.
        ValueError: a malformed ``--policy``, a public ``--host`` without keys, a port outside 0-65535, a rate, size
            drain or timeout that is not a positive (drain: non-negative) finite number, a connection cap outside
            0-1,000,000, or a ``--scorer`` that cannot be imported; the message names the option.
    """
    keys = KeyRing.load(args.keys_file or settings.serve_keys_file)
    policies: dict[str, Path] = {}
    for item in args.policy:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--policy {item!r}: expected NAME=FILE")
        policies[name] = Path(path)
    if not keys and not is_loopback_host(args.host):
        raise ValueError(f"--host {args.host}: no API key is configured (MODBOT_SERVE_KEYS_FILE or "
                         "MODBOT_SERVE_KEYS, or --keys-file); without one the service listens only on localhost "
                         "(--host 127.0.0.1), so it did not start")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port {args.port}: expected 0 to 65535")
    for flag, value in (("--rate", args.rate), ("--max-comment-bytes", args.max_comment_bytes),
                        ("--max-body-bytes", args.max_body_bytes)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{flag} {value}: expected a positive finite number")
    if not (math.isfinite(args.batch_wait_ms) and 0 <= args.batch_wait_ms <= 1000):
        raise ValueError(f"--batch-wait-ms {args.batch_wait_ms:g}: expected 0 to 1000 milliseconds")
    if args.batch_refill_ms is not None and not (math.isfinite(args.batch_refill_ms)
                                                 and 0 <= args.batch_refill_ms <= 1000):
        raise ValueError(f"--batch-refill-ms {args.batch_refill_ms:g}: expected 0 to 1000 milliseconds")
    for flag, count in (("--batch-chars", args.batch_chars), ("--batch-slice-chars", args.batch_slice_chars)):
        if not 0 <= count <= 10_000_000:
            raise ValueError(f"{flag} {count}: expected 0 (no bound) to 10000000 characters")
    if args.batch_workers is not None and not 1 <= args.batch_workers <= 64:
        raise ValueError(f"--batch-workers {args.batch_workers}: expected 1 to 64")
    if not (math.isfinite(args.drain_s) and args.drain_s >= 0):
        raise ValueError(f"--drain-s {args.drain_s:g}: expected a finite number of seconds, 0 or more")
    for flag, value in (("--idle-timeout-s", args.idle_timeout_s), ("--body-timeout-s", args.body_timeout_s)):
        if not (math.isfinite(value) and 0 < value <= 86_400):
            raise ValueError(f"{flag} {value:g}: expected a number of seconds above 0, at most a day")
    if args.max_connections is not None and not 0 <= args.max_connections <= 10_000_000:
        raise ValueError(f"--max-connections {args.max_connections}: expected 0 (no cap) to 10000000")
    if not 0 <= args.max_connections_per_address <= 1_000_000:
        raise ValueError(f"--max-connections-per-address {args.max_connections_per_address}: expected 0 (no cap) to "
                         "1000000")
    spec = args.scorer or os.environ.get("MODBOT_SERVE_SCORER")
    if spec:
        factory(spec)
    return keys, policies


def serve_settings(args: argparse.Namespace, settings: Settings) -> Settings:
    """``settings`` as the service uses them: ``--runtime`` and ``--precision`` applied, and never a remote scorer
    (the service does not score through another service)."""
    if args.runtime:
        settings = replace(settings, runtime=args.runtime)
    if args.precision:
        settings = replace(settings, precision=args.precision)
    return replace(settings, scorer_url=None)


def model_loader(args: argparse.Namespace, settings: Settings) -> Callable[[], tuple[Scorer, str]]:
    """The blocking call that loads the service's scorer: ``(scorer, runtime name)``; ``--scorer`` (or
    ``$MODBOT_SERVE_SCORER``) names a factory, else :func:`bot.runtime.load_scorer` with ``settings``.

    Raises (when called): ValueError for a bad ``--scorer``; ``bot.scoring.ScorerLoadError`` when the model cannot
    be loaded.
    """
    spec = args.scorer or os.environ.get("MODBOT_SERVE_SCORER")

    def load() -> tuple[Scorer, str]:
        if spec:
            return factory(spec)(), f"factory:{spec}"
        from bot.runtime import load_scorer

        # threads of the model: see serve_threads (measured both ways, docs/perspective-migration.md), shared
        # among the passes scored at once (serve_workers); MODBOT_ONNX_THREADS overrides
        workers = args.batch_workers or serve_workers()
        os.environ.setdefault("MODBOT_ONNX_THREADS", str(max(1, serve_threads() // workers)))

        scorer = load_scorer(settings)
        return scorer, str(getattr(scorer, "runtime", "torch"))

    return load


def serve_threads(cpus: int | None = None) -> int:
    """ONNX Runtime threads of the service's model by default: every CPU up to two, all but one from three CPUs
    (one core left to the event loop: HTTP, JSON, normalisation, language detection).

    Where the numbers come from (``bench/serve.py --runtimes onnx --messages 1000 --seconds 10``, 2-core AMD EPYC
    with AVX-512, back to back): on an idle machine (load average 1.5) two threads served 16 clients at 76 msg/s
    (p99 at half load 353 ms) against 47 msg/s (p99 518 ms) with one, so a 2-core host keeps both; on the same
    machine shared with other jobs (load 10) one thread had done better (22-38 against 15-21 msg/s), the case of a
    host where other processes already take a core. ``MODBOT_ONNX_THREADS`` overrides.
    """
    n = cpus if cpus is not None else os.cpu_count() or 1
    return n if n <= 2 else n - 1


def serve_workers(cpus: int | None = None) -> int:
    """Forward passes the service scores at once on ONNX Runtime by default (``--batch-workers``): 2 from two CPUs
    (each pass then gets half of :func:`serve_threads`), else 1. Other runtimes and ``--scorer`` factories score
    one pass at a time unless ``--batch-workers`` says otherwise.

    Where the number comes from (``bench/serve.py --runtimes onnx --messages 1000 --seconds 10 --in-process-each
    --also-tree``, 2-core AMD EPYC with AVX-512 VNNI/BF16, 2 December 2026, docs/performance.md): two passes of one
    thread each served 16 clients at 73-101% of the in-process throughput (3 of 7 rounds at 90% or more) against
    72-89% for one pass of two threads, 1.09x its messages per second on average (better in 5 of 7 pairs), and p99
    at half load 123-185 against 177-308 ms (lower in every pair); in one process (``bench/model_calls.py``) two one-thread calls of 16 messages at once ran
    as fast as one two-thread call of 128 or faster (191-208 against 187-190 msg/s). A one-thread call never waits at a parallel section for a core the event
    loop holds, and one call's fixed costs overlap the other's work.
    """
    n = cpus if cpus is not None else os.cpu_count() or 1
    return 2 if n >= 2 else 1


def start_loading(load: Callable[[], tuple[Scorer, str]]) -> Future[tuple[Scorer, str]]:
    """Run ``load`` in a daemon thread; its result (or exception) in the returned future. Once the model is loaded
    the same thread loads the language detector's model (:func:`bot.core.language.warm`, ~0.9 s of CPU measured
    inside the first request that needed it, stalling every other request), after readiness so start-up does not
    wait for it."""
    fut: Future[tuple[Scorer, str]] = Future()

    def run() -> None:
        if not fut.set_running_or_notify_cancel():
            return
        try:
            fut.set_result(load())
        except BaseException as exc:  # noqa: BLE001 - handed to the service, which reports it on one line
            fut.set_exception(exc)
            return
        try:  # then the language detector, which would otherwise load inside the first long request's handler
            from bot.core.language import warm

            warm()
        except ImportError:
            pass

    threading.Thread(target=run, name="modbot-serve-load", daemon=True).start()
    return fut


def preload(argv: Sequence[str]) -> Future[tuple[Scorer, str]] | None:
    """Start loading the model ``python -m bot serve argv`` would load, before the web stack is imported; ``None``
    when the options or the environment are unusable (``bot.serve.app.main`` then reports them and loads nothing).
    """
    try:
        # quietly: --help or a bad option is printed once, by bot.serve.app.main's own parse
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = build_parser().parse_args(list(argv))
    except SystemExit:  # --help, or bad options: main prints them
        return None
    from bot.serve.keys import KeyConfigError
    from bot.settings import Settings, SettingsError

    try:
        settings = serve_settings(args, Settings.from_env())
        check_options(args, settings)
    except (SettingsError, KeyConfigError, ValueError, OSError):
        return None
    return start_loading(model_loader(args, settings))
