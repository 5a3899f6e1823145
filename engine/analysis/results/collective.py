"""The timing of one collective over a range of message sizes, as the door returns it.

`CollectiveSummary` wraps what `engine.collectives` computes (its `CollectiveResult` in JSON
form): the best algorithm and protocol per size (`CollectiveRow`, nccl-tests' algbw and
busbw), each algorithm's time and busbw curve, the per-stage breakdown of the largest size
(`StageTime`) and the link utilization that size causes. `CollectiveSweep` is the same
collective laid out for the app's plots.
"""

# Field names are the JSON keys, units spelled as the engine spells them (GBps, Bps).
# ruff: noqa: N815

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from engine.analysis.results.codec import JsonResult, finite_or_null, plain
from engine.analysis.results.fabric import HotLink, TierUtilization


@dataclass(frozen=True)
class CollectiveRow(JsonResult):
    """One message size: its time and bandwidths with the algorithm and protocol that run.

    Under ``auto`` those are NCCL's pick, the pair its static tuner times fastest
    (`tuner_time_s` is what the tuner expected of it); `fastest_*` name the pair that is
    fastest on this fabric under the transport and its time, what forcing ``NCCL_ALGO`` /
    ``NCCL_PROTO`` would give. Reports written before the pick was NCCL's lack those
    fields and read as empty names and zero times.
    """

    bytes: int
    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    algorithm: str
    protocol: str
    tuner_time_s: float = 0.0
    fastest_algorithm: str = ""
    fastest_protocol: str = ""
    fastest_time_s: float = 0.0

    def forcing_gain(self) -> float:
        """How much shorter the fastest pair is than the one that runs, as a share of the
        running pair's time (0 when they are the same, or the report did not say)."""
        if not self.fastest_algorithm or self.time_s <= 0 or self.fastest_time_s <= 0:
            return 0.0
        return max(0.0, 1.0 - self.fastest_time_s / self.time_s)


@dataclass(frozen=True)
class StageTime(JsonResult):
    """One stage of the picked algorithm at the largest size: latency and transfer time,
    and what the transport mechanisms made of its network flows: the ideal's bandwidth
    time over the mechanistic one (1: no loss), the most paused link's paused share, the
    most marked link's ECN-marked share, the share of bytes dropped and resent, whether
    every port's buffer held its PFC headroom, and a note when the transport did not run."""

    stage: str
    latency_s: float
    bandwidth_s: float
    transport_efficiency: float = 1.0
    max_pause_fraction: float = 0.0
    max_ecn_mark_fraction: float = 0.0
    dropped_share: float = 0.0
    lossless: bool = True
    transport_note: str = ""


@dataclass(frozen=True)
class CollectiveSummary(JsonResult):
    """A collective `op` over `ranks` ranks at each size of `rows`.

    `curves_time_s` and `curves_busbw_GBps` hold every algorithm's figure at each size;
    `breakdown`, `link_utilization` and `hottest_links` describe the largest size;
    `engine_s` is the wall-clock seconds the timing took.
    """

    op: str
    ranks: int
    rows: tuple[CollectiveRow, ...]
    curves_time_s: Mapping[str, tuple[float, ...]]
    curves_busbw_GBps: Mapping[str, tuple[float, ...]]
    breakdown: tuple[StageTime, ...]
    link_utilization: Mapping[str, TierUtilization]
    hottest_links: tuple[HotLink, ...]
    engine_s: float

    def rows_json(self) -> str:
        """The rows alone as JSON text: what ``collective --json`` prints (one object per
        size, as nccl-tests prints one line per size)."""
        return json.dumps(finite_or_null(plain(self.rows)), indent=2, allow_nan=False)


@dataclass(frozen=True)
class CollectiveSweep(JsonResult):
    """The collective as the app plots it: per-algorithm busbw and time against message
    size, and the best algorithm's figures (``best_*``) at each size."""

    op: str
    ranks: int
    sizes: tuple[float, ...]
    busbw_GBps: Mapping[str, tuple[float, ...]]
    best_busbw_GBps: tuple[float, ...]
    time_s: Mapping[str, tuple[float, ...]]
    best_time_s: tuple[float, ...]

    @classmethod
    def of(cls, collective: CollectiveSummary) -> CollectiveSweep:
        """The plots' view of `collective`."""
        return cls(
            op=collective.op,
            ranks=collective.ranks,
            sizes=tuple(float(row.bytes) for row in collective.rows),
            busbw_GBps=collective.curves_busbw_GBps,
            best_busbw_GBps=tuple(row.busbw_GBps for row in collective.rows),
            time_s=collective.curves_time_s,
            best_time_s=tuple(row.time_s for row in collective.rows),
        )
