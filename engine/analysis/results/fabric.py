"""What a fabric is and how its links carry a permutation: the topology and permutation parts.

`TopologySummary` counts what the expanded scenario holds (GPUs, switches per tier, cables
per bundle) with its bisection bandwidth and oversubscription; `PermutationResult` is the
permutation test (every GPU sends to one on another server at once). The row types here,
`Stats`, `TierUtilization`, `UtilizationHistogram` and `HotLink`, are shared with the
collective's result, which reports link utilization the same way. Figures are SI units and
fractions of line rate or capacity.
"""

# Field names are the JSON keys, units spelled as the engine spells them (GBps, Bps).
# ruff: noqa: N815

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.analysis.results.codec import OMIT_WHEN_NONE, JsonResult


@dataclass(frozen=True)
class Stats(JsonResult):
    """Min, mean and max of a set of figures (zeros when the set is empty)."""

    min: float
    mean: float
    max: float


@dataclass(frozen=True)
class TierUtilization(JsonResult):
    """Utilization of the directed links of one tier pair (``leaf->spine``, ``nvlink``):
    min, mean and max, how many links there are and the share of them that is idle."""

    min: float
    mean: float
    max: float
    links: int
    idle_fraction: float


@dataclass(frozen=True)
class UtilizationHistogram(JsonResult):
    """Links per utilization bin: `edges` are the bin edges over 0..1, `tiers` the counts
    per bin of each tier pair (a tier's counts add up to its directed links)."""

    edges: tuple[float, ...]
    tiers: Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class HotLink(JsonResult):
    """One of the busiest links: its readable name, index, bundle id ("nvlink" inside a
    server) and utilization."""

    link: str
    index: int
    bundle: str
    utilization: float


@dataclass(frozen=True)
class TopologySummary(JsonResult):
    """GPUs, servers, switches per tier, cables per bundle, bisection and oversubscription.

    `oversubscription` maps an upper tier to the ratio of the capacity coming up into it from
    the tier below to the capacity it sends further up.
    """

    name: str
    gpus: int
    servers: int
    switches: Mapping[str, int]
    switches_total: int
    cables: Mapping[str, int]
    cables_total: int
    cables_working: int
    directed_links: int
    endpoint_bandwidth_Bps: float
    bisection_bandwidth_Bps: float
    oversubscription: Mapping[str, float]


@dataclass(frozen=True)
class PermutationTransport(JsonResult):
    """The permutation through the transport mechanisms, at steady state: each connection's
    throughput as a fraction of its NIC's line rate, the aggregate over the ideal's
    (max-min), the most paused link's paused share, the most marked link's ECN share and
    the share of bytes dropped; all None when the transport did not run, and `note` says
    why (or how the steady state was read)."""

    throughput_fraction: Stats | None = field(default=None, metadata=OMIT_WHEN_NONE)
    efficiency: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    max_pause_fraction: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    max_ecn_mark_fraction: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    dropped_share: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    note: str = ""


@dataclass(frozen=True)
class PermutationResult(JsonResult):
    """The permutation test: each flow's throughput as a fraction of its NIC's line rate.

    `cross_leaf_*` covers the connections whose paths climb above the leaf tier;
    `link_utilization` and `utilization_histogram` are per tier pair; `route_s` and
    `solve_s` are wall-clock seconds of routing and of the max-min rates. `throughput_*`
    are the ideal transport's (max-min); `transport` what the mechanisms give.
    """

    connections: int
    flows: int
    unreachable: int
    routing: str
    flows_per_connection: int
    throughput_fraction: Stats
    cross_leaf_throughput_fraction: Stats
    cross_leaf_connections: int
    below_99pct_fraction: float
    aggregate_throughput_Bps: float
    mean_path_latency_s: float
    link_utilization: Mapping[str, TierUtilization]
    utilization_histogram: UtilizationHistogram
    hottest_links: tuple[HotLink, ...]
    route_s: float
    solve_s: float
    transport: PermutationTransport | None = field(default=None, metadata=OMIT_WHEN_NONE)
