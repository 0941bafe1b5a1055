"""The precision choice (bot.scoring.precision): the paired verdict check refuses a precision that changes
verdicts, the automatic choice takes only a checked precision on the CPU kind it was checked on, and the choice is
selectable and printed by the service (``tests/test_serve.py`` starts it; here its ready line and ``/readyz``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import aiohttp
import pytest

from bot.core.models import Scores
from bot.core.policy import load_policy
from bot.scoring.precision import choose, paired_check, policy_tiers, record
from bot.settings import Settings
from tests.fakes import ABUSE, FakeScorer
from tests.serve_proc import start_service

TEXTS = ["you are an idiot", "what a freak", "hello there, see you at the standup", "thanks!"]
VNNI = frozenset({"avx2", "avx512f", "avx512_vnni"})
NO_VNNI = frozenset({"avx2"})


class DegradedScorer(FakeScorer):
    """The reference's scores times ``factor``: a precision that loses range, as an over-eager int8 would."""

    def __init__(self, factor: float) -> None:
        super().__init__(ABUSE)
        self.factor = factor

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        return [Scores({k: v * self.factor for k, v in s.values.items()}, model=s.model)
                for s in super().score_batch(texts)]


def test_paired_check_refuses_a_degraded_scorer_and_counts_each_lost_flag():
    """x0.9: "idiot" loses insult's review flag (0.88 -> 0.79 < 0.85); "freak" loses toxicity review (0.95),
    identity_attack act (0.97 -> 0.87 < 0.95) and insult review (0.90 -> 0.81): 4 flags lost, none new."""
    policy = load_policy(Settings().default_policy)
    check = paired_check(FakeScorer(ABUSE), DegradedScorer(0.9), TEXTS, policy, precision="int8")
    assert (check.changed, check.only_reference, check.only_candidate) == (4, 4, 0)
    assert check.flags == 4 * len(policy_tiers(policy)) and check.texts == 4
    assert check.p_value == pytest.approx(0.125)  # not significant, and refused all the same
    assert check.passed is False


def test_paired_check_passes_when_no_verdict_changes():
    """x1.0005 moves every score a little and crosses no tier (0.95 stays at or above toxicity's 0.95)."""
    policy = load_policy(Settings().default_policy)
    check = paired_check(FakeScorer(ABUSE), DegradedScorer(1.0005), TEXTS, policy, precision="int8")
    assert check.changed == 0 and check.passed is True
    assert check.max_diff == pytest.approx(0.97 * 0.0005)


def _manifest(passed: bool, sha: str = "abc", cpu: str = "avx2 avx512f avx512_vnni") -> dict:
    return {"precision_checks": {"int8": {"passed": passed, "changed": 0 if passed else 16, "flags": 4400,
                                          "texts": 400, "p_value": 1.0 if passed else 0.0001,
                                          "candidate_sha256": sha, "cpu": cpu}}}


def test_auto_takes_int8_only_with_a_passing_check_of_that_file_on_that_cpu_kind():
    assert choose("auto", _manifest(True), VNNI, {"int8": "abc"}).precision == "int8"
    refused = choose("auto", _manifest(False), VNNI, {"int8": "abc"})
    assert refused.precision == "fp32" and "changed 16 of 4400 verdict flags" in refused.reason
    assert choose("auto", _manifest(True), NO_VNNI, {"int8": "abc"}).precision == "fp32"
    assert choose("auto", _manifest(True, sha="old"), VNNI, {"int8": "abc"}).precision == "fp32"
    other_cpu = choose("auto", _manifest(True, cpu="avx2"), VNNI, {"int8": "abc"})
    assert other_cpu.precision == "fp32" and "another CPU kind" in other_cpu.reason
    assert choose("auto", {}, VNNI, {"int8": None}).precision == "fp32"


def test_precision_is_selectable():
    assert choose("fp32", _manifest(True), VNNI, {"int8": "abc"}).precision == "fp32"
    forced = choose("int8", _manifest(False), VNNI, {"int8": "abc"})
    assert forced.precision == "int8" and "not chosen automatically" in forced.reason
    with pytest.raises(ValueError, match="expected auto"):
        choose("fp16", {}, VNNI, {})


def test_record_writes_the_check_where_auto_reads_it(tmp_path: Path):
    manifest_file = tmp_path / "ONNX.json"
    manifest_file.write_text(json.dumps({"format": "modbot-onnx-v1"}), encoding="utf-8")
    policy = load_policy(Settings().default_policy)
    check = paired_check(FakeScorer(ABUSE), DegradedScorer(1.0005), TEXTS, policy, precision="int8")
    from dataclasses import replace

    from bot.scoring.precision import cpu_kind

    record(manifest_file, replace(check, candidate_sha256="f00", cpu=cpu_kind(VNNI)), candidate_identity=[1, 2])
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    assert manifest["format"] == "modbot-onnx-v1" and manifest["precision_checks"]["int8"]["candidate_identity"] == [1, 2]
    assert choose("auto", manifest, VNNI, {"int8": "f00"}).precision == "int8"


async def test_service_prints_and_reports_its_precision(tmp_path: Path):
    """The ready line names the precision and why; /readyz, /v1/model and /metrics report it."""
    svc = start_service(tmp_path, scorer="tests.serve_scorers:int8_checked")
    try:
        async with aiohttp.ClientSession() as s:
            for _ in range(200):
                async with s.get(svc.url + "/readyz") as r:
                    if r.status == 200:
                        ready = await r.json()
                        break
                await asyncio.sleep(0.02)
            async with s.get(svc.url + "/metrics") as r:
                metrics = await r.text()
    finally:
        code, out, _ = svc.stop()
    assert code == 0
    assert ready["precision"] == "int8" and ready["precision_reason"].startswith("auto: paired check passed")
    assert 'modbot_serve_model_precision{precision="int8"} 1.0' in metrics
    line = next(x for x in out.splitlines() if x.startswith("serve: ready:"))
    assert "precision int8 (auto: paired check passed" in line


def test_merged_checks_add_their_counts_and_redo_mcnemar():
    policy = load_policy(Settings().default_policy)
    lost = paired_check(FakeScorer(ABUSE), DegradedScorer(0.9), TEXTS, policy, precision="int8")
    same = paired_check(FakeScorer(ABUSE), DegradedScorer(1.0005), TEXTS, policy, precision="int8")
    both = lost.merge(same).merge(lost)
    assert (both.texts, both.changed, both.only_reference, both.only_candidate) == (12, 8, 8, 0)
    assert both.p_value == pytest.approx(2 / 2**8) and both.passed is False


def test_precision_setting_is_read_from_the_environment_and_checked():
    from bot.settings import SettingsError

    assert Settings.from_env({}).precision == "auto"
    assert Settings.from_env({"MODBOT_PRECISION": "int8"}).precision == "int8"
    with pytest.raises(SettingsError, match="MODBOT_PRECISION='fp16'"):
        Settings.from_env({"MODBOT_PRECISION": "fp16"})


def _layer_graph(path: Path) -> None:
    """A two-layer stand-in of the export's encoder (node names as ``torch.onnx.export`` writes them): per layer an
    attention-output MatMul and the feed-forward block's two, each with a weight, and one MatMul of two activations
    (as attention's scores are)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for layer in range(2):
        for part in ("attention/output/dense", "intermediate/dense", "output/dense"):
            name = f"/bert/encoder/layer.{layer}/{part}/MatMul"
            w = f"w{layer}_{part.replace('/', '_')}"
            inits.append(numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), w))
            nodes.append(helper.make_node("MatMul", [x, w], [name + "_out"], name=name))
            x = name + "_out"
    nodes.append(helper.make_node("MatMul", [x, x], ["y"], name="/bert/encoder/layer.1/attention/self/MatMul"))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 8])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_int8_ffn_recipe_quantises_only_the_feed_forward_matmuls(tmp_path):
    """The default recipe selects each layer's two feed-forward MatMuls and nothing else; the built model has int8
    kernels exactly there, the attention MatMuls stay fp32; an unknown recipe or one that matches nothing is
    refused."""
    import onnx

    from bot.scoring import ScorerLoadError
    from bot.scoring.precision import INT8_FILE, int8_nodes, quantize_int8

    model = tmp_path / "model.onnx"
    _layer_graph(model)
    ffn = [f"/bert/encoder/layer.{k}/{p}/dense/MatMul" for k in range(2) for p in ("intermediate", "output")]
    assert int8_nodes(model, "ffn") == ffn
    assert int8_nodes(model, "ffn-in") == ffn[0::2]
    assert len(int8_nodes(model, "all")) == 6  # the activation-only MatMul has no weight to quantise
    built = quantize_int8(model)
    assert built.name == INT8_FILE
    ops = [n.op_type for n in onnx.load(str(built)).graph.node]
    assert ops.count("MatMulInteger") == 4 and ops.count("MatMul") == 3
    with pytest.raises(ScorerLoadError, match="unknown int8 recipe"):
        int8_nodes(model, "half")
    other = tmp_path / "other.onnx"
    onnx.save(onnx.load(str(model)), str(other))
    g = onnx.load(str(other))
    for n in g.graph.node:
        n.name = n.name.replace("layer.", "block_")
    onnx.save(g, str(other))
    with pytest.raises(ScorerLoadError, match="matches no MatMul"):
        int8_nodes(other, "ffn")
