"""Head re-fit of fast-loop candidates (bot.training.refit, issue 26)."""

from __future__ import annotations

import json

import pytest

from bot.core.models import LABELS
from bot.training.data import ZERO, Example
from bot.training.handwritten import HATE

KEY = "bert.encoder.layer.5.output.dense.weight"


def _shipped_id() -> str:
    from bot.model import artifact as art

    return art.read_manifest(art.ARTIFACT_DIR)["delta_sha256"][:12]


def _candidate(tmp_path, name: str = "cand", base: str | None = None,
               new_labels: tuple[str, ...] = ("identity_attack", "threat")):
    """The shipped weights with the last encoder layer's output matrix moved (a drifted encoder), written as a
    fast-loop candidate that taught identity_attack and threat."""
    import torch

    from bot.model import artifact as art

    sd = art.rebuild_state_dict(art.ARTIFACT_DIR)
    g = torch.Generator().manual_seed(3)
    sd[KEY] = sd[KEY] + 0.05 * torch.randn(sd[KEY].shape, generator=g)
    out = tmp_path / name
    art.write_artifact(sd, LABELS, out, fast_loop=True, base=base or _shipped_id(), seed=1, new_labels=list(new_labels))
    (out / "fast.json").write_text("{}\n", encoding="utf-8")
    return out


def test_fit_heads_recovers_the_read_out_that_made_the_targets():
    """Soft targets made by a known linear read-out are matched by the fit started far from it: the fitted
    probabilities agree with the targets to 1e-3 on every row (the problem is convex, L-BFGS solves it)."""
    import torch

    from bot.training.refit import fit_heads

    g = torch.Generator().manual_seed(0)
    x = torch.randn(2000, 16, generator=g, dtype=torch.float64)
    w_true = torch.randn(3, 16, generator=g, dtype=torch.float64)
    b_true = torch.tensor([-2.0, 0.5, 1.0], dtype=torch.float64)
    t = torch.sigmoid(x @ w_true.T + b_true)
    w, b = fit_heads(x, t, torch.zeros(3, 16), torch.zeros(3), l2=0.0)
    assert w.shape == (3, 16) and b.shape == (3,)
    assert (torch.sigmoid(x @ w.double().T + b.double()) - t).abs().max().item() < 1e-3


def test_fit_heads_l2_pulls_towards_the_starting_row_and_shapes_are_checked():
    """With a strong pull the fitted row stays near the starting one; with none it moves to the targets; shapes
    that disagree are a ValueError."""
    import torch

    from bot.training.refit import fit_heads

    g = torch.Generator().manual_seed(1)
    x = torch.randn(500, 8, generator=g, dtype=torch.float64)
    t = torch.sigmoid(x @ torch.ones(1, 8, dtype=torch.float64).T)
    w0 = torch.zeros(1, 8)
    free, _ = fit_heads(x, t, w0, torch.zeros(1), l2=0.0)
    held, _ = fit_heads(x, t, w0, torch.zeros(1), l2=10.0)
    assert free.norm() > 2.0 and held.norm() < 0.5 * free.norm()
    with pytest.raises(ValueError, match="shapes disagree"):
        fit_heads(x, t, torch.zeros(2, 8), torch.zeros(2))


@pytest.mark.parametrize("case", ["shipped-out", "candidate-out", "not-fast", "other-base", "no-new-labels", "bad-label"])
def test_refit_refuses_what_it_cannot_do_in_one_line(tmp_path, capsys, case):
    """Each refusal is one line on stderr and exit status 2, before any work: --out the shipped artifact or the
    candidate, an artifact that is not a fast-loop candidate or not of the shipped base, a candidate whose taught
    labels are unknown without --labels, an unknown label."""
    from bot.model import artifact as art
    from bot.training.refit import main

    shipped = art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE)
    cand = _candidate(tmp_path, base="0123456789ab" if case == "other-base" else None,
                      new_labels=() if case == "no-new-labels" else ("identity_attack", "threat"))
    plain = tmp_path / "plain"  # a model trained by the full recipe: its manifest names no base artifact
    art.write_artifact(art.rebuild_state_dict(cand), LABELS, plain, seed=13)
    args = [str(plain if case == "not-fast" else cand), "--out",
            str({"shipped-out": art.ARTIFACT_DIR, "candidate-out": cand}.get(case, tmp_path / "refit")),
            "--data", str(tmp_path)]
    if case == "bad-label":
        args += ["--labels", "toxicity,rudeness"]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: refit: ") and err.count("\n") == 1
    want = {"shipped-out": "shipped artifact", "candidate-out": "the candidate", "not-fast": "not a fast-loop",
            "other-base": "not from the base", "no-new-labels": "--labels", "bad-label": "rudeness"}[case]
    assert want in err
    assert art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE) == shipped
    assert not (tmp_path / "refit").exists()


def test_untaught_labels_are_the_complement_of_new_labels(tmp_path):
    from bot.training.refit import untaught_labels

    cand = _candidate(tmp_path)
    assert untaught_labels(cand) == ("toxicity", "severe_toxicity", "obscene", "insult", "sexual_explicit")


@pytest.mark.slow  # two forward passes over 60 texts and one calibration of the real model: ~15 s on 2 idle cores
def test_refit_restores_untaught_heads_and_leaves_the_rest_alone(tmp_path):
    """A drifted candidate re-fitted on the base model's probabilities: the encoder and the taught labels' rows
    are the candidate's exactly, the untaught labels' probabilities on the fit texts move back towards the
    base's, and the result is a complete candidate of the same base (manifest naming the candidate and labels,
    thresholds for every label, a report) moved into --out via --out.partial (a stale one from a killed run is
    discarded); the shipped artifact is untouched."""
    import torch
    from transformers import BertTokenizerFast

    from bot.model import artifact as art
    from bot.training.refit import RefitConfig, pooled_features, refit

    cand = _candidate(tmp_path)
    shipped_sha = art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE)
    tok = BertTokenizerFast.from_pretrained(str(art.base_model_dir()))
    texts = ([f"what a {w} day for the {n} release" for w in ("shit", "great", "damn", "fine", "fucking", "slow")
              for n in ("julia", "rust", "node", "python", "go")]
             + [f"you are a {w} {n}" for w in ("stupid", "lovely", "useless", "kind", "pathetic", "brilliant")
                for n in ("idiot", "person", "coder", "moron", "friend")])
    enc = tok(texts, truncation=True, max_length=48)["input_ids"]
    shipped = art.rebuild_state_dict(art.ARTIFACT_DIR)
    base_probs = torch.sigmoid((pooled_features(shipped, enc) @ shipped["classifier.weight"].double().T
                                + shipped["classifier.bias"].double()).float())
    cstate = art.rebuild_state_dict(cand)
    feats = pooled_features(cstate, enc)
    before = torch.sigmoid((feats @ cstate["classifier.weight"].double().T + cstate["classifier.bias"].double()).float())
    dev = [Example("trans women are women", ZERO, "hand"), Example("trans people are disgusting", HATE, "hand")] * 4
    labels = ("toxicity", "severe_toxicity", "obscene", "insult", "sexual_explicit")
    (tmp_path / "refit.partial").mkdir()  # what a re-fit killed half-way leaves: discarded by the next run
    (tmp_path / "refit.partial" / "delta.safetensors").write_bytes(b"half-written")
    report = refit(RefitConfig(candidate=cand, out=tmp_path / "refit", labels=labels, l2=0.0),
                   texts={"chat": (texts, enc, base_probs)}, dev=dev)
    out = art.rebuild_state_dict(tmp_path / "refit")
    cols = [LABELS.index(x) for x in labels]
    kept = [LABELS.index(x) for x in ("identity_attack", "threat")]
    assert torch.equal(out["classifier.weight"][kept], cstate["classifier.weight"][kept])
    assert torch.equal(out["classifier.bias"][kept], cstate["classifier.bias"][kept])
    assert (out[KEY] - cstate[KEY]).abs().max().item() < 1e-3  # int8 delta storage of the same encoder
    after = torch.sigmoid((feats @ out["classifier.weight"].double().T + out["classifier.bias"].double()).float())
    gap_before = (before[:, cols] - base_probs[:, cols]).abs().mean().item()
    gap_after = (after[:, cols] - base_probs[:, cols]).abs().mean().item()
    assert gap_before > 0.005 and gap_after < 0.5 * gap_before
    manifest = art.read_manifest(tmp_path / "refit")
    assert manifest["meta"]["refit"] == list(labels) and manifest["meta"]["base"] == _shipped_id()
    assert manifest["meta"]["refit_of"] == art.read_manifest(cand)["delta_sha256"][:12]
    assert manifest["meta"]["new_labels"] == ["identity_attack", "threat"]
    assert manifest["meta"]["refit_texts"] == {"chat": len(texts)} and manifest["meta"]["refit_l2"] == 0.0
    assert report["fit_rows"] + report["held_out_rows"] == len(texts)
    assert set(json.loads((tmp_path / "refit" / "thresholds.json").read_text())["thresholds"]) == set(LABELS)
    assert json.loads((tmp_path / "refit" / "fast.json").read_text())["refit_of"] == manifest["meta"]["refit_of"]
    assert not (tmp_path / "refit.partial").exists()
    assert art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE) == shipped_sha


def test_the_refit_is_calibrated_on_the_rows_its_candidate_held_out():
    """A one-seed candidate's calibration rows are the recipe's dev rows plus the very new rows the fast loop held
    out for that seed and families (never trained on); a soup's (no single seed) are the dev rows alone."""
    from bot.training.fast import new_rows, split_new
    from bot.training.refit import candidate_dev_rows

    pool_dev = [Example("trans women are women", ZERO, "hand"), Example("trans people are disgusting", HATE, "hand")]
    one = {"meta": {"seed": 2, "families": ["counter-quotes"], "base": "x"}}
    rows = candidate_dev_rows(one, pool_dev)
    _, held = split_new(new_rows(("counter-quotes",), 2), 2, 0.1, frozenset(ex.text for ex in pool_dev))
    assert rows[:2] == pool_dev and rows[2:] == held and len(held) > 50
    other_seed = candidate_dev_rows({"meta": {"seed": 3, "families": ["counter-quotes"]}}, pool_dev)
    assert {ex.text for ex in other_seed[2:]} != {ex.text for ex in held}
    assert candidate_dev_rows({"meta": {"soup": ["a", "b"], "seeds": [1, 2], "families": ["x"]}}, pool_dev) == pool_dev


@pytest.mark.slow  # trains the real model twice on tiny data and re-fits twice: ~60 s on 2 idle cores
def test_fast_loop_refit_in_one_run_is_the_two_command_refit_bit_for_bit(tmp_path, monkeypatch):
    """``fast --refit`` writes the very artifact (same delta sha256, same thresholds) that the fast loop followed by
    ``python -m bot.training.refit`` writes, with the candidate's own report kept under ``candidate`` and no
    staging folder left behind; with ``freeze_layers`` 2 the embeddings and the two lowest encoder layers are the
    base's (up to float rounding of the stored deltas) while the layers above moved."""

    from bot.model import artifact as art
    from bot.training import fast
    from bot.training.refit import RefitConfig, refit
    from tests.test_model_fast import _tiny_pool

    monkeypatch.setitem(fast.FAMILIES, "tiny", lambda seed: [
        Example("you are a kind homosexual man", ZERO, "hand_cf"),
        Example("you are a vile homosexual man", HATE, "hand_cf")] * 10 + [
        Example(f"kind line {i} about straight people", ZERO, "hand_cf") for i in range(20)])
    common = dict(seed=2, families=("tiny",), replay=30, cache=tmp_path / "cache", new_labels=("identity_attack",),
                  freeze_layers=2, refit_sizes=(16000, 0, 0))
    one = fast.train_fast(fast.FastConfig(out=tmp_path / "one", refit=True, **common), pool=_tiny_pool())
    cand = fast.train_fast(fast.FastConfig(out=tmp_path / "cand", **common), pool=_tiny_pool())
    two = refit(RefitConfig(candidate=tmp_path / "cand", out=tmp_path / "two", labels=fast.untaught(("identity_attack",)),
                            cache=tmp_path / "cache", anchors=0, profane=0), pool=_tiny_pool())
    assert one["delta_sha256"] == two["delta_sha256"] and one["thresholds"] == two["thresholds"]
    assert one["refit_of"] == cand["delta_sha256"][:12] == one["candidate"]["delta_sha256"][:12]
    assert one["labels"] == [x for x in LABELS if x != "identity_attack"]
    assert art.read_manifest(tmp_path / "one")["meta"]["freeze_layers"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "cand", "one", "two"]
    base, trained = art.rebuild_state_dict(art.ARTIFACT_DIR), art.rebuild_state_dict(tmp_path / "cand")
    frozen = max((base[k] - trained[k]).abs().max().item() for k in (
        "bert.embeddings.position_embeddings.weight", "bert.embeddings.LayerNorm.weight",
        "bert.encoder.layer.0.attention.self.query.weight", "bert.encoder.layer.1.output.dense.weight"))
    moved = (base[KEY] - trained[KEY]).abs().max().item()
    assert frozen < 1e-6 < 1e-4 < moved  # frozen: the base's int8 deltas stored again (float rounding only)


@pytest.mark.parametrize("args, want", [
    (["--refit"], "--new-labels naming some labels"),
    (["--refit", "--new-labels", ",".join(LABELS)], "--new-labels naming some labels"),
    (["--freeze-layers", "-1"], "--freeze-layers must be >= 0"),
])
def test_fast_loop_refuses_a_refit_it_cannot_do_and_a_negative_freeze(tmp_path, capsys, args, want):
    """--refit without labels left to re-fit, and a negative --freeze-layers: one line, exit 2, nothing written."""
    from bot.training.fast import main

    assert main(["--out", str(tmp_path / "cand"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: fast: ") and want in err and err.count("\n") == 1
    assert not (tmp_path / "cand").exists()


def test_freeze_layers_beyond_the_encoder_is_refused_before_any_work(tmp_path):
    """freeze_layers must leave at least one encoder layer to train (the shipped student has 6)."""
    from bot.training import fast

    with pytest.raises(ValueError, match=r"freeze_layers must be in \[0, 5\]"):
        fast.train_fast(fast.FastConfig(out=tmp_path / "cand", freeze_layers=6), pool=([], []))
    assert not (tmp_path / "cand").exists()
