"""The answer's stream, told apart from every other file: a write to standard output that
fails (a full disk, /dev/full, a vanished mount) is the output's failure, not a bug.

`GuardedStream` wraps standard output for one command and turns an `OSError` of its writes
into `OutputError`, which the CLI reports in one line with its own exit status; a closed
pipe stays a `BrokenPipeError` (the reader left: not an error). `say` writes a message to
standard error and gives up silently when that stream is broken too, so a broken stderr
never turns into a different failure.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TextIO


class OutputError(OSError):
    """Standard output could not be written."""


class GuardedStream:
    """`stream` whose write and flush raise `OutputError` for a failed write."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write `text` (see the class docstring for failures)."""
        return self._guard(self._stream.write, text)

    def flush(self) -> None:
        """Flush the stream (see the class docstring for failures)."""
        self._guard(self._stream.flush)

    def _guard(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.errno, exc.strerror or str(exc)) from exc

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def say(text: str) -> None:
    """Print `text` on standard error; nothing when standard error cannot be written."""
    # full, closed or detached: the exit status still tells
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)
