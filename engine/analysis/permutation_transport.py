"""The permutation test through the transport mechanisms: what each flow gets at steady state.

Beside the permutation's max-min rates (the ideal transport) the evaluation runs the same
routed flows through `engine.transport` from a line-rate start until their rates settle (or a
budget of class-steps is spent, as a collective stage does: `engine.collectives.stage_transport`)
and reports each connection's steady throughput as a fraction of its NIC's line rate, the
aggregate against the ideal's, and the most paused and most marked links. Sprayed routes run
over their sets of links as links of several ports (`engine.transport.spray`). It is
skipped, with a note, for the ideal transport, sprayed routes whose sets cannot be taken as
one link, and permutations of more distinct paths than the model runs in seconds. Steady states are kept per process, keyed by everything the run
reads, so an evaluation after an edit that leaves the flows' links alone reuses its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.stage_transport import (
    CLASS_STEP_BUDGET,
    MAX_CLASSES,
    MAX_FLOWS,
    MAX_HORIZON_S,
    estimate_config,
    network_digest,
)
from engine.flows.utilization import summary_stats
from engine.routing.router import RoutedFlows
from engine.runtime.lru import ByteLRU
from engine.runtime.progress import Progress
from engine.topology.expand import Fabric
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.network import TransportNetwork
from engine.transport.params import TransportConfig
from engine.transport.simulate import simulate
from engine.transport.spray import bundle_sprayed
from engine.transport.tables import HistoryTooLongError


def permutation_transport(
    fabric: Fabric,
    routed: RoutedFlows,
    catalog: Catalog,
    line_rate_Bps: np.ndarray,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Steady per-connection throughput fractions of `routed` under the transport, as the
    JSON-ready parts of `engine.analysis.results.fabric.PermutationTransport`; a cancel
    through `progress` is heard between the transport's windows."""
    scenario = fabric.scenario
    if scenario.transport.model == "ideal":
        return {"note": "ideal transport (transport.model = ideal)"}
    bundled = bundle_sprayed(
        routed, fabric, fabric.link_capacity
    )  # sprayed flows over sets of links
    if isinstance(bundled, str):
        return {"note": f"sprayed flows not run: {bundled}"}
    routed, ports = bundled.routed, bundled.ports
    if routed.n_flows > MAX_FLOWS:
        return {"note": f"{routed.n_flows:,} flows (over {MAX_FLOWS:,}): not run"}
    network = scenario_network(fabric, routed, catalog, ports=ports)
    n_classes = network.classes.n_classes
    if n_classes == 0:
        return {"note": "no flow crosses a cable"}
    if n_classes > MAX_CLASSES:
        return {"note": f"{n_classes:,} distinct paths (over {MAX_CLASSES:,}): not run"}
    config = estimate_config(scenario_transport_config(scenario, catalog))
    key = network_digest(network, config)
    known = STEADY_STATES.get(key)
    if known is None:
        stop = None if progress is None else Progress(None, progress.should_stop)
        try:
            known = _steady_rates(network, config, stop)
        except HistoryTooLongError as exc:
            return {"note": f"not run: {exc}"}
        STEADY_STATES.put(key, known)
    class_rate, figures = known
    return _summary(network, routed, line_rate_Bps, class_rate, figures)


# Steady states kept per process (least recently used out first), keyed by what a run reads.
STEADY_STATES: ByteLRU[tuple[np.ndarray, dict[str, Any]]] = ByteLRU(64 * 2**20)


def _steady_rates(
    network: TransportNetwork, config: TransportConfig, progress: Progress | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """Each class's steady rate and the run's pause, mark and drop figures."""
    n_classes = network.classes.n_classes
    horizon = min(MAX_HORIZON_S, CLASS_STEP_BUDGET / n_classes * config.dt_s)
    result = simulate(network, config, horizon_s=horizon, until_settled=True, progress=progress)
    note = ""
    if result.finished:
        span = np.maximum(result.finish_s, 1e-300)
        class_rate = network.classes.bytes / span
        note = "every flow finished inside the run: throughput is bytes over finish time"
    else:
        window = result.settled_window_s
        if window is None:
            window = (0.75 * result.end_s, result.end_s)
            note = f"not settled within {result.end_s * 1e3:.2g} ms; its last quarter taken"
        class_rate = result.mean_rate_Bps(*window)
    ideal = float(result.ideal_rate_Bps.sum())
    dropped = float(result.dropped_bytes.sum())
    sent = float(result.delivered_bytes.sum()) + dropped
    return class_rate, {
        "efficiency": float(class_rate.sum()) / ideal if ideal > 0 else 1.0,
        "max_pause_fraction": float(result.pause_fraction.max(initial=0.0)),
        "max_ecn_mark_fraction": float(result.ecn_mark_fraction.max(initial=0.0)),
        "dropped_share": dropped / sent if sent > 0 else 0.0,
        "note": note,
    }


def _summary(network, routed, line_rate_Bps, class_rate, figures) -> dict[str, Any]:
    """Per-connection throughput fractions from the classes' steady rates."""
    per_flow = class_rate / network.classes.multiplicity
    flow_rate = np.where(network.flow_class >= 0, per_flow[np.maximum(network.flow_class, 0)], 0.0)
    per_conn = np.bincount(routed.connection, weights=flow_rate, minlength=routed.n_connections)
    reached = np.setdiff1d(np.arange(routed.n_connections), routed.unreachable)
    fraction = per_conn[reached] / line_rate_Bps[reached]
    return {"throughput_fraction": summary_stats(fraction), **figures}
