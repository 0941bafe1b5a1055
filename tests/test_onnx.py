"""The ONNX Runtime scorer: a cached export is used only while it matches its checkpoint and checksum and passed its
check against detoxify; the runtime setting chooses it only where it applies. The export itself (torch) and the
equality with detoxify on the real embedded model are the ``slow`` tests at the end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _brute_cost(lengths: list[int], call_cost: int, max_tokens: int) -> int:
    """Least cost over every way to cut ``lengths`` into consecutive calls (exhaustive, for small inputs)."""
    from itertools import combinations

    n, best = len(lengths), None
    for k in range(n):
        for cuts in combinations(range(1, n), k):
            ends, start, cost = [*cuts, n], 0, 0
            for end in ends:
                width = lengths[end - 1]
                if (end - start) * width > max_tokens and end - start > 1:
                    break
                cost += call_cost + (end - start) * width
                start = end
            else:
                best = cost if best is None else min(best, cost)
    assert best is not None
    return best


def _cost(lengths: list[int], ends: list[int], call_cost: int) -> int:
    start, cost = 0, 0
    for end in ends:
        cost += call_cost + (end - start) * lengths[end - 1]
        start = end
    return cost


def test_plan_calls_finds_the_cheapest_cut_within_the_token_bound():
    """The split of texts ordered by token count costs what the best of every possible split costs, and no call
    holds more padded tokens than the bound; short texts are not padded to a long one's width."""
    import random

    from bot.scoring.onnx_scorer import plan_calls

    rng = random.Random(27)
    for _ in range(60):
        lengths = sorted(rng.choice([3, 5, 8, 12, 20, 40, 90, 128]) for _ in range(rng.randint(1, 9)))
        call_cost, max_tokens = rng.choice([0, 8, 32, 100]), rng.choice([128, 256, 2048])
        ends = plan_calls(lengths, call_cost=call_cost, max_tokens=max_tokens)
        assert ends[-1] == len(lengths) and ends == sorted(set(ends))
        starts = [0, *ends[:-1]]
        assert all((e - s) * lengths[e - 1] <= max_tokens or e - s == 1 for s, e in zip(starts, ends, strict=True))
        assert _cost(lengths, ends, call_cost) == _brute_cost(lengths, call_cost, max_tokens)
    assert plan_calls([4, 5, 6, 128, 128], call_cost=32, max_tokens=2048) == [3, 5]
    assert plan_calls([], call_cost=32) == []
    with pytest.raises(ValueError, match="non-decreasing"):
        plan_calls([9, 3])


@pytest.mark.slow
def test_scores_do_not_depend_on_how_a_batch_is_cut_into_calls(monkeypatch):
    """The same texts scored in length-cut calls and in one call padded to the longest text get the same scores
    (within float noise): the split changes the model's work, never a verdict."""
    import bot.scoring.onnx_scorer as mod
    from bot.scoring.onnx_scorer import CHECK_TEXTS

    # Any: OnnxScorer borrows DetoxifyScorer's windows/score_batch as class attributes, which mypy cannot bind
    scorer: Any = load_scorer(Settings(runtime="onnx", precision="fp32"))
    assert type(scorer).__name__ == "OnnxScorer"
    texts = [*CHECK_TEXTS, "ok thanks", "you are all morons and I hate every one of you, go away " * 3]
    calls: list[int] = []
    run = scorer._run

    def counted(enc: list) -> object:
        calls.append(len(enc))
        return run(enc)

    monkeypatch.setattr(scorer, "_run", counted)
    split = scorer.score_batch(texts)
    assert len(calls) > 1
    calls.clear()
    monkeypatch.setattr(mod, "plan_calls", lambda lengths, **_: [len(lengths)] if lengths else [])
    whole = scorer.score_batch(texts)
    assert calls == [sum(len(scorer.windows(t)) for t in texts)]  # one call (fewer than CHUNK windows)
    diff = max(abs(a.values[k] - b.values[k]) for a, b in zip(split, whole, strict=True) for k in a.values)
    assert diff <= 1e-5


@pytest.mark.slow
@pytest.mark.parametrize(("env", "spinning"), [(None, False), ("0", False), ("1", True)])
def test_intra_op_threads_sleep_between_calls_unless_asked_to_spin(monkeypatch, env, spinning):
    """ONNX Runtime's ``session.intra_op.allow_spinning`` is "0" by default and "1" with ``MODBOT_ONNX_SPIN=1``,
    in the options the session was built with."""
    if env is None:
        monkeypatch.delenv("MODBOT_ONNX_SPIN", raising=False)
    else:
        monkeypatch.setenv("MODBOT_ONNX_SPIN", env)
    scorer = load_scorer(Settings(runtime="onnx", precision="fp32"))
    assert isinstance(scorer, OnnxScorer)
    applied = scorer._session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning")
    assert (scorer.spinning, applied) == (spinning, "1" if spinning else "0")
