"""Making a new library file so the path holds either nothing or a whole library, never half.

A library is built (tables, schema version, seed scenarios) in a hidden temporary file in
the same folder, flushed to disk, and only then moved to its path, so a process killed
while creating leaves at most that temporary file (removed by the next creation there),
never an empty or half-seeded library that is refused for ever after. A zero-byte file at
the path, what an interrupted older FabricLab left, counts as no library yet and is replaced.

Two processes creating the same library at once must both succeed with one library seeded
once: creators take a lock on the folder (``flock``, released by the system if a creator
dies) and, once they hold it, look again; whoever finds a library there leaves it and opens
it. Where the folder cannot be locked the move itself refuses to replace a file (a hard link
fails when the name exists), so the loser still opens the winner's library and discards its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from engine.library import files
from engine.library.errors import LibraryError, busy

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no folder lock, the move still refuses
    fcntl = None  # type: ignore[assignment]

TEMP_SUFFIX = ".creating"
LOCK_POLL_S = 0.02


def create(path: Path, build: Callable[[Path], None], timeout: float) -> None:
    """Make sure `path` holds a library: `build` one in a temporary file and move it there.

    `build(temp)` must write a whole library into the (empty) file `temp` and close it.
    When another process creates the library first, theirs is kept and `build` may not run
    at all. Waits up to `timeout` seconds for another creator; raises `LibraryError`.
    """
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LibraryError(f"cannot create a library at {path}: {exc.strerror}") from None
    with _folder_lock(folder, path, timeout) as locked:
        if locked:
            _remove_leftovers(path)
        if files.look(path).kind == files.FILE:
            return  # another process created it while we waited
        _remove_orphan_journals(path)
        temp = _new_temp(path)
        try:
            build(temp)
            _flush(temp)
            _publish(temp, path)
        finally:
            _discard(temp)
        _flush(folder)


@contextlib.contextmanager
def _folder_lock(folder: Path, path: Path, timeout: float) -> Iterator[bool]:
    """Hold an exclusive lock on `folder` (yields True), or yields False where none is possible."""
    fd = None
    if fcntl is not None:
        with contextlib.suppress(OSError):
            fd = os.open(folder, os.O_RDONLY)
    if fd is None:
        yield False
        return
    try:
        locked = _acquire(fd, path, timeout)
        try:
            yield locked
        finally:
            if locked:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, timeout: float) -> bool:
    """Take the folder lock within `timeout` s: True, False if the file system has no locks."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise busy(path, timeout, doing="creating") from None
            time.sleep(LOCK_POLL_S)
        except OSError:
            return False


def _temp_pattern(path: Path) -> re.Pattern[str]:
    """The names of `path`'s temporary files and their SQLite journals."""
    return re.compile(
        rf"\.{re.escape(path.name)}\.[0-9a-f]{{8}}{re.escape(TEMP_SUFFIX)}(-journal|-wal|-shm)?"
    )


def _remove_leftovers(path: Path) -> None:
    """Remove temporary files of creators that died (only called holding the folder lock)."""
    pattern = _temp_pattern(path)
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if pattern.fullmatch(entry.name):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _remove_orphan_journals(path: Path) -> None:
    """Remove journal files beside a path with no library: SQLite would apply them to ours.

    With no file, or a zero-byte one, at `path` they belong to nothing (SQLite itself
    deletes the log of a zero-byte database).
    """
    for suffix in files.SIDECARS:
        with contextlib.suppress(FileNotFoundError):
            files.sidecar(path, suffix).unlink()


def _new_temp(path: Path) -> Path:
    """A new empty hidden file beside `path`, with the permissions a new file gets here."""
    for _ in range(100):
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            os.close(os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            return temp
        except FileExistsError:
            continue
        except PermissionError:
            raise LibraryError(
                f"cannot create a library at {path}: its folder is read-only for you"
            ) from None
        except OSError as exc:
            raise LibraryError(f"cannot create a library at {path}: {exc.strerror}") from None
    raise LibraryError(f"cannot create a library at {path}: no free temporary name")


def _flush(target: Path) -> None:
    """Ask the system to put `target` (a file or a folder) on disk before going on."""
    with contextlib.suppress(OSError):
        fd = os.open(target, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _publish(temp: Path, path: Path) -> None:
    """Move the finished `temp` to `path`, never over a library another process put there."""
    if files.look(path).kind == files.FILE:
        return
    try:
        if files.look(path).kind == files.EMPTY:
            os.replace(temp, path)
            return
        try:
            os.link(temp, path)  # fails when the name exists: no library is ever replaced
        except FileExistsError:
            return
        except OSError:
            os.replace(temp, path)  # a file system without hard links
    except OSError as exc:
        raise LibraryError(f"cannot create a library at {path}: {exc.strerror}") from None


def _discard(temp: Path) -> None:
    """Remove the temporary file and any journal SQLite left beside it."""
    for name in (temp, *(files.sidecar(temp, s) for s in files.SIDECARS)):
        with contextlib.suppress(FileNotFoundError):
            name.unlink()
