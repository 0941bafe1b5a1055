"""Domain errors of the mod log (raised by the SQLite store, handled by the workflow and adapters).

Every error derives from :class:`StoreError`, so adapters can catch one type and answer the moderator with
``str(error)``, which is written to be shown as is.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's domain errors."""


class _DatabaseProblem(StoreError):
    """A store error about one database: ``str(error)`` is ``"mod log <database>: <cause>"``.

    Attributes:
        database: Where the mod log lives, for people (a file path, or a URL with the password hidden).
        cause: Why, in words.
    """

    def __init__(self, database: str, cause: str) -> None:
        self.database = database
        self.cause = cause
        super().__init__(f"mod log {database}: {cause}")


class StoreBusy(_DatabaseProblem):
    """A write or read that may succeed if tried again: the database is locked by another process for longer than
    the busy timeout, the server is restarting, a connection dropped, a serialization conflict. The moderation
    service keeps the batch and retries with backoff (nothing is dropped, nothing counted twice).

    Attributes: ``database`` and ``cause``, as :class:`_DatabaseProblem`.
    """


class StoreRefused(_DatabaseProblem):
    """The database refuses writes for good: the disk is full, the file or server is read-only, the schema is newer
    than this code, it is not a mod log, the password is wrong. Retrying cannot help: the bot or the scan stops with
    this one line (``str(error)`` names the database, password hidden, and the cause); what was committed stays.

    Attributes: ``database`` and ``cause``, as :class:`_DatabaseProblem`.
    """


class UnstorableValue(_DatabaseProblem, ValueError):
    """The database cannot hold a value of this one write, however often it is tried: PostgreSQL refuses a text
    holding U+0000 (NUL) or a character its encoding lacks (SQLSTATE 22021, 22P05). Only that write fails; the
    database takes other writes (unlike :class:`StoreRefused`). Message text never gets here: it is cleaned first
    (:func:`bot.core.storable.storable`), nor does typed text the workflow records (a reason, a note, a report,
    an appeal: :func:`bot.core.storable.storable_text`).

    Attributes: ``database`` and ``cause``, as :class:`_DatabaseProblem`.
    """


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
    "StoreBusy",
    "StoreError",
    "StoreRefused",
    "UnstorableValue",
]
