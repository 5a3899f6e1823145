"""An all-to-all stage over every GPU of a regular fabric, profiled by kinds of flows.

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
from engine.collectives.lumped_all_to_all import DRAWS, lumped_all_to_all
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
    """The all-to-all of `ranks` (every GPU of the engine's fabric), `share` bytes per pair
    per byte of message, on the engine's link capacities, by kinds; a `ScenarioError`
    naming ``ranks`` when the ranks are not every GPU or the fabric or its routing does not
    fall into kinds."""
    fabric, catalog, capacity = engine.fabric, engine.catalog, engine.capacity
    n = fabric.n_gpus
    ranks = np.zeros(0, dtype=np.int64) if ranks is None else ranks
    pairs = f"{ranks.size:,} ranks make {ranks.size * (ranks.size - 1):,} connections"
    if ranks.size != n or not np.array_equal(np.sort(ranks), np.arange(n)):
        raise _refuse(f"{pairs}, too many to route one by one; use fewer ranks or every GPU")
    config = scenario_transport_config(fabric.scenario, catalog)
    draws = DRAWS if config.mechanisms.dcqcn and not config.dcqcn.published_mean_field else 1
    lumped = lumped_all_to_all(fabric, share, catalog, draws, capacity, engine.router)
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
    nvlink_s, nvlink_latency = _inside_servers(engine.router, capacity, share)
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


def _inside_servers(router: Router, capacity: np.ndarray, share: float) -> tuple[float, float]:
    """Seconds per byte of message for the pairs inside a server (each GPU sends `share` to
    every server-mate over its NVLink, and receives as much) and their path latency."""
    fabric = router.fabric
    per_server = np.diff(fabric.server_first_gpu)
    mates = int(per_server.max()) - 1
    if mates <= 0:
        return 0.0, 0.0
    up = capacity[fabric.gpu_nvlink_up]
    down = capacity[fabric.gpu_nvlink_down]
    seconds = mates * share / float(min(up.min(), down.min()))
    a = int(fabric.server_first_gpu[int(np.argmax(per_server))])
    routed = router.route(np.array([a]), np.array([a + 1]), fabric.scenario.routing)
    return seconds, float(routed.latency[0])


def _refuse(message: str) -> ScenarioError:
    return ScenarioError(Problem("workload", message, "ranks"))
