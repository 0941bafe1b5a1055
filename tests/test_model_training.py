"""Training helpers: label targets, character-noise augmentation and the hand-written set (no model load)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bot.core.models import LABELS
from bot.training.augment import censor, drop_char, leet, noisy, spaced
from bot.training.data import target
from bot.training.handwritten import generate


def test_target_orders_labels_and_rejects_unknown():
    """target() places values in LABELS order, fills the default, and rejects unknown label names."""
    t = target(0.0, identity_attack=1.0, insult=None)
    assert t[LABELS.index("identity_attack")] == 1.0 and t[LABELS.index("insult")] is None and t[0] == 0.0
    with pytest.raises(ValueError):
        target(0.0, hate=1.0)


@pytest.mark.parametrize(("op", "word", "expected"), [(spaced, "abcd", None), (drop_char, "muslims", 6),
                                                      (censor, "faggot", None), (leet, "toast", 5)])
def test_noise_ops_change_the_word(op, word, expected):
    """Each noise operation returns a different spelling (same length for leet, one shorter for drop_char)."""
    out = op(word, random.Random(3))
    assert out != word
    if expected is not None:
        assert len(out) == expected


def test_noisy_obfuscates_the_focus_word():
    """noisy() changes the given focus term and leaves the rest of a long sentence mostly intact."""
    text = "all immigrants are criminals and liars"
    outs = {noisy(text, random.Random(s), "immigrants") for s in range(20)}
    assert text not in outs and len(outs) > 5


def test_handwritten_is_deterministic_and_paired():
    """generate() gives the same list for a seed and contains both hateful and benign identity examples."""
    a, b = generate(5), generate(5)
    assert [e.text for e in a] == [e.text for e in b]
    ia = LABELS.index("identity_attack")
    hateful = sum(1 for e in a if e.target[ia] == 1.0)
    benign = sum(1 for e in a if e.target[ia] == 0.0)
    assert hateful > 1000 and benign > 1000
    texts = {e.text.lower() for e in a}
    assert "trans women are women" in texts and "trans women are men" in texts


def test_emphatic_endings_are_on_both_sides_of_the_line():
    """Emphatic endings ("full stop", "period") appear on benign and hateful identity examples alike, so the
    model cannot learn them as a cue (the shipped model once scored "trans women are women. full stop." 0.97)."""
    ia = LABELS.index("identity_attack")
    ex = generate(13)
    endings = ("full stop", "period.", "end of story.")
    benign = [e for e in ex if e.target[ia] == 0.0 and e.text.lower().rstrip().endswith(endings)]
    hateful = [e for e in ex if e.target[ia] == 1.0 and e.text.lower().rstrip().endswith(endings)]
    assert len(benign) >= 30 and len(hateful) >= 30
    from bot.training.handwritten import EMPHATIC

    assert any(e.text.lower().startswith("trans women are women") and e.text.lower().endswith(
        tuple(x.lower() for x in EMPHATIC)) for e in ex if e.target[ia] == 0.0)


def test_stance_families_add_both_sides_and_leave_the_default_set_alone():
    """stance_families=True adds condemnations of hostility (benign) next to first-person hostility (hateful) in
    the same words, so a word like "contempt" is no cue; the default set (the shipped model's) is unchanged."""
    ia = LABELS.index("identity_attack")
    base, more = generate(13), generate(13, stance_families=True)
    assert len(base) == 10_876 and len(more) > len(base)
    assert [e.text for e in base] == [e.text for e in generate(13, stance_families=False)]
    benign = [e.text.lower() for e in more if e.target[ia] == 0.0 and "contempt" in e.text.lower()]
    hateful = [e.text.lower() for e in more if e.target[ia] == 1.0 and "contempt" in e.text.lower()]
    assert len(benign) >= 10 and len(hateful) >= 10
    assert not any("contempt" in e.text.lower() and e.target[ia] == 1.0 for e in base if "for" in e.text.lower())


def test_xml_chat_reader_unescapes_and_filters(tmp_path):
    """The DISCO / Slack software-chat XML reader returns message texts with entities unescaped, dropping
    messages shorter than 8 characters and bot commands."""
    from bot.training.data import xml_texts

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.xml.out").write_text(
        "<discord><message><ts>2020</ts><user>A</user><text>use `a &lt; b` &amp; it works</text></message>"
        "<message><text>k</text></message><message><text>!ban everyone please</text></message>"
        "<message><text>lite</text></message></discord>",
        encoding="utf-8",
    )
    assert xml_texts(tmp_path) == ["use `a < b` & it works"]


def test_average_states_is_a_uniform_soup():
    """average_states averages float tensors, keeps integer buffers and refuses mismatched keys."""
    import torch

    from bot.training.train import average_states

    a = {"w": torch.tensor([1.0, 3.0]), "ids": torch.tensor([0, 1])}
    b = {"w": torch.tensor([3.0, 5.0]), "ids": torch.tensor([0, 1])}
    out = average_states([a, b])
    assert torch.equal(out["w"], torch.tensor([2.0, 4.0])) and torch.equal(out["ids"], torch.tensor([0, 1]))
    with pytest.raises(ValueError):
        average_states([a, {"w": a["w"]}])
    with pytest.raises(ValueError):
        average_states([])



def test_training_sees_what_serving_scores():
    """Training normalises with for_scoring itself: mentions dropped, evasions folded, as in serving (enclosed
    letters and emoji names at the length cap aside: tests/test_normalize_sweep.py)."""
    from bot.core.normalize import for_scoring
    from bot.training.train import normaliser

    norm = normaliser()
    assert norm.func is for_scoring and norm.keywords == {"enclosed_letters": False, "words_first": False}
    assert norm("<@123456789> f.u.c.k off") == "fuck off" == for_scoring("<@123456789> f.u.c.k off")


@pytest.mark.parametrize(
    ("tweet", "expected"),
    [
        ("@USER @USER you are an idiot URL", "you are an idiot URL"),
        ("thanks @USER!", "thanks !"),
        ("so true @USER", "so true"),
        ('"@USER Someone should have taken this"', '" Someone should have taken this"'),
        (".@USER PLEASE vote NO", ". PLEASE vote NO"),
        ("@USER@USER (@USER) ok", "( ) ok"),
        ("thank@USER", "thank"),
        ("@USERS stays", "@USERS stays"),
    ],
)
def test_olid_user_placeholders_are_removed(tweet, expected):
    """OLID's @USER placeholders (its anonymised mentions) are removed for training and eval alike, wherever they
    stand (after a quote, a dot, a bracket or another placeholder: 1,016 tweets kept one with the first, whitespace-
    only rule); a longer word such as "@USERS" stays."""
    from bot.training.splits import strip_user_placeholders

    assert strip_user_placeholders(tweet) == expected


def test_davidson_gendered_mask_is_opt_in_and_touches_only_offensive_rows_with_gendered_slurs(tmp_path):
    """Davidson's annotators put sexist tweets in "offensive", not "hate speech": with mask_gendered such a tweet
    gets identity_attack masked (None, no loss); other offensive tweets keep the hate-vote fraction, class 0/2 rows
    are unchanged, and without the flag (the shipped model's data) nothing is masked."""
    import csv

    from bot.training.data import load_davidson

    folder = tmp_path / "davidson-hate-offensive"
    folder.mkdir()
    rows = [  # count, hate, offensive, neither, class, tweet
        (3, 0, 3, 0, 1, "RT that bitch lied again"),
        (3, 0, 3, 0, 1, "this movie is shit"),
        (3, 3, 0, 0, 0, "all those bitches should be shot"),
        (3, 0, 0, 3, 2, "my dog had puppies today"),
        (3, 1, 2, 0, 1, "stupid hoes everywhere"),
    ]
    with (folder / "labeled_data.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["", "count", "hate_speech", "offensive_language", "neither", "class", "tweet"])
        for i, r in enumerate(rows):
            w.writerow([i, *r])
    ia, tox = LABELS.index("identity_attack"), LABELS.index("toxicity")
    masked = {e.text: e.target for e in load_davidson(tmp_path, random.Random(0), mask_gendered=True)}
    plain = {e.text: e.target for e in load_davidson(tmp_path, random.Random(0))}
    assert masked["that bitch lied again"][ia] is None and masked["stupid hoes everywhere"][ia] is None
    assert masked["that bitch lied again"][tox] == 1.0
    assert masked["this movie is shit"][ia] == 0.0
    assert masked["all those bitches should be shot"][ia] == 1.0
    assert masked["my dog had puppies today"][ia] == 0.0
    assert plain["that bitch lied again"][ia] == 0.0
    assert plain["stupid hoes everywhere"][ia] == pytest.approx(1 / 3)


@pytest.mark.parametrize("value", ["4", "1024"])
def test_training_cli_rejects_a_max_len_outside_8_to_512_before_loading_data(value, tmp_path, capsys):
    """``--max-len`` out of range is a usage error (exit 2) naming the flag; no data is read and nothing written."""
    from bot.training.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["--data", str(tmp_path / "missing"), "--out", str(tmp_path / "out"), "--max-len", value])
    assert exc.value.code == 2
    assert "--max-len must be between 8 and 512" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--distill-weight", "1.5"], "--distill-weight must be between 0 and 1"),
    (["--teacher", "{tmp}/not-an-artifact"], "not a model artifact directory"),
    (["--teacher", "{tmp}/not-an-artifact", "--no-distill"], "--teacher and --no-distill contradict"),
    (["--no-distill", "--teachers-dir", "{tmp}/t"], "apply only to the recipe's teachers"),
    (["--no-distill", "--retrain-teachers"], "apply only to the recipe's teachers"),
    (["--distill-weight", "0"], "--distill-weight 0 ignores the teachers"),
])
def test_training_cli_rejects_bad_distillation_flags_before_loading_data(flags, message, tmp_path, capsys):
    """A distillation weight outside [0, 1] or a teacher that is not an artifact is a usage error (exit 2)."""
    from bot.training.__main__ import main

    (tmp_path / "not-an-artifact").mkdir()
    flags = [f.format(tmp=tmp_path) for f in flags]
    with pytest.raises(SystemExit) as exc:
        main(["--data", str(tmp_path / "missing"), "--out", str(tmp_path / "out"), *flags])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_teacher_probabilities_are_what_detoxify_serves(tmp_path):
    """Distillation targets from the shipped artifact equal detoxify's scores of the same texts (all seven labels),
    and two copies of one teacher average to the same values."""
    import torch
    from detoxify import Detoxify
    from transformers import BertTokenizerFast

    from bot.model import artifact as art
    from bot.training.train import teacher_probabilities

    texts = ["trans women are women", "trans people are disgusting freaks", "the build is green again"]
    tok = BertTokenizerFast.from_pretrained(str(art.base_model_dir()))
    enc = tok(texts, truncation=True, max_length=48)["input_ids"]
    got = teacher_probabilities((art.ARTIFACT_DIR,), enc)
    built = art.assemble(tmp_path / "cache", art.ARTIFACT_DIR)
    served = Detoxify(checkpoint=str(built.checkpoint), huggingface_config_path=str(built.config_dir)).predict(texts)
    want = torch.tensor([[served[label][i] for label in LABELS] for i in range(len(texts))])
    assert got.shape == (3, len(LABELS))
    assert torch.allclose(got, want, atol=1e-4)
    review = art.read_thresholds()["identity_attack"]
    assert got[1, LABELS.index("identity_attack")] > 0.9 > review > got[0, LABELS.index("identity_attack")]
    assert torch.allclose(teacher_probabilities((art.ARTIFACT_DIR, art.ARTIFACT_DIR), enc), got, atol=1e-6)


def test_a_teacher_with_other_labels_is_refused(tmp_path):
    """Distilling from an artifact whose manifest lists other labels raises ModelArtifactError naming the teacher."""
    import json
    import shutil

    from bot.model import artifact as art
    from bot.training.train import teacher_probabilities

    teacher = tmp_path / "teacher"
    shutil.copytree(art.ARTIFACT_DIR, teacher)
    manifest = json.loads((teacher / art.MANIFEST_FILE).read_text())
    manifest["labels"] = manifest["labels"][::-1]
    (teacher / art.MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(art.ModelArtifactError, match="teacher .*teacher: its labels are not toxicity"):
        teacher_probabilities((teacher,), [[101, 102]])


def test_training_loss_without_teachers_is_the_masked_weighted_bce():
    """No teacher: the loss is BCE with pos_weight averaged over known labels only (unknown labels cost nothing)."""
    import math

    import torch

    from bot.training.train import training_loss

    logits = torch.tensor([[0.0, 2.0], [1.0, -1.0]])
    hard = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    mask = torch.tensor([[True, True], [True, False]])
    pw = torch.tensor([3.0, 1.0])

    def sp(x):  # softplus = -log(sigmoid(-x))
        return math.log1p(math.exp(x))

    want = (3.0 * sp(-0.0) + sp(2.0) + sp(1.0)) / 3
    assert float(training_loss(logits, hard, mask, pw)) == pytest.approx(want, rel=1e-6)


def test_distillation_term_is_minimised_at_the_teacher_probability_despite_pos_weight():
    """With only the distillation term (weight 1), the gradient vanishes where the student's probability equals the
    teacher's, whatever pos_weight is; the hard-label term alone would pull a 0.2 teacher target above 0.4."""
    import torch

    from bot.training.train import training_loss

    soft = torch.tensor([[0.2, 0.7]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    pw = torch.tensor([3.0, 8.0])
    logits = torch.logit(soft).clone().requires_grad_(True)
    training_loss(logits, torch.zeros(1, 2), mask, pw, soft, 1.0).backward()
    assert torch.allclose(logits.grad, torch.zeros(1, 2), atol=1e-6)
    # the pos-weighted BCE against the same soft target has its minimum elsewhere (p = pw*t / (pw*t + 1 - t))
    p = torch.linspace(0.01, 0.99, 99).logit()
    losses = torch.nn.functional.binary_cross_entropy_with_logits(
        p, torch.full_like(p, 0.2), pos_weight=torch.tensor(3.0), reduction="none")
    assert float(torch.sigmoid(p[losses.argmin()])) == pytest.approx(0.6 / 1.4, abs=0.01)


def test_scene_families_are_appended_with_twins_and_leave_the_rest_unchanged():
    """scene=True (issue 19) appends the founding-scene families after the unchanged default set: hateful and
    benign rows for misgendering, costume imagery, nicknames, veiled threats and "for existing"; evasion copies on
    both sides keep their source's labels (a dropped letter is no cue); game/tech violence words stay benign."""
    from bot.training.handwritten import GAME_TECH_NH, VEILED_THREAT_H, scene_families

    ia, th = LABELS.index("identity_attack"), LABELS.index("threat")
    base, more = generate(13), generate(13, scene=True)
    assert more[: len(base)] == base and len(more) - len(base) == len(scene_families(13))
    scene = scene_families(13)
    assert scene == scene_families(13)  # deterministic
    low = [(e.text.lower(), e.target) for e in scene]
    assert any("costume" in t and tg[ia] == 1.0 for t, tg in low) and any("costume" in t and tg[ia] == 0.0 for t, tg in low)
    assert any("exist" in t and tg[ia] == 1.0 for t, tg in low) and any("exist" in t and tg[ia] == 0.0 for t, tg in low)
    threats = {t.lower() for t in VEILED_THREAT_H}
    assert all(tg[th] == 1.0 for t, tg in low if t in threats)
    games = {t.lower() for t in GAME_TECH_NH}
    assert all(tg[th] == 0.0 and tg[ia] == 0.0 for t, tg in low if t in games)
    noisy = [e for e in scene if e.source == "hand_noisy"]
    assert any(e.target[ia] == 0.0 for e in noisy) and any(e.target[ia] == 1.0 for e in noisy)
    assert any(e.target[th] == 1.0 and e.target[ia] == 0.0 for e in noisy)  # an evaded veiled threat stays a threat
    ob = LABELS.index("obscene")
    labels_of: dict[str, set] = {}
    for e in scene:
        labels_of.setdefault(e.text, set()).add(e.target)
    assert all(len(t) == 1 for t in labels_of.values())  # no text with two labellings (profane support's copies)
    assert any(e.target[ob] == 1.0 and e.target[ia] == 0.0 for e in noisy)


def test_recipe_teachers_differ_only_in_the_stance_families_and_never_distil(tmp_path):
    """The shipped recipe's teachers: the student's hyper-parameters, one run each, no teachers of their own; the
    plain one trains the default data, the other adds the stance families; each in a folder named by its settings."""
    from bot.training.train import TrainConfig, teacher_configs

    student = TrainConfig(out=tmp_path / "student", seed=5, max_len=40, runs=2, teachers=(tmp_path / "x",),
                          stance_families=True)
    plain, stance = teacher_configs(student, tmp_path / "work")
    assert plain.out.parent == stance.out.parent == tmp_path / "work"
    assert plain.out.name.startswith("plain-") and stance.out.name.startswith("stance-")
    assert (plain.stance_families, stance.stance_families) == (False, True)
    for t in (plain, stance):
        assert (t.seed, t.max_len, t.runs, t.teachers, t.keep_runs) == (5, 40, 1, (), None)
    assert teacher_configs(student, tmp_path / "work") == [plain, stance]  # deterministic folder names


def test_recipe_key_covers_every_weight_deciding_setting_and_the_code(tmp_path):
    """Every TrainConfig field but where it is written and the distillation settings is in the key (a new field
    cannot be forgotten); the data path is resolved; the training code's checksum and library versions are in it."""
    from dataclasses import fields

    from bot.training.train import NOT_RECIPE_FIELDS, TrainConfig, recipe_key

    key = recipe_key(TrainConfig())
    assert set(key) == {f.name for f in fields(TrainConfig)} - NOT_RECIPE_FIELDS | {"code_sha256", "base_sha256",
                                                                                  "versions"}
    rel = TrainConfig(data=Path("../shared/data"))
    assert recipe_key(rel)["data"] == str(Path("../shared/data").resolve())
    assert recipe_key(TrainConfig(out=tmp_path, teachers=(tmp_path,), distill_weight=0.3)) == key
    assert recipe_key(TrainConfig(limit=500)) != key


def test_a_teacher_is_reused_only_when_its_recorded_settings_match(tmp_path):
    """A finished teacher folder (delta file + recipe.json of the same settings) is reused; other settings get
    another folder, and a missing delta file or an unreadable recipe.json means it is trained again."""
    import json
    import shutil

    from bot.model import artifact as art
    from bot.training.train import RECIPE_FILE, TrainConfig, recipe_key, reusable_teacher, teacher_configs

    plain, _ = teacher_configs(TrainConfig(out=tmp_path / "student"), tmp_path / "work")
    assert not reusable_teacher(plain)
    shutil.copytree(art.ARTIFACT_DIR, plain.out)
    (plain.out / RECIPE_FILE).write_text(json.dumps(recipe_key(plain)))
    assert reusable_teacher(plain)
    other, _ = teacher_configs(TrainConfig(out=tmp_path / "student", seed=14), tmp_path / "work")
    assert other.out != plain.out and not reusable_teacher(other)
    (plain.out / RECIPE_FILE).write_text(json.dumps({**recipe_key(plain), "code_sha256": "0" * 64}))
    assert not reusable_teacher(plain)
    (plain.out / RECIPE_FILE).write_text("{not json")
    assert not reusable_teacher(plain)
    (plain.out / RECIPE_FILE).write_text(json.dumps(recipe_key(plain)))
    (plain.out / art.DELTA_FILE).unlink()
    assert not reusable_teacher(plain)


def test_training_cli_will_not_write_the_base_over_the_shipped_fast_loop_candidate(tmp_path, capsys):
    """The shipped model is a fast-loop candidate (re-fitted) of the recipe's student: ``python -m bot.training``
    builds that base, so writing it to the shipped folder (the default --out) is a usage error naming the base's
    own folder; nothing is read or written."""
    from bot.model import artifact as art
    from bot.training.__main__ import main

    meta = art.read_manifest(art.ARTIFACT_DIR)["meta"]
    assert meta["fast_loop"] and meta["refit"] and (art.ARTIFACT_DIR.parent / f"artifact-{meta['base']}").is_dir()
    shipped = art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE)
    with pytest.raises(SystemExit) as exc:
        main(["--data", str(tmp_path / "missing")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"fast-loop candidate of {meta['base']}" in err and f"--out bot/model/artifact-{meta['base']}" in err
    assert art.sha256_file(art.ARTIFACT_DIR / art.DELTA_FILE) == shipped
