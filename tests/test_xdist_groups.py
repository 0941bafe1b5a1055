"""How the xdist workers get the test files (tests/xdist_groups.py): by file, and files sharing an expensive
session fixture as one unit."""

from __future__ import annotations

from pathlib import Path

from tests.xdist_groups import SHARED, file_of, unit_of

TESTS = Path(__file__).resolve().parent


def test_a_nodeid_belongs_to_its_file():
    assert file_of("tests/test_x.py::test_y[a::b]") == "tests/test_x.py"
    assert file_of("tests/discord/test_z.py::Cls::test_w") == "tests/discord/test_z.py"


def test_files_of_a_group_are_one_unit_and_others_their_own():
    """The real-model files share a unit, the PostgreSQL files another; any other file is its own unit."""
    assert unit_of("tests/test_model.py::test_a") == unit_of("tests/test_onnx.py::test_b[x]")
    assert unit_of("tests/test_store_postgres.py::t") == unit_of("tests/discord/test_shards_wire.py::t")
    assert unit_of("tests/test_model.py::t") != unit_of("tests/test_store_postgres.py::t")
    assert unit_of("tests/test_words.py::test_w") == "tests/test_words.py"


def test_shared_groups_name_existing_files_that_use_their_fixture():
    """Every grouped file exists and uses the fixture its group is named after (a renamed file or fixture would
    silently stop grouping)."""
    for path, fixture in SHARED.items():
        source = (TESTS.parent / path).read_text(encoding="utf-8")
        assert fixture in source or (fixture == "pg_server" and "pg_url" in source), path
