"""An ingest error sink for tests: keeps every reported :class:`~bot.ingest.errors.IngestError` in ``errors``
(in the order reported) instead of logging it."""

from __future__ import annotations

from bot.ingest.errors import ErrorSink, IngestError


class CollectingSink(ErrorSink):
    """Collects the errors a reader reports; ``errors`` is the list, oldest first."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[IngestError] = []

    def report(self, error: IngestError) -> None:
        self.errors.append(error)
