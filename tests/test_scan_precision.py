"""A ``scan`` with the embedded model on ONNX Runtime in int8 (``MODBOT_PRECISION=int8``, or ``auto`` on a CPU whose
paired check passed): the real model, loaded by the scan itself from its settings, and the mod log in a real SQLite
file."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

import pytest

from bot.jobs.scan import run_scan
from bot.settings import Settings
from tests.test_replay import STRICT, _args, _export, _policy


@pytest.mark.slow
def test_a_scan_in_int8_is_replayed_from_its_stored_scores_and_named_by_its_version(tmp_path: Path, capsys):
    """The model in int8 records its verdicts as version ``<sha>+int8``, but the identity a scan reads from its
    settings before loading the model (:func:`bot.scoring.stored.model_identity`) ignored the ONNX precision: a
    replay under a stricter policy found "no stored scores of this model" and loaded it to score every message
    again, and a finished scan run again named the fp32 version in its report. Both now name the int8 version: the
    replay reuses every stored score and the report names the model that scored."""
    src = _export(tmp_path)
    settings = Settings(db_path=tmp_path / "mod.db", servers_dir=tmp_path / "servers", runtime="onnx",
                        precision="int8")
    assert asyncio.run(run_scan(_args([src]), settings)) == 0
    with sqlite3.connect(settings.db_path) as db:
        [(name, version)] = db.execute("SELECT DISTINCT model_name, model_version FROM verdicts").fetchall()
    assert version.endswith("+int8")

    assert asyncio.run(run_scan(_args([src], report=tmp_path / "again.html"), settings)) == 0  # nothing new
    page = (tmp_path / "again.html").read_text(encoding="utf-8")
    assert re.findall(r"[0-9a-f]{12}(?:\+int8)?", page.split(name, 1)[1])[0] == version
    capsys.readouterr()

    strict = _policy(tmp_path, "strict.toml", STRICT)
    assert asyncio.run(run_scan(_args([src], policy=[strict]), settings)) == 0
    out = capsys.readouterr().out
    assert "no stored scores of this model" not in out
    assert "(0 texts scored by the model, the rest from stored scores)" in out
