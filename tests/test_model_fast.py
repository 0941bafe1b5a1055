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
    (tmp_path / "cand" / "fast.json").write_text("{}\n", encoding="utf-8")  # what makes it a candidate
    (tmp_path / "cand.partial").mkdir()
    (tmp_path / "cand.partial" / "junk").write_text("half-written", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown families"):
        fast.train_fast(fast.FastConfig(out=tmp_path / "cand", families=("nope",)), pool=_tiny_pool())
    assert (tmp_path / "cand" / "old.txt").read_text(encoding="utf-8") == "previous candidate"
    cfg = fast.FastConfig(out=tmp_path / "cand", seed=1, families=(), replay=20, cache=tmp_path / "cache")
    fast.train_fast(cfg, pool=_tiny_pool())
    assert not (tmp_path / "cand.partial").exists() and not (tmp_path / "cand" / "old.txt").exists()
    assert (tmp_path / "cand" / "fast.json").is_file()


def test_hold_unnamed_keeps_the_base_scores_on_the_labels_the_new_rows_do_not_teach():
    """new_row_targets: without base scores the unnamed (and unknown) labels carry no loss; with them
    (--hold-unnamed) they are targets at the base model's probability, and the named labels keep the hard label."""
    import torch

    from bot.training.fast import new_row_targets

    ia, tox, ins = LABELS.index("identity_attack"), LABELS.index("toxicity"), LABELS.index("insult")
    hard = torch.zeros(2, len(LABELS))
    hard[0, ia] = 1.0
    hard[0, tox] = 1.0
    hard[1, ins] = float("nan")  # a row that leaves insult unknown
    base = torch.full((2, len(LABELS)), 0.25)
    base[1, tox] = 0.9
    soft, mask = new_row_targets(hard, ("identity_attack",), None)
    assert mask[:, ia].tolist() == [True, True] and int(mask.sum()) == 2
    held, held_mask = new_row_targets(hard, ("identity_attack",), base)
    assert bool(held_mask.all())
    assert held[0, ia].item() == 1.0 and held[1, ia].item() == 0.0  # the taught label: hard
    assert held[0, tox].item() == 0.25 and held[1, tox].item() == pytest.approx(0.9)  # hard 1.0 not taught
    assert held[1, ins].item() == 0.25  # unknown: held at the base, never NaN
    everything, _ = new_row_targets(hard, None, base)
    assert everything[0, tox].item() == 1.0 and everything[1, ins].item() == 0.25


def test_anchor_texts_read_the_chat_research_sets_and_never_the_flag_rate_test_sets(tmp_path):
    """The anchor pool reads <text> of the XML research sets and IRC raw lines (not joins), normalised,
    de-duplicated, minus excluded texts; Komodo/JuliaLang folders are never read; no source is a clear error."""
    from bot.training.fast import ANCHOR_SOURCES, anchor_texts

    chats = tmp_path / "chats"
    (chats / "disco-discord-xml" / "a").mkdir(parents=True)
    (chats / "disco-discord-xml" / "a" / "x.xml.out").write_text(
        "<discord><message><ts>t</ts><user>u</user><text>the build is green &amp; fast</text></message>"
        "<message><text>the build is green &amp; fast</text></message><message><text>dev line</text></message>"
        "</discord>", encoding="utf-8")
    (chats / "ubuntu-irc-disentanglement" / "test").mkdir(parents=True)
    (chats / "ubuntu-irc-disentanglement" / "test" / "d.raw.txt").write_text(
        "[15:01] <gos> how do I remove a cookie\n=== bob joined the channel\n[15:02] <x> ok thanks\n",
        encoding="utf-8")
    (chats / "komodo-discord-dce-csv").mkdir()
    (chats / "komodo-discord-dce-csv" / "k.xml").write_text(
        "<d><text>never read komodo</text></d>", encoding="utf-8")
    assert "komodo-discord-dce-csv" not in ANCHOR_SOURCES and "julialang-slack-export" not in ANCHOR_SOURCES
    texts = anchor_texts(tmp_path, frozenset({"dev line"}))
    assert sorted(texts) == ["how do I remove a cookie", "ok thanks", "the build is green & fast"]
    with pytest.raises(ValueError, match="--anchor: none of"):
        anchor_texts(tmp_path / "nowhere")


def test_anchor_and_hold_unnamed_arguments_are_checked(capsys):
    """--anchor below 0 and --new-repeat below 1 are refused with one line (exit 2), before anything is loaded."""
    from bot.training.fast import main

    assert main(["--out", "/tmp/x-fast-never", "--anchor", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--replay, --replay-hot, --anchor and --anchor-profane must be >= 0" in err and err.count("\n") == 1
    assert main(["--out", "/tmp/x-fast-never", "--anchor-profane", "-1"]) == 2
    assert "--anchor-profane must be >= 0" in capsys.readouterr().err
    assert main(["--out", "/tmp/x-fast-never", "--new-repeat", "0"]) == 2
    err = capsys.readouterr().err
    assert "--new-repeat >= 1" in err and err.count("\n") == 1
    assert main(["--out", "/tmp/x-fast-never", "--replay-hot", "-5"]) == 2
    assert "--replay-hot" in capsys.readouterr().err


@pytest.mark.slow  # trains the real model once on tiny data: ~25 s on 2 idle cores
def test_fast_loop_with_anchor_and_hold_unnamed_caches_three_target_sets(tmp_path, monkeypatch):
    """With --anchor, --hold-unnamed and --new-repeat the candidate is complete, its report and manifest say so
    (each new training row seen three times an epoch), and the base scores of replay rows, anchor texts and new
    rows are each cached once (a rerun scores nothing again)."""
    from bot.model import artifact as art
    from bot.training import fast

    chats = tmp_path / "data" / "chats" / "slack-software-chats-xml"
    chats.mkdir(parents=True)
    (chats / "s.xml").write_text("<slack>" + "".join(
        f"<message><text>does version {i} build on arm?</text></message>" for i in range(12)) + "</slack>",
        encoding="utf-8")
    monkeypatch.setitem(fast.FAMILIES, "tiny", lambda seed: [
        Example("you are a kind homosexual man", ZERO, "hand_cf"),
        Example("you are a vile homosexual man", HATE, "hand_cf")] * 5)
    cfg = fast.FastConfig(out=tmp_path / "cand", seed=3, families=("tiny",), replay=20, cache=tmp_path / "cache",
                          data=tmp_path / "data", anchor=8, hold_unnamed=True, new_labels=("identity_attack",),
                          new_repeat=3, anchor_profane=5)
    report = fast.train_fast(cfg, pool=_tiny_pool())
    assert report["anchor_rows"] == 8 and report["hold_unnamed"] is True and report["anchor_profane"] == 5
    assert report["new_train_rows"] == 2 and report["rows_per_epoch"] == 20 + 8 + 5 + 3 * 2
    meta = art.read_manifest(tmp_path / "cand")["meta"]
    assert meta["anchor"] == 8 and meta["hold_unnamed"] is True and meta["new_labels"] == ["identity_attack"]
    assert meta["new_repeat"] == 3 and meta["anchor_profane"] == 5
    cached = sorted((tmp_path / "cache" / "fast").glob("replay-*.pt"))
    assert len(cached) == 4
    stamps = [p.stat().st_mtime_ns for p in cached]
    fast.train_fast(cfg, pool=_tiny_pool())
    assert [p.stat().st_mtime_ns for p in cached] == stamps


def test_profane_anchors_add_one_ordinary_swear_to_chat_texts_the_same_for_every_candidate():
    """profane_anchor_texts: each text of three or more words gets exactly one frame of PROFANE_FRAMES around or
    inside it (its words kept in order), shorter texts are skipped, at most n, the same list on every call."""
    import re

    from bot.training.fast import PROFANE_FRAMES, profane_anchor_texts

    pool = [f"does version {i} build on arm" for i in range(30)] + ["ok thanks", "hi"]
    sworn = profane_anchor_texts(pool, n=25)
    assert len(sworn) == 25 and sworn == profane_anchor_texts(pool, n=25)
    assert not any(t.startswith("ok thanks") or "hi" == t for t in sworn)
    patterns = [re.compile("^" + re.escape(f).replace(re.escape("{t}"), "(?P<t>.+)")
                           .replace(re.escape("{a}"), "(?P<a>.+)").replace(re.escape("{b}"), "(?P<b>.+)") + "$")
                for f in PROFANE_FRAMES]
    for i, text in enumerate(sworn):
        fits = [m for m in (p.match(text) for p in patterns) if m]
        assert fits, text
        words = " ".join(v for v in fits[0].groupdict().values() if v)
        assert words == pool[i], (text, pool[i])
    assert len({t.replace(pool[i], "") for i, t in enumerate(sworn)}) > 5  # several frames, not one


def test_borderline_anchors_fill_a_quarter_with_the_texts_near_a_review_tier():
    """pick_anchors: plain sampling has no repeats; with borderline, the texts the base scores in [0.5, 0.95) on
    some label fill a quarter of the anchors (repeated), texts outside the band fill the rest, never twice."""
    import random

    import torch

    from bot.training.fast import pick_anchors

    probs = torch.full((100, len(LABELS)), 0.1)
    probs[3, LABELS.index("toxicity")] = 0.9  # borderline
    probs[7, LABELS.index("insult")] = 0.5  # borderline (the band includes 0.5)
    probs[9, LABELS.index("toxicity")] = 0.97  # above the band: an ordinary anchor
    plain = pick_anchors(probs, 40, random.Random(1), False)
    assert len(plain) == len(set(plain)) == 40
    picked = pick_anchors(probs, 40, random.Random(1), True)
    assert len(picked) == 40 and picked.count(3) == 5 and picked.count(7) == 5
    others = [i for i in picked if i not in (3, 7)]
    assert len(others) == len(set(others)) == 30
    assert pick_anchors(probs, 500, random.Random(2), False) == list(range(100))


def test_hot_replay_rows_are_the_ones_the_base_scores_high_on_a_taught_label():
    """pick_hot: only rows scoring >= 0.5 on the named columns (not other labels, not excluded rows); a sample
    without repeats when there are enough, every hot row repeated when there are fewer; none for n=0."""
    import random

    import torch

    from bot.training.fast import pick_hot

    ia, tox = LABELS.index("identity_attack"), LABELS.index("toxicity")
    probs = torch.full((50, len(LABELS)), 0.1)
    for i in (2, 5, 11, 30):
        probs[i, ia] = 0.8
    probs[12, ia] = 0.5  # the bound counts
    probs[13, ia] = 0.49
    probs[20, tox] = 0.99  # hot on a label the new rows do not teach
    picked = pick_hot(probs, [ia], 3, random.Random(1))
    assert len(set(picked)) == 3 and set(picked) <= {2, 5, 11, 12, 30}
    assert pick_hot(probs, [ia], 12, random.Random(1), exclude=frozenset({30})) == [2, 5, 11, 12] * 3
    assert sorted(set(pick_hot(probs, [ia, tox], 6, random.Random(1)))) == [2, 5, 11, 12, 20, 30]
    assert pick_hot(probs, [ia], 0, random.Random(1)) == []
    assert pick_hot(torch.zeros(5, len(LABELS)), [ia], 4, random.Random(1)) == []


def test_counter_quotes_quote_the_new_families_hateful_lines_as_benign():
    """The ``counter-quotes`` family quotes hateful rows of the new families (never their noisy copies) in the
    recipe's counter-quote frames, every label 0, the same rows for the same seed, at most QUOTED of them."""
    import re

    from bot.training.counter_quotes import QUOTED, counter_quote_rows, quoted_hate_rows
    from bot.training.fast import FAMILIES
    from bot.training.handwritten import COUNTER_QUOTE_T
    from bot.training.pools import _stance_twins

    assert "counter-quotes" in FAMILIES
    rows = quoted_hate_rows(13)
    assert len(rows) == QUOTED and rows == quoted_hate_rows(13)
    assert all(r.target == ZERO and r.source == "hand_cquote" for r in rows)
    ia = LABELS.index("identity_attack")
    hateful = {ex.text for ex in _stance_twins(13) if ex.target[ia] == 1.0}
    frames = [re.compile(re.escape(t).replace(re.escape("{H}"), "(.+)") + r"\Z", re.S) for t in COUNTER_QUOTE_T]
    quoted = []
    for r in rows:
        m = next((f.match(r.text) for f in frames if f.match(r.text)), None)
        assert m is not None, r.text
        quoted.append(m.group(1))
    assert len(set(quoted)) == len(quoted)
    assert hateful & set(quoted), "no stance-twin hateful line was quoted"
    few = counter_quote_rows(2, ["they are vermin", "they are vermin", "go back home"], n=5)
    assert sorted(r.text.count("vermin") for r in few) == [0, 1]


def test_training_data_root_follows_modbot_shared(tmp_path):
    """``--data`` of every training command defaults to ``$MODBOT_SHARED/data`` when set (as ``bench`` reads the
    shared folder), else ``../shared/data`` next to the checkout: the model card's commands work from any clone."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = "from bot.training.train import DEFAULT_DATA; print(DEFAULT_DATA)"
    env = {**os.environ, "PYTHONPATH": str(root), "MODBOT_SHARED": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == str((tmp_path / "data").resolve())
    env.pop("MODBOT_SHARED")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == str((root.parent / "shared" / "data").resolve())
