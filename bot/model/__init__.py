"""The embedded model artifact (``bot/model/artifact``) and its assembly into a local cache."""

from __future__ import annotations

from bot.model.artifact import ARTIFACT_DIR, AssembledModel, ModelArtifactError, assemble, read_thresholds

__all__ = ["ARTIFACT_DIR", "AssembledModel", "ModelArtifactError", "assemble", "read_thresholds"]
