"""Weight averaging of fast-loop candidates (bot.training.soup, issue 26)."""

from __future__ import annotations

import json

import pytest

from bot.core.models import LABELS
from bot.training.data import ZERO, Example
from bot.training.handwritten import HATE

KEY = "bert.encoder.layer.0.attention.self.query.weight"
HEAD = "classifier.bias"


def _member(tmp_path, name: str, sign: float, base: str, **meta):
    """The shipped weights moved by ``sign`` x a fixed pattern on one encoder matrix and the head's bias."""
    import torch

    from bot.model import artifact as art

    sd = art.rebuild_state_dict(art.ARTIFACT_DIR)
    g = torch.Generator().manual_seed(7)
    sd[KEY] = sd[KEY] + sign * 0.01 * torch.randn(sd[KEY].shape, generator=g)
    sd[HEAD] = sd[HEAD] + sign * 0.5
    out = tmp_path / name
    art.write_artifact(sd, LABELS, out, fast_loop=True, base=base, seed=int(sign > 0) + 1, **meta)
    (out / "fast.json").write_text("{}\n", encoding="utf-8")
    return out


def _shipped_id() -> str:
    from bot.model import artifact as art

    return art.read_manifest(art.ARTIFACT_DIR)["delta_sha256"][:12]


def test_soup_of_opposite_moves_is_the_shipped_weights(tmp_path):
    """Two members moved by +d and -d from the shipped weights average back to the shipped weights (to the int8
    delta storage's rounding), tensor by tensor, and the head's fp32 bias exactly."""
    import torch

    from bot.model import artifact as art
    from bot.training.soup import average_state

    base = _shipped_id()
    a, b = _member(tmp_path, "a", +1.0, base), _member(tmp_path, "b", -1.0, base)
    shipped = art.rebuild_state_dict(art.ARTIFACT_DIR)
    assert not torch.allclose(art.rebuild_state_dict(a)[KEY], shipped[KEY], atol=1e-3)
    soup = average_state([a, b])
    assert set(soup) == set(shipped)
    assert torch.allclose(soup[HEAD], shipped[HEAD], atol=1e-6)
    # int8 rows: each member's delta is stored to 1/127 of its row's largest change (about 0.04 here)
    assert (soup[KEY] - shipped[KEY]).abs().max().item() < 1e-3


@pytest.mark.parametrize("case", ["one", "twice", "other-base", "not-fast", "shipped-out", "member-out"])
def test_soup_refuses_what_cannot_be_averaged_or_written(tmp_path, capsys, case):
    """Each refusal is a one-line error and exit status 2, before any work: fewer than two members, a member
    named twice, members from different base artifacts, an artifact that is not a fast-loop candidate, and an
    --out that is the shipped artifact or a member."""
    from bot.model import artifact as art
    from bot.training.soup import main

    base = _shipped_id()
    a = _member(tmp_path, "a", +1.0, base)
    b = _member(tmp_path, "b", -1.0, base if case != "other-base" else "0123456789ab")
    out = tmp_path / "soup"
    members = {"one": [a], "twice": [a, a]}.get(case, [a, b])
    if case == "not-fast":  # a model trained by the full recipe: its manifest names no base artifact
        plain = tmp_path / "plain"
        art.write_artifact(art.rebuild_state_dict(a), LABELS, plain, seed=13)
        members = [a, plain]
    if case == "shipped-out":
        out = art.ARTIFACT_DIR
    if case == "member-out":
        out = b
    shipped = art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE)
    rc = main([*map(str, members), "--out", str(out), "--data", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: soup: ") and err.count("\n") == 1
    want = {"one": "at least two", "twice": "named twice", "other-base": "base artifact", "not-fast": "not a fast-loop",
            "shipped-out": "shipped artifact", "member-out": "the candidate"}[case]
    assert want in err
    assert art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE) == shipped
    assert not (tmp_path / "soup").exists()


@pytest.mark.slow  # assembles and scores the real model once: ~10 s on 2 idle cores
def test_make_soup_writes_a_complete_calibrated_candidate(tmp_path):
    """The soup is a complete artifact (manifest naming its members and seeds, thresholds for every label, a
    report) in --out, built via --out.partial, and the shipped artifact is untouched."""
    from bot.model import artifact as art
    from bot.training.soup import make_soup

    base = _shipped_id()
    a, b = _member(tmp_path, "a", +1.0, base), _member(tmp_path, "b", -1.0, base)
    shipped = art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE)
    dev = [Example("trans women are women", ZERO, "hand"), Example("trans people are disgusting", HATE, "hand")] * 4
    report = make_soup([a, b], tmp_path / "soup", dev=dev)
    manifest = art.read_manifest(tmp_path / "soup")
    ids = [art.read_manifest(m)["delta_sha256"][:12] for m in (a, b)]
    assert manifest["meta"]["soup"] == ids and manifest["meta"]["seeds"] == [2, 1]
    assert manifest["meta"]["base"] == base and "seed" not in manifest["meta"]
    assert report["delta_sha256"] == manifest["delta_sha256"] == art.sha256_file(tmp_path / "soup" / art.DELTA_FILE)
    assert set(json.loads((tmp_path / "soup" / "thresholds.json").read_text())["thresholds"]) == set(LABELS)
    assert report["dev_rows"] == 8 and not (tmp_path / "soup.partial").exists()
    assert art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE) == shipped


def test_base_weight_moves_the_soup_back_toward_the_base(tmp_path):
    """--base-weight W gives (1 - W) x the members' mean + W x the base: with one member moved by d, W = 0.25 leaves
    0.75 d; W outside [0, 1) is refused."""
    import torch

    from bot.model import artifact as art
    from bot.training.soup import average_state, mix_base

    base = _shipped_id()
    a, b = _member(tmp_path, "a", +1.0, base), _member(tmp_path, "b", +1.0, base, copy=True)
    shipped = art.rebuild_state_dict(art.ARTIFACT_DIR)
    moved = average_state([a, b])
    mixed = mix_base(moved, art.ARTIFACT_DIR, 0.25)
    assert torch.allclose(mixed[HEAD] - shipped[HEAD], 0.75 * (moved[HEAD] - shipped[HEAD]), atol=1e-6)
    assert torch.allclose(mixed[KEY] - shipped[KEY], 0.75 * (moved[KEY] - shipped[KEY]), atol=1e-6)
    assert mix_base(moved, art.ARTIFACT_DIR, 0.0) is moved
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError, match="base-weight"):
            mix_base(moved, art.ARTIFACT_DIR, bad)


def test_base_weight_with_members_of_another_base_is_a_one_line_refusal(tmp_path, capsys):
    """Members fine-tuned from an earlier shipped model (their meta.base is not the shipped artifact's id) and
    --base-weight: refused before any work with a one-line error and exit status 2, not a traceback after the
    checks passed."""
    from bot.training.soup import main
    from bot.training.train import RECIPE_SOURCES

    data = tmp_path / "data"
    for name in RECIPE_SOURCES:  # a data root the checks accept: the base is what is wrong
        (data / name).mkdir(parents=True)
    a = _member(tmp_path, "a", +1.0, "0123456789ab")
    b = _member(tmp_path, "b", -1.0, "0123456789ab")
    rc = main([str(a), str(b), "--out", str(tmp_path / "soup"), "--data", str(data), "--base-weight", "0.5"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: soup: ") and err.count("\n") == 1
    assert "not the candidates' base artifact 0123456789ab" in err
    assert not (tmp_path / "soup").exists() and not (tmp_path / "soup.partial").exists()


def test_a_base_weight_out_of_range_is_named_before_the_data_root(tmp_path, capsys):
    """--base-weight 1 (or nan) is refused as such even when --data is also wrong: the error names the option the
    admin got wrong first, not a data folder they may not need to fix."""
    from bot.training.soup import main

    base = _shipped_id()
    a, b = _member(tmp_path, "a", +1.0, base), _member(tmp_path, "b", -1.0, base)
    for bad in ("1", "nan"):
        rc = main([str(a), str(b), "--out", str(tmp_path / "soup"), "--data", str(tmp_path / "nowhere"),
                   "--base-weight", bad])
        err = capsys.readouterr().err
        assert rc == 2 and "--base-weight must be in [0, 1)" in err and "nowhere" not in err
