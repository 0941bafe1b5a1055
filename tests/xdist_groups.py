"""Test files that share an expensive per-worker session fixture go to one xdist worker, as one unit.

xdist's ``--dist loadfile`` (pyproject's ``addopts``) hands out whole files, most tests first; each worker builds the
session fixtures its files use. The files of :data:`SHARED` use the real model of ``embedded_scorer`` (about 6 s of
CPU and 10 s of wall time to load) or the PostgreSQL server of ``pg_server`` (initdb and a start, about a second):
handed out together they are built by one worker instead of by both. Which tests run, in which order within a file,
and with which fixtures does not change: each file still runs whole on one worker; a unit of several files is placed
in the queue by its number of tests, as xdist places a file.

Ordering the files by their measured seconds (longest first) was tried and dropped: simulated on the seconds per
file of one full set of runs, xdist's order ends within about a second of the best two-worker split (202.8 s against
201.6 s of 403 s of tests), because the many short files at its end even the workers out.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

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


def unit_of(nodeid: str) -> str:
    """The unit a test is handed out in: its file, or the :data:`SHARED` group its file belongs to."""
    path = file_of(nodeid)
    return SHARED.get(path, path)


class SharedFixtureFiles(LoadFileScheduling):
    """``LoadFileScheduling`` with :func:`unit_of` as its unit (xdist's own hook for a scheduler's grouping)."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)
