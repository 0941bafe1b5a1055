"""The mod log's backends behind the core's store port (:class:`bot.core.store_port.ModStore`).

Callers open a store with :func:`open_store` and never name a backend: a file path means SQLite
(:class:`bot.store.sqlite.SqliteStore`, the default: nothing to install); a ``postgresql://`` URL means PostgreSQL
(:class:`bot.store.postgres.PostgresStore`: the same SQL through asyncpg; see docs/scaling.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.core.errors import StoreError, StoreRefused
from bot.core.store_port import ModStore
from bot.settings import POSTGRES_SCHEMES, URL_SCHEME
from bot.store.schema import file_location

#: Query parameters of a PostgreSQL URL that hold a secret (libpq and asyncpg read both): the password, and the
#: passphrase of the client's SSL key.
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


def describe(database: str | os.PathLike[str]) -> str:
    """Where the mod log lives, for people: the absolute file path, or a URL with its password replaced by
    ``***`` (never printed or logged in clear): the one before the ``@`` and one given as a query parameter
    (``?password=``, ``?sslpassword=``)."""
    text = os.fspath(database)
    if text.startswith(POSTGRES_SCHEMES):
        from urllib.parse import unquote_plus, urlsplit

        try:
            parts = urlsplit(text)
            if parts.password is not None:
                host = parts.hostname or ""
                host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
                port = f":{parts.port}" if parts.port else ""
                parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}{port}")
            if parts.query:
                pairs = [p.partition("=") for p in parts.query.split("&")]
                parts = parts._replace(query="&".join(
                    f"{k}={'***' if unquote_plus(k).strip().lower() in _SECRET_PARAMS else v}" if sep else k
                    for k, sep, v in pairs))
            query = f"?{parts.query}" if parts.query else ""  # written out: urlunsplit drops an empty host's //
            return f"{parts.scheme}://{parts.netloc}{parts.path}{query}" + (f"#{parts.fragment}" if parts.fragment
                                                                             else "")
        except ValueError:
            return text.split("://", 1)[0] + "://***"
    return file_location(Path(text))


def exists(database: str | os.PathLike[str]) -> bool:
    """Whether the mod log named by ``database`` may already hold records: a SQLite file that exists, or any
    server URL (the server is asked when the store opens)."""
    text = os.fspath(database)
    return text.startswith(POSTGRES_SCHEMES) or Path(text).exists()


def database_files(database: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The files a SQLite mod log is made of (the database and its ``-wal``, ``-shm`` and ``-journal``), resolved;
    ``()`` for a server URL. An output written over one of them destroys the mod log."""
    text = os.fspath(database)
    if text.startswith(POSTGRES_SCHEMES):
        return ()
    base = Path(text).resolve()
    return (base, *(base.with_name(base.name + suffix) for suffix in ("-wal", "-shm", "-journal")))


def overwrites_database(output: str | os.PathLike[str], database: str | os.PathLike[str]) -> bool:
    """Whether writing ``output`` would write over a file of the mod log ``database`` (:func:`database_files`;
    links resolved, and the same file under another name, a hard link, counted too)."""
    target = Path(output).resolve()
    for f in database_files(database):
        if target == f or (target.exists() and f.exists() and os.path.samefile(target, f)):
            return True
    return False


async def open_store(database: str | os.PathLike[str], *, create: bool = True) -> ModStore:
    """Open (and migrate) the mod log named by ``database``: a SQLite file path, or a ``postgresql://`` URL.

    Args:
        database: ``--db`` / ``MODBOT_DB`` / ``Settings.db_path``.
        create: Create a missing SQLite file (the bots, ``scan``); ``False`` refuses a missing one (``purge``,
            ``backup``: a typo must not create an empty mod log).

    Raises:
        StoreRefused: the database cannot be used (one line naming it, password hidden, and the cause): missing
            with ``create=False``, a 0-byte or foreign file, a schema newer than the code, read-only, unreachable.
        StoreBusy: locked by another process past the busy timeout while migrating.
    """
    text = os.fspath(database)
    scheme = URL_SCHEME.match(text)
    if scheme and not text.startswith(POSTGRES_SCHEMES):  # mysql://... is no file name
        raise StoreRefused(f"{scheme.group(1)}://***", "only SQLite file paths and postgresql:// URLs are supported")
    if text.startswith(POSTGRES_SCHEMES):
        from bot.store.postgres import PostgresStore

        return await PostgresStore.open_url(text, describe(text))
    from bot.store.sqlite import SqliteStore

    return await SqliteStore.open(Path(text), create=create)


__all__ = ["StoreError", "describe", "exists", "open_store"]
