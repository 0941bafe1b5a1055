"""Fine-tune all-MiniLM-L6-v2 into the seven-label embedded model and write ``bot/model/artifact``.

Run with ``python -m bot.training [--data DIR] [--seed N] [--epochs N]``. By default it runs the shipped recipe
(:func:`train_recipe`): two teachers, then the student distilled from them; ``--no-distill`` trains one model,
``--teacher DIR`` distils from given artifacts. Steps of one training (:func:`train`): load sources
(:mod:`bot.training.data`) + the hand-written set (:mod:`bot.training.handwritten`), normalise every text with
``bot.core.normalize.for_scoring`` (what the pipeline does before scoring), hold out 10% as a dev split, fine-tune
(word embeddings frozen, bf16 autocast, masked BCE with class weights), write the int8-delta artifact, assemble it,
score the dev split through detoxify and calibrate per-label thresholds (max F1) into ``thresholds.json``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import random
import tempfile
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

from bot.core.models import LABELS
from bot.model import artifact as art
from bot.training.data import Example, load_all
from bot.training.handwritten import generate

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The shared data root: ``$MODBOT_SHARED/data`` when set (as ``bench`` reads it), else ``../shared/data`` next to
#: the checkout. Every training command's ``--data`` defaults to it.
DEFAULT_DATA = (Path(os.environ["MODBOT_SHARED"]) / "data" if os.environ.get("MODBOT_SHARED")
                else REPO_ROOT / ".." / "shared" / "data").resolve()
#: The folders of the shared data root the recipe reads (:func:`bot.training.data.load_all`).
RECIPE_SOURCES = ("davidson-hate-offensive", "olid", "ethos", "toxic-spans", "toxigen-seed-sentences",
                  "jigsaw-toxic-sample", "chats")


def check_data_root(data: Path) -> None:
    """Refuse a ``--data`` root the recipe cannot read, before any work starts.

    Raises:
        ValueError: ``data`` is not a directory, or lacks one of :data:`RECIPE_SOURCES` (named in the message).
    """
    if not Path(data).is_dir():
        raise ValueError(f"--data {data}: not a directory (the shared data root holding "
                         f"{', '.join(RECIPE_SOURCES)}; default {DEFAULT_DATA})")
    missing = [name for name in RECIPE_SOURCES if not (Path(data) / name).is_dir()]
    if missing:
        raise ValueError(f"--data {data}: missing {', '.join(missing)} (the recipe reads {', '.join(RECIPE_SOURCES)})")


def check_out_dir(out: Path, flag: str = "--out") -> None:
    """Refuse an output directory that cannot be created and written, before any work starts: ``out`` (or the
    nearest of its parents that exists) is a file, or no file can be created there (a read-only file system, no
    permission). Creates nothing that stays (a probe directory is made and removed).

    Raises:
        ValueError: naming ``flag`` and the reason.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {out}: not a directory")
    probe_in = out if out.is_dir() else out.parent
    while not probe_in.exists() and probe_in != probe_in.parent:
        probe_in = probe_in.parent
    if not probe_in.is_dir():
        raise ValueError(f"{flag} {out}: not a directory ({probe_in} is a file)")
    try:
        tempfile.TemporaryDirectory(dir=probe_in, prefix=".modbot-probe-").cleanup()
    except OSError as exc:
        raise ValueError(f"{flag} {out}: cannot write in {probe_in} ({exc.strerror or exc})") from None


def contains(outer: Path, inner: Path) -> bool:
    """``inner`` is ``outer`` or inside it, symlinks and ``..`` resolved."""
    return Path(inner).resolve().is_relative_to(Path(outer).resolve())


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters. With the defaults, :func:`train_recipe` rebuilds the committed artifact (the distilled
    student); :func:`train` alone with the defaults builds the recipe's ``plain`` teacher (the fourth model)."""

    data: Path = DEFAULT_DATA
    seed: int = 13
    epochs: int = 2
    batch_size: int = 32
    max_len: int = 48
    lr: float = 6e-5
    warmup: float = 0.06
    weight_decay: float = 0.01
    dev_fraction: float = 0.1
    hand_repeat: int = 1
    threads: int = 2
    out: Path = art.ARTIFACT_DIR
    limit: int = 0
    #: Fine-tunes averaged into one model (a uniform "model soup", Wortsman et al. 2022): every run starts from
    #: the same initialisation (``seed``) and differs only in data order and dropout (``seed + k``). The average
    #: costs nothing at inference and is less sensitive to one run's luck than a single fine-tune.
    runs: int = 1
    #: Where to also write each run's own artifact (``run<k>/``), for comparison; ``None`` = not written.
    keep_runs: Path | None = None
    #: Add the third-session template families (``handwritten.generate(stance_families=True)``): used by the
    #: recipe's ``stance`` teacher (:data:`TEACHER_RECIPE`), not by the shipped student's own training data.
    stance_families: bool = False
    #: Add issue 19's founding-scene families (:func:`bot.training.handwritten.scene_families`: misgendering and
    #: pathologising, costume imagery, dehumanising nicknames, veiled threats, "for existing" defences, angry
    #: support, game/tech violence words, negated hate, dropped-letter evasions; each with twins). Off (default)
    #: reproduces the student ``6be930fdb033`` (the shipped model's base); run KS (docs/model-card.md, "Twelfth
    #: session") trained the recipe with it on and was not shipped.
    scene_families: bool = False
    #: Two-sentence training messages built from the training split (see :func:`composites`); 0 = none.
    composites: int = 3000
    #: Mask ``identity_attack`` on Davidson "offensive" tweets with gendered slurs (see
    #: :func:`bot.training.data.load_davidson`); not shipped: one run (DM) was worse overall.
    davidson_gendered_mask: bool = False
    #: Artifact directories of teacher models for knowledge distillation (Hinton et al. 2015); () = none. Each
    #: training text is scored by every teacher (same tokens as the student sees); see :func:`training_loss`.
    teachers: tuple[Path, ...] = ()
    #: Weight of the distillation term in the loss, in [0, 1] (see :func:`training_loss`). 1.0 (the shipped
    #: student, run KP3): the student learns only the teachers' mean probability on the labels a source knows.
    distill_weight: float = 1.0


def normaliser():
    """``bot.core.normalize.for_scoring`` (else identity, logged): training sees the text serving scores, but for
    two steps: enclosed letters (``🅵🅰🅶``, ``🇫🇦🇬``, two flags or more side by side) are left as the emoji they
    are, and emoji names do not give way to words at the length cap (``for_scoring``'s ``words_first``), as when
    the shipped model was trained, so its recorded recipes rebuild it bit for bit (49 OLID training tweets end in
    flag runs; no hand-written family has an enclosed letter).

    Platform mentions are dropped in both (see :func:`bot.core.normalize.for_scoring`), and OLID's ``@USER``
    placeholders are removed when OLID is read (:func:`bot.training.splits.strip_user_placeholders`), so no mention
    token can teach the model that a message is harmless.
    """
    try:
        from bot.core.normalize import for_scoring
    except ImportError:
        log.warning("bot.core.normalize.for_scoring not found: training on raw text")
        return lambda s: s
    return functools.partial(for_scoring, enclosed_letters=False, words_first=False)


def cpu_has_bf16() -> bool:
    """True when the CPU has native bf16 matmul (AMX or AVX512-BF16); emulated bf16 is ~30x slower than fp32."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def split_by_texts(rows: list[Example], dev_texts: set[str],
                   exclude: frozenset[str] = frozenset()) -> tuple[list[Example], list[Example]]:
    """``(train, dev)`` of ``rows``: train keeps every row whose text is neither in ``dev_texts`` nor in ``exclude``
    (duplicates kept, in order); dev holds the first row of each text in ``dev_texts``, in order."""
    train = [ex for ex in rows if ex.text not in dev_texts and ex.text not in exclude]
    seen: set[str] = set()
    dev = []
    for ex in rows:
        if ex.text in dev_texts and ex.text not in seen:
            seen.add(ex.text)
            dev.append(ex)
    return train, dev


def build_examples(cfg: TrainConfig) -> tuple[list[Example], list[Example]]:
    """All examples, normalised and de-duplicated, split into ``(train, dev)`` with ``cfg.seed``."""
    norm = normaliser()
    rows = load_all(cfg.data, cfg.seed, mask_gendered=cfg.davidson_gendered_mask)
    rows += generate(cfg.seed, stance_families=cfg.stance_families, scene=cfg.scene_families) * cfg.hand_repeat
    seen: set[tuple[str, str]] = set()
    out = []
    for ex in rows:
        text = norm(ex.text).strip()
        if not text:
            continue
        key = (text, ex.source) if ex.source.startswith("hand") else (text, "")
        if key in seen and not ex.source.startswith("hand"):
            continue
        seen.add(key)
        out.append(replace(ex, text=text))
    rng = random.Random(cfg.seed)
    uniq = sorted({ex.text for ex in out})
    rng.shuffle(uniq)
    train, dev = split_by_texts(out, set(uniq[: int(len(uniq) * cfg.dev_fraction)]))
    if cfg.limit:
        rng.shuffle(train)
        train, dev = train[: cfg.limit], dev[: cfg.limit // 5]
    if cfg.composites:
        train = train + composites(train, cfg.composites, cfg.seed)
    return train, dev


def composites(train: list[Example], n: int, seed: int) -> list[Example]:
    """``n`` two-sentence messages: a benign real chat message next to a hand-written example, labelled as the latter.

    Why: a model trained on one-sentence texts lets harmless words dilute an attack ("<chat about a build server>.
    you will never be a real woman." scored 0.01 with model ``143ea79a4068``) and reads negative words in one
    sentence as hostility towards an identity named in the next ("Traffic was terrible today. I love trans
    people."). These examples teach that a hateful sentence stays hateful next to chat, and a benign one stays
    benign. Built from the training split only (chat messages of 3-12 words, source ``"chat"``; hand-written rows
    of at most 18 words, source ``"hand"``, so the pair fits the 48 training tokens), so the dev split stays
    untouched; the chat message comes first in 70% of them.
    Deterministic for a given ``seed``.
    """
    rng = random.Random(seed + 7919)
    chat = [ex.text for ex in train if ex.source == "chat" and 3 <= len(ex.text.split()) <= 12]
    hand = [ex for ex in train if ex.source == "hand" and len(ex.text.split()) <= 18]
    if not chat or not hand:
        return []
    out = []
    for _ in range(n):
        c, h = rng.choice(chat), rng.choice(hand)
        first, second = (c, h.text) if rng.random() < 0.7 else (h.text, c)
        sep = " " if first[-1] in ".!?" else ". "
        out.append(Example(f"{first}{sep}{second}", h.target, "hand_composite"))
    return out


def _batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Length-bucketed batches: shuffle, sort inside chunks of 50 batches, shuffle the batches."""
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    chunk = batch_size * 50
    batches = []
    for s in range(0, len(idx), chunk):
        part = sorted(idx[s : s + chunk], key=lambda i: lengths[i])
        batches += [part[j : j + batch_size] for j in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return batches


def train(cfg: TrainConfig) -> dict:
    """Run the whole rebuild; returns a report dict (also written to ``<out>/training.json``)."""
    import numpy as np
    import torch
    from transformers import BertForSequenceClassification, BertTokenizerFast

    t0 = time.monotonic()
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    train_rows, dev_rows = build_examples(cfg)
    use_bf16 = cpu_has_bf16()
    log.info("bf16 autocast: %s", use_bf16)
    log.info("train %d, dev %d examples", len(train_rows), len(dev_rows))

    base = art.base_model_dir()
    tok = BertTokenizerFast.from_pretrained(str(base))
    enc = tok([ex.text for ex in train_rows], truncation=True, max_length=cfg.max_len)["input_ids"]
    tgt = torch.tensor([[math.nan if v is None else v for v in ex.target] for ex in train_rows], dtype=torch.float32)
    mask = ~torch.isnan(tgt)
    tgt = torch.nan_to_num(tgt, nan=0.0)
    pos = (tgt * mask).sum(0)
    neg = ((1 - tgt) * mask).sum(0)
    pos_weight = torch.clamp(torch.sqrt(neg / pos.clamp_min(1.0)), 1.0, 8.0)
    soft = None
    if cfg.teachers:
        soft = teacher_probabilities(cfg.teachers, enc)
        log.info("distilled from %d teachers (weight %.2f)", len(cfg.teachers), cfg.distill_weight)
    log.info("pos_weight %s", dict(zip(LABELS, [round(float(x), 2) for x in pos_weight], strict=True)))

    states = []
    for k in range(cfg.runs):
        torch.manual_seed(cfg.seed)  # same initialisation (classifier head) for every run of the soup
        model = BertForSequenceClassification.from_pretrained(
            str(base), num_labels=len(LABELS), problem_type="multi_label_classification"
        )
        _fit(model, cfg, cfg.seed + k, enc, tgt, mask, pos_weight, use_bf16, t0, soft)
        state = {key: v.detach().clone() for key, v in model.state_dict().items()}
        if cfg.keep_runs is not None:
            art.write_artifact(state, LABELS, cfg.keep_runs / f"run{k}", seed=cfg.seed, order_seed=cfg.seed + k)
        states.append(state)
        del model
    state = average_states(states)
    train_s = time.monotonic() - t0
    distill = {}
    if cfg.teachers:
        distill = {"teachers": [art.read_manifest(Path(t))["delta_sha256"][:12] for t in cfg.teachers],
                   "distill_weight": cfg.distill_weight}
    manifest = art.write_artifact(
        state, LABELS, cfg.out, seed=cfg.seed, epochs=cfg.epochs, lr=cfg.lr, train_rows=len(train_rows), runs=cfg.runs,
        max_len=cfg.max_len, **distill,
    )
    thresholds, dev_report = calibrate(cfg, dev_rows)
    report = {
        "seed": cfg.seed,
        "runs": cfg.runs,
        "train_rows": len(train_rows),
        "dev_rows": len(dev_rows),
        "train_seconds": round(train_s),
        "total_seconds": round(time.monotonic() - t0),
        "delta_sha256": manifest["delta_sha256"],
        "dev": dev_report,
    }
    (cfg.out / art.THRESHOLDS_FILE).write_text(
        json.dumps({"thresholds": thresholds, "source": "max-F1 on the 10% dev split of the training data",
                    "dev": dev_report}, indent=2) + "\n", encoding="utf-8")
    log.info("done: %s", json.dumps(report))
    return report


#: The shipped model's recipe (tenth session, run KP3 in docs/model-card.md): two teachers are fine-tuned from the
#: package weights, one on the default data (model ``3b4fdb4d88f1``) and one with the stance families (run PS), and
#: the shipped student is trained on the default data to match their mean probability (``distill_weight`` 1.0):
#: one model with most of the two-model score average's balance at the cost of one forward pass. Each entry:
#: ``(name, TrainConfig overrides)``.
TEACHER_RECIPE: tuple[tuple[str, dict], ...] = (("plain", {"stance_families": False}),
                                                ("stance", {"stance_families": True}))
#: TrainConfig fields that do not decide a teacher's weights (where it is written, and distillation settings a
#: teacher never uses); every other field is part of :func:`recipe_key`.
NOT_RECIPE_FIELDS = frozenset({"out", "keep_runs", "teachers", "distill_weight"})
RECIPE_FILE = "recipe.json"
#: Code whose change changes a trained model: the fitting code, data loaders, templates, augmentation, normaliser.
RECIPE_CODE = ("bot/training/train.py", "bot/training/data.py", "bot/training/handwritten.py",
               "bot/training/augment.py", "bot/training/splits.py", "bot/core/normalize.py",
               "bot/core/unicode_fold.py", "bot/core/emoji_words.py")


def recipe_key(cfg: TrainConfig) -> dict:
    """What decides a model's weights, JSON-ready: every TrainConfig field but :data:`NOT_RECIPE_FIELDS` (the data
    path resolved), a sha256 over the :data:`RECIPE_CODE` files, the base package's weights checksum (manifest
    ``base_sha256``) and the torch and transformers versions. Changes in ``../shared/data`` itself are not seen:
    use ``--retrain-teachers`` after changing the data."""
    import torch
    import transformers

    key = {f.name: getattr(cfg, f.name) for f in fields(cfg) if f.name not in NOT_RECIPE_FIELDS}
    key["data"] = str(Path(cfg.data).resolve())
    code = hashlib.sha256()
    for rel in RECIPE_CODE:
        path = REPO_ROOT / rel
        code.update(rel.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    key["code_sha256"] = code.hexdigest()
    key["base_sha256"] = art.sha256_file(art.base_model_dir() / "model.safetensors")
    key["versions"] = {"torch": torch.__version__, "transformers": transformers.__version__}
    return key


def teacher_configs(cfg: TrainConfig, work: Path) -> list[TrainConfig]:
    """The teachers of :data:`TEACHER_RECIPE` for student config ``cfg``: same hyper-parameters, no teachers of
    their own, one run each. Each is written to ``work/<name>-<first 10 hex of its recipe_key's sha256>``, so
    teachers of other settings (a ``--limit`` smoke run, another seed) never overwrite each other."""
    out = []
    for name, overrides in TEACHER_RECIPE:
        tcfg = replace(cfg, teachers=(), runs=1, keep_runs=None, **overrides)
        digest = hashlib.sha256(json.dumps(recipe_key(tcfg), sort_keys=True).encode()).hexdigest()[:10]
        out.append(replace(tcfg, out=Path(work) / f"{name}-{digest}"))
    return out


def reusable_teacher(cfg: TrainConfig) -> bool:
    """True when ``cfg.out`` already holds a finished artifact whose ``recipe.json`` equals ``cfg``'s
    :func:`recipe_key` (written only after that teacher's training completed)."""
    try:
        done = json.loads((cfg.out / RECIPE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return done == recipe_key(cfg) and (cfg.out / art.DELTA_FILE).is_file()


def train_recipe(cfg: TrainConfig, work: Path, *, reuse: bool = True) -> dict:
    """Train :data:`TEACHER_RECIPE`'s teachers into ``work`` (reusing finished ones when ``reuse``), then the student
    ``cfg`` distilled from them into ``cfg.out``; returns the student's report (see :func:`train`).

    About 85 minutes on 2 CPU cores (two teachers of ~27 minutes each, then the student: ~8 minutes of teacher
    scoring and ~21 minutes of training). A teacher's ``recipe.json`` is removed before it is retrained and written
    only after its artifact is complete, so an interrupted run never leaves a half-trained teacher marked reusable.
    """
    teachers = []
    for tcfg in teacher_configs(cfg, work):
        if reuse and reusable_teacher(tcfg):
            log.info("teacher %s: reusing %s", tcfg.out.name, tcfg.out)
        else:
            log.info("teacher %s: training into %s", tcfg.out.name, tcfg.out)
            (tcfg.out / RECIPE_FILE).unlink(missing_ok=True)
            train(tcfg)
            (tcfg.out / RECIPE_FILE).write_text(json.dumps(recipe_key(tcfg), indent=2) + "\n", encoding="utf-8")
        teachers.append(tcfg.out)
    return train(replace(cfg, teachers=tuple(teachers)))


def teacher_probabilities(teachers: tuple[Path, ...], enc: list[list[int]], batch_size: int = 128):
    """Mean sigmoid probability of the teacher artifacts on token ids ``enc``: a float tensor ``(len(enc), 7)``.

    Each teacher is an artifact directory (as :func:`bot.model.artifact.write_artifact` writes) rebuilt against the
    same package weights; texts are scored in length-sorted batches, in eval mode (no dropout).

    Raises:
        ModelArtifactError: a teacher directory is not a readable artifact or its labels differ from ``LABELS``.
    """
    import torch
    from transformers import BertForSequenceClassification

    base = art.base_model_dir()
    order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
    total = torch.zeros(len(enc), len(LABELS))
    for path in teachers:
        if not (Path(path) / art.DELTA_FILE).is_file():
            raise art.ModelArtifactError(f"teacher {path}: no {art.DELTA_FILE} (not a model artifact directory)")
        if list(art.read_manifest(Path(path)).get("labels", [])) != list(LABELS):
            raise art.ModelArtifactError(f"teacher {path}: its labels are not {', '.join(LABELS)} in this order")
        model = BertForSequenceClassification.from_pretrained(
            str(base), num_labels=len(LABELS), problem_type="multi_label_classification"
        )
        model.load_state_dict(art.rebuild_state_dict(Path(path)))
        model.eval()
        with torch.inference_mode():
            for s in range(0, len(order), batch_size):
                idx = order[s : s + batch_size]
                width = max(len(enc[i]) for i in idx)
                ids = torch.tensor([enc[i] + [0] * (width - len(enc[i])) for i in idx])
                total[idx] += torch.sigmoid(model(input_ids=ids, attention_mask=(ids != 0).long()).logits.float())
        del model
    return total / len(teachers)


def average_states(states: list[dict]) -> dict:
    """Uniform average of state dicts with the same keys (a model soup); integer buffers are taken from the first.

    Raises:
        ValueError: ``states`` is empty or the dicts' keys differ.
    """
    if not states:
        raise ValueError("no state dicts to average")
    keys = list(states[0])
    if any(list(st) != keys for st in states[1:]):
        raise ValueError("state dicts to average have different keys")
    out = {}
    for key in keys:
        first = states[0][key]
        if first.is_floating_point():
            out[key] = (sum(st[key].float() for st in states) / len(states)).to(first.dtype)
        else:
            out[key] = first
    return out


def training_loss(logits, hard, mask, pos_weight, soft=None, distill_weight: float = 0.0):
    """Masked multi-label loss of one batch (a scalar tensor); ``logits``, ``hard``, ``mask``, ``soft`` are ``(b, 7)``.

    Without teachers: BCE with ``pos_weight`` (per label, ``(7,)``) on the known hard labels (``mask``), averaged
    over known labels. With teacher probabilities ``soft``: ``(1 - w) * that + w * plain BCE(soft)`` on the same
    known labels. The distillation term has no ``pos_weight`` on purpose: with a soft target ``t`` the weighted BCE
    is minimised at ``p = pw*t / (pw*t + 1 - t)``, not at ``t`` (pw 3 turns a teacher's 0.2 into 0.43), which pushed
    students towards positives (runs K and KP, ninth session, docs/model-card.md).
    """
    import torch

    m = mask.float()
    denom = m.sum().clamp_min(1.0)
    hard_loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, hard, pos_weight=pos_weight,
                                                                     reduction="none")
    loss = (hard_loss * m).sum() / denom
    if soft is None or distill_weight <= 0.0:
        return loss
    soft_loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, soft, reduction="none")
    return (1 - distill_weight) * loss + distill_weight * (soft_loss * m).sum() / denom


def _fit(model, cfg: TrainConfig, order_seed: int, enc, tgt, mask, pos_weight, use_bf16: bool, t0: float,
         soft=None) -> None:
    """Fine-tune ``model`` in place: word embeddings frozen, AdamW with linear warm-up/decay, masked BCE.

    ``order_seed`` drives the batch order and dropout; ``enc`` are token ids per example, ``tgt``/``mask`` the
    ``(n, 7)`` targets and known-label mask, ``pos_weight`` the per-label positive weight of the BCE, ``soft`` the
    ``(n, 7)`` teacher probabilities or ``None`` (see :func:`training_loss`).
    """
    import torch

    torch.manual_seed(order_seed)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr
    )
    rng = random.Random(order_seed)
    lengths = [len(x) for x in enc]
    steps_per_epoch = math.ceil(len(enc) / cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    warm = max(1, int(total * cfg.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    model.train()
    step = 0
    running = 0.0  # mean loss of the last 100 steps, across epoch boundaries
    for epoch in range(cfg.epochs):
        for batch in _batches(lengths, cfg.batch_size, rng):
            ids = [enc[i] for i in batch]
            width = max(len(x) for x in ids)
            input_ids = torch.tensor([x + [0] * (width - len(x)) for x in ids])
            attn = (input_ids != 0).long()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                logits = model(input_ids=input_ids, attention_mask=attn).logits
            loss = training_loss(logits.float(), tgt[batch], mask[batch], pos_weight,
                                 None if soft is None else soft[batch], cfg.distill_weight)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            running += float(loss.detach())
            if step % 100 == 0:
                log.info("epoch %d step %d/%d loss %.4f (%.0fs)", epoch, step, total, running / 100, time.monotonic() - t0)
                running = 0.0
    model.eval()


def calibrate(cfg: TrainConfig, dev_rows: list[Example]) -> tuple[dict[str, float], dict]:
    """Assemble the written artifact, score the dev split through detoxify, pick max-F1 thresholds per label."""
    from detoxify import Detoxify

    with tempfile.TemporaryDirectory() as tmp:
        built = art.assemble(Path(tmp), cfg.out)
        model = Detoxify(checkpoint=str(built.checkpoint), huggingface_config_path=str(built.config_dir))
        order = sorted(range(len(dev_rows)), key=lambda i: len(dev_rows[i].text))
        scores: dict[int, list[float]] = {}
        for s in range(0, len(order), 64):
            idx = order[s : s + 64]
            import torch

            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cpu_has_bf16()):
                out = model.predict([dev_rows[i].text for i in idx])
            for j, i in enumerate(idx):
                scores[i] = [float(out[label][j]) if len(idx) > 1 else float(out[label]) for label in LABELS]
    thresholds: dict[str, float] = {}
    report: dict[str, dict] = {}
    for k, label in enumerate(LABELS):
        pairs = [(scores[i][k], t >= 0.5) for i, ex in enumerate(dev_rows) if (t := ex.target[k]) is not None]
        n_pos = sum(y for _, y in pairs)
        best = (0.0, 0.5)
        for t in [x / 100 for x in range(5, 96)]:
            tp = sum(1 for s, y in pairs if y and s >= t)
            fp = sum(1 for s, y in pairs if not y and s >= t)
            f1 = 2 * tp / max(1, 2 * tp + fp + (n_pos - tp))
            if f1 > best[0] + 1e-9:
                best = (f1, t)
        thresholds[label] = best[1] if n_pos >= 10 else 0.5
        report[label] = {"n": len(pairs), "positives": n_pos, "f1": round(best[0], 4), "threshold": thresholds[label]}
    return thresholds, report
