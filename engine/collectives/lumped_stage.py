"""An all-to-all stage too large to list, profiled by kinds of flows.

Past `engine.collectives.schedules.MAX_ALL_AT_ONCE_PAIRS` connections an all-to-all cannot
be routed pair by pair (16,384 GPUs make 268 million). Where the fabric is regular and
every flow spreads over its equal-cost links, it does not need to be: its flows and links
fall into a handful of kinds, each link of a kind carrying what the others carry
(`engine.collectives.lumped_all_to_all`). This profiles such a stage from one link and one
class of each kind: the max-min ideal of the kinds (a class of m flows taking m times its
rate on each link of its path), the bytes every fabric link carries (its kind's, over its
ports), the path latencies of the representatives, the transport's verdict on the kinds'
network, and the stage's pairs inside servers over NVLink beside it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np

from engine.catalog.devices import Catalog
from engine.collectives.lumped_all_to_all import draws_per_kind, lumped_all_to_all
from engine.collectives.stage_rates import stage_rates
from engine.collectives.stage_times import StageProfile
from engine.collectives.stage_transport import REFERENCE_BYTES, network_verdict
from engine.model.errors import Problem, ScenarioError
from engine.routing.router import Router
from engine.runtime.progress import Progress, poll
from engine.topology.expand import Fabric
from engine.transport.from_scenario import scenario_transport_config


class _Engine(Protocol):
    """What this reads of a `engine.collectives.timing.CollectiveEngine` (named here by
    its parts, so that the two modules do not import each other)."""

    fabric: Fabric
    catalog: Catalog
    capacity: np.ndarray
    router: Router


def lumped_profile(
    engine: _Engine,
    ranks: np.ndarray | None,
    share: float,
    progress: Progress | None = None,
) -> StageProfile:
    """The all-to-all of `ranks` (GPU ids; every GPU when None), `share` bytes per pair per
    byte of message, on the engine's link capacities, by kinds; a `ScenarioError` naming
    ``ranks`` when the ranks, the fabric or its routing do not fall into kinds."""
    fabric, catalog, capacity = engine.fabric, engine.catalog, engine.capacity
    ranks = np.arange(fabric.n_gpus) if ranks is None else np.asarray(ranks, dtype=np.int64)
    pairs = f"{ranks.size:,} ranks make {ranks.size * (ranks.size - 1):,} connections"
    if np.unique(ranks).size != ranks.size:
        raise _refuse(f"{pairs}, too many to route one by one, and some ranks repeat")
    draws = draws_per_kind(scenario_transport_config(fabric.scenario, catalog))
    lumped = lumped_all_to_all(fabric, share, catalog, draws, capacity, engine.router, ranks)
    if isinstance(lumped, str):
        raise _refuse(f"{pairs}, too many to route one by one, nor can they run by kinds: {lumped}")
    poll(progress, "all-to-all by kinds")
    net = lumped.lumped.network
    cl, links = net.classes, net.links
    weights = np.repeat(cl.multiplicity, np.diff(cl.ptr))
    per_flow = cl.bytes / cl.multiplicity
    makespan, kind_bytes = stage_rates(cl.ptr, cl.links, weights, links.capacity_Bps, per_flow)
    link_bytes = np.zeros(fabric.n_links)
    for j, members in enumerate(lumped.kind_links):
        link_bytes[members] = kind_bytes[j] / links.ports[j]
    nvlink_s, nvlink_latency = _inside_servers(engine.router, capacity, share, ranks)
    counted = lumped.connection_weight[lumped.routed.connection] > 0
    transport = None
    if fabric.scenario.transport.model != "ideal":
        scaled = replace(net, classes=replace(cl, bytes=cl.bytes * REFERENCE_BYTES))
        transport = network_verdict(scaled, fabric, catalog, progress)
    if transport is not None and len(lumped.notes) > 1:  # how the routing was taken
        said = "; ".join(
            [*lumped.notes[1:], transport.note] if transport.note else lumped.notes[1:]
        )
        transport = replace(transport, note=said)
    return StageProfile(
        seconds_per_byte=max(makespan, nvlink_s),
        net_latency_s=float(lumped.routed.latency[counted].max()),
        nvlink_latency_s=nvlink_latency,
        link_bytes_per_byte=link_bytes,
        transport=transport,
    )


def _inside_servers(
    router: Router, capacity: np.ndarray, share: float, ranks: np.ndarray
) -> tuple[float, float]:
    """Seconds per byte of message for the pairs of `ranks` inside a server (each sends
    `share` to every server-mate among them over its NVLink, and receives as much) and
    their path latency."""
    fabric = router.fabric
    server = fabric.gpu_server[ranks]
    per_server = np.bincount(server)
    mates = int(per_server.max()) - 1
    if mates <= 0:
        return 0.0, 0.0
    up = capacity[fabric.gpu_nvlink_up[ranks]]
    down = capacity[fabric.gpu_nvlink_down[ranks]]
    seconds = mates * share / float(min(up.min(), down.min()))
    a, b = ranks[server == int(np.argmax(per_server))][:2]
    routed = router.route(np.array([a]), np.array([b]), fabric.scenario.routing)
    return seconds, float(routed.latency[0])


def _refuse(message: str) -> ScenarioError:
    return ScenarioError(Problem("workload", message, "ranks"))
