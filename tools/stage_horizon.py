"""How much a collective's verdict owes to the transport's stepping budget.

Why: each routed stage of a collective is stepped from a synchronised cold start for at
most `CLASS_STEP_BUDGET` class-steps (and `MAX_HORIZON_S`), and a stage that has not
settled by then is continued at its last quarter's rates. On large RoCE stages that
quarter lies inside DCQCN's start dip, which lasts milliseconds, so the verdict of a
GiB collective can rest on a stretch the collective itself long outlives. This tool runs
one collective at the interactive budget and again with the budget raised (so the stage
runs as long as `--horizon-ms`), and prints both busbw figures and each stage's note.
It takes minutes for 1k-GPU RoCE presets; it is a measurement, not a test.

Run from the project root::

    .venv/bin/python tools/stage_horizon.py dgx-h100-roce-spectrumx-1k --size 1G
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import engine.collectives.stage_transport as stage_transport
from engine.analysis import collective_run, load_preset
from engine.catalog.devices import default_catalog
from engine.collectives.stage_transport import VERDICTS

SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30}


def _bytes(text: str) -> float:
    unit = SUFFIX.get(text[-1].upper(), 1)
    return float(text[:-1] if unit != 1 else text) * unit


def _run(preset: str, size: float, ranks: int, algorithm: str) -> tuple[float, list[str], float]:
    began = time.process_time()
    summary = collective_run(
        load_preset(preset), default_catalog(), np.array([size]), "all-reduce", ranks, algorithm
    )
    notes = [
        f"{row.stage}: {row.transport_efficiency:.2f} of its ideal; {row.transport_note}"
        for row in summary.breakdown
        if not row.transport_note.startswith("no flows")
    ]
    return summary.rows[0].busbw_GBps, notes, time.process_time() - began


def main() -> None:
    """Print the busbw at the interactive budget and over the long horizon."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("preset")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--algo", default="auto")
    parser.add_argument("--horizon-ms", type=float, default=12.0)
    args = parser.parse_args()
    size = _bytes(args.size)
    for label, budget, horizon in (
        ("interactive budget", stage_transport.CLASS_STEP_BUDGET, stage_transport.MAX_HORIZON_S),
        (f"{args.horizon_ms:g} ms horizon", 1e12, args.horizon_ms * 1e-3),
    ):
        stage_transport.CLASS_STEP_BUDGET, stage_transport.MAX_HORIZON_S = budget, horizon
        VERDICTS.clear()
        busbw, notes, cpu = _run(args.preset, size, args.ranks, args.algo)
        print(f"{label}: busbw {busbw:.1f} GB/s ({cpu:.0f} CPU s)")
        for note in notes:
            print(f"  {note}")


if __name__ == "__main__":
    main()
