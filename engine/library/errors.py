"""Why a library file cannot be used, said once, in words a user can act on.

Every failure of the library reaches its callers as one `LibraryError` whose message names
the file and the kind of trouble: no library there, not a library, damaged, locked by
another process (busy), read-only for you, or written by a newer FabricLab. The phrases are
built here so the opening checks (`engine.library.files`, `engine.library.probe`), the
creation (`engine.library.creation`) and the store (`engine.library.store`) word each kind
the same way, and `explain` maps any ``sqlite3`` error to one of them, so no raw
``sqlite3.*`` exception or traceback reaches the command line or the app.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

UNTOUCHED = "it was left untouched"


class LibraryError(Exception):
    """The library file cannot be used as asked; the message says why and what to do."""


def no_library(path: Path, why: str = "") -> LibraryError:
    """Nothing to open at `path` (and the caller asked not to create one)."""
    detail = f" ({why})" if why else ""
    return LibraryError(
        f"no library at {path}{detail}; check the path (saving or importing a scenario there "
        "creates one)"
    )


def not_a_library(path: Path, why: str) -> LibraryError:
    """`path` holds something that is not a FabricLab library (a pipe, a folder, other data)."""
    return LibraryError(
        f"{path} is not a FabricLab library ({why}); {UNTOUCHED}. Open another file or "
        "choose a new name"
    )


def damaged(path: Path, why: str) -> LibraryError:
    """`path` is a FabricLab library, or was one, but cannot be trusted as it is."""
    return LibraryError(
        f"{path} is damaged ({why}); {UNTOUCHED}. Restore a copy or open another library"
    )


def not_utf8(path: Path) -> LibraryError:
    """Text in the file that is not UTF-8: SQLite stores it, Python cannot read it back."""
    return damaged(path, "it holds text that is not valid UTF-8")


def locked(path: Path, timeout: float) -> LibraryError:
    """Another process held `path` locked for longer than the wait allows, while opening."""
    return LibraryError(
        f"{path} is locked by another process (busy) and stayed locked for {timeout:g} s; "
        f"{UNTOUCHED}. Try again when the other program has finished with it"
    )


def busy(path: Path, timeout: float, doing: str = "writing to") -> LibraryError:
    """Another FabricLab kept `path` busy for longer than the wait allows, while saving."""
    return LibraryError(
        f"library busy: another FabricLab is {doing} {path} (waited {timeout:g} s); nothing "
        "was changed, try again in a moment"
    )


def read_only_for_you(path: Path, why: str = "") -> LibraryError:
    """A write to `path` that the file's or folder's permissions refuse."""
    detail = f" ({why})" if why else ""
    return LibraryError(
        f"{path} is read-only for you{detail}; nothing was saved. Make it writable, or save a "
        "copy elsewhere"
    )


def newer_head(path: Path, version: int, known: int) -> str:
    """The first words about a file from a newer FabricLab (the callers say what follows)."""
    return (
        f"{path} was written by a newer FabricLab (library schema {version}, this one knows "
        f"{known})"
    )


def open_read_only_newer(head: str) -> str:
    """The message of a newer file that this code can read: open for reading only."""
    return f"{head}; it is open read-only: upgrade to edit it"


def unreadable_newer(head: str, why: str) -> LibraryError:
    """A newer file whose tables this code cannot read: refused, untouched."""
    return LibraryError(
        f"{head} and this FabricLab cannot read it ({why}); {UNTOUCHED}. Upgrade FabricLab "
        "to open it"
    )


def explain(
    exc: sqlite3.Error,
    path: Path,
    *,
    doing: str,
    timeout: float,
    newer: str = "",
) -> LibraryError:
    """The `LibraryError` for an ``sqlite3`` error met while `doing` ("open", "read", "write").

    The SQLite error name decides the kind (busy, read-only, damaged, full disk, I/O);
    `newer` is the `newer_head` when the file is from a newer FabricLab, so a table
    this code cannot find is blamed on the version rather than called damage.
    """
    name = getattr(exc, "sqlite_errorname", None) or ""
    text = str(exc)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in text:
        return busy(path, timeout) if doing == "write" else locked(path, timeout)
    if name.startswith("SQLITE_READONLY"):
        return read_only_for_you(path, text)
    if name.startswith("SQLITE_CORRUPT"):
        return damaged(path, text)
    if name == "SQLITE_NOTADB":
        return damaged(path, "its SQLite header is not valid")
    if name == "SQLITE_FULL":
        return LibraryError(f"the disk holding {path} is full; nothing was saved")
    if name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return LibraryError(f"cannot {doing} the library {path} ({text})")
    if text.startswith("Could not decode to UTF-8"):
        return not_utf8(path)
    if text.startswith("no such module"):
        return LibraryError(f"cannot {doing} the library {path}: this SQLite lacks a part ({text})")
    if isinstance(exc, sqlite3.OperationalError) and text.startswith("no such"):
        if newer:
            return unreadable_newer(newer, text)
        return damaged(path, text)
    return LibraryError(f"cannot {doing} the library {path}: {text}")
