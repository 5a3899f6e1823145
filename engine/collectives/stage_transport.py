"""What the transport mechanisms do to one routed stage of a collective.

A stage's network flows are handed to the transport model (`engine.transport`) as long
transfers, `REFERENCE_BYTES` per byte of share: NCCL streams a collective's chunks through
the same connections back to back, so over a whole collective the connections behave as
flows that all start together. The model runs from that start (every NIC at line rate, the
queues empty) through the transient (queues building, the first pauses and marks, the rate
cuts and recovery) until the flows' pace settles, or until `CLASS_STEP_BUDGET` class-steps
(at most `MAX_HORIZON_S` of simulated time) are spent. From the delivered bytes over time
the verdict is a completion curve: how long the stage's slowest flow takes to deliver a
given number of bytes, read off what was simulated and, past it, continued at the rates of
the settled window (or of the run's last quarter, said in the note). A short transfer thus
pays the start transient only as far as it lasts, a long one its steady state.

Sprayed flows run as single paths over the sets of links they split over evenly, each set
one link of several ports (`engine.transport.spray`). The transport is skipped, and the
stage runs at the ideal, when the scenario asks for the ideal transport, when sprayed flows
split over sets that cannot be taken as one link (the note says why), or when the stage has
more distinct paths than `MAX_CLASSES` (an all-to-all over thousands of GPUs): each case
says so in the note.
Verdicts are kept per process (`VERDICTS`, bounded in bytes), keyed by everything the run reads.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.completion_curve import slowest_times
from engine.collectives.pipeline import network_gates
from engine.collectives.stages import Stage
from engine.routing.router import RoutedFlows
from engine.runtime.lru import ByteLRU
from engine.runtime.progress import Progress, poll
from engine.topology.expand import Fabric
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.network import TransportNetwork
from engine.transport.params import TransportConfig
from engine.transport.simulate import simulate
from engine.transport.spray import bundle_sprayed
from engine.transport.tables import HistoryTooLongError, build_tables

REFERENCE_BYTES = 2**30  # bytes per unit of share: a transfer that outlasts its transient
# Past this many distinct paths the class-step budget buys under 0.4 ms of simulated time,
# too short for a start transient to pass: such stages run at the ideal and say so.
MAX_CLASSES = 10_000
# Grouping flows into classes costs seconds past a few hundred thousand flows; a stage with
# more flows than this is not grouped at all (it could not get under MAX_CLASSES anyway
# unless most of its flows shared their paths).
MAX_FLOWS = 4 * MAX_CLASSES
# Steps x classes one stage may cost (about a second on one core), and the longest
# stretch of simulated time it runs.
CLASS_STEP_BUDGET = 2e7
MAX_HORIZON_S = 5e-3
# The step of this estimate: 200 ns moves every queue and rate as 100 ns does to 0.5% on
# the incasts of tests/engine/collectives/test_stage_transport.py, at half the cost. With
# DCQCN's reaction point (engine.transport.reaction) it does not (a 2:1 incast reads 3%
# lower over 5 ms at 200 ns, as 100 and 50 ns agree): a run of it keeps the
# configuration's step (`estimate_step_s`).
STEP_S = 200e-9
_GRID = REFERENCE_BYTES * 2.0 ** -np.arange(40.0)[::-1]  # 1/2^39 .. 1 of the reference


def estimate_config(config: TransportConfig) -> TransportConfig:
    """The configuration an estimate runs: at `estimate_step_s`, sampled every 5 us (only
    window means are read)."""
    return replace(config, sample_interval_s=5e-6, dt_s=estimate_step_s(config))


def estimate_step_s(config: TransportConfig) -> float:
    """The step an estimate runs at: `STEP_S`, or the configuration's own where DCQCN's
    reaction point runs (see `STEP_S`)."""
    return config.dt_s if config.reaction_point else STEP_S


@dataclass(frozen=True)
class StageTransport:
    """The transport's verdict on one stage.

    `curve_bytes` / `curve_s`: the time the slowest flow class needs to deliver its share
    of `curve_bytes` bytes per unit of share (empty when the transport did not run, see
    `note`); past the last point it goes on at `tail_s_per_byte`. `ideal_s_per_byte` is
    the max-min ideal of the same flows, all active. Pause and mark figures are the
    largest over the stage's links; `dropped_share` is bytes dropped (and resent) over
    bytes sent during the run; `lossless` whether every port's buffer holds its PFC headroom.
    """

    curve_bytes: np.ndarray
    curve_s: np.ndarray
    tail_s_per_byte: float
    ideal_s_per_byte: float
    max_pause_fraction: float = 0.0
    max_mark_fraction: float = 0.0
    dropped_share: float = 0.0
    lossless: bool = True
    note: str = ""

    @property
    def ran(self) -> bool:
        """Whether the transport ran (else the stage is timed at the ideal)."""
        return self.curve_bytes.size > 0

    def time_s(self, unit_bytes: np.ndarray) -> np.ndarray:
        """Seconds for the slowest flow to deliver `unit_bytes` per unit of share."""
        x = np.asarray(unit_bytes, dtype=np.float64)
        if not self.ran:
            return np.zeros_like(x)
        inside = np.interp(x, self.curve_bytes, self.curve_s, left=0.0)
        beyond = self.curve_s[-1] + (x - self.curve_bytes[-1]) * self.tail_s_per_byte
        below = np.interp(x, [0.0, self.curve_bytes[0]], [0.0, self.curve_s[0]])
        return np.where(
            x > self.curve_bytes[-1], beyond, np.where(x < self.curve_bytes[0], below, inside)
        )


def _skipped(note: str) -> StageTransport:
    return StageTransport(np.zeros(0), np.zeros(0), 0.0, 0.0, note=note)


def stage_transport(
    fabric: Fabric,
    catalog: Catalog,
    routed: RoutedFlows,
    flow_bytes: np.ndarray,
    capacity_Bps: np.ndarray,
    progress: Progress | None = None,
    pacing: tuple[Stage, float] | None = None,
) -> StageTransport:
    """Run the stage's flows (`flow_bytes` per byte of message) through the transport
    model on links of `capacity_Bps`; see the module docstring for when it is skipped.
    `pacing` (the stage, routed as `routed`, and the bytes of one connection's buffer)
    keeps a ring's or a tree's flows in step as NCCL's buffers do (`engine.collectives.pipeline`)."""
    scenario = fabric.scenario
    if scenario.transport.model == "ideal":
        return _skipped("ideal transport (transport.model = ideal)")
    bundled = bundle_sprayed(routed, fabric, capacity_Bps)  # sprayed flows over sets of links
    if isinstance(bundled, str):
        return _skipped(f"sprayed flows run at the ideal: {bundled}")
    routed, ports = bundled.routed, bundled.ports
    if routed.n_flows > MAX_FLOWS:
        return _skipped(f"{routed.n_flows:,} flows (over {MAX_FLOWS:,}) run at the ideal")
    scaled = replace(routed, flow_bytes=flow_bytes * REFERENCE_BYTES)
    paced = pacing is not None and pacing[0].pipeline is not None
    apart = routed.connection if paced else None
    network = scenario_network(fabric, scaled, catalog, capacity_Bps, keep_apart=apart, ports=ports)
    n_classes = network.classes.n_classes
    if n_classes == 0:
        return _skipped("no flow crosses a cable")
    if n_classes > MAX_CLASSES:
        return _skipped(f"{n_classes:,} distinct paths (over {MAX_CLASSES:,}) run at the ideal")
    if paced:
        stage, buffer_bytes = pacing
        network = replace(network, gates=network_gates(stage, routed, network, buffer_bytes))
    return network_verdict(network, fabric, catalog, progress)


def network_verdict(
    network: TransportNetwork,
    fabric: Fabric,
    catalog: Catalog,
    progress: Progress | None = None,
) -> StageTransport:
    """The verdict on a stage's transport network (its classes' bytes per unit of share
    times `REFERENCE_BYTES`) under the scenario's transport, kept in `VERDICTS`."""
    poll(progress, "transport")
    # Only window means are read: a sample every 5 us instead of every 1 us saves the copies.
    config = estimate_config(scenario_transport_config(fabric.scenario, catalog))
    key = network_digest(network, config)
    known = VERDICTS.get(key)
    if known is not None:
        return known
    # Cancel is heard between the run's windows; the collective reports its own progress.
    try:
        verdict = _run(
            network, config, None if progress is None else Progress(None, progress.should_stop)
        )
    except HistoryTooLongError as exc:
        verdict = _skipped(f"not run through the transport: {exc}; timed at the ideal")
    VERDICTS.put(key, verdict)
    return verdict


# Verdicts kept per process (least recently used out first), keyed by everything a run reads.
VERDICTS: ByteLRU[StageTransport] = ByteLRU(64 * 2**20)


def network_digest(network: TransportNetwork, config: TransportConfig) -> str:
    """A key of exactly what a transport run reads: the kernel's tables (every per-link and
    per-class number the mechanisms use, latencies only as the credit round trips, PFC
    reaction and feedback delays they become), the classes' paths, sizes and starts, the
    link capacities (the ideal beside it) and the configuration (the driver's settle rule).
    A latency that no mechanism in force reads (feedback delays without DCQCN or IB CC)
    leaves the key alone, so such an edit reuses the verdict."""
    tables, _ = build_tables(network, config)
    h = hashlib.sha1(repr(config).encode())
    _hash_into(h, tables)
    c = network.classes
    for array in (c.ptr, c.links, c.multiplicity, c.bytes, c.start_s, network.links.capacity_Bps):
        _hash_into(h, array)
    if network.gates is not None:
        g = network.gates
        for array in (g.ptr, g.cls, g.slack_bytes):
            _hash_into(h, array)
    return h.hexdigest()


def _hash_into(h, value) -> None:
    """Feed the arrays and numbers of `value` (nested named tuples of them) into `h`."""
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    elif isinstance(value, tuple):
        for item in value:
            _hash_into(h, item)
    else:
        h.update(repr(value).encode())


def _run(
    network: TransportNetwork, config: TransportConfig, progress: Progress | None = None
) -> StageTransport:
    """Run the network from its start until its pace settles (or the budget is spent) and
    read the completion curve off the delivered bytes."""
    n_classes = network.classes.n_classes
    horizon = min(MAX_HORIZON_S, CLASS_STEP_BUDGET / n_classes * config.dt_s)
    result = simulate(network, config, horizon_s=horizon, until_settled=True, progress=progress)
    note = ""
    window = result.settled_window_s
    if window is not None and not result.queues_at_rest:
        note = (
            f"rates at rest from {window[0] * 1e6:.0f} to {window[1] * 1e6:.0f} us with "
            "queues still moving; continued at those rates"
        )
    if window is None:
        window = (0.75 * result.end_s, result.end_s)
        if not result.finished:
            note = f"not settled within {result.end_s * 1e3:.2g} ms; its last quarter continued"
    tail_rate = result.mean_rate_Bps(*window)
    unit = network.classes.bytes / REFERENCE_BYTES  # bytes of each class per unit of share
    if np.any(tail_rate <= 0.0) and not result.finished:
        return _skipped("a flow stood still in the transport (a deadlock?); timed at the ideal")
    # Bytes move one step per hop in the model: that pipeline fill is the discretization's,
    # not a cost of the transport (the collective adds the path latency itself).
    fill = (np.diff(network.classes.ptr) - 1) * config.dt_s
    # Past the run a class goes on at its tail rate (a finished class is done at its finish).
    times = slowest_times(
        np.ascontiguousarray(result.time_s, dtype=np.float64),
        np.ascontiguousarray(result.class_rate_Bps, dtype=np.float64),
        np.ascontiguousarray(unit, dtype=np.float64),
        _GRID,
        np.ascontiguousarray(tail_rate, dtype=np.float64),
        fill.astype(np.float64),
    )
    with np.errstate(divide="ignore"):
        tail = float(np.max(unit / tail_rate)) if not result.finished else 0.0
    ideal = float(np.max(unit / result.ideal_rate_Bps))
    dropped = float(result.dropped_bytes.sum())
    sent = float(result.delivered_bytes.sum()) + dropped
    return StageTransport(
        curve_bytes=_GRID.copy(),
        curve_s=times,
        tail_s_per_byte=tail,
        ideal_s_per_byte=ideal,
        max_pause_fraction=float(result.pause_fraction.max(initial=0.0)),
        max_mark_fraction=float(result.ecn_mark_fraction.max(initial=0.0)),
        dropped_share=dropped / sent if sent > 0 else 0.0,
        lossless=bool(np.all(result.lossless)),
        note=note,
    )


def transport_summary(
    t: StageTransport | None, efficiency: float = 1.0
) -> dict[str, float | str | bool]:
    """The JSON-ready transport figures of a stage (only a note when no flow of it ran
    through the transport: NVLink stages and in-network reduction)."""
    if t is None:
        return {"transport_note": "no flows through the transport (NVLink or switch-reduced)"}
    return {
        "transport_efficiency": efficiency,
        "max_pause_fraction": t.max_pause_fraction,
        "max_ecn_mark_fraction": t.max_mark_fraction,
        "dropped_share": t.dropped_share,
        "lossless": t.lossless,
        "transport_note": t.note,
    }
