"""What the transport mechanisms do to one traffic pattern on a scenario's fabric.

`TransportStudy` is the answer of the door's `transport_study` (the CLI's ``transport``
subcommand and the app's Congestion tab): per-flow throughput against the ideal (max-min
fair, what a perfect transport would do), the hottest ports with their queue over time,
paused and marked shares per port and per bundle (the canvas colours), drops and PFC
headroom, and the victim's slowdown when the workload has one. Rates are bytes per second,
times seconds, queues bytes; shares are fractions of time (pauses) or of bytes (marks).
"""

# Field names are the JSON keys, units spelled as the engine spells them (Bps).
# ruff: noqa: N815

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.analysis.results.codec import OMIT_WHEN_NONE, JsonResult
from engine.analysis.results.fabric import Stats


@dataclass(frozen=True)
class TransportWorkload(JsonResult):
    """The traffic a study runs, as asked.

    `kind` is ``incast`` (`senders` GPUs on other servers to one GPU, N:1), ``permutation``
    (every GPU to one on another server, seeded by `seed`), ``all-to-all`` (every pair of
    the first `ranks` GPUs, 0: all) or ``collective`` (the first stage of `op` with
    `algorithm` over the first `ranks` GPUs). Each flow carries `bytes_per_flow`.
    `victim` adds one flow that shares the first sender's uplink but goes elsewhere
    (incast only): what PFC's or credits' back-pressure costs a bystander.
    `horizon_s` stops the run at that simulated time (0: run until every flow finished).
    """

    kind: str = "incast"
    senders: int = 8
    ranks: int = 0
    op: str = "all-reduce"
    algorithm: str = "ring"
    bytes_per_flow: float = 64.0 * 2**20
    victim: bool = False
    seed: int = 0
    horizon_s: float = 0.0


@dataclass(frozen=True)
class PortSeries(JsonResult):
    """One hot port (a directed fabric link, named as in the fabric results) over time:
    its standing egress queue and paused share per sample, at `time_s`."""

    link: str
    index: int
    bundle: str
    time_s: tuple[float, ...]
    queue_bytes: tuple[float, ...]
    paused_share: tuple[float, ...]


@dataclass(frozen=True)
class PortFigures(JsonResult):
    """One port's outcome over the run: largest and mean standing queue, paused share of
    the time, ECN-marked share of its bytes, bytes dropped, utilization, and whether its
    buffer holds the PFC headroom its cable needs."""

    link: str
    index: int
    bundle: str
    max_queue_bytes: float
    mean_queue_bytes: float
    pause_fraction: float
    ecn_mark_fraction: float
    dropped_bytes: float
    utilization: float
    headroom_ok: bool


@dataclass(frozen=True)
class FlowSeries(JsonResult):
    """One flow class over time: its delivery rate (all `flows` of it together)."""

    label: str
    flows: int
    time_s: tuple[float, ...]
    rate_Bps: tuple[float, ...]


@dataclass(frozen=True)
class TransportStudy(JsonResult):
    """The transport's outcome for one workload on one scenario.

    `mechanisms` names what ran (``credit``, ``pfc`` or ``none`` for loss, and ``dcqcn``,
    ``ib_cc`` when on). Per-flow throughput is bytes over finish time; `ideal_throughput`
    the same under max-min fair rates; `efficiency` the ideal makespan over the
    mechanistic one. `hottest` ranks ports by largest queue (then paused share);
    `port_series` follows the first few of them over time and `flow_series` the slowest
    flow classes. `bundle_pause_fraction` and `bundle_mark_fraction` are the largest share
    over each bundle's links (the canvas colours). `victim_slowdown` is the victim's ideal
    rate over its mechanistic one (None without a victim). `engine_s` is wall-clock.
    """

    scenario: str
    technology: str
    mechanisms: tuple[str, ...]
    workload: TransportWorkload
    flows: int
    classes: int
    throughput_Bps: Stats
    ideal_throughput_Bps: Stats
    makespan_s: float
    ideal_makespan_s: float
    efficiency: float
    finished: bool
    dropped_bytes: float
    lossless: bool
    hottest: tuple[PortFigures, ...]
    port_series: tuple[PortSeries, ...]
    flow_series: tuple[FlowSeries, ...]
    bundle_pause_fraction: Mapping[str, float]
    bundle_mark_fraction: Mapping[str, float]
    steps: int
    jumps: int
    engine_s: float
    victim_slowdown: float | None = field(default=None, metadata=OMIT_WHEN_NONE)
    notes: tuple[str, ...] = ()
