"""Progress reports and cancellation for long engine runs.

A 131,072-GPU evaluation takes seconds; callers (the app's worker, a script) want to see how
far it got and to stop it. Engine functions take an optional `Progress` and call it between
chunks of work (after routing, per collective algorithm stage, per part); it reports the
fraction done and raises `RunCancelledError` once the caller's `should_stop` says so. The
chunks are what the kernels cannot interrupt, so a cancel takes effect within one chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class RunCancelledError(Exception):
    """The caller asked the engine to stop; no partial result is returned."""


@dataclass
class Progress:
    """Where a run reports its progress and learns that it should stop.

    `report(fraction, stage)` receives the fraction done (0..1) and a short label of the
    stage that starts now; `should_stop()` is polled at the same points.
    """

    report: Callable[[float, str], None] | None = None
    should_stop: Callable[[], bool] | None = None

    def __call__(self, fraction: float, stage: str) -> None:
        """Mark a checkpoint: raise `RunCancelledError` if asked to stop, else report progress."""
        if self.should_stop is not None and self.should_stop():
            raise RunCancelledError(f"cancelled before {stage}")
        if self.report is not None:
            self.report(min(max(fraction, 0.0), 1.0), stage)

    def poll(self, stage: str) -> None:
        """Raise `RunCancelledError` if asked to stop; report nothing (inside a chunk)."""
        if self.should_stop is not None and self.should_stop():
            raise RunCancelledError(f"cancelled during {stage}")

    def part(self, start: float, end: float) -> Progress:
        """The same sink, mapping a sub-task's 0..1 onto ``start..end`` of this run."""

        def report(fraction: float, stage: str) -> None:
            if self.report is not None:
                self.report(start + (end - start) * fraction, stage)

        return Progress(report, self.should_stop)


def checkpoint(progress: Progress | None, fraction: float, stage: str) -> None:
    """Call `progress` if there is one (engine functions take ``progress=None``)."""
    if progress is not None:
        progress(fraction, stage)


def poll(progress: Progress | None, stage: str) -> None:
    """Stop here if the caller asked to (a point inside a chunk, without a fraction)."""
    if progress is not None:
        progress.poll(stage)
