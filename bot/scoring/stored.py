"""Replaying with stored scores: the model's identity without loading it, and a scorer that never scores.

A ``scan`` replay (:mod:`bot.jobs.replay`) re-judges recorded messages from the scores stored with their verdicts
when the model that produced them is the one the settings name (same ``name`` and ``version``). Knowing that must
not cost a model load, so :func:`model_identity` reads it from the settings (and, for the embedded model, from its
manifest); the model is loaded only when some message has no usable stored score.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.core.models import LABELS, Scores
from bot.scoring import ScorerError


def model_identity(model: str, *, checkpoint: object = None, int8: bool = False,
                   precision: str | None = None) -> tuple[str, str] | None:
    """``(name, version)`` the scorer for these settings will record, without loading it, or ``None`` when it
    cannot be known beforehand (an unknown model name).

    Matches :meth:`bot.scoring.detoxify_scorer.DetoxifyScorer.load` (embedded: ``embedded-minilm-v1`` and the
    first 12 hex digits of the artifact's sha256 from its manifest; a local checkpoint: ``checkpoint:<file name>``
    and the first 12 hex digits of the file's sha256, :func:`~bot.scoring.detoxify_scorer.checkpoint_version`,
    which reads the file but loads nothing; detoxify's named models: the name and ``detoxify-0.5.4``) plus
    :func:`bot.scoring.quantize.quantize_int8`'s ``+int8`` suffix (``int8``: torch's int8, ``MODBOT_INT8``). With
    ``precision`` (``MODBOT_PRECISION``: the embedded model runs on ONNX Runtime) the embedded model's version gets
    ``+int8`` too when :func:`bot.scoring.onnx_scorer.load_embedded` will run it in int8 on this machine
    (:func:`~bot.scoring.onnx_scorer.embedded_precision`: asked, or ``auto`` on a CPU whose paired check passed).

    Raises:
        bot.model.artifact.ModelArtifactError: the embedded model's manifest is missing or unreadable.
        OSError: the checkpoint cannot be read.
        bot.scoring.ScorerLoadError: ``precision`` is not ``auto``, ``fp32`` or ``int8``.
    """
    from bot.scoring.detoxify_scorer import EMBEDDED, NAMED_MODELS, checkpoint_version

    if precision is not None and checkpoint is None and model == EMBEDDED and not int8:
        from bot.scoring.onnx_scorer import embedded_precision

        int8 = embedded_precision(precision) == "int8"
    suffix = "+int8" if int8 else ""
    if checkpoint is not None:
        path = Path(str(checkpoint))
        return f"checkpoint:{path.name}", checkpoint_version(path) + suffix
    if model == EMBEDDED:
        from bot.model.artifact import MODEL_NAME, read_manifest

        return MODEL_NAME, str(read_manifest()["delta_sha256"])[:12] + suffix
    if model in NAMED_MODELS:
        return model, "detoxify-0.5.4" + suffix
    return None


def model_languages(model: str, *, checkpoint: object = None) -> tuple[str, ...]:
    """The languages (ISO 639-1) the scorer for these settings reads, without loading it, as
    :class:`bot.scoring.detoxify_scorer.DetoxifyScorer` declares them: a named model's
    (:data:`bot.scoring.detoxify_scorer.MODEL_LANGUAGES`), else English (the embedded model, the English detoxify
    models, a local checkpoint). Never raises."""
    from bot.scoring.detoxify_scorer import ENGLISH, MODEL_LANGUAGES

    return ENGLISH if checkpoint is not None else MODEL_LANGUAGES.get(model, ENGLISH)


class StoredScoresOnly:
    """A :class:`bot.core.ports.Scorer` for a replay in which every message has stored scores (given to the
    moderation service as ``known_scores``): it carries the model's name, version and languages for the records
    and the language check (a message in a language the model does not read is ``unsupported_language`` in the
    replay as when it was scored) and refuses to score, so a message that would need the model fails loudly instead
    of being judged without scores.

    Args:
        name / version: The model's identity, as recorded with its scores.
        labels: The labels it produces.
        languages: The languages it reads (``None``: not declared, so the language check is skipped).
    """

    def __init__(self, name: str, version: str, labels: Sequence[str] = LABELS,
                 languages: Sequence[str] | None = None) -> None:
        self.name = name
        self.version = version
        self.labels = tuple(labels)
        self.languages = tuple(languages) if languages is not None else None

    def score_batch(self, texts: Sequence[str]) -> list[Scores]:
        """Never scores.

        Raises:
            ScorerError: always (naming how many texts had no stored score).
        """
        raise ScorerError(f"{len(texts)} text(s) have no stored score and the model was not loaded")
