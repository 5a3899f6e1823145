"""What the transport mechanisms do to one routed stage of a collective.

A stage's network flows are handed to the transport model (`engine.transport`) as one long
transfer each, `REFERENCE_BYTES` per byte of share: NCCL streams a collective's chunks
through the same connections back to back, so the connections behave as long flows. The
model runs through the start transient until the flows settle; their steady rates against
the ideal's (max-min, all flows active) give the slowdown of the stage's slowest flow,
which stretches the ideal fluid time of the stage (flows speed up as others finish in both).
A stage that has not settled after `CLASS_STEP_BUDGET` class-steps (or `MAX_HORIZON_S`)
takes the mean rates of the second half of what it ran, and says so in its note. What held the flows back (paused links, ECN marks,
drops) is summarised for the result.

The transport is skipped, and the stage runs at the ideal, when the scenario asks for the
ideal transport, when the flows are sprayed (per-packet spraying is not a single path per
flow; the transport model does not run it yet), or when the stage has more distinct paths
than `MAX_CLASSES` (an all-to-all over thousands of GPUs): each case says so in the note.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.catalog.devices import Catalog
from engine.routing.router import RoutedFlows
from engine.runtime.progress import Progress, poll
from engine.topology.expand import Fabric
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.simulate import simulate

REFERENCE_BYTES = 2**30  # bytes per unit of share: a transfer that outlasts its transient
MAX_CLASSES = 20_000
# Steps x classes one stage may cost before its steady state is taken from what was seen
# (about a second on one core); the simulated time never exceeds MAX_HORIZON_S.
CLASS_STEP_BUDGET = 2e7
MAX_HORIZON_S = 2e-3


@dataclass(frozen=True)
class StageTransport:
    """The transport's verdict on one stage (per byte of message where it says so).

    `seconds_per_byte` is None when the transport did not run (see `note`). Pause and mark
    figures are the largest over the stage's links; `dropped_share` is bytes dropped (and
    resent) over bytes sent.
    """

    seconds_per_byte: float | None
    ideal_seconds_per_byte: float | None
    max_pause_fraction: float = 0.0
    max_mark_fraction: float = 0.0
    dropped_share: float = 0.0
    lossless: bool = True
    note: str = ""

    @property
    def efficiency(self) -> float:
        """Ideal over mechanistic bandwidth time (1 when the transport did not run)."""
        if not self.seconds_per_byte or not self.ideal_seconds_per_byte:
            return 1.0
        return self.ideal_seconds_per_byte / self.seconds_per_byte


def stage_transport(
    fabric: Fabric,
    catalog: Catalog,
    routed: RoutedFlows,
    flow_bytes: np.ndarray,
    capacity_Bps: np.ndarray,
    progress: Progress | None = None,
) -> StageTransport:
    """Run the stage's flows (`flow_bytes` per byte of message) through the transport
    model on links of `capacity_Bps`; see the module docstring for when it is skipped."""
    scenario = fabric.scenario
    if scenario.transport.model == "ideal":
        return StageTransport(None, None, note="ideal transport (transport.model = ideal)")
    if np.any(routed.entry_weight != 1.0):
        return StageTransport(
            None, None, note="sprayed flows run at the ideal (no per-packet transport model)"
        )
    scaled = replace(routed, flow_bytes=flow_bytes * REFERENCE_BYTES)
    network = scenario_network(fabric, scaled, catalog, capacity_Bps)
    n_classes = network.classes.n_classes
    if n_classes == 0:
        return StageTransport(None, None, note="no flow crosses a cable")
    if n_classes > MAX_CLASSES:
        return StageTransport(
            None,
            None,
            note=f"{n_classes:,} distinct paths (over {MAX_CLASSES:,}) run at the ideal",
        )
    poll(progress, "transport")
    config = scenario_transport_config(scenario, catalog)
    horizon = min(MAX_HORIZON_S, CLASS_STEP_BUDGET / n_classes * config.dt_s)
    result = simulate(network, config, horizon_s=horizon, until_settled=True)
    ideal_s = float(result.ideal_finish_s.max())
    note = ""
    if result.finished:
        transport_s = result.makespan_s
    else:
        window = result.settled_window_s
        if window is None:
            window = (0.5 * result.end_s, result.end_s)
            note = f"not settled within {result.end_s * 1e3:.2g} ms; its second half taken"
        rate = result.mean_rate_Bps(*window)
        size = network.classes.bytes
        # The steady state of all flows together against the ideal's all-active rates: the
        # slowest class sets the stage's pace in both; that ratio stretches the ideal time.
        with np.errstate(divide="ignore"):
            slowdown = float(np.max(size / rate)) / float(np.max(size / result.ideal_rate_Bps))
        transport_s = ideal_s * max(slowdown, 1.0)
    if not np.isfinite(transport_s):
        return StageTransport(None, None, note="the transport did not finish (a deadlock?)")
    sent = float(network.classes.bytes.sum())
    return StageTransport(
        seconds_per_byte=transport_s / REFERENCE_BYTES,
        ideal_seconds_per_byte=ideal_s / REFERENCE_BYTES,
        max_pause_fraction=float(result.pause_fraction.max(initial=0.0)),
        max_mark_fraction=float(result.ecn_mark_fraction.max(initial=0.0)),
        dropped_share=float(result.dropped_bytes.sum()) / sent if sent > 0 else 0.0,
        lossless=bool(np.all(result.lossless)),
        note=note,
    )


def transport_summary(t: StageTransport | None) -> dict[str, float | str | bool]:
    """The JSON-ready transport figures of a stage (only a note when no flow of it ran
    through the transport: NVLink stages and in-network reduction)."""
    if t is None:
        return {"transport_note": "no flows through the transport (NVLink or switch-reduced)"}
    return {
        "transport_efficiency": t.efficiency,
        "max_pause_fraction": t.max_pause_fraction,
        "max_ecn_mark_fraction": t.max_mark_fraction,
        "dropped_share": t.dropped_share,
        "lossless": t.lossless,
        "transport_note": t.note,
    }
