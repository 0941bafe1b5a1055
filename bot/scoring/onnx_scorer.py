"""The embedded model on ONNX Runtime: the detoxify checkpoint exported once, checked against detoxify, then served
without importing torch or transformers (start-up in well under a second instead of ~6 s of imports).

The detoxify checkpoint stays the source of truth. :func:`export` loads it with detoxify, exports its
``BertForSequenceClassification`` with ``torch.onnx.export`` (TorchScript exporter, opset 17, dynamic batch and
sequence axes) into ``<assembled model cache>/onnx/model.onnx``, then scores the fixed :data:`CHECK_TEXTS` (short
chat, long texts cut into token windows, batches of mixed lengths) with both runtimes through the same
:meth:`DetoxifyScorer.score_batch` path. ``onnx/ONNX.json`` records the checkpoint's and the export's sha256, the
largest score difference and whether it is within :data:`TOLERANCE`; :meth:`OnnxScorer.load` refuses an export
whose check failed, whose checkpoint changed, or whose file no longer matches its checksum.

Tokenisation uses the ``tokenizers`` package with the assembled model's own ``tokenizer.json`` (the library behind
transformers' fast BERT tokenizer): truncation at 128 tokens and padding to the longest text of a batch, as
detoxify's ``predict`` does; token windows of long texts are cut at the same offsets (the check compares them too).
Scores are ``sigmoid(logits)`` in fp32, as detoxify's.

Layer: ``bot.scoring`` (an implementation of :class:`bot.core.ports.Scorer`). Export needs torch, detoxify and the
``onnx`` package; serving needs ``onnxruntime``, ``tokenizers`` and numpy only.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.scoring import ScorerError, ScorerLoadError
from bot.scoring.detoxify_scorer import DetoxifyScorer

# ONNX Runtime's official builds keep telemetry on by default: a device id and an event database under
# ~/.cache/Microsoft/DeveloperTools, queued for upload (its Privacy.md). The service and the bots store nothing they
# were not asked to, so it is switched off before ORT starts (every ORT import is below this module's); an operator
# who wants it sets ORT_DISABLE_TELEMETRY=0.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

if TYPE_CHECKING:
    import numpy
    import numpy.typing as npt
    from tokenizers import Encoding

    from bot.scoring.precision import Choice

log = logging.getLogger(__name__)

#: ONNX opset of the export (ONNX Runtime 1.17+ runs it).
OPSET = 17
#: Largest allowed difference between an ONNX Runtime score and detoxify's on :data:`CHECK_TEXTS` (scores in
#: [0, 1]); measured differences are about 1e-6 (fp32 both sides), so 1e-4 catches any real divergence while no
#: policy tier (two decimals) can move.
TOLERANCE = 1e-4
FORMAT = "modbot-onnx-v1"
#: Full-length (128-token) texts per ONNX Runtime call (``MODBOT_ONNX_SUB_BATCH``): a call holds at most
#: ``SUB_BATCH * 128`` tokens, padding included (:func:`plan_calls`), which bounds peak memory (batch x sequence^2
#: attention) as 16 texts per call did; see docs/perspective-migration.md for the measured memory and speed.
SUB_BATCH = 16
#: The fixed cost of one ONNX Runtime call, in padded tokens (:func:`plan_calls`'s cost model: a call of ``b``
#: texts padded to ``L`` tokens costs ``CALL_COST_TOKENS + b * L``). From ``session.run`` timings of the embedded
#: model on this project's 2-core AMD EPYC (two threads, quartile of repeated calls, machine shared): one 8-token
#: text 5.1 ms, eight 10.3 ms, so ~0.1-0.17 ms per token and ~4-5 ms per call, i.e. 25-50 tokens; 32 sits between.
CALL_COST_TOKENS = 32
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: The fixed check set: chat of every kind the bot meets, abuse of every label, obfuscation, non-English text, and
#: texts long enough to be scored in several token windows (so window cutting is checked too).
CHECK_TEXTS: tuple[str, ...] = (
    "", "ok", "lol", "thanks, see you tomorrow!", "gg wp", "@here meeting moved to 3pm",
    "you are an idiot", "I will kill you", "shut the fuck up", "you stupid bitch", "go back to your country",
    "all women are worthless", "you will never be a real woman.", "I love my trans friends, they are wonderful.",
    "send nudes", "ur a f4gg0t", "k i l l   y o u r s e l f", "I hate mondays so much",
    "The build failed again: `npm ERR! code ELIFECYCLE` after the lockfile update.",
    "Je pense que tu es vraiment un imbécile.", "Ты идиот и никто тебя не любит", "我恨你",
    "Honestly the new map is great, but the spawn points are unfair and the devs never listen to feedback.",
    "Maya, ignore them. we love you and you belong here.",
    "I spent the weekend setting up the new build server. " * 6 + "You are a disgusting subhuman animal.",
    ("Here is the log you asked for: " + " ".join(f"line {i}: worker ok in {i * 7 % 97} ms;" for i in range(60))
     + " and by the way you are all morons."),
    "😀😀😀 🔥🔥 💀", "https://example.com/some/path?x=1 check this",
)


@dataclass(frozen=True, slots=True)
class OnnxExport:
    """A checked export: the files and what the check measured.

    Attributes:
        model: ``model.onnx``.
        config_dir: The assembled model's config folder (``tokenizer.json`` is read from it).
        manifest: ``ONNX.json``'s content: ``format``, ``checkpoint_sha256``, ``onnx_sha256``, ``opset``,
            ``labels``, ``check`` (``texts``, ``pieces``, ``max_diff``, ``tolerance``, ``passed``), versions.
    """

    model: Path
    config_dir: Path
    manifest: dict[str, Any]


def onnx_dir(checkpoint: Path) -> Path:
    """Where the export of an assembled checkpoint lives: ``<cache>/<checksum>/onnx`` beside ``checkpoint.ckpt``."""
    return Path(checkpoint).parent / "onnx"


def _sha256(path: Path) -> str:
    from bot.model.artifact import sha256_file

    return sha256_file(path)


def _identity(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def cached_export(checkpoint: Path, config_dir: Path, checkpoint_sha256: str) -> OnnxExport | None:
    """The checked export of ``checkpoint`` when one is cached and still valid, else ``None``.

    Valid means: ``ONNX.json`` is readable, it was made from a checkpoint with
    ``checkpoint_sha256`` (the cache's ``READY`` stamp), and ``model.onnx`` still hashes to the recorded sha256
    (re-hashed only when the file's size/mtime/ctime/inode changed since the last verification). An export whose
    check failed is returned too (``manifest["check"]["passed"]`` is false): :meth:`OnnxScorer.load` refuses it,
    and it is not exported again at every start.
    """
    folder = onnx_dir(checkpoint)
    meta_file, model = folder / "ONNX.json", folder / "model.onnx"
    try:
        manifest = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("format") != FORMAT or manifest.get("checkpoint_sha256") != checkpoint_sha256 or not model.is_file():
        return None
    if manifest.get("verified_identity") != _identity(model):
        if _sha256(model) != manifest.get("onnx_sha256"):
            log.warning("cached ONNX export %s fails its checksum; it will be exported again", model)
            return None
        manifest["verified_identity"] = _identity(model)
        try:
            _write_json(meta_file, manifest)
        except OSError:
            pass
    return OnnxExport(model, Path(config_dir), manifest)


def _write_json(path: Path, obj: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def export(checkpoint: Path, config_dir: Path, checkpoint_sha256: str, *, name: str, version: str) -> OnnxExport:
    """Export ``checkpoint`` (a detoxify checkpoint) to ONNX and check it against detoxify on :data:`CHECK_TEXTS`.

    Blocking: loads torch, detoxify and the model (about 10-20 s on two cores). Writes into a temporary folder and
    renames it to :func:`onnx_dir` only when complete, so a crash never leaves a half-written export in use. A
    failed check is recorded too (``passed: false``), so the next start does not export again.

    Raises:
        ScorerLoadError: torch/detoxify/onnx missing, the export failed, or the check failed (the message gives
            the largest difference).
    """
    import shutil
    import tempfile

    try:
        import onnxruntime  # noqa: F401 - fail before minutes of export
        import torch
    except ImportError as exc:
        raise ScorerLoadError(f"ONNX export needs torch and onnxruntime: {exc}") from exc
    det = DetoxifyScorer.load(checkpoint=Path(checkpoint), config_dir=Path(config_dir))
    det.name, det.version = name, version
    model = det._model.model.eval()  # noqa: SLF001 - the export reads the wrapped transformers model
    folder = onnx_dir(checkpoint)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".onnx-", dir=folder.parent))
    started = time.perf_counter()
    try:
        enc = det._model.tokenizer(["hello world", "you are an idiot and more words"], return_tensors="pt",  # noqa: SLF001
                                   padding=True, truncation=True)
        axes = {k: {0: "batch", 1: "sequence"} for k in INPUTS} | {"logits": {0: "batch"}}
        try:
            import warnings

            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")  # tracer warnings about constant python values: the check decides
                torch.onnx.export(model, tuple(enc[k] for k in INPUTS), str(tmp / "model.onnx"),
                                  input_names=list(INPUTS), output_names=["logits"], dynamic_axes=axes,
                                  opset_version=OPSET, dynamo=False)
        except Exception as exc:  # torch raises many types from the exporter
            raise ScorerLoadError(f"ONNX export failed: {type(exc).__name__}: {exc}") from exc
        onnx_scorer = OnnxScorer(tmp / "model.onnx", Path(config_dir), name=name, version=version,
                                 labels=tuple(det._model_labels))  # noqa: SLF001
        max_diff, pieces = compare(det, onnx_scorer, CHECK_TEXTS)
        manifest = {
            "format": FORMAT, "checkpoint_sha256": checkpoint_sha256, "onnx_sha256": _sha256(tmp / "model.onnx"),
            "opset": OPSET, "labels": list(det._model_labels),  # noqa: SLF001
            "check": {"texts": len(CHECK_TEXTS), "pieces": pieces, "max_diff": max_diff, "tolerance": TOLERANCE,
                      "passed": max_diff <= TOLERANCE},
            "torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
            "export_seconds": round(time.perf_counter() - started, 1),
        }
        _write_json(tmp / "ONNX.json", manifest)
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    manifest["verified_identity"] = _identity(folder / "model.onnx")
    _write_json(folder / "ONNX.json", manifest)
    log.info("exported %s to ONNX in %.1f s (max score difference %.2g)", name, manifest["export_seconds"], max_diff)
    return OnnxExport(folder / "model.onnx", Path(config_dir), manifest)


def compare(reference: Any, candidate: Any, texts: Sequence[str]) -> tuple[float, int]:
    """Largest absolute score difference between two scorers over ``texts`` (every label), and the number of
    model inputs (token windows) that took. Both score through their ``score_batch`` (windows, sorting, chunks).

    Raises:
        ScorerError: either scorer failed.
    """
    a = reference.score_batch(list(texts))
    b = candidate.score_batch(list(texts))
    pieces = sum(len(candidate.windows(t)) for t in texts)
    diff = max(abs(x.values[k] - y.values[k]) for x, y in zip(a, b, strict=True) for k in x.values)
    return float(diff), pieces


class OnnxScorer:
    """The embedded model on ONNX Runtime; implements :class:`bot.core.ports.Scorer` with the same windows, length
    sorting and chunking as :class:`DetoxifyScorer` (its ``score_batch`` and ``windows`` are reused as they are).

    Args:
        model: An exported ``model.onnx``.
        config_dir: Folder with the model's ``tokenizer.json``.
        name / version: As the detoxify scorer names the same model.
        labels: The model's output labels, in output order (detoxify's ``class_names``).
        threads: ONNX Runtime intra-op threads (default: ``$MODBOT_ONNX_THREADS``, else ``os.cpu_count()``; the
            service sets one fewer: :func:`bot.serve.options.serve_threads`). They sleep between parallel
            sections instead of spinning (ONNX Runtime's ``session.intra_op.allow_spinning = 0``) unless
            ``MODBOT_ONNX_SPIN=1``: on this project's 2-core machine shared with other jobs, spinning threads took
            16-18 ms of CPU per chat message in process against 10 ms sleeping, and 32-42 against 45-75 msg/s
            (``bench/serve.py``'s in-process figure, docs/perspective-migration.md); a spinning thread also takes
            the core the service's event loop needs.

    Attributes:
        runtime: ``"onnx"``.
        spinning: Whether the intra-op threads spin between calls (``MODBOT_ONNX_SPIN``).
    """

    runtime = "onnx"
    score_batch = DetoxifyScorer.score_batch
    windows = DetoxifyScorer.windows
    score = DetoxifyScorer.score

    def __init__(self, model: Path, config_dir: Path, *, name: str, version: str, labels: Sequence[str],
                 threads: int | None = None) -> None:
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ScorerLoadError(f"the ONNX runtime needs onnxruntime and tokenizers: {exc}") from exc
        from bot.core.models import LABELS
        from bot.model.artifact import MAX_TOKENS

        self._np = np
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or onnx_threads()
        # intra-op threads spin while waiting for work only with MODBOT_ONNX_SPIN=1 (see the class docstring)
        self.spinning = os.environ.get("MODBOT_ONNX_SPIN", "0") == "1"
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spinning else "0")
        try:
            self._session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
            tok = Tokenizer.from_file(str(Path(config_dir) / "tokenizer.json"))
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ScorerLoadError(f"cannot load the ONNX model {model}: {type(exc).__name__}: {exc}") from exc
        pad = tok.token_to_id("[PAD]")
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.no_padding()  # each call is padded to its own longest text (_run), as predict pads to the batch's
        self._pad_id = 0 if pad is None else pad
        self._tok = tok
        spans = Tokenizer.from_file(str(Path(config_dir) / "tokenizer.json"))
        spans.no_truncation()
        spans.no_padding()
        self._spans_tok = spans
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.name = name
        self.version = version
        self.bf16 = False
        #: ``"fp32"`` or ``"int8"`` (:mod:`bot.scoring.precision`), and why it was chosen.
        self.precision = "fp32"
        self.precision_reason = ""
        self.languages: tuple[str, ...] = ("en",)
        self._model_labels = list(labels)
        self.labels: tuple[str, ...] = tuple(label for label in LABELS if label in labels)
        self._missing: tuple[str, ...] = tuple(label for label in LABELS if label not in labels)
        self.window_tokens = MAX_TOKENS - 2
        self.sub_batch = onnx_sub_batch()

    @classmethod
    def load(cls, exported: OnnxExport, *, name: str, version: str) -> OnnxScorer:
        """A scorer on a checked export (:func:`cached_export` / :func:`export`).

        Raises:
            ScorerLoadError: the export's check did not pass, or the files cannot be loaded.
        """
        check = exported.manifest.get("check", {})
        if not check.get("passed"):
            raise ScorerLoadError(f"the ONNX export {exported.model} differs from detoxify by "
                                  f"{check.get('max_diff')} (> {TOLERANCE}); use MODBOT_RUNTIME=torch")
        return cls(exported.model, exported.config_dir, name=name, version=version,
                   labels=exported.manifest["labels"])

    def _token_spans(self, text: str) -> list[tuple[int, int]]:
        spans = [(a, b) for a, b in self._spans_tok.encode(text, add_special_tokens=False).offsets if b > a]
        if spans:
            return spans
        import re

        return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]

    def _predict(self, texts: list[str]) -> dict[str, list[float]]:
        """Scores of ``texts`` (one window each), in order: tokenised once (no padding), ordered by token count and
        cut into ONNX Runtime calls by :func:`plan_calls`, each padded only to its own longest text.

        Why: a text's scores do not depend on the padding (the attention mask hides it), but the model's time grows
        with the padded tokens. The service's micro-batches are a few requests of arbitrary lengths; cut into fixed
        calls of 16 texts, eight chat messages cost 1.9x the padded tokens per message of 128 messages scored
        together, against 1.1x when the calls are cut by length (real chat, ``/work/shared``, the 2 December
        measurement in docs/perspective-migration.md).
        """
        np = self._np
        enc = self._tok.encode_batch(texts)
        lengths = [len(e.ids) for e in enc]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        probs = np.empty((len(texts), len(self._model_labels)), dtype=np.float64)
        start = 0
        for end in plan_calls([lengths[k] for k in order], call_cost=CALL_COST_TOKENS,
                              max_tokens=self.sub_batch * (self.window_tokens + 2)):
            idx = order[start:end]
            probs[idx] = self._run([enc[k] for k in idx])
            start = end
        return {label: probs[:, i].tolist() for i, label in enumerate(self._model_labels)}

    def _run(self, enc: list[Encoding]) -> npt.NDArray[numpy.float64]:
        """``sigmoid(logits)`` (float64 array, texts x model labels) of tokenised texts (``tokenizers.Encoding``)
        padded to the longest of them with ``[PAD]`` (attention mask 0, token type 0), as the tokenizer's own
        padding does."""
        np = self._np
        width = max(len(e.ids) for e in enc)
        ids = np.full((len(enc), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(enc), width), dtype=np.int64)
        types = np.zeros((len(enc), width), dtype=np.int64)
        for row, e in enumerate(enc):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            types[row, :n] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        logits = self._session.run(["logits"], {k: v for k, v in feeds.items() if k in self._inputs})[0]
        if logits.shape != (len(enc), len(self._model_labels)):
            raise ScorerError(f"ONNX model returned shape {logits.shape} for {len(enc)} texts")
        return 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))


def plan_calls(lengths: Sequence[int], *, call_cost: int = CALL_COST_TOKENS, max_tokens: int = SUB_BATCH * 128
               ) -> list[int]:
    """Where to cut texts ordered by token count into model calls so that the padded work is least.

    A call of the texts ``lengths[i:j]`` (non-decreasing) is padded to ``lengths[j - 1]`` and costs
    ``call_cost + (j - i) * lengths[j - 1]`` token units; no call holds more than ``max_tokens`` padded tokens
    (a single text longer than that is a call of its own). Dynamic programming over the cut points, exact.

    Args:
        lengths: Token counts (special tokens included), in non-decreasing order.
        call_cost: The fixed cost of one call, in tokens (:data:`CALL_COST_TOKENS`).
        max_tokens: Most padded tokens per call (the memory bound).

    Returns:
        The end index of each call, increasing, the last one ``len(lengths)`` (``[]`` for no texts).

    Raises:
        ValueError: ``lengths`` is not in non-decreasing order.
    """
    n = len(lengths)
    if any(lengths[k] > lengths[k + 1] for k in range(n - 1)):
        raise ValueError("plan_calls needs lengths in non-decreasing order")
    best = [0] * (n + 1)
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        width = max(1, lengths[j - 1])
        most = max(1, max_tokens // width)  # texts per call at this width
        best[j], cut[j] = best[j - 1] + call_cost + width, j - 1
        for i in range(max(0, j - most), j - 1):
            cost = best[i] + call_cost + (j - i) * width
            if cost < best[j]:
                best[j], cut[j] = cost, i
    ends: list[int] = []
    j = n
    while j > 0:
        ends.append(j)
        j = cut[j]
    return ends[::-1]


#: Most full-length texts per call ``MODBOT_ONNX_SUB_BATCH`` may ask for.
MAX_SUB_BATCH = 4096


def onnx_sub_batch(env: Mapping[str, str] | None = None) -> int:
    """Full-length texts per ONNX Runtime call: ``MODBOT_ONNX_SUB_BATCH`` (a whole number from 1 to
    :data:`MAX_SUB_BATCH`; unset or empty: :data:`SUB_BATCH`).

    Raises:
        ScorerLoadError: the variable is not such a number (the message names it and its value): ``abc`` stopped
            the model's load with a ``ValueError`` traceback.
    """
    raw = (os.environ if env is None else env).get("MODBOT_ONNX_SUB_BATCH", "").strip()
    if not raw:
        return SUB_BATCH
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SUB_BATCH:
        raise ScorerLoadError(f"MODBOT_ONNX_SUB_BATCH={raw!r}: expected a whole number of texts per call from 1 to "
                              f"{MAX_SUB_BATCH} (unset: {SUB_BATCH})")
    return value


#: Most ONNX Runtime threads ``MODBOT_ONNX_THREADS`` may ask for.
MAX_THREADS = 1024


def onnx_threads(env: Mapping[str, str] | None = None) -> int:
    """ONNX Runtime intra-op threads: ``MODBOT_ONNX_THREADS`` (a whole number from 1 to :data:`MAX_THREADS`; 0
    or unset: every CPU).

    Raises:
        ScorerLoadError: the variable is not such a number (the message names it).
    """
    raw = (os.environ if env is None else env).get("MODBOT_ONNX_THREADS", "").strip()
    try:
        value = int(raw) if raw else 0
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_THREADS:
        raise ScorerLoadError(f"MODBOT_ONNX_THREADS={raw!r}: expected a whole number of threads from 1 to "
                              f"{MAX_THREADS} (0 or unset: every CPU)")
    return value or os.cpu_count() or 1


def candidate_sha256(exported: OnnxExport, precision: str) -> str | None:
    """sha256 of the ``precision`` variant's model file of ``exported`` (``None`` when it is not built), re-hashed
    only when the file's size/mtime/ctime/inode differ from the last recorded check's."""
    from bot.scoring.precision import INT8_FILE, recorded_checks

    if precision != "int8":
        return None
    path = exported.model.with_name(INT8_FILE)
    if not path.is_file():
        return None
    rec = recorded_checks(exported.manifest).get(precision, {})
    if rec.get("candidate_identity") == _identity(path) and rec.get("candidate_sha256"):
        return str(rec["candidate_sha256"])
    return _sha256(path)


def _choose(exported: OnnxExport, precision: str) -> Choice:
    """:func:`bot.scoring.precision.choose` for ``exported`` on this CPU.

    Raises:
        ScorerLoadError: ``precision`` is unknown.
    """
    from bot.scoring.precision import choose, cpu_flags

    try:
        return choose(precision, exported.manifest, cpu_flags(), {"int8": candidate_sha256(exported, "int8")})
    except ValueError as exc:
        raise ScorerLoadError(f"MODBOT_PRECISION: {exc}") from exc


def embedded_precision(precision: str = "auto") -> str:
    """The precision (``"fp32"`` or ``"int8"``) :func:`load_embedded` will run the embedded model in for
    ``precision`` on this machine, read from the cached export's ``ONNX.json`` without loading, assembling or
    exporting anything: ``fp32`` or ``int8`` when asked, else (``auto``) what :func:`bot.scoring.precision.choose`
    picks from the recorded paired checks and this CPU (``fp32`` when no checked export is cached yet: the export
    made at load has no paired check). The version it records is ``+int8`` for ``int8``.

    Raises:
        ScorerLoadError: ``precision`` is unknown.
        bot.model.artifact.ModelArtifactError: the embedded model's manifest is missing or unreadable.
    """
    from bot.model.artifact import default_cache_dir, read_manifest

    if precision in ("fp32", "int8"):
        return precision
    if precision != "auto":
        raise ScorerLoadError(f"MODBOT_PRECISION: precision {precision!r}: expected auto, int8, fp32")
    cache = default_cache_dir() / str(read_manifest()["delta_sha256"])[:12]
    try:
        ckpt_sha = (cache / "READY").read_text(encoding="utf-8").strip()
    except OSError:
        ckpt_sha = ""
    exported = cached_export(cache / "checkpoint.ckpt", cache / "config", ckpt_sha) if ckpt_sha else None
    if exported is None:
        return "fp32"
    return _choose(exported, precision).precision


def load_embedded(*, export_if_missing: bool = True, precision: str = "auto") -> OnnxScorer:
    """The embedded model on ONNX Runtime: assemble (cached), then the cached checked export, exporting and
    checking it first when there is none and ``export_if_missing``; in the precision
    :func:`bot.scoring.precision.choose` picks for ``precision`` (``auto``, ``fp32``, ``int8``), recorded on the
    scorer (``precision``, ``precision_reason``; ``version`` gets ``+int8`` so verdicts say which variant judged).

    Raises:
        ScorerLoadError: the embedded model cannot be assembled, no export is cached (and ``export_if_missing``
            is false), the export or its check failed, or ``precision`` is unknown.
    """
    from bot.model.artifact import MODEL_NAME, ModelArtifactError, assemble
    from bot.scoring.precision import quantize_int8

    try:
        built = assemble()
    except ModelArtifactError as exc:
        raise ScorerLoadError(f"embedded model unavailable: {exc}") from exc
    ckpt_sha = (built.checkpoint.parent / "READY").read_text(encoding="utf-8").strip()
    exported = cached_export(built.checkpoint, built.config_dir, ckpt_sha)
    if exported is None:
        if not export_if_missing:
            raise ScorerLoadError("no checked ONNX export of the embedded model is cached")
        exported = export(built.checkpoint, built.config_dir, ckpt_sha, name=MODEL_NAME,
                          version=built.checksum[:12])
    choice = _choose(exported, precision)
    version = built.checksum[:12]
    if choice.precision == "int8":
        check = exported.manifest.get("check", {})
        if not check.get("passed"):
            raise ScorerLoadError(f"the ONNX export {exported.model} failed its check; use MODBOT_RUNTIME=torch")
        scorer = OnnxScorer(quantize_int8(exported.model), exported.config_dir, name=MODEL_NAME,
                            version=f"{version}+int8", labels=exported.manifest["labels"])
    else:
        scorer = OnnxScorer.load(exported, name=MODEL_NAME, version=version)
    scorer.precision, scorer.precision_reason = choice.precision, choice.reason
    return scorer
