"""The fast candidate loop's data (issue 26): the new-row families, the replay pool's cached base probabilities,
the chat anchors, and the one way a candidate folder is published. Shared by :mod:`bot.training.fast` (which
trains a candidate), :mod:`bot.training.refit` and :mod:`bot.training.soup` (which finish one), so that none of
them imports another's command.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from bot.core.models import LABELS
from bot.model import artifact as art
from bot.training.data import Example
from bot.training.train import check_out_dir, contains, normaliser, split_by_texts

log = logging.getLogger(__name__)


def _scene_rows(seed: int) -> list[Example]:
    from bot.training.handwritten import scene_families

    return scene_families(seed)


def _scene_no_benign_evasions(seed: int) -> list[Example]:
    """Issue 19's scene families without the dropped-letter copies of *benign* rows (the likeliest cause of run
    KS's loss on HateCheck's spelling families: every HateCheck spelling case is hateful)."""
    return [ex for ex in _scene_rows(seed)
            if not (ex.source == "hand_noisy" and ex.target[LABELS.index("identity_attack")] == 0.0)]


def _counterfactual(seed: int) -> list[Example]:
    from bot.training.counterfactual import counterfactual_rows

    return counterfactual_rows(seed)


def _stance_twins(seed: int) -> list[Example]:
    from bot.training.stance_twins import stance_twin_rows

    return stance_twin_rows(seed)


def _ordinary_harm(seed: int) -> list[Example]:
    from bot.training.ordinary_harm import ordinary_harm_rows

    return ordinary_harm_rows(seed)


def _composed(seed: int) -> list[Example]:
    from bot.training.composed import composed_rows

    return composed_rows(seed)


def _composed_half(seed: int) -> list[Example]:
    """Half the ``composed`` family (500 messages and their twins): the twenty-ninth session's question, whether
    fewer composed rows keep the scene's gain at less HateCheck cost."""
    from bot.training.composed import composed_rows

    return composed_rows(seed, n=500)


def _composed_stance(seed: int) -> list[Example]:
    from bot.training.composed import composed_stance_rows

    return composed_stance_rows(seed)


def _counter_quotes(seed: int) -> list[Example]:
    from bot.training.counter_quotes import quoted_hate_rows

    return quoted_hate_rows(seed)


#: Data families the loop can add, by name: a function ``seed -> rows`` (every label they set is known).
FAMILIES: dict[str, Callable[[int], list[Example]]] = {
    "counterfactual": _counterfactual,
    "scene": _scene_rows,
    "scene-nobenignevasion": _scene_no_benign_evasions,
    "stance-twins": _stance_twins,
    "ordinary-harm": _ordinary_harm,
    "counter-quotes": _counter_quotes,
    "composed": _composed,
    "composed-half": _composed_half,
    "composed-stance": _composed_stance,
}


def new_rows(families: Sequence[str], seed: int) -> list[Example]:
    """The rows of ``families`` (names in :data:`FAMILIES`), normalised with ``for_scoring`` as in serving,
    de-duplicated on (text, target).

    Raises:
        ValueError: an unknown family name.
    """
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    norm = normaliser()
    seen: set[tuple[str, tuple]] = set()
    out = []
    for fam in families:
        # the families' templates are generated with the recipe's seed 13 (the same rows whatever the candidate's
        # seed); the candidate's seed decides the sample and the order
        for ex in FAMILIES[fam](13):
            text = norm(ex.text).strip()
            if text and (text, ex.target) not in seen:
                seen.add((text, ex.target))
                out.append(replace(ex, text=text))
    return out


def split_new(rows: list[Example], seed: int, dev_fraction: float = 0.1,
              exclude: frozenset[str] = frozenset()) -> tuple[list[Example], list[Example]]:
    """``(train, dev)`` of the new rows: a ``dev_fraction`` of their unique texts (seeded) is held out for the
    thresholds; texts in ``exclude`` (the recipe's dev split) go to neither train nor the new dev rows."""
    uniq = sorted({ex.text for ex in rows if ex.text not in exclude})
    random.Random(seed * 104729 + 26).shuffle(uniq)
    return split_by_texts(rows, set(uniq[: int(len(uniq) * dev_fraction)]), exclude)


def restrict_labels(mask, labels: Sequence[str] | None):
    """``mask`` (bool tensor ``(n, 7)``, columns in :data:`LABELS` order) with every column not named in
    ``labels`` set to False; ``labels`` None returns ``mask`` unchanged.

    Raises:
        ValueError: a name in ``labels`` that is not one of :data:`LABELS`.
    """
    if labels is None:
        return mask
    unknown = [name for name in labels if name not in LABELS]
    if unknown:
        raise ValueError(f"unknown labels {unknown}; known: {', '.join(LABELS)}")
    out = mask.clone()
    for i, name in enumerate(LABELS):
        if name not in labels:
            out[:, i] = False
    return out


def new_row_targets(hard, labels: Sequence[str] | None, base_probs=None):
    """``(targets, mask)`` of the new rows, float and bool tensors ``(n, 7)``: ``hard`` (``(n, 7)``, NaN where a
    row leaves a label unknown) on the columns :func:`restrict_labels` keeps for ``labels``; every other cell is
    masked out, or, with ``base_probs`` (the base model's probabilities on the same rows, ``(n, 7)``), held at the
    base's probability and kept in the loss (``--hold-unnamed``).

    Raises:
        ValueError: an unknown label name in ``labels``.
    """
    import torch

    mask = restrict_labels(~torch.isnan(hard), labels)
    soft = torch.nan_to_num(hard, nan=0.0)
    if base_probs is None:
        return torch.where(mask, soft, torch.zeros_like(soft)), mask
    return torch.where(mask, soft, base_probs.to(soft.dtype)), torch.ones_like(mask)


def pool_key(base: Path, texts: Sequence[str], max_len: int) -> str:
    """sha256 (hex) over the base artifact's delta checksum, ``max_len`` and the pool's texts in order: the key of
    the cached replay targets (another base, truncation or pool is another file)."""
    h = hashlib.sha256()
    h.update(art.read_manifest(base)["delta_sha256"].encode() + b"\0" + str(max_len).encode() + b"\0")
    for t in texts:
        h.update(t.encode("utf-8") + b"\0")
    return h.hexdigest()


def replay_targets(base: Path, texts: Sequence[str], enc: list[list[int]], max_len: int, cache: Path):
    """The base model's sigmoid probabilities on ``enc`` (token ids of ``texts``): a float tensor ``(n, 7)``,
    loaded from ``cache/fast/replay-<key>.pt`` when present (see :func:`pool_key`), else computed with
    :func:`bot.training.train.teacher_probabilities` and written there atomically (temp file + rename)."""
    import torch

    from bot.training.train import teacher_probabilities

    path = cache / "fast" / f"replay-{pool_key(base, texts, max_len)[:16]}.pt"
    if path.is_file():
        probs = torch.load(path)
        if tuple(probs.shape) == (len(texts), len(LABELS)):
            log.info("replay targets: cached %s", path)
            return probs
    t0 = time.monotonic()
    probs = teacher_probabilities((base,), enc)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(probs, tmp)
    tmp.replace(path)
    log.info("replay targets: %d texts scored in %.0fs, cached %s", len(texts), time.monotonic() - t0, path)
    return probs


#: Chat exports under ``<data>/chats`` used as anchor text (``--anchor``): every set except the two that
#: ``bench/chat_flags.py`` measures (Komodo, JuliaLang), so the flag-rate test sets are never trained on.
ANCHOR_SOURCES: tuple[str, ...] = ("disco-discord-xml", "slack-software-chats-xml", "ubuntu-irc-disentanglement")
#: At most this many anchor texts are scored once (a fixed sample, seed 13) and cached; each candidate draws its
#: ``--anchor`` rows from them with its own seed.
ANCHOR_POOL = 20000
#: The borderline band of ``--anchor-borderline`` (base-model probability of any label).
BORDERLINE_LOW, BORDERLINE_HIGH = 0.5, 0.95
#: The base-model probability from which a replay row counts as *hot* for ``--replay-hot``.
HOT_LOW = 0.5
#: How chat swears: frames of ``--anchor-profane``. ``{t}`` is the message; ``{a} {b}`` splits it before a word
#: (an intensifier in front of a word). Ordinary, untargeted profanity only: no slur, no insult aimed at anyone.
PROFANE_FRAMES: tuple[str, ...] = (
    "holy shit, {t}", "damn, {t}", "wtf, {t}", "fuck, {t}", "shit, {t}", "ffs {t}", "lol {t} as hell",
    "{t} lol shit", "{t}, fucking finally", "{t}, damn it", "{t}. shit happens", "{t} (this shit again)",
    "{t}, what the hell", "{t}. fuck it", "{t}, it's a pain in the ass", "{a} fucking {b}", "{a} damn {b}",
    "{a} goddamn {b}", "{a} bloody {b}", "{a} shitty {b}",
)
#: Profane anchors are made once from this many anchor-pool messages (seed 13) and cached; each candidate draws
#: its ``--anchor-profane`` rows from them with its own seed.
PROFANE_POOL = 10000


def pick_hot(probs, columns: Sequence[int], n: int, rng: random.Random, exclude: frozenset[int] = frozenset()) -> list[int]:
    """Indices of ``n`` hot rows of ``probs`` (the base's ``(pool, 7)`` probabilities): rows scoring
    :data:`HOT_LOW` or more on one of ``columns`` and not in ``exclude``, a seeded sample when there are more than
    ``n``, else every one of them repeated (in order) until ``n`` are drawn; ``[]`` when none is hot or ``n`` is 0."""
    if n <= 0 or not columns:
        return []
    hot_mask = (probs[:, list(columns)] >= HOT_LOW).any(dim=1).tolist()
    hot = [i for i, h in enumerate(hot_mask) if h and i not in exclude]
    if not hot:
        return []
    if len(hot) >= n:
        return sorted(rng.sample(hot, n))
    return (hot * (n // len(hot) + 1))[:n]


def pick_anchors(probs, n: int, rng: random.Random, borderline: bool) -> list[int]:
    """Sorted indices of ``n`` anchors out of ``probs`` (the base's ``(pool, 7)`` probabilities): a seeded random
    sample; or with ``borderline`` a quarter of them borderline texts (each repeated as often as fills that
    quarter, at least once; a seeded sample of them when there are more), then random others up to ``n``.
    Borderline texts are rare in chat (260 of the 20,000-text pool), hence the repeats."""
    total = int(probs.shape[0])
    n = min(n, total)
    if not borderline:
        return sorted(rng.sample(range(total), n))
    band = ((probs >= BORDERLINE_LOW) & (probs < BORDERLINE_HIGH)).any(dim=1).tolist()
    near = [i for i in range(total) if band[i]]
    quarter = max(1, n // 4)
    if len(near) >= quarter:
        near = rng.sample(near, quarter)
    near = near * max(1, quarter // max(1, len(near)))
    rest = [i for i in range(total) if not band[i]]
    return sorted(near + rng.sample(rest, max(0, min(len(rest), n - len(near)))))


def _chat_lines(folder: Path) -> list[str]:
    """Message texts of one chat research set, in file order: the XML sets' ``<text>`` elements and the IRC logs'
    message lines (the readers of the recipe's own benign chat rows, :mod:`bot.training.data`)."""
    from bot.training.data import irc_texts, xml_texts

    return xml_texts(folder) + irc_texts(folder)


def profane_anchor_texts(pool: Sequence[str], n: int = PROFANE_POOL) -> list[str]:
    """Up to ``n`` sworn versions of ``pool`` (anchor-pool texts, in their order): each of the first ``n`` texts of
    three or more words with one frame of :data:`PROFANE_FRAMES` (seed 13, so the same list for every candidate
    and one cache file), lower-case frames as chat writes them, de-duplicated."""
    rng = random.Random(13)
    out: list[str] = []
    seen: set[str] = set()
    for text in pool:
        words = text.split(" ")
        if len(words) < 3:
            continue
        frame = rng.choice(PROFANE_FRAMES)
        cut = rng.randrange(1, len(words))
        sworn = frame.format(t=text, a=" ".join(words[:cut]), b=" ".join(words[cut:]))
        if sworn not in seen:
            seen.add(sworn)
            out.append(sworn)
        if len(out) >= n:
            break
    return out


def anchor_texts(data: Path, exclude: frozenset[str] = frozenset()) -> list[str]:
    """The anchor pool: unique non-empty messages of :data:`ANCHOR_SOURCES` under ``data/chats`` normalised with
    ``for_scoring`` (as the bot scores them), minus ``exclude`` (the recipe's dev texts), a fixed sample of at most
    :data:`ANCHOR_POOL` (seed 13) in a stable order.

    Raises:
        ValueError: none of the sources is there (the message names the folder looked in).
    """
    folders = [data / "chats" / name for name in ANCHOR_SOURCES if (data / "chats" / name).is_dir()]
    if not folders:
        raise ValueError(f"--anchor: none of {', '.join(ANCHOR_SOURCES)} under {data / 'chats'}")
    norm = normaliser()
    seen: set[str] = set()
    out = []
    for folder in folders:
        for raw in _chat_lines(folder):
            text = norm(raw).strip()
            if text and text not in seen and text not in exclude:
                seen.add(text)
                out.append(text)
    out.sort()
    random.Random(13).shuffle(out)
    return out[:ANCHOR_POOL]


def _check_out(out: Path, base: Path) -> None:
    """Refuse an ``--out`` that the fast loop's final replace (``shutil.rmtree(out)``, then the staging folder
    moved there) would harm: the shipped artifact or the base, a folder holding or inside either, an existing file
    or a folder that is not a fast-loop candidate (no ``fast.json``), or a place that cannot be written.

    Raises:
        ValueError: with the reason, naming ``--out``.
    """
    for what, artifact in (("the shipped artifact", art.ARTIFACT_DIR), ("the --base artifact", Path(base))):
        if contains(out, artifact) or contains(artifact, out):
            raise ValueError(f"--out {out}: the fast loop never writes {what} or a folder holding it or inside it "
                             f"({artifact}; copy a candidate there deliberately once the paired tests support it)")
    out = Path(out)
    if out.is_dir() and any(out.iterdir()) and not (out / "fast.json").is_file():
        raise ValueError(f"--out {out}: a folder that is not a fast-loop candidate (no fast.json); the fast loop "
                         "replaces --out whole, so name a new folder or a previous candidate")
    check_out_dir(out)


def publish(staging: Path, out: Path, report: dict) -> dict:
    """Finish a candidate built in ``staging`` (``<out>.partial``): write ``report`` as its ``fast.json``, replace
    ``out`` whole with it (so ``out`` is never half-written) and log it; returns ``report``. The fast loop, the soup
    and the re-fit all end here."""
    (staging / "fast.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    staging.replace(out)
    log.info("done: %s", json.dumps(report))
    return report
