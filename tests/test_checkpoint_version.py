"""A model loaded from a local detoxify checkpoint is identified by its bytes: ``version`` is the first 12 hex
digits of the checkpoint file's sha256 (as the embedded model's is of its artifact's), not ``"local"``, and a
replay knows it without loading the model (:func:`bot.scoring.stored.model_identity`)."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from bot.scoring.stored import model_identity


def test_model_identity_of_a_checkpoint_is_its_file_checksum(tmp_path):
    """Two checkpoints that differ by one byte get two versions; each the sha256 prefix of its bytes, with the
    ``+int8`` suffix under int8, and the ``checkpoint:<file name>`` name the loaded scorer has."""
    a, b = tmp_path / "a.ckpt", tmp_path / "b.ckpt"
    a.write_bytes(b"weights" * 1000)
    b.write_bytes(b"weights" * 1000 + b"!")
    assert model_identity("local", checkpoint=a) == ("checkpoint:a.ckpt", hashlib.sha256(a.read_bytes()).hexdigest()[:12])
    assert model_identity("local", checkpoint=b, int8=True) == (
        "checkpoint:b.ckpt", hashlib.sha256(b.read_bytes()).hexdigest()[:12] + "+int8")


@pytest.mark.slow
def test_a_scorer_loaded_from_a_checkpoint_reports_its_checksum_as_version(tmp_path):
    """:meth:`DetoxifyScorer.load` with a checkpoint (the embedded model's assembled one, copied) reports the file's
    12-hex sha256 prefix as ``version``, the same identity :func:`model_identity` gives without loading."""
    from bot.model.artifact import assemble
    from bot.scoring.detoxify_scorer import DetoxifyScorer

    built = assemble()
    ckpt = tmp_path / "mine.ckpt"
    shutil.copyfile(built.checkpoint, ckpt)
    scorer = DetoxifyScorer.load("local", checkpoint=ckpt, config_dir=built.config_dir)
    want = hashlib.sha256(ckpt.read_bytes()).hexdigest()[:12]
    assert (scorer.name, scorer.version) == ("checkpoint:mine.ckpt", want)
    assert model_identity("local", checkpoint=ckpt) == (scorer.name, scorer.version)
