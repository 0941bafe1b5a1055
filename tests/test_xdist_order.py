"""The order the xdist workers get the test files in (tests/xdist_order.py): longest first by the last run's
seconds, unknown files by their test count, files sharing an expensive session fixture as one unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.xdist_order import SHARED, estimated, file_of

TESTS = Path(__file__).resolve().parent


def test_known_files_keep_their_seconds_and_unknown_ones_get_the_median_per_test():
    """A file in the cache keeps its figure; a new one is its test count times the median seconds per test of the
    known files (here 2.0 s and 0.1 s per test: median 1.05)."""
    got = estimated({"a.py": 20.0, "b.py": 1.0}, {"a.py": 10, "b.py": 10, "new.py": 4})
    assert got == {"a.py": 20.0, "b.py": 1.0, "new.py": pytest.approx(4 * 1.05)}


def test_without_a_cache_the_order_is_by_test_count():
    """A first run (no cache) estimates 0.3 s per test: the most tests first, as xdist's own order."""
    got = estimated({}, {"few.py": 2, "many.py": 50})
    assert sorted(got, key=lambda f: -got[f]) == ["many.py", "few.py"]
    assert got["many.py"] == pytest.approx(15.0)


def test_a_nodeid_belongs_to_its_file():
    assert file_of("tests/test_x.py::test_y[a::b]") == "tests/test_x.py"
    assert file_of("tests/discord/test_z.py::Cls::test_w") == "tests/discord/test_z.py"


def test_shared_groups_name_existing_files_that_use_their_fixture():
    """Every grouped file exists and uses the fixture its group is named after (a renamed file or fixture would
    silently stop grouping)."""
    for path, fixture in SHARED.items():
        source = (TESTS.parent / path).read_text(encoding="utf-8")
        assert fixture in source or (fixture == "pg_server" and "pg_url" in source), path
