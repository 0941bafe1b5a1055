"""The fast candidate loop (bot.training.fast) and the counterfactual identity data (bot.training.counterfactual)."""

from __future__ import annotations

import json

import pytest

from bot.core.models import LABELS
from bot.training.data import ZERO, Example
from bot.training.handwritten import HATE


def test_counterfactual_rows_cover_every_term_in_every_register_with_hateful_twins():
    """Every term gets benign rows in all seven registers and hateful twins; rows are deterministic for a seed."""
    from bot.training.counterfactual import BENIGN_T, HATE_T, TERMS, counterfactual_rows

    rows = counterfactual_rows(13)
    assert rows == counterfactual_rows(13)
    cf = [r for r in rows if r.source == "hand_cf"]
    frames = sum(len(v) for v in BENIGN_T.values()), sum(len(v) for v in HATE_T.values())
    assert sum(r.target == ZERO for r in cf) == len(TERMS) * frames[0]
    assert sum(r.target == HATE for r in cf) == len(TERMS) * frames[1]
    for term in ("homosexual", "heterosexual", "straight", "trans", "cis", "nonbinary"):
        assert any(f" {term} " in f" {r.text.lower()} " and r.target == ZERO for r in cf), term
        assert any(f" {term} " in f" {r.text.lower()} " and r.target == HATE for r in cf), term
    assert set(BENIGN_T) == set(HATE_T) == {"praise", "neutral", "personal", "question", "emotional", "existing",
                                           "counter_ref"}


def test_identity_swaps_keep_benign_labels_and_change_the_group():
    """Swapped rows are benign hand-written rows with a group phrase replaced by '<term> people'."""
    from bot.training.counterfactual import TERMS, identity_swaps

    swaps = identity_swaps(13, n=200)
    assert len(swaps) == 200
    assert all(r.target == ZERO and r.source == "hand_swap" for r in swaps)
    assert all(any(f"{t} people" in r.text for t in TERMS) for r in swaps)


def test_held_apart_identity_set_is_the_generated_file_and_never_a_training_row():
    """identity_benign.csv equals its generator's output, covers every term, and shares no text with training."""
    from bot.eval.identity_benign import IDENTITY_CASES, render
    from bot.eval.scene import read_cases
    from bot.training.counterfactual import TERMS, counterfactual_rows
    from bot.training.fast import new_rows
    from bot.training.train import normaliser

    assert IDENTITY_CASES.read_text(encoding="utf-8") == render()
    rows = read_cases(IDENTITY_CASES)
    assert {r["kind"] for r in rows} == set(TERMS) and all(r["gold"] == "allow" for r in rows)
    norm = normaliser()
    held = {norm(r["text"]).strip().lower() for r in rows}
    trained = {r.text.lower() for r in new_rows(("counterfactual", "scene"), 1)}
    trained |= {norm(r.text).strip().lower() for r in counterfactual_rows(13)}
    assert held.isdisjoint(trained)


def test_new_rows_split_holds_out_dev_texts_and_excludes_the_recipe_dev_split():
    """split_new keeps about 10% of unique texts for dev, never trains on them nor on excluded texts."""
    from bot.training.fast import split_new

    rows = [Example(f"text number {i}", ZERO, "hand_cf") for i in range(200)]
    train, dev = split_new(rows, seed=3, exclude=frozenset({"text number 0"}))
    assert len(dev) == 19 and len(train) == 180
    assert not {r.text for r in train} & ({r.text for r in dev} | {"text number 0"})


def test_unknown_family_and_shipped_out_are_refused(capsys):
    """The CLI exits 2 with one line for an unknown family or for --out pointing at the shipped artifact."""
    from bot.model.artifact import ARTIFACT_DIR
    from bot.training.fast import main

    assert main(["--out", "/tmp/x-fast-never", "--families", "nope"]) == 2
    assert "unknown families ['nope']" in capsys.readouterr().err
    assert main(["--out", str(ARTIFACT_DIR)]) == 2
    err = capsys.readouterr().err
    assert "never writes the shipped artifact" in err and err.count("\n") == 1


def test_new_labels_restrict_what_the_new_rows_teach(capsys):
    """--new-labels keeps only the named columns of the new rows' loss mask; other columns are left to replay;
    an unknown label name is refused (CLI: exit 2, one line)."""
    import torch

    from bot.training.fast import LABELS, main, restrict_labels

    mask = torch.ones(3, len(LABELS), dtype=torch.bool)
    mask[1, LABELS.index("insult")] = False
    kept = restrict_labels(mask, ("identity_attack", "insult"))
    assert kept[:, LABELS.index("toxicity")].tolist() == [False, False, False]
    assert kept[:, LABELS.index("identity_attack")].tolist() == [True, True, True]
    assert kept[:, LABELS.index("insult")].tolist() == [True, False, True]
    assert int(kept.sum()) == 5 and bool(mask.all(dim=1)[0])  # the input is not modified
    assert restrict_labels(mask, None) is mask
    with pytest.raises(ValueError, match="unknown labels"):
        restrict_labels(mask, ("toxic",))
    assert main(["--out", "/tmp/x-fast-never", "--new-labels", "identity_attack,toxic"]) == 2
    err = capsys.readouterr().err
    assert "--new-labels: unknown labels ['toxic']" in err and err.count("\n") == 1


def _tiny_pool() -> tuple[list[Example], list[Example]]:
    hate = [Example(f"{g} are vermin and should disappear", HATE, "hand") for g in ("trolls x", "gnomes", "orcs y")]
    benign = [Example(f"the build {i} is green again", ZERO, "chat") for i in range(40)]
    dev = [Example("trans women are women", ZERO, "hand"), Example("trans people are disgusting", HATE, "hand")] * 6
    return hate + benign, dev


@pytest.mark.slow  # loads and trains the real model twice: ~40 s on 2 idle cores
def test_fast_loop_trains_from_the_shipped_model_and_caches_replay_targets(tmp_path, monkeypatch):
    """On tiny data the loop writes a complete candidate (artifact, thresholds, report) into --out, leaves the
    shipped artifact unchanged, caches the replay targets once and reuses them on a rerun."""
    from bot.model import artifact as art
    from bot.training import fast

    monkeypatch.setitem(fast.FAMILIES, "tiny", lambda seed: [
        Example("you are a kind homosexual man", ZERO, "hand_cf"),
        Example("you are a vile homosexual man", HATE, "hand_cf")] * 10 + [
        Example(f"kind line {i} about straight people", ZERO, "hand_cf") for i in range(20)])
    shipped = art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE)
    cfg = fast.FastConfig(out=tmp_path / "cand", seed=2, families=("tiny",), replay=30, cache=tmp_path / "cache")
    report = fast.train_fast(cfg, pool=_tiny_pool())
    assert art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE) == shipped
    assert not (tmp_path / "cand.partial").exists()
    manifest = art.read_manifest(tmp_path / "cand")
    assert manifest["meta"]["fast_loop"] is True and manifest["meta"]["base"] == shipped[:12]
    assert report["replay_rows"] == 30 and report["new_train_rows"] + report["new_dev_rows"] == 22
    assert set(json.loads((tmp_path / "cand" / "thresholds.json").read_text())["thresholds"]) == set(LABELS)
    cached = list((tmp_path / "cache" / "fast").glob("replay-*.pt"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    fast.train_fast(cfg, pool=_tiny_pool())
    assert cached[0].stat().st_mtime_ns == stamp


@pytest.mark.slow  # trains the real model once: ~20 s on 2 idle cores
def test_a_killed_run_leaves_the_previous_candidate_and_can_restart(tmp_path):
    """A leftover <out>.partial from a killed run is discarded on restart; <out> is replaced only when complete."""
    from bot.training import fast

    (tmp_path / "cand").mkdir()
    (tmp_path / "cand" / "old.txt").write_text("previous candidate", encoding="utf-8")
    (tmp_path / "cand.partial").mkdir()
    (tmp_path / "cand.partial" / "junk").write_text("half-written", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown families"):
        fast.train_fast(fast.FastConfig(out=tmp_path / "cand", families=("nope",)), pool=_tiny_pool())
    assert (tmp_path / "cand" / "old.txt").read_text(encoding="utf-8") == "previous candidate"
    cfg = fast.FastConfig(out=tmp_path / "cand", seed=1, families=(), replay=20, cache=tmp_path / "cache")
    fast.train_fast(cfg, pool=_tiny_pool())
    assert not (tmp_path / "cand.partial").exists() and not (tmp_path / "cand" / "old.txt").exists()
    assert (tmp_path / "cand" / "fast.json").is_file()
