"""Independent parts of one run on threads of their own, with one progress and one cancel.

An evaluation's probes (the permutation test, the collective, the training step) read the
same expanded fabric and write nothing another reads but the engine's work caches, which
are locked. Their kernels release the GIL, so on a machine with two cores or more the
parts can run side by side: on the 16,384-GPU preset an edit's evaluation takes the time of
its longest lane instead of the sum of its parts.

Each lane is a list of steps run in order on one thread (steps that share an object that is
not thread-safe, such as a `Router`, go in one lane). The run's progress is the weighted
sum of the lanes' own; a lane that fails stops the others at their next checkpoint, and
its error is raised once every lane has ended, so no thread outlives the call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engine.runtime.progress import Progress, RunCancelledError

Lane = Callable[[Progress], Any]


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_lanes(
    lanes: Sequence[tuple[float, Lane]], progress: Progress | None, threads: int | None = None
) -> list[Any]:
    """Run each `(weight, lane)` on its own thread (the first on the calling thread) and
    return their results in order. A lane gets a `Progress` whose 0..1 is its own share of
    the caller's, weighted by `weight`; it stops (`RunCancelledError`) when the caller asks
    or another lane failed. With one usable thread (`threads`, default the usable cores)
    the lanes run one after another, with the same progress and the same results."""
    threads = usable_cores() if threads is None else threads
    shares = _Shares([w for w, _ in lanes], progress)
    if threads <= 1 or len(lanes) <= 1:
        return [lane(shares.part(i)) for i, (_, lane) in enumerate(lanes)]
    outcomes: list[tuple[bool, Any]] = [(False, None)] * len(lanes)

    def run(i: int) -> None:
        try:
            outcomes[i] = (True, lanes[i][1](shares.part(i)))
        except BaseException as exc:  # handed to the caller below, after every lane ended
            shares.failed.set()
            outcomes[i] = (False, exc)

    workers = min(threads, len(lanes)) - 1
    with ThreadPoolExecutor(workers, thread_name_prefix="fabriclab-lane") as pool:
        futures = [pool.submit(run, i) for i in range(1, len(lanes))]
        run(0)
        for future in futures:
            future.result()
    return _value(outcomes)


def _value(outcomes: list[tuple[bool, Any]]) -> list[Any]:
    """The lanes' results, or the error that ended the run: the first lane's own failure
    before a stop it caused in the others."""
    errors = [v for ok, v in outcomes if not ok]
    if errors:
        real = [e for e in errors if not isinstance(e, RunCancelledError)]
        raise (real or errors)[0]
    return [v for _, v in outcomes]


class _Shares:
    """The caller's progress split over lanes: each lane's fraction kept, their weighted sum
    reported (under a lock: lanes report from their own threads)."""

    def __init__(self, weights: Sequence[float], progress: Progress | None) -> None:
        total = sum(weights) or 1.0
        self.weights = [w / total for w in weights]
        self.done = [0.0] * len(weights)
        self.progress = progress
        self.failed = threading.Event()
        self.lock = threading.Lock()

    def part(self, i: int) -> Progress:
        """The progress lane `i` reports to."""

        def report(fraction: float, stage: str) -> None:
            with self.lock:
                self.done[i] = fraction
                overall = sum(w * d for w, d in zip(self.weights, self.done, strict=True))
            if self.progress is not None and self.progress.report is not None:
                self.progress.report(overall, stage)

        def should_stop() -> bool:
            outer = self.progress.should_stop if self.progress is not None else None
            return self.failed.is_set() or (outer is not None and outer())

        return Progress(report, should_stop)
