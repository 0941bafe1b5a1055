"""Domain errors of the mod log (raised by the SQLite store, handled by the workflow and adapters).

Every error derives from :class:`StoreError`, so adapters can catch one type and answer the moderator with
``str(error)``, which is written to be shown as is.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's domain errors."""


class MigrationError(StoreError):
    """The database schema is newer than this code, or a migration file is malformed."""


class CaseNotFound(StoreError, LookupError):
    """No case with that number in that server (cases of other servers are never visible)."""


class ReviewNotFound(StoreError, LookupError):
    """No review item with that id (in that server)."""


class ReviewAlreadyDecided(StoreError):
    """A second decision on a review item that is already decided (only ``investigating`` can be re-decided).

    Attributes:
        review_id: The item.
        decision: The decision already recorded (a ``ReviewDecision`` value).
        moderator_id: Who made it.
    """

    def __init__(self, review_id: int, decision: str, moderator_id: str | None) -> None:
        self.review_id = review_id
        self.decision = decision
        self.moderator_id = moderator_id
        by = f" by {moderator_id}" if moderator_id else ""
        super().__init__(f"review item {review_id} was already decided: {decision}{by}")


class AppealError(StoreError):
    """An appeal cannot be opened or decided."""


class NotCaseMember(AppealError):
    """Only the member a case is about may appeal it."""


class AppealAlreadyOpen(AppealError):
    """The case already has an open appeal."""


class AppealNotFound(AppealError, LookupError):
    """No appeal with that id."""


class AppealAlreadyDecided(AppealError):
    """The appeal was already upheld or overturned."""


__all__ = [
    "AppealAlreadyDecided",
    "AppealAlreadyOpen",
    "AppealError",
    "AppealNotFound",
    "CaseNotFound",
    "MigrationError",
    "NotCaseMember",
    "ReviewAlreadyDecided",
    "ReviewNotFound",
    "StoreError",
]
