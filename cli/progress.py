"""Stage progress on the terminal: one line on stderr, rewritten in place, only when stderr
is a terminal (a pipe or a log file gets nothing, so output stays clean for scripts)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from engine.analysis import Progress


class TerminalProgress:
    """Writes ``[ 42%] collective`` to `stream`, rewriting its line; `clear` erases it."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.width = 0

    def report(self, fraction: float, stage: str) -> None:
        """Show `fraction` done and the stage that starts now."""
        text = f"[{fraction * 100:3.0f}%] {stage}"
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(text))

    def clear(self) -> None:
        """Erase the line (before the answer is printed)."""
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


@contextmanager
def stage_progress(stream: TextIO | None = None) -> Iterator[Progress | None]:
    """A `Progress` for one engine call when `stream` (stderr) is a terminal, else None; the
    line is erased when the call ends, however it ends."""
    stream = stream if stream is not None else sys.stderr
    if not stream.isatty():
        yield None
        return
    line = TerminalProgress(stream)
    try:
        yield Progress(line.report)
    finally:
        line.clear()
