"""Domain errors of the mod log, re-exported from :mod:`bot.core.errors` (where the platform-neutral workflow can
import them without importing the store)."""

from bot.core.errors import (
    AppealAlreadyDecided,
    AppealAlreadyOpen,
    AppealError,
    AppealNotFound,
    CaseNotFound,
    MigrationError,
    NotCaseMember,
    ReviewAlreadyDecided,
    ReviewNotFound,
    StoreError,
)

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
