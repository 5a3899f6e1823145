"""`warm-up`: compile the engine's kernels once, before the first real run needs them.

numba compiles each kernel the first time a run meets it, which takes one to two minutes
on a 2-core machine; `make install` runs this so that the first `make run` or command
answers at once. It evaluates the default preset (every probe the window runs on start:
routing, the permutation test, the collective with its transport, the training step), and
prints each stage it reaches on its own line, so a log shows what it compiled. When the
kernels are on disk already it says so and only checks that they load.
"""

from __future__ import annotations

import argparse
import sys
import time

from engine.analysis import DEFAULT_PRESET, Progress, evaluate, kernels_ready, load_preset
from engine.catalog.devices import default_catalog

EXIT_OK = 0


class StageLines:
    """Prints a line each time a run reaches a new stage (for logs, not a terminal)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.last = ""
        self.began = time.monotonic()

    def report(self, fraction: float, stage: str) -> None:
        """Print `stage` when it is not the one printed last."""
        if stage != self.last:
            self.last = stage
            elapsed = time.monotonic() - self.began
            print(f"  [{fraction * 100:3.0f}%, {elapsed:5.1f} s] {stage}", file=self.stream)
            self.stream.flush()


def run_warm_up(args: argparse.Namespace) -> int:
    """Evaluate the default preset once so that every kernel is compiled and cached."""
    ready = kernels_ready()
    out = sys.stdout
    if ready:
        print("The engine's kernels are compiled already; checking that they load.", file=out)
    else:
        print(
            "Compiling the engine's kernels once (1-2 minutes on 2 cores; later runs load "
            f"them from disk), by evaluating {DEFAULT_PRESET}:",
            file=out,
        )
    out.flush()
    began = time.monotonic()
    lines = StageLines(out)
    evaluate(load_preset(DEFAULT_PRESET), default_catalog(), progress=Progress(lines.report))
    print(f"Kernels ready ({time.monotonic() - began:.0f} s).", file=out)
    return EXIT_OK


def add_warm_up_command(sub) -> None:
    """Register `warm-up` on the sub-command parser `sub`."""
    p = sub.add_parser("warm-up", help="compile the engine's kernels once (make install runs it)")
    p.set_defaults(func=run_warm_up)
