"""A transport network from an expanded fabric and its routed flows.

The routed flows (`engine.routing.router.RoutedFlows`) name fabric links; the transport
model keeps the cables each flow crosses (NVLink hops inside a server are left out: they
are never the bottleneck of a scale-out transfer and do not take part in credits or PFC),
compacts them to the links in use, and takes every link's buffer share, ECN thresholds and
latency from the catalog models of the switches at its ends. In a hybrid fabric (an
InfiniBand pod and Ethernet joined through gateways) each link keeps its segment's
technology: ECN thresholds only on Ethernet egress queues, and the flow control of its
segment (`engine.transport.tables.derive_links`). A sprayed flow (split over several
paths) is not a single path: `engine.transport.spray` first turns the sets of links it
splits over into single links of several ports, given here as `ports`.
"""

from __future__ import annotations

import numpy as np

from engine.catalog.devices import Catalog
from engine.model.catalogs import scenario_catalog
from engine.routing.router import RoutedFlows
from engine.topology.expand import NODE_SWITCH, Fabric
from engine.transport.defaults import ECN_OFF, ecn_params, switch_port_buffer_bytes
from engine.transport.network import TransportNetwork, group_into_classes, make_links

COPPER_MAX_M = 3.0  # auto media: copper up to 3 m, fiber beyond (as the fabric expansion)


def _propagation_s(fabric: Fabric, catalog: Catalog, links: np.ndarray) -> np.ndarray:
    """One-way propagation delay of each link from its bundle's length and media."""
    tech = catalog.technology(fabric.scenario.fabric.technology)
    fiber = float(tech.value("fiber_propagation_ns_per_m"))
    copper = float(tech.value("copper_propagation_ns_per_m"))
    per_bundle = []
    for b in fabric.scenario.bundles:
        media = "copper" if b.length_m <= COPPER_MAX_M else "fiber"
        if b.cable != "auto":
            media = "copper" if catalog.get(b.cable).value("media") == "copper" else "fiber"
        per_bundle.append(b.length_m * (copper if media == "copper" else fiber) * 1e-9)
    return np.asarray(per_bundle)[fabric.link_bundle[links]]


def _switch_figures(
    fabric: Fabric, catalog: Catalog, nodes: np.ndarray, gbps: np.ndarray, hybrid: bool = False
):
    """Buffer share and ECN thresholds of the switch at each node (inf / off elsewhere),
    looked up once per switch group and port speed; in a hybrid fabric every switch's own
    thresholds (the caller keeps them on Ethernet links only)."""
    groups = fabric.scenario.groups
    roce = hybrid or fabric.scenario.fabric.technology == "roce"
    buffers = np.full(nodes.shape[0], np.inf)
    ecn = [ECN_OFF] * nodes.shape[0]
    switch = np.flatnonzero(fabric.node_kind[nodes] == NODE_SWITCH)
    if switch.size == 0:
        return buffers, ecn
    speeds, speed_index = np.unique(gbps[switch], return_inverse=True)
    code = fabric.node_group[nodes[switch]].astype(np.int64) * speeds.shape[0] + speed_index
    unique, inverse = np.unique(code, return_inverse=True)
    figures = []
    for pair in unique.tolist():
        group, speed = divmod(pair, speeds.shape[0])
        speed = speeds[speed]
        model = groups[int(group)].model
        device = catalog.get(model, "switch")
        figures.append(
            (
                switch_port_buffer_bytes(catalog, model, float(speed)),
                ecn_params(device) if roce else ECN_OFF,
            )
        )
    inverse = inverse.reshape(-1)
    buffers[switch] = np.array([f[0] for f in figures])[inverse]
    for i, k in zip(switch.tolist(), inverse.tolist(), strict=True):
        ecn[i] = figures[k][1]
    return buffers, ecn


def network_from_routes(
    fabric: Fabric,
    routed: RoutedFlows,
    catalog: Catalog,
    capacity_Bps: np.ndarray | None = None,
    start_s: np.ndarray | None = None,
    keep_apart: np.ndarray | None = None,
    ports: np.ndarray | None = None,
) -> TransportNetwork:
    """The transport network of `routed` on `fabric`: one class per distinct cable path
    (and start time: `start_s` per routed flow, all 0 when not given; and value of
    `keep_apart` per routed flow when given).

    A flow's feedback delay is twice its path latency (the fabric's per-link latency:
    propagation plus the switch or NIC at the far end). `capacity_Bps` (per fabric link)
    replaces the fabric's link capacities; `ports` (per fabric link, from
    `engine.transport.spray.bundle_sprayed`) makes a link stand for that many equal ports.
    """
    if np.any(routed.entry_weight != 1.0):
        raise ValueError(
            "sprayed flows split over several paths; give their sets of links as single "
            "links first (engine.transport.spray.bundle_sprayed)"
        )
    catalog = scenario_catalog(fabric.scenario, catalog)
    cable = fabric.network_link_mask()[routed.entry_link]
    owner = np.repeat(np.arange(routed.n_flows), np.diff(routed.flow_ptr))
    counts = np.bincount(owner[cable], minlength=routed.n_flows)
    keep_flow = counts > 0  # flows inside one server cross no cable
    used, local = np.unique(routed.entry_link[cable], return_inverse=True)
    ptr = np.zeros(int(keep_flow.sum()) + 1, dtype=np.int64)
    np.cumsum(counts[keep_flow], out=ptr[1:])
    speed = np.array([b.speed_gbps for b in fabric.scenario.bundles])[fabric.link_bundle[used]]
    src, dst = fabric.link_src[used], fabric.link_dst[used]
    ethernet = None
    if fabric.bundle_ethernet is not None:
        ethernet = fabric.bundle_ethernet[fabric.link_bundle[used]]
    into_buffer, _ = _switch_figures(fabric, catalog, dst, speed)
    out_buffer, out_ecn = _switch_figures(fabric, catalog, src, speed, ethernet is not None)
    if ethernet is not None:
        out_ecn = [e if on else ECN_OFF for e, on in zip(out_ecn, ethernet.tolist(), strict=True)]
    latency = fabric.link_latency[used]
    links = make_links(
        capacity_Bps=(fabric.link_capacity if capacity_Bps is None else capacity_Bps)[used],
        propagation_s=_propagation_s(fabric, catalog, used),
        latency_s=latency,
        speed_gbps=speed,
        into_switch=fabric.node_kind[dst] == NODE_SWITCH,
        from_switch=fabric.node_kind[src] == NODE_SWITCH,
        buffer_bytes=into_buffer,
        egress_buffer_bytes=out_buffer,
        ecn=out_ecn,
        ethernet=ethernet,
        ports=None if ports is None else ports[used],
    )
    path_latency = np.add.reduceat(latency[local], ptr[:-1]) if local.size else np.zeros(0)
    classes, of_flow = group_into_classes(
        ptr,
        local.astype(np.int64),
        routed.flow_bytes[keep_flow],
        None if start_s is None else np.asarray(start_s, dtype=np.float64)[keep_flow],
        2.0 * path_latency,
        None if keep_apart is None else np.asarray(keep_apart)[keep_flow],
    )
    flow_class = np.full(routed.n_flows, -1, dtype=np.int64)
    flow_class[keep_flow] = of_flow
    return TransportNetwork(links, classes, flow_class)
