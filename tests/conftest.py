"""Fixtures shared by several test folders: a throwaway PostgreSQL server (tests/pg_server.py) and a fresh database
on it per test, for the store contract suite (tests/test_store_postgres.py) and the wire tests that run a bot on a
PostgreSQL mod log (tests/discord/test_shards_wire.py); one fake scoring service per session for ``python -m bot``
subprocesses that need scores but not the real model's (``fake_scorer_url``); the real embedded model loaded once per
session for tests that only read its scores (``embedded_scorer``); how many xdist workers ``-n auto`` starts."""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg
import pytest

from tests.pg_server import PgServer, find_bindir, start_server
from tests.serve_proc import start_service
from tests.xdist_groups import SharedFixtureFiles

if TYPE_CHECKING:
    from bot.scoring.detoxify_scorer import DetoxifyScorer

# Bytecode caches, even where PYTHONDONTWRITEBYTECODE is set (this development machine sets it): without them every
# run, and each xdist worker of it, compiles every test module and pytest rewrites its asserts again (about 4.5 s of
# CPU per process on 2 cores, 7.5 s -> 3 s to collect the suite), and each ``python -m bot`` subprocess compiles the
# package. Python and pytest only write ``__pycache__`` folders beside the sources (ignored by git), read them back
# when they match and rewrite them when a file changes; the first run writes them. Only this test process and its
# workers write: subprocesses keep the environment's setting and read what is there.
sys.dont_write_bytecode = False


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> SharedFixtureFiles | None:
    """``--dist loadfile`` (pyproject's ``addopts``) with the files that share the real model or the PostgreSQL
    server on one worker (:mod:`tests.xdist_groups`); any other ``--dist`` is xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    return SharedFixtureFiles(config, log)


#: Workers per CPU core for ``-n auto``: the suite's tests spend about 40% of their time waiting (timeouts, retry
#: delays, subprocesses starting, fake servers answering late), so two per core keep both cores busy.
WORKERS_PER_CORE = 2
#: Memory (bytes) set aside per worker: a worker that loads the real model peaks at about 1.1 GB resident.
WORKER_MEMORY = 3 * 2**29


def _available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes, or ``None`` where it cannot be read (not Linux)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Workers for ``-n auto`` (pyproject's ``addopts``): none, i.e. run in this process, when the command names at
    most three test files (or tests in them), where starting workers costs more than it saves;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` when set (``None``: xdist reads it); else :data:`WORKERS_PER_CORE` per CPU
    core this process may use, fewer where the available memory holds fewer than that many times
    :data:`WORKER_MEMORY`, and never fewer than one per core."""
    files = [str(arg).split("::")[0] for arg in config.args]
    if files and len(files) <= 3 and all(f.endswith(".py") for f in files):
        return 0
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = WORKERS_PER_CORE * cores
    memory = _available_memory()
    if memory is not None:
        workers = min(workers, memory // WORKER_MEMORY)
    return max(cores, workers)


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """Every test starts and ends with the logging setup it found: the root logger's handlers and level and every
    named logger's level. A test that runs a command's ``main()`` in-process (``setup_logging``, ``basicConfig``)
    leaves a root handler bound to *its* captured stderr, which pytest closes after it; a later test in the same
    xdist worker then logs into a closed file ("--- Logging error --- ... I/O operation on closed file") or, after
    ``setup_logging`` silenced ``bot.ingest``, sees none of the warnings it checks. Which test ran before which
    depends on xdist's scheduling, so without this the suite's result depended on the order (CI, 2026-12-02)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: lg.level for name, lg in logging.Logger.manager.loggerDict.items()
              if isinstance(lg, logging.Logger)}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, lg in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(lg, logging.Logger):
            lg.setLevel(levels.get(name, logging.NOTSET))


#: SQLite's busy timeout (ms) in tests that hold a mod log's write lock past it on purpose (``short_busy_timeout``).
SHORT_BUSY_TIMEOUT_MS = 500


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> float:
    """SQLite mod logs opened in this test wait :data:`SHORT_BUSY_TIMEOUT_MS` for a lock instead of
    ``bot.store.schema.BUSY_TIMEOUT_MS`` (5,000): for tests that hold the write lock past the timeout on purpose,
    which then hold it a few times the short timeout instead of 6-7 s (the same sequence: writes wait, fail busy,
    are retried, succeed once the lock is released). Request it before a fixture that opens the store. Returns
    the timeout in seconds."""
    monkeypatch.setattr("bot.store.schema.BUSY_TIMEOUT_MS", SHORT_BUSY_TIMEOUT_MS)
    return SHORT_BUSY_TIMEOUT_MS / 1000


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One throwaway PostgreSQL cluster for the session; skipped (failed under ``CI``) without the binaries."""
    bindir = find_bindir()
    if bindir is None:
        reason = "PostgreSQL binaries (initdb, pg_ctl) not found: run scripts/setup.sh or set PG_BINDIR"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    server = start_server(bindir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def pg_url(pg_server: PgServer) -> AsyncIterator[str]:
    """The URL of a fresh, empty database on the session's server (dropped after the test)."""
    name = "t" + uuid.uuid4().hex[:16]
    admin = await asyncpg.connect(pg_server.url())
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    yield pg_server.url(name)
    admin = await asyncpg.connect(pg_server.url())
    await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    await admin.close()




@pytest.fixture(params=["sqlite", "postgresql"])
async def database(request: pytest.FixtureRequest, pg_url: str, tmp_path: Path) -> str:
    """The mod log's location, once per backend: a SQLite file, then a fresh PostgreSQL database (a test module
    may define its own ``database`` instead)."""
    return pg_url if request.param == "postgresql" else str(tmp_path / "modlog.db")


@pytest.fixture
async def store(database: str) -> AsyncIterator[Any]:
    """The mod log opened at :func:`database` (closed after the test)."""
    from bot.store import open_store

    s = await open_store(database)
    yield s
    await s.close()


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[Any]:
    """The workflow world of :func:`tests.test_workflow.make_world` (real SQLite mod log, strict fake platform),
    closed after the test (a test module may define its own ``world`` instead)."""
    from tests.test_workflow import make_world

    w = await make_world(tmp_path)
    yield w
    await w.workflow.close()
    await w.service.close()
    await w.store.close()


@pytest.fixture(scope="session")
def fake_scorer_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of one ``python -m bot serve --scorer tests.serve_scorers:fake`` for the session (keyword scores,
    0.05 s per batch, no rate limit in practice): set it as ``MODBOT_SCORER_URL`` so that a ``python -m bot scan``
    subprocess scores through it (:class:`bot.scoring.remote.RemoteScorer`) in well under a second instead of
    loading the real model (seconds of CPU per process)."""
    svc = start_service(tmp_path_factory.mktemp("fake-scorer"), "--rate", "100000", "--burst", "100000")
    try:
        yield svc.url
    finally:
        svc.stop()


@pytest.fixture(scope="session")
def embedded_scorer(tmp_path_factory: pytest.TempPathFactory) -> DetoxifyScorer:
    """The real embedded model on torch through detoxify (:meth:`DetoxifyScorer.load` with no arguments), loaded
    once per session (once per worker under xdist): offline, assembled into an empty temporary ``MODBOT_CACHE``
    (set only while it loads). Shared: call ``score_batch`` and read attributes, never change it; a test that needs
    other settings (a checkpoint, bf16, int8, ONNX) loads its own scorer."""
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    mp.setenv("MODBOT_CACHE", str(tmp_path_factory.mktemp("modbot-cache")))
    try:
        from bot.scoring.detoxify_scorer import DetoxifyScorer

        return DetoxifyScorer.load()
    finally:
        mp.undo()
