"""A traffic matrix as a workload: the flows a scenario runs when its workload kind is
``traffic`` (imported from a CSV ``src,dst,bytes`` or an htsim connection matrix).

GPUs are named by their global index (the order the fabric expands them: servers of the
first server group first, each server's GPUs in order). Whether an index exists depends on
the topology, so it is checked where the fabric is built; here each flow is checked on its
own (ends, size, start) and the matrix as a whole (not empty for kind ``traffic``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.model.errors import Problem

MAX_FLOWS = 1_000_000  # flows a matrix holds before the reader refuses it as too large to run


@dataclass
class TrafficFlow:
    """One flow of a traffic matrix: `bytes` from GPU `src` to GPU `dst`, from `start_s`."""

    src: int
    dst: int
    bytes: float
    start_s: float = 0.0


def check_traffic(kind: str, matrix: list[TrafficFlow]) -> list[Problem]:
    """Problems of a workload's `matrix` (its `kind` says whether it must hold flows), each
    naming ``workload.matrix[i]``."""
    if kind == "traffic" and not matrix:
        return [Problem("workload", "a traffic workload needs flows in its matrix", "matrix")]
    if len(matrix) > MAX_FLOWS:
        return [Problem("workload", f"{len(matrix):,} flows; at most {MAX_FLOWS:,}", "matrix")]
    problems = []
    for i, f in enumerate(matrix):
        where = f"workload.matrix[{i}]"
        if f.src < 0 or f.dst < 0:
            problems.append(Problem(where, f"GPU indices are 0 or more, not {f.src} -> {f.dst}"))
        elif f.src == f.dst:
            problems.append(Problem(where, f"a flow from GPU {f.src} to itself", "dst"))
        if not (math.isfinite(f.bytes) and f.bytes >= 1):
            problems.append(Problem(where, f"bytes must be at least 1, not {f.bytes:g}", "bytes"))
        if not (math.isfinite(f.start_s) and f.start_s >= 0):
            problems.append(
                Problem(where, f"start_s must be 0 or more, not {f.start_s:g}", "start_s")
            )
        if len(problems) >= 20:
            break
    return problems
