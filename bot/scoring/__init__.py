"""Scorers: implementations of :class:`bot.core.ports.Scorer` (detoxify-based) and their errors."""

from __future__ import annotations


class ScorerLoadError(RuntimeError):
    """A model could not be loaded (missing package, corrupted artifact, no network for a named model...).

    The message says what to do. Never caught to mean "everything is clean".
    """


class ScorerError(RuntimeError):
    """Scoring failed at run time (the model raised, or returned a malformed result)."""


__all__ = ["ScorerError", "ScorerLoadError"]
