"""Quiet setup (issue 28, item 8): an SPDX license, no model progress bar, scan's results on stdout."""

from __future__ import annotations

import asyncio
import json
import tomllib
from argparse import Namespace
from pathlib import Path

from bot.settings import Settings
from tests.fakes import FakeScorer

REPO = Path(__file__).resolve().parents[1]


def test_license_is_an_spdx_string():
    """pyproject's license is an SPDX expression (a table makes setuptools print deprecation blocks) and the build
    backend is recent enough to read it (setuptools 77 added PEP 639)."""
    doc = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert doc["project"]["license"] == "MIT"
    assert doc["build-system"]["requires"] == ["setuptools>=77"]


def test_setup_script_says_each_step():
    """scripts/setup.sh prints one 'setup: ...' line before each install step and keeps pip quiet."""
    text = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    steps = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("step \"")]
    assert len(steps) >= 5
    pip_lines = [ln for ln in text.splitlines() if "pip install" in ln and not ln.lstrip().startswith(("#", "step"))]
    assert pip_lines and all("--quiet" in ln for ln in pip_lines)


def test_model_loading_draws_no_progress_bar():
    """Inside no_progress_bars transformers' tqdm bars are off, and the previous setting comes back after."""
    from transformers.utils import logging as hf_logging

    from bot.scoring.detoxify_scorer import no_progress_bars

    hf_logging.enable_progress_bar()
    with no_progress_bars():
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    with no_progress_bars():
        pass
    assert not hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()


def test_scan_prints_its_summary_on_stdout_and_progress_on_stderr(tmp_path, capsys):
    """scan's summary and 'written to' lines go to stdout; what it read and its warnings go to stderr."""
    from bot.jobs.scan import run_scan

    src = tmp_path / "chat.jsonl"
    src.write_text("\n".join(json.dumps({"id": str(i), "text": f"hello {i}", "author": f"u{i}",
                                         "created_at": f"2024-01-01T00:00:{i:02d}Z"}) for i in range(5)) + "\n",
                   encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = Namespace(paths=[src], policy=[], out=out, report=None, format="auto", on_error="skip", batch_size=8,
                     no_progress=True)
    assert asyncio.run(run_scan(args, Settings(db_path=tmp_path / "m.db"), scorer=FakeScorer())) == 0
    captured = capsys.readouterr()
    assert "scan finished" in captured.out and "5 messages in input" in captured.out
    assert f"verdicts written to {out}" in captured.out
    assert "read 5 messages" in captured.err
    assert "scan finished" not in captured.err


def _editable_filter() -> str:
    """The PYTHONWARNINGS value scripts/setup.sh gives the editable install."""
    text = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    (line,) = [ln for ln in text.splitlines() if ln.startswith("EDITABLE_QUIET=")]
    return line.split("=", 1)[1].strip('"')


def test_setup_script_hides_the_editable_installation_block():
    """The editable install runs with PYTHONWARNINGS set to the script's filter, and that filter really hides a
    warning worded as setuptools' "Editable installation." block (in a fresh interpreter, as pip and its build
    backend read it) while any other warning still shows."""
    import os
    import subprocess
    import sys

    text = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    (install,) = [ln for ln in text.splitlines() if "pip install" in ln and "-e '.[dev]'" in ln
                  and not ln.lstrip().startswith(("#", "step"))]
    assert install.startswith('PYTHONWARNINGS="$EDITABLE_QUIET" ')
    code = ("import warnings\n"
            "warnings.warn('Editable installation.\\n!!\\n\\n  Please be careful with folders', UserWarning)\n"
            "warnings.warn('something else', UserWarning)\n")
    env = {**os.environ, "PYTHONWARNINGS": _editable_filter()}
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert "Editable installation" not in err and "something else" in err


def test_a_first_run_says_it_is_preparing_the_model_and_a_warm_one_says_nothing(tmp_path, monkeypatch, capsys):
    """On a cold cache the embedded model is assembled for tens of seconds with no other output: the command line
    says so in one stderr line first; with the cache built (its READY stamp and files), a remote scorer or another
    model, nothing is printed."""
    from bot.model.artifact import read_manifest
    from bot.runtime import _announce_first_assembly

    monkeypatch.setenv("MODBOT_CACHE", str(tmp_path))
    settings = Settings()
    _announce_first_assembly(settings)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("preparing the embedded model in ") and str(tmp_path) in err[0]

    _announce_first_assembly(Settings(scorer_url="http://127.0.0.1:1"))
    _announce_first_assembly(Settings(model="original"))
    assert capsys.readouterr().err == ""

    cache = tmp_path / read_manifest()["delta_sha256"][:12]
    (cache / "config").mkdir(parents=True)
    for name in ("READY", "checkpoint.ckpt", "config/config.json"):
        (cache / name).write_text("x", encoding="utf-8")
    _announce_first_assembly(settings)
    assert capsys.readouterr().err == ""
