"""What is at a library path, found without opening it as a database and without side effects.

Before SQLite touches a file the library asks the file system what is there: nothing, an
empty file (what an interrupted older FabricLab left: no library yet), a regular file with
an SQLite header, or something no library can be (a folder, a named pipe, a device, a
broken link). A named pipe would block SQLite for ever and a folder makes it fail oddly, so
they are refused here, from `os.stat`, before anything opens them. The header check catches
files that are not SQLite and SQLite files cut short, and `live` says whether another
process has the file open (its journal files beside it), which decides how the library may
look inside without leaving files of its own beside a file it then refuses.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from engine.library.errors import UNTOUCHED, LibraryError, damaged, not_a_library

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100
SIDECARS = ("-journal", "-wal", "-shm")

ABSENT = "absent"
EMPTY = "empty"
FILE = "file"


@dataclass(frozen=True)
class Found:
    """What `look` found at a path: its kind (absent, empty or file), size and first bytes."""

    kind: str
    size: int
    header: bytes


def _special(mode: int) -> str:
    """Why a file of this mode cannot be a library ("" for a regular file)."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISDIR(mode):
        return "it is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "it is a named pipe, not a file"
    return "it is a device or socket, not a file"


def look(path: Path) -> Found:
    """What is at `path`: nothing, an empty file, or a regular file with its first 100 bytes.

    Raises `LibraryError` for a folder, a named pipe, a device or socket, a broken link, or a
    file you may not read. Nothing is created or changed, and nothing is opened that could
    block (a pipe is recognised from its mode, never opened).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise not_a_library(path, "it is a link to a file that does not exist") from None
        return Found(ABSENT, 0, b"")
    except OSError as exc:
        raise LibraryError(f"cannot use {path}: {exc.strerror}") from None
    why = _special(info.st_mode)
    if why:
        raise not_a_library(path, why)
    if info.st_size == 0:
        return Found(EMPTY, 0, b"")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except PermissionError:
        raise LibraryError(
            f"cannot read {path}: it is not readable for you (permission denied); {UNTOUCHED}"
        ) from None
    except OSError as exc:
        raise LibraryError(f"cannot read {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)  # the file as opened, in case another was put in its place
        why = _special(info.st_mode)
        if why:
            raise not_a_library(path, why)
        header = os.read(fd, HEADER_BYTES)
    except OSError as exc:
        raise LibraryError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    return Found(FILE if info.st_size else EMPTY, info.st_size, header)


def check_header(path: Path, found: Found, live: bool) -> None:
    """Refuse a file whose first bytes are not an SQLite header, or one cut short.

    The header gives the page size and (when its change counters agree) the database size
    in pages; a file smaller than that lost its end. The size is not compared while another
    process has the file open (`live`): its journal may hold the newest pages.
    """
    head = found.header
    if not head.startswith(SQLITE_MAGIC):
        raise not_a_library(path, "not an SQLite file")
    if len(head) < HEADER_BYTES:
        raise damaged(path, f"truncated: only {found.size} bytes")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        raise damaged(path, f"its SQLite header gives an impossible page size, {page_size}")
    pages = int.from_bytes(head[28:32], "big")
    if not live and pages and head[92:96] == head[24:28] and found.size < pages * page_size:
        raise damaged(path, f"truncated: {found.size} bytes of {pages * page_size}")


def sidecar(path: Path, suffix: str) -> Path:
    """The SQLite journal file `suffix` ("-journal", "-wal" or "-shm") of `path`."""
    return path.with_name(path.name + suffix)


def live(path: Path) -> bool:
    """Whether `path` looks open in another process (or left by one): a journal beside it.

    A write-ahead log or a rollback journal: then SQLite must read the file with its usual
    locking (it may wait for a writer, and the log may hold the newest pages); otherwise it
    can read the file as it is, immutable, creating nothing beside it.
    """
    return sidecar(path, "-journal").exists() or sidecar(path, "-wal").exists()


def write_refusal(path: Path) -> str:
    """Why you may not write `path` ("" when you may): the file's or its folder's permissions.

    SQLite writes journal files beside the library, so the folder must be writable too.
    """
    if not os.access(path, os.W_OK):
        return f"{path} is read-only for you; it is open for reading only"
    if not os.access(path.parent, os.W_OK):
        return f"the folder holding {path} is read-only for you; it is open for reading only"
    return ""


def uri(path: Path, **params: str) -> str:
    """An SQLite URI for `path` with query parameters (mode=ro, immutable=1 ...)."""
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return Path(os.path.abspath(path)).as_uri() + (f"?{query}" if query else "")
