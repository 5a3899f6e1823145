"""Per-packet spraying under the transport: the equal-cost links a flow sprays over, as one.

A sprayed flow splits evenly over every equal-cost next hop (`engine.routing.spray`). In a
fat-tree every flow that crosses one of a hop's parallel links crosses all of them, in equal
shares: the uplinks of its leaf, its pod's spine-to-core links, the links down to its
receiver's leaf. Each link of such a set then carries the same share of the same flows, so
its queue, its pauses and its marks are those of every other link of the set. The fluid
model runs the set as one link of k ports: k times one port's capacity, buffer, ECN
thresholds, PFC thresholds and headroom (`LinkSpec.ports`). For even spraying that is the
same model, not an approximation of it; what it leaves out is what a fluid model leaves out
anyway (packet-level imbalance between the links of a set).

It is exact only when every link belongs to one set: `bundle_sprayed` refuses, naming the
reason, when flows spray over sets that overlap without being equal (a failed or uneven
wiring), when a flow's shares at a hop are not even, or when the ports of a set differ
(capacity, speed, latency, cable, the switch models at their ends; links of different
bundles that agree on all of these, such as a NIC's two planes, form one set). The caller
then runs the flows at the ideal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.routing.router import RoutedFlows
from engine.topology.expand import Fabric
from engine.transport.spray_kernels import (
    UNEVEN_SHARE,
    UNEVEN_TOTAL,
    count_hops,
    hop_sets,
    sets_agree,
)


@dataclass(frozen=True)
class Bundled:
    """Sprayed flows as single paths over sets of links.

    `routed` has one entry per hop and flow (weight 1): the set's lowest fabric link id names
    it. `ports` gives, per fabric link, the number of links in the set it names (1 for
    every other link); ``None`` when no flow was sprayed (`routed` is then the one given)."""

    routed: RoutedFlows
    ports: np.ndarray | None


def bundle_sprayed(routed: RoutedFlows, fabric: Fabric, capacity_Bps: np.ndarray) -> Bundled | str:
    """`routed`'s sprayed flows as single paths over sets of equal links (see the module
    docstring), or why they cannot be: a sentence for the caller's note. Routes without a
    sprayed flow come back as they are."""
    ptr, link, weight = routed.flow_ptr, routed.entry_link, routed.entry_weight
    if np.all(weight == 1.0):
        return Bundled(routed, None)
    n_flows = routed.n_flows
    n_hops = count_hops(ptr, weight)
    hops_of_flow = np.zeros(n_flows, dtype=np.int64)
    lowest = np.zeros(n_hops, dtype=np.int64)
    size = np.zeros(n_hops, dtype=np.int64)
    signature = np.zeros(n_hops, dtype=np.uint64)
    found = hop_sets(ptr, link, weight, hops_of_flow, lowest, size, signature)
    if found == UNEVEN_TOTAL:
        return "a flow's shares do not add up to whole hops"
    if found == UNEVEN_SHARE:
        return "a flow splits unevenly over the links of a hop"
    set_of = np.full(fabric.n_links, -1, dtype=np.int64)
    if not sets_agree(ptr, link, hops_of_flow, lowest, size, signature, set_of):
        return "flows spray over sets of links that overlap without being equal"
    members = np.flatnonzero(set_of >= 0)
    for name, values in _port_figures(fabric, capacity_Bps, members).items():
        low = np.full(fabric.n_links, np.inf)
        high = np.full(fabric.n_links, -np.inf)
        np.minimum.at(low, set_of[members], values)
        np.maximum.at(high, set_of[members], values)
        if np.any(low[lowest] != high[lowest]):
            return f"the links a flow sprays over differ in {name}"
    ports = np.ones(fabric.n_links, dtype=np.int64)
    ports[lowest] = size
    flow_ptr = np.zeros(n_flows + 1, dtype=np.int64)
    np.cumsum(hops_of_flow, out=flow_ptr[1:])
    single = replace(
        routed,
        flow_ptr=flow_ptr,
        entry_link=lowest.astype(routed.entry_link.dtype),
        entry_weight=np.ones(lowest.size),
        key=f"{routed.key}/sets" if routed.key else "",
    )
    return Bundled(single, ports)


def _port_figures(fabric: Fabric, capacity_Bps: np.ndarray, link: np.ndarray) -> dict:
    """Per entry, each figure the transport takes from a port (the links of one set must
    agree on all): capacity, speed, latency, cable length and kind, the switch models at
    both ends (their buffers and ECN) and, in a hybrid fabric, the segment. Links of
    different bundles may agree (a NIC's two planes)."""
    bundles = fabric.scenario.bundles
    groups = fabric.scenario.groups
    bundle = fabric.link_bundle[link]
    real = bundle >= 0
    speed = np.zeros(link.size)
    length = np.zeros(link.size)
    cable = np.zeros(link.size, dtype=np.int64)
    kinds: dict[str, int] = {}
    for b in np.unique(bundle[real]).tolist():
        at = bundle == b
        speed[at], length[at] = bundles[b].speed_gbps, bundles[b].length_m
        cable[at] = kinds.setdefault(bundles[b].cable, len(kinds))
    models: dict[str, int] = {}
    model = np.array([models.setdefault(g.model, len(models)) for g in groups], dtype=np.int64)
    segment = np.zeros(link.size, dtype=np.int64)
    if fabric.bundle_ethernet is not None:  # a hybrid fabric: InfiniBand or Ethernet per bundle
        segment[real] = fabric.bundle_ethernet[bundle[real]]
    return {
        "capacity": np.asarray(capacity_Bps, dtype=np.float64)[link],
        "speed": speed,
        "latency": fabric.link_latency[link],
        "cable length": length,
        "cable kind": cable,
        "switch model at the near end": model[fabric.node_group[fabric.link_src[link]]],
        "switch model at the far end": model[fabric.node_group[fabric.link_dst[link]]],
        "segment (InfiniBand or Ethernet)": segment,
    }
