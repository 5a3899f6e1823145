"""The step model's collectives, each timed on the fabric once per distinct (op, groups, size).

A step runs the same collective many times (per layer, per micro-batch, per bucket); routing
and simulating it is the expensive part, so `CollectiveTimer` asks `CollectiveEngine` once per
distinct operation, group set and message size and keeps every collective it was asked for,
with its count per step, for the report.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from engine.collectives.timing import CollectiveEngine
from engine.runtime.progress import Progress
from engine.training.placement import Groups


class CollectiveTimer:
    """Times collectives on one engine, each distinct (op, groups, size) once; a `progress`
    given stops the timing (`RunCancelledError`) when its caller asks."""

    def __init__(self, engine: CollectiveEngine, progress: Progress | None = None):
        self.engine = engine
        # Heard between and inside the engine's runs only to stop (a step times many
        # collectives; their fractions would not add up to the step's).
        self._stop = None if progress is None else Progress(None, progress.should_stop)
        self._rows: dict[tuple[str, str, float], dict[str, Any]] = {}
        self.records: list[dict[str, Any]] = []

    @staticmethod
    def _key(groups: Groups) -> str:
        digest = hashlib.sha1(np.ascontiguousarray(groups.ranks).tobytes())
        for g in groups.concurrent:
            digest.update(b"|")
            digest.update(np.ascontiguousarray(g).tobytes())
        return digest.hexdigest()

    def rows(self, op: str, groups: Groups, sizes: list[float]) -> list[dict[str, Any]]:
        """Engine rows (time_s, algorithm, protocol) for each size; sizes ≤ 0 take no time."""
        key = self._key(groups)
        missing = sorted({s for s in sizes if s > 0 and (op, key, s) not in self._rows})
        if missing and groups.size >= 2:
            result = self.engine.run(
                op,
                groups.ranks,
                np.array(missing, dtype=np.float64),
                concurrent=groups.concurrent,
                progress=self._stop,
            )
            for size, row in zip(missing, result.rows, strict=True):
                self._rows[(op, key, size)] = row
        idle = {"time_s": 0.0, "algorithm": "", "protocol": ""}
        if groups.size < 2:
            return [idle for _ in sizes]
        return [self._rows[(op, key, s)] if s > 0 else idle for s in sizes]

    def time(self, kind: str, op: str, groups: Groups, size_bytes: float, count: float) -> float:
        """Seconds of one `op` of `size_bytes` on `groups`, recorded with its count per step."""
        row = self.rows(op, groups, [size_bytes])[0]
        if groups.size >= 2 and size_bytes > 0 and count > 0:
            self.records.append(
                {
                    "kind": kind,
                    "op": op,
                    "ranks": groups.size,
                    "concurrent_groups": len(groups.concurrent),
                    "bytes": float(size_bytes),
                    "time_s": float(row["time_s"]),
                    "count_per_step": float(count),
                    "algorithm": row["algorithm"],
                    "protocol": row["protocol"],
                }
            )
        return float(row["time_s"])
