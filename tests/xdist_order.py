"""Longest test files first under pytest-xdist: what each file took in the last full run (kept in pytest's cache),
so the two workers do not end with one of them alone on a long file (the real-model and training files, the ONNX
export) while the other has nothing left.

xdist's ``--dist loadfile`` hands out whole files, most tests first (``loadscopereorder``): the files with few but
slow tests (``tests/test_onnx.py``: 7 tests, about a minute; ``tests/test_model_fast.py``) come late. Here the queue
is ordered by the seconds each file took in the last unfiltered run (setup + call + teardown of its tests, as the
controller received them), longest first; a file the cache does not know (a first run, a new file) is placed by its
number of tests times the median seconds per test of the known files. Without a cache this is xdist's own order.

Files that share an expensive per-worker session fixture (:data:`SHARED`: the real model of ``embedded_scorer``, about
6 s of CPU to load; the PostgreSQL server of ``pg_server``) are one unit, so one worker builds it once instead of
both workers each building it. Which tests run, and with which fixtures, does not change: each file still runs whole
on one worker.
"""

from __future__ import annotations

import statistics
from collections import OrderedDict, defaultdict

import pytest
from xdist.scheduler import LoadFileScheduling

#: The pytest cache key: ``{"tests/test_x.py": seconds, ...}`` (``.pytest_cache/v/modbot/file-seconds``).
CACHE_KEY = "modbot/file-seconds"


#: Test files handed out together (one unit, one worker), by the session fixture they share.
SHARED: dict[str, str] = {
    "tests/test_model.py": "embedded_scorer",
    "tests/test_onnx.py": "embedded_scorer",
    "tests/test_store_postgres.py": "pg_server",
    "tests/discord/test_shards_wire.py": "pg_server",
}


def file_of(nodeid: str) -> str:
    """``tests/test_x.py`` of ``tests/test_x.py::test_y[param]``."""
    return nodeid.split("::", 1)[0]


class LongestFilesFirst(LoadFileScheduling):
    """``LoadFileScheduling`` whose work queue is ordered by :func:`estimated` seconds, longest first."""

    def __init__(self, config: pytest.Config, log: object = None, *, seconds: dict[str, float]) -> None:
        super().__init__(config, log)  # log: xdist's Producer, passed through as given
        self.seconds = seconds
        self.collection: list[str] | None = None  # as xdist's own __init__ sets it (typed here for mypy)

    def _split_scope(self, nodeid: str) -> str:
        """The unit of a test: its file, or the group of :data:`SHARED` the file belongs to."""
        path = file_of(nodeid)
        return SHARED.get(path, path)

    def schedule(self) -> None:
        """xdist's ``LoadScopeScheduling.schedule`` with the queue in :func:`estimated` order (the rest as there:
        one unit per worker to start, then at least two pending per worker)."""
        assert self.collection_is_completed
        if self.collection is not None:
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        units: dict[str, dict[str, bool]] = OrderedDict()
        tests_per_file: defaultdict[str, int] = defaultdict(int)
        for nodeid in self.collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            tests_per_file[file_of(nodeid)] += 1
        per_file = estimated(self.seconds, dict(tests_per_file))
        cost: defaultdict[str, float] = defaultdict(float)
        for path, seconds in per_file.items():
            cost[SHARED.get(path, path)] += seconds
        for scope in sorted(units, key=lambda s: -cost[s]):
            self.workqueue[scope] = units[scope]
        for _ in range(len(self.nodes) - len(self.workqueue)):
            unused, _assigned = self.assigned_work.popitem()
            unused.shutdown()
        for node in self.nodes:
            self._assign_work_unit(node)
        for node in self.nodes:
            self._reschedule(node)
        if not self.workqueue:
            for node in self.nodes:
                node.shutdown()


def estimated(seconds: dict[str, float], counts: dict[str, int]) -> dict[str, float]:
    """Seconds per file: the cached figure, else its test count times the median seconds per test of the files
    the cache knows (0.3 s per test when it knows none: then the order is xdist's own, most tests first)."""
    known = [seconds[f] / n for f, n in counts.items() if f in seconds and n]
    per_test = statistics.median(known) if known else 0.3
    return {f: seconds.get(f, n * per_test) for f, n in counts.items()}


class Recorder:
    """In the controller: add up each file's seconds from the test reports, and store them at the end of a run
    that was not filtered or stopped early (no ``-k``, ``-m``, ``--lf``, named tests, ``-x`` stop: a part of a
    file would understate it)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.totals: defaultdict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.totals[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        opt = self.config.option
        named = any("::" in str(a) for a in self.config.args)
        cache = getattr(self.config, "cache", None)  # none with -p no:cacheprovider
        stopped = bool(session.shouldstop or session.shouldfail)  # -x or --maxfail: the rest of a file never ran
        if not self.totals or opt.keyword or opt.markexpr or getattr(opt, "lf", False) or named or stopped \
                or cache is None:
            return
        known: dict[str, float] = dict(cache.get(CACHE_KEY, {}))
        known.update({f: round(s, 2) for f, s in self.totals.items()})
        cache.set(CACHE_KEY, known)


def cached_seconds(config: pytest.Config) -> dict[str, float]:
    """The file seconds of the last full runs (``{}`` without a cache: a first run, or ``-p no:cacheprovider``)."""
    cache = getattr(config, "cache", None)  # none with -p no:cacheprovider
    if cache is None:
        return {}
    value = cache.get(CACHE_KEY, {})
    return {str(k): float(v) for k, v in value.items()} if isinstance(value, dict) else {}
