"""The timing of one collective over a range of message sizes, as the engine returns it.

Rows per size (time, algorithm and bus bandwidth, the best algorithm and protocol), each
algorithm's curve, the per-stage breakdown of the largest size and the link utilization it
causes. busbw follows the nccl-tests definitions (NVIDIA/nccl-tests, doc/PERFORMANCE.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.collectives.schedules import bus_factor


@dataclass
class CollectiveResult:
    """The timing of one collective over a range of message sizes."""

    op: str
    ranks: int
    rows: list[dict[str, Any]]
    curves: dict[str, list[float]] = field(default_factory=dict)
    breakdown: list[dict[str, Any]] = field(default_factory=list)
    link_utilization: dict[str, dict[str, float]] = field(default_factory=dict)
    hottest_links: list[dict[str, Any]] = field(default_factory=list)
    link_util: np.ndarray | None = None
    engine_s: float = 0.0

    def busbw_curves(self) -> dict[str, list[float]]:
        """Bus bandwidth (GB/s) per algorithm at every size, as the curves' times give it."""
        factor = bus_factor(self.op, self.ranks)
        sizes = [row["bytes"] for row in self.rows]
        return {
            algo: [
                s / t * factor / 1e9 if t > 0 else 0.0 for s, t in zip(sizes, times, strict=True)
            ]
            for algo, times in self.curves.items()
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (per-link arrays left out)."""
        return {
            "op": self.op,
            "ranks": self.ranks,
            "rows": self.rows,
            "curves_time_s": self.curves,
            "curves_busbw_GBps": self.busbw_curves(),
            "breakdown": self.breakdown,
            "link_utilization": self.link_utilization,
            "hottest_links": self.hottest_links,
            "engine_s": self.engine_s,
        }
