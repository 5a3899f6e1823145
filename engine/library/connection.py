"""The SQLite connection a library works through, opened once its file passed the checks.

`open_checked` opens a file `engine.library.probe` accepted: read-write (migrating an older
schema in one transaction, switching on WAL so two apps can share it), or read-only when
asked, when the file or its folder is read-only for you, or when a newer FabricLab wrote
it (this code then never writes a byte of it). A read-only connection reads the file as
immutable unless another process has it open, so it leaves no ``-wal``/``-shm`` files beside
it (the price: what another process writes later is not seen until it is opened again); an
older file opened read-only is copied to memory and migrated there, the file itself
unchanged. `Transaction` is the library's one way to write: BEGIN IMMEDIATE, COMMIT, or
ROLLBACK on any error, never leaving the connection inside a failed transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from engine.library import files
from engine.library.errors import (
    UNTOUCHED,
    LibraryError,
    explain,
    newer_head,
    not_utf8,
    open_read_only_newer,
)
from engine.library.schema import MIGRATIONS, SCHEMA_VERSION

# The write-ahead log's size at which it is folded back into the file: SQLite's default on
# its default pages (1,000 x 4 KiB).
WAL_CHECKPOINT_BYTES = 4_096_000


@dataclass(frozen=True)
class Opened:
    """An open library file: the connection, whether it is read-only and why, and, for a
    file from a newer FabricLab, the words that say so (``newer``, else "")."""

    conn: sqlite3.Connection
    read_only: bool
    message: str
    newer: str


def connect(uri: str, timeout: float) -> sqlite3.Connection:
    """An autocommit connection to an SQLite URI that waits `timeout` s for other writers."""
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


def open_checked(path: Path, version: int, read_only: bool, timeout: float) -> Opened:
    """Open the checked library file `path` of schema `version` (see the module docstring).

    Raises `LibraryError` (locked or busy, read-only, a failed migration, left untouched).
    """
    newer, message = "", ""
    if version > SCHEMA_VERSION:
        newer = newer_head(path, version, SCHEMA_VERSION)
        read_only, message = True, open_read_only_newer(newer)
    elif not read_only:
        message = files.write_refusal(path)
        read_only = bool(message)
    conn = None
    try:
        if read_only:
            conn, message = _read_only(path, version, message, timeout)
            return Opened(conn, True, message, newer)
        conn = connect(files.uri(path, mode="rw"), timeout)
        conn.execute("PRAGMA user_version").fetchone()  # waits out, or meets, a lock now
        db = sqlite_utils.Database(conn)
        if version < SCHEMA_VERSION:
            with Transaction(conn):
                run_migrations(conn, path)
            message = f"library migrated to schema {SCHEMA_VERSION}"
        if db.journal_mode != "wal":
            db.enable_wal()
        # SQLite folds the write-ahead log back into the file every so many pages (1,000 by
        # default): on a new library's 64 KiB pages that would let the log grow to 64 MB.
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute(f"PRAGMA wal_autocheckpoint = {max(WAL_CHECKPOINT_BYTES // page, 1)}")
        return Opened(conn, False, message, newer)
    except (sqlite3.Error, LibraryError, UnicodeDecodeError) as exc:
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        if isinstance(exc, LibraryError):
            raise
        if isinstance(exc, UnicodeDecodeError):
            raise not_utf8(path) from None
        raise explain(exc, path, doing="open", timeout=timeout, newer=newer) from None


def _read_only(
    path: Path, version: int, message: str, timeout: float
) -> tuple[sqlite3.Connection, str]:
    """A read-only connection and its message; an older file is migrated in memory."""
    live = files.live(path)
    params = {"mode": "ro"} if live else {"mode": "ro", "immutable": "1"}
    conn = connect(files.uri(path, **params), timeout)
    if version >= SCHEMA_VERSION:
        return conn, message
    memory = connect(":memory:", timeout)
    try:
        conn.backup(memory)
    finally:
        conn.close()
    run_migrations(memory, path)
    note = f"schema {version}, shown migrated to schema {SCHEMA_VERSION}; the file is unchanged"
    return memory, (f"{message} ({note})" if message else f"{path} is of {note}")


def run_migrations(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the file on `conn` from its schema version to this one (nothing when it is).

    The version is read here, inside the caller's transaction, so a file another process
    migrated meanwhile is not migrated twice.
    """
    db = sqlite_utils.Database(conn)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version >= SCHEMA_VERSION:
        return
    try:
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](db)
            version += 1
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise LibraryError(f"cannot migrate {path} ({exc}); {UNTOUCHED}") from None
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT (or ROLLBACK on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> Transaction:
        self.conn.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()
                raise
        else:
            self._rollback()
        return False

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
