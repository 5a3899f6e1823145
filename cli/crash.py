"""What the command line does when something unexpected breaks: one line on the screen, the
whole story in a file.

A traceback helps whoever fixes the bug, not the person running a sweep; so it goes to a
report in the user's state folder and the screen gets its path. ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from engine import __version__


def crash_folder(environ: Mapping[str, str], home: Path) -> Path:
    """``$XDG_STATE_HOME/fabriclab/crashes`` (``~/.local/state`` when unset or relative)."""
    base = environ.get("XDG_STATE_HOME", "")
    state = Path(base) if base and os.path.isabs(base) else home / ".local" / "state"
    return state / "fabriclab" / "crashes"


def report_text(exc: BaseException, argv: list[str]) -> str:
    """The report: version, platform, command line and the traceback."""
    return (
        f"FabricLab {__version__} on Python {platform.python_version()} ({platform.platform()})\n"
        f"command: fabriclab {' '.join(argv)}\n"
        f"time: {datetime.now(UTC).isoformat(timespec='seconds')}\n\n"
        + "".join(traceback.format_exception(exc))
    )


def write_crash_report(exc: BaseException, argv: list[str]) -> Path | None:
    """Save the report of `exc`; its path, or None when no folder could take it."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    text = report_text(exc, argv)
    for folder in (crash_folder(os.environ, Path.home()), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f"crash-{stamp}-", suffix=".txt", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as out:
                out.write(text)
            return Path(name)
        except OSError:
            continue
    return None


def silence_stdout() -> None:
    """After the reader of our output went away (``| head``), drop whatever is still
    buffered so the interpreter's exit does not complain about the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a real file (tests capture it): nothing will be flushed to a pipe
