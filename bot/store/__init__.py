"""SQLite mod log: :class:`~bot.store.sqlite.SqliteStore` implements :class:`bot.core.ports.ModStore`."""

from __future__ import annotations

from bot.store.errors import StoreError
from bot.store.sqlite import SqliteStore

__all__ = ["SqliteStore", "StoreError"]
