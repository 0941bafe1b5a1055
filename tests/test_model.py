"""The embedded model: offline loading through detoxify, labels, a few clear cases, corrupted artifacts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.core.models import LABELS
from bot.model.artifact import (
    ARTIFACT_DIR,
    DELTA_FILE,
    ModelArtifactError,
    assemble,
    read_manifest,
    read_thresholds,
    sha256_file,
)
from bot.scoring import ScorerLoadError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scorer(embedded_scorer):
    """The session's one embedded-model load (tests/conftest.py): offline, with the cache in a temporary folder."""
    return embedded_scorer


def test_loads_offline_with_all_labels(scorer):
    """The embedded model loads offline and reports all seven labels, none missing."""
    assert scorer.labels == LABELS
    assert scorer.name == "embedded-minilm-v1"
    assert scorer.version == read_manifest()["delta_sha256"][:12]


def test_scores_are_probabilities_in_order(scorer):
    """score_batch returns one Scores per text, values in [0, 1], in the input order (single text too)."""
    texts = ["hello there, how is the build going?", "x", "you are a complete idiot and everyone hates you"]
    batch = scorer.score_batch(texts)
    assert len(batch) == 3
    for s in batch:
        assert set(s.values) == set(LABELS) and s.missing == ()
        assert all(0.0 <= v <= 1.0 for v in s.values.values())
    single = scorer.score_batch([texts[2]])[0]
    assert single.values["toxicity"] == pytest.approx(batch[2].values["toxicity"], abs=1e-3)


@pytest.mark.parametrize(
    ("text", "hateful"),
    [
        ("trans people are disgusting freaks and should not exist", True),
        ("I hate muslims, they are all vermin", True),
        ("trans women are women", False),
        ('someone just posted "trans people are freaks" - that is hateful, mods please ban them', False),
        ("can someone review my pull request today?", False),
    ],
)
def test_identity_attack_clear_cases(scorer, text, hateful):
    """Clear attacks on identities score at or above the calibrated identity_attack threshold; benign ones below."""
    thr = read_thresholds()["identity_attack"]
    score = scorer.score_batch([text])[0].values["identity_attack"]
    assert (score >= thr) is hateful, f"{text!r}: {score:.3f} vs threshold {thr}"


@pytest.mark.parametrize("ping", ["<@508792563302400003> ", "<@!508792563302400003> ", "<@U024BE7LH> "])
@pytest.mark.parametrize(
    "attack", ["you will never be a real woman", "people like you should be put down", "trans people are mentally ill freaks"]
)
def test_a_ping_does_not_hide_an_identity_attack(scorer, ping, attack):
    """Pinging the target in front of an attack scores like the attack alone in the scoring path (for_scoring drops
    the mention); the old "@user" rendering let the ping pull identity_attack from ~0.9 to ~0.05."""
    from bot.core.normalize import for_scoring

    thr = read_thresholds()["identity_attack"]
    alone, pinged = scorer.score_batch([for_scoring(attack), for_scoring(ping + attack)])
    assert alone.values["identity_attack"] >= thr
    assert pinged.values["identity_attack"] == pytest.approx(alone.values["identity_attack"], abs=1e-3)


@pytest.mark.parametrize("handle", ["@user ", "@user @user ", "@Maya "])
@pytest.mark.parametrize(
    "attack",
    [
        "you will never be a real woman",
        "trans people are mentally ill freaks",
        pytest.param(
            "people like you should be put down",
            marks=pytest.mark.xfail(
                strict=False,
                reason="known weakness (model card): a typed handle in front of 'people like you should be put "
                "down' pulls identity_attack under the tier (0.10-0.35 against 0.86 alone, model 6be930fdb033); "
                "OLID's placeholders and the '@someone' rendering of Slack mentions are gone from training, so "
                "neither is the cause",
            ),
        ),
    ],
)
def test_a_typed_handle_does_not_hide_an_identity_attack(scorer, handle, attack):
    """A handle typed in front of an attack (or rendered so by a chat export) does not pull it under the review
    tier. Model 143ea79a4068, trained on OLID's "@USER" placeholders, scored "@user you will never be a real woman"
    0.05; OLID's placeholders are removed for training since model c28d0016643b (wherever they stand since
    3b4fdb4d88f1)."""
    from bot.core.pieces import score_messages

    thr = read_thresholds()["identity_attack"]
    assert score_messages(scorer, [handle + attack])[0].values["identity_attack"] >= thr


def test_thresholds_file_covers_every_label():
    """thresholds.json ships a threshold in (0, 1) for each of the seven labels."""
    thr = read_thresholds()
    assert set(thr) == set(LABELS)
    assert all(0.0 < v < 1.0 for v in thr.values())


@pytest.mark.parametrize("offset", [0, 1000, -10])
def test_corrupted_artifact_raises_clear_error(tmp_path, offset):
    """A flipped byte in the delta file fails the sha256 check with ModelArtifactError telling how to fix it."""
    art = tmp_path / "artifact"
    shutil.copytree(ARTIFACT_DIR, art)
    data = bytearray((art / DELTA_FILE).read_bytes())
    data[offset] ^= 0xFF
    (art / DELTA_FILE).write_bytes(bytes(data))
    with pytest.raises(ModelArtifactError, match="sha256 check.*Restore it from git"):
        assemble(tmp_path / "cache", art)


def test_missing_manifest_raises(tmp_path):
    """An artifact folder without manifest.json gives ModelArtifactError naming the rebuild command."""
    (tmp_path / "artifact").mkdir()
    with pytest.raises(ModelArtifactError, match="python -m bot.training"):
        assemble(tmp_path / "cache", tmp_path / "artifact")


def test_artifact_is_small():
    """The committed artifact stays under 16 MB and its manifest records the delta checksum."""
    total = sum(p.stat().st_size for p in Path(ARTIFACT_DIR).iterdir() if p.is_file())
    assert total < 16 * 1024 * 1024
    assert len(json.loads((ARTIFACT_DIR / "manifest.json").read_text())["delta_sha256"]) == 64


@pytest.mark.parametrize(("kwargs", "match"), [({"model": "nope"}, "unknown model"),
                                                ({"checkpoint": Path("/nonexistent/x.ckpt")}, "does not exist")])
def test_bad_load_arguments_raise_scorer_load_error(kwargs, match):
    """Unknown model names and missing checkpoints raise ScorerLoadError, never a silent clean scorer."""
    from bot.scoring.detoxify_scorer import DetoxifyScorer

    with pytest.raises(ScorerLoadError, match=match):
        DetoxifyScorer.load(**kwargs)


PADDING = "I spent the weekend setting up the new build server and the caching finally works after a lot of trial and error."


@pytest.mark.parametrize(
    "attack", ["you will never be a real woman.", "trans people are mentally ill freaks.", "gay people are disgusting."]
)
def test_benign_padding_does_not_hide_an_attack(scorer, attack):
    """One benign sentence in front of an attack can dilute the whole-text score (model 143ea79a4068: 0.98 ->
    0.01 for the first case); the bot's scoring path (whole text + each sentence, highest score) still scores the
    padded attack at least as high as the attack alone (the whole padded text may score higher still)."""
    from bot.core.pieces import score_messages

    thr = read_thresholds()["identity_attack"]
    text = f"{PADDING} {attack}"
    alone, padded = score_messages(scorer, [attack, text])
    assert padded.values["identity_attack"] >= alone.values["identity_attack"] - 1e-6
    assert padded.values["identity_attack"] >= thr


@pytest.mark.parametrize(
    "text",
    [
        'Someone wrote "trans people are freaks." That is vile, and I reported it to the mods.',
        "> trans people are mentally ill freaks\nThis is hateful and it has no place here. Reported.",
        "Trans women are women. This hatred is violence. I stand with her.",
    ],
)
def test_counter_speech_in_several_sentences_passes(scorer, text):
    """Quoting hate to condemn it, and supportive replies, stay below the review tier when scored in pieces."""
    from bot.core.pieces import score_messages

    thr = read_thresholds()["identity_attack"]
    assert score_messages(scorer, [text])[0].values["identity_attack"] < thr


def test_long_text_is_scored_in_overlapping_windows(scorer):
    """A text longer than the 126-token window is split into overlapping windows of at most 126 tokens that
    together reach the end of the text; short texts are one window."""
    tok = scorer._model.tokenizer
    text = " ".join(f"word{i}" for i in range(200)) + " the end"
    wins = scorer.windows(text)
    assert scorer.window_tokens == 126
    assert len(wins) >= 2 and wins[0].startswith("word0 ") and wins[-1].endswith("the end")
    assert all(len(tok(w, add_special_tokens=False)["input_ids"]) <= 126 for w in wins)
    assert all(w in text for w in wins)
    assert scorer.windows("trans women are women") == ["trans women are women"]


def _fake_cached_model(tmp_path):
    """A cache holding an 'assembled' checkpoint for a manifest-only artifact folder (no delta to rebuild from)."""
    import hashlib
    import shutil

    art = tmp_path / "artifact"
    art.mkdir()
    shutil.copyfile(ARTIFACT_DIR / "manifest.json", art / "manifest.json")
    cache = tmp_path / "cache" / read_manifest(art)["delta_sha256"][:12]
    (cache / "config").mkdir(parents=True)
    (cache / "config" / "config.json").write_text("{}", encoding="utf-8")
    ckpt = cache / "checkpoint.ckpt"
    ckpt.write_bytes(b"weights" * 1000)
    (cache / "READY").write_text(hashlib.sha256(ckpt.read_bytes()).hexdigest() + "\n", encoding="utf-8")
    return art, ckpt


def test_verified_checkpoint_is_not_rehashed_but_a_rewrite_is_caught(tmp_path):
    """A cached checkpoint verified once loads on its recorded identity; rewriting it (same size, mtime set back)
    changes its ctime, so it is hashed again, found corrupted and never returned."""
    import os

    art, ckpt = _fake_cached_model(tmp_path)
    assert assemble(tmp_path / "cache", art).checkpoint == ckpt  # hashed, then noted as verified
    assert (ckpt.parent / "VERIFIED.json").is_file()
    assert assemble(tmp_path / "cache", art).checkpoint == ckpt  # identity unchanged: no re-hash needed
    st = ckpt.stat()
    ckpt.write_bytes(b"tampered" * 875)  # same size (7000 bytes)
    os.utime(ckpt, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert ckpt.stat().st_size == st.st_size and ckpt.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(ModelArtifactError, match="missing"):  # rebuild needed; this artifact has no delta
        assemble(tmp_path / "cache", art)


@pytest.mark.slow
def test_processes_assembling_one_cache_at_once_build_it_once_and_all_succeed(tmp_path):
    """Several evals or shards starting on a cold cache at once: each gets the same assembled checkpoint, none fails
    (they raced to rename the config folder: ``OSError: Directory not empty``); the build is serialised by a lock
    on the cache, so the checkpoint is written once."""
    from concurrent.futures import ThreadPoolExecutor

    cache = tmp_path / "cache"
    with ThreadPoolExecutor(3) as pool:
        built = list(pool.map(lambda _: assemble(cache), range(3)))
    assert len({b.checkpoint for b in built}) == 1
    ckpt = built[0].checkpoint
    assert (ckpt.parent / "READY").read_text(encoding="utf-8").strip() == sha256_file(ckpt)
    assert not list(ckpt.parent.glob(".build-*"))
