"""Ingest errors: a malformed or truncated export, named by file and position.

An :class:`IngestError` is both an exception (raised with ``on_error="stop"``) and a record (collected with
``on_error="skip"``).
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)

#: Allowed values of ``on_error``.
ON_ERROR = ("skip", "stop")


class IngestError(Exception):
    """A problem in one input file, at one position.

    Attributes:
        path: The file (or zip member, as ``archive.zip!member``) that is wrong.
        position: Where: ``"line 12"`` (JSONL), ``"row 3 (line 5)"`` (CSV, 1-based data row and physical line),
            ``"byte 1234 (line 40, column 3)"`` (JSON, from :class:`json.JSONDecodeError`), ``"message 7"``
            (0-based index in a JSON message array) or ``""`` for the whole file.
        reason: What is wrong, in words.
    """

    def __init__(self, path: Path | str, position: str, reason: str) -> None:
        self.path = Path(path)
        self.position = position
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.position}" if self.position else str(self.path)
        return f"{where}: {self.reason}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IngestError):
            return NotImplemented
        return (self.path, self.position, self.reason) == (other.path, other.position, other.reason)

    def __hash__(self) -> int:
        return hash((self.path, self.position, self.reason))


class ErrorSink:
    """Applies the ``on_error`` policy: raise (``"stop"``) or log and record (``"skip"``).

    Args:
        on_error: ``"skip"`` or ``"stop"``.
        errors: List that receives skipped errors (may be ``None``: they are then only logged).

    An error equal to one already reported (same file, position and reason) is not reported again: streamed
    readers read some files twice (a first pass for join times, ``scan``'s survey then its judging pass).

    Raises:
        ValueError: ``on_error`` is not one of :data:`ON_ERROR`.
    """

    def __init__(self, on_error: str = "skip", errors: list[IngestError] | None = None) -> None:
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, not {on_error!r}")
        self.on_error = on_error
        self.errors = errors
        self.count = 0
        self._seen: set[IngestError] = set()

    def report(self, error: IngestError) -> None:
        """Raise ``error`` (stop) or log it as a warning and append it to ``errors`` (skip); once per error."""
        if error in self._seen:
            return
        self._seen.add(error)
        if self.on_error == "stop":
            raise error
        self.count += 1
        log.warning("skipped: %s", error)
        if self.errors is not None:
            self.errors.append(error)
