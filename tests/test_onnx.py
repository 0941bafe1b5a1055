"""The ONNX Runtime scorer: a cached export is used only while it matches its checkpoint and checksum and passed its
check against detoxify; the runtime setting chooses it only where it applies. The export itself (torch) and the
equality with detoxify on the real embedded model are the ``slow`` tests at the end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.runtime import load_scorer, onnx_applies
from bot.scoring import ScorerLoadError
from bot.scoring.onnx_scorer import FORMAT, OnnxExport, OnnxScorer, cached_export, onnx_dir
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _fake_export(tmp_path: Path, *, passed: bool = True, ckpt_sha: str = "c" * 64) -> Path:
    """A cache folder with a checkpoint, an ``onnx/model.onnx`` (bytes only) and its ONNX.json."""
    from bot.model.artifact import sha256_file

    ckpt = tmp_path / "checkpoint.ckpt"
    ckpt.write_bytes(b"checkpoint")
    folder = onnx_dir(ckpt)
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not really onnx")
    manifest = {"format": FORMAT, "checkpoint_sha256": ckpt_sha, "onnx_sha256": sha256_file(folder / "model.onnx"),
                "labels": ["toxicity"], "check": {"max_diff": 1e-6 if passed else 0.3, "passed": passed}}
    (folder / "ONNX.json").write_text(json.dumps(manifest), encoding="utf-8")
    return ckpt


def test_cached_export_is_used_only_for_its_checkpoint(tmp_path):
    """An export made from another checkpoint (sha256 differs) is not used."""
    ckpt = _fake_export(tmp_path)
    assert cached_export(ckpt, tmp_path, "c" * 64) is not None
    assert cached_export(ckpt, tmp_path, "d" * 64) is None


def test_cached_export_with_changed_bytes_is_not_used(tmp_path):
    """A model.onnx whose bytes no longer match the recorded sha256 is refused (it will be exported again)."""
    ckpt = _fake_export(tmp_path)
    assert cached_export(ckpt, tmp_path, "c" * 64) is not None  # records the verified file identity
    (onnx_dir(ckpt) / "model.onnx").write_bytes(b"not really onnx!")
    assert cached_export(ckpt, tmp_path, "c" * 64) is None


def test_export_that_failed_its_check_is_refused(tmp_path):
    """An export whose scores differed from detoxify's is found (not re-exported) but never loaded."""
    ckpt = _fake_export(tmp_path, passed=False)
    found = cached_export(ckpt, tmp_path, "c" * 64)
    assert isinstance(found, OnnxExport) and found.manifest["check"]["passed"] is False
    with pytest.raises(ScorerLoadError, match="differs from detoxify by 0.3"):
        OnnxScorer.load(found, name="m", version="v")


def test_runtime_onnx_refuses_models_it_cannot_serve(tmp_path):
    """MODBOT_RUNTIME=onnx with a named model or int8 is a load error naming both, before any model loads."""
    assert onnx_applies(Settings()) is None
    assert onnx_applies(Settings(int8=True)) == "MODBOT_INT8"
    with pytest.raises(ScorerLoadError, match="MODBOT_RUNTIME=onnx serves the embedded model only, not "
                                              "MODBOT_MODEL=original"):
        load_scorer(Settings(model="original", runtime="onnx"))
    with pytest.raises(ValueError, match="MODBOT_RUNTIME='tensorrt': expected one of auto, onnx, torch"):
        Settings.from_env({"MODBOT_RUNTIME": "tensorrt"})


@pytest.mark.slow
def test_export_matches_detoxify_and_serves_without_torch(tmp_path):
    """A fresh export (into an empty cache) passes its check (max difference <= 1e-4 on the check set, window
    cutting included), and a new process scores with it without importing torch or transformers."""
    code = (
        "import json, sys\n"
        "from bot.scoring.onnx_scorer import load_embedded\n"
        "s = load_embedded(export_if_missing=False)\n"
        "out = s.score_batch(['you are an idiot', 'thanks, see you tomorrow!'])\n"
        "print(json.dumps({'insult': [o.values['insult'] for o in out], 'torch': 'torch' in sys.modules,\n"
        "                  'transformers': 'transformers' in sys.modules, 'runtime': s.runtime}))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "MODBOT_CACHE": str(tmp_path), "HOME": str(tmp_path)}
    export = subprocess.run([sys.executable, "-c", "from bot.scoring.onnx_scorer import load_embedded; "
                             "load_embedded()"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert export.returncode == 0, export.stderr[-2000:]
    manifest = json.loads(next(tmp_path.glob("*/onnx/ONNX.json")).read_text(encoding="utf-8"))
    assert manifest["check"]["passed"] is True
    assert manifest["check"]["max_diff"] <= 1e-4
    assert manifest["check"]["pieces"] > manifest["check"]["texts"]  # long texts were cut into windows
    served = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert served.returncode == 0, served.stderr[-2000:]
    doc = json.loads(served.stdout.strip().splitlines()[-1])
    assert doc["torch"] is False and doc["transformers"] is False and doc["runtime"] == "onnx"
    assert doc["insult"][0] > 0.5 > doc["insult"][1]


@pytest.mark.slow
def test_onnx_scores_equal_detoxify_on_chat_pieces(embedded_scorer):
    """Through the bot's own scoring path (pieces, windows), ONNX Runtime and detoxify agree within 1e-4 (detoxify:
    the session's embedded model on torch, what ``load_scorer`` loads for ``MODBOT_RUNTIME=torch``)."""
    from bot.core.pieces import score_texts
    from bot.runtime import load_scorer as load
    from bot.scoring.onnx_scorer import CHECK_TEXTS

    texts = [*CHECK_TEXTS, "Nice build log, thanks a lot.  You are an idiot though!\nSee you tomorrow at the meetup.",
             "go away. nobody here wants you, you disgusting freak. " * 30]
    onnx = score_texts(load(Settings(runtime="onnx")), texts)
    torch = score_texts(embedded_scorer, texts)
    diffs = [abs(a.values[k] - b.values[k]) for a, b in zip(onnx, torch, strict=True) if a and b for k in a.values]
    assert len(diffs) == 7 * (len(texts) - 1)  # every text but the empty one scored
    assert max(diffs) <= 1e-4


@pytest.mark.slow
def test_precision_is_selectable_and_int8_is_the_quantised_model():
    """MODBOT_PRECISION=fp32 / int8 load that variant: the int8 one is a different model file (its scores move),
    named in the version so verdicts say which variant judged them."""
    fp32_scorer = load_scorer(Settings(runtime="onnx", precision="fp32"))
    int8_scorer = load_scorer(Settings(runtime="onnx", precision="int8"))
    fp32, int8 = fp32_scorer, int8_scorer
    assert isinstance(fp32, OnnxScorer) and isinstance(int8, OnnxScorer)
    assert (fp32.precision, fp32.precision_reason) == ("fp32", "asked (MODBOT_PRECISION / --precision)")
    assert int8.precision == "int8" and int8.version == f"{fp32.version}+int8"
    assert int8.precision_reason.startswith("asked")
    texts = ["you are an idiot", "thanks, see you tomorrow!", "I will find you and hurt you"]
    # through the Scorer port: OnnxScorer borrows DetoxifyScorer's score_batch, whose self type mypy holds to it
    a, b = fp32_scorer.score_batch(texts), int8_scorer.score_batch(texts)
    assert max(abs(x.values[k] - y.values[k]) for x, y in zip(a, b, strict=True) for k in x.values) > 1e-4
