"""Argument handling of ``python -m bot.training.fast`` and ``python -m bot.training`` (sixteenth session's break-it
pass). Every case here must be refused before any data is read or torch imported: the fast loop replaced ``--out``
with ``shutil.rmtree`` *after* minutes of training, so ``--out bot/model`` (the shipped artifact's parent) or
``--out .`` deleted the shipped artifact or the checkout, a read-only or misspelt ``--out`` or ``--data`` failed with
a traceback after the work was done, or at once with one. Real ``main`` functions; no training runs."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from bot.model import artifact as art
from bot.training import __main__ as training_main
from bot.training import fast
from bot.training.train import RECIPE_SOURCES


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data root holding every source folder the recipe reads (empty: nothing is read before the checks)."""
    root = tmp_path / "data"
    for name in RECIPE_SOURCES:
        (root / name).mkdir(parents=True)
    return root


def _fast(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    shipped = _digest(art.ARTIFACT_DIR)
    rc = fast.main(list(args))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert _digest(art.ARTIFACT_DIR) == shipped
    assert err.startswith("error: fast: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("out", [art.ARTIFACT_DIR.parent, art.ARTIFACT_DIR.parents[1], art.ARTIFACT_DIR.parents[2],
                                 art.ARTIFACT_DIR / "candidate"])
def test_fast_refuses_an_out_that_holds_or_is_inside_the_shipped_artifact(capsys, data: Path, out: Path):
    err = _fast(capsys, "--out", str(out), "--data", str(data))
    assert "shipped artifact" in err


def test_fast_refuses_an_out_that_holds_the_base_artifact(capsys, tmp_path: Path, data: Path):
    base = tmp_path / "models" / "base"
    shutil.copytree(art.ARTIFACT_DIR, base)
    err = _fast(capsys, "--out", str(tmp_path / "models"), "--base", str(base), "--data", str(data))
    assert "--base" in err


def test_fast_refuses_to_replace_a_folder_that_is_not_a_candidate(capsys, tmp_path: Path, data: Path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work", encoding="utf-8")
    err = _fast(capsys, "--out", str(mine), "--data", str(data))
    assert "not a fast-loop candidate" in err and (mine / "thesis.tex").read_text(encoding="utf-8") == "years of work"


def test_fast_refuses_an_out_that_is_a_file_or_under_one(capsys, tmp_path: Path, data: Path):
    f = tmp_path / "file"
    f.write_text("x", encoding="utf-8")
    assert "not a directory" in _fast(capsys, "--out", str(f), "--data", str(data))
    assert "not a directory" in _fast(capsys, "--out", str(f / "sub"), "--data", str(data))


def test_fast_refuses_an_out_it_cannot_write(capsys, data: Path):
    err = _fast(capsys, "--out", "/proc/modbot-candidate", "--data", str(data))  # not writable, even by root
    assert "cannot write" in err


def test_fast_refuses_a_data_root_without_the_recipe_sources(capsys, tmp_path: Path, data: Path):
    err = _fast(capsys, "--out", str(tmp_path / "c"), "--data", str(tmp_path / "nope"))
    assert "--data" in err and "not a directory" in err
    shutil.rmtree(data / "olid")
    err = _fast(capsys, "--out", str(tmp_path / "c"), "--data", str(data))
    assert "--data" in err and "olid" in err


def _train(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    shipped = _digest(art.ARTIFACT_DIR)
    with pytest.raises(SystemExit) as exc:
        training_main.main(list(args))
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert _digest(art.ARTIFACT_DIR) == shipped
    return err.strip().splitlines()[-1]


def test_training_refuses_a_data_root_without_the_recipe_sources(capsys, tmp_path: Path):
    err = _train(capsys, "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "a"), "--no-distill")
    assert "--data" in err and "not a directory" in err


def test_training_refuses_an_out_that_is_a_file_or_cannot_be_written(capsys, tmp_path: Path, data: Path):
    f = tmp_path / "file"
    f.write_text("x", encoding="utf-8")
    assert "not a directory" in _train(capsys, "--data", str(data), "--out", str(f), "--no-distill")
    assert "cannot write" in _train(capsys, "--data", str(data), "--out", "/proc/modbot-a", "--no-distill")


@pytest.mark.parametrize("out", [art.ARTIFACT_DIR.parent, art.ARTIFACT_DIR / "run1"])
def test_training_refuses_an_out_that_holds_or_is_inside_the_shipped_artifact(capsys, data: Path, out: Path):
    err = _train(capsys, "--data", str(data), "--out", str(out), "--no-distill")
    assert "shipped artifact" in err
