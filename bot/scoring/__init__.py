"""Scorers: implementations of :class:`bot.core.ports.Scorer` (detoxify-based) and their errors."""

from __future__ import annotations


class ScorerLoadError(RuntimeError):
    """A model could not be loaded (missing package, corrupted artifact, no network for a named model...).

    The message says what to do. Never caught to mean "everything is clean".
    """


class ScorerError(RuntimeError):
    """Scoring failed at run time (the model raised, or returned a malformed result).

    ``unreachable`` is true when the failure says nothing about the texts (a scoring service that never answered:
    refused or unroutable connections until the deadline), so scoring the same texts in smaller batches would fail
    the same way (``bot.core.service`` then does not try)."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


__all__ = ["ScorerError", "ScorerLoadError"]
