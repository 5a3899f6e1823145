"""Expansion of a grouped scenario into the flat arrays the routing and flow kernels use.

Nodes are GPUs (each GPU owns the NIC of its rail and is a network endpoint), one NVLink
switch per server (the scale-up domain) and every fabric switch. A full-duplex cable becomes
two directed links. Capacities are in bytes/s after header efficiency, latencies in seconds
(propagation plus the forwarding latency of the receiving switch, and NIC latency at each
endpoint). The expansion also checks what a real build would hit: more cables on a switch than
it has ports at that speed, more cables on a NIC than its ports, GPUs that cannot reach each
other. Problems name the group or bundle; the arrays are never built from a broken scenario.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.catalog.devices import Catalog, default_catalog
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.networks import NODE, node_write_Bps, split_networks, storage_catalog
from engine.model.scenario import DeviceGroup, LinkBundle, Scenario
from engine.model.validation import check_structure, members
from engine.runtime.memory import memory_limit
from engine.topology.fabric import (  # noqa: F401 (the fabric is read from here too)
    NODE_GPU,
    NODE_NVSWITCH,
    NODE_SWITCH,
    NVLINK_BUNDLE,
    Fabric,
    describe_link,
)
from engine.topology.gateways import Segments, is_gateway
from engine.topology.graph_cache import GRAPHS, graph_key
from engine.topology.graph_kernels import component_labels
from engine.topology.port_checks import port_problems
from engine.topology.size import check_fits, estimate_size


@dataclass
class _Wiring:
    """Cables of one bundle as member index pairs (one row per cable)."""

    a: np.ndarray
    b: np.ndarray


def wire_bundle(bundle: LinkBundle, n_a: int, n_b: int, rails: int, servers: int) -> _Wiring:
    """The member pairs a bundle's pattern connects, `links_per_pair` rows per pair.

    `rails` and `servers` describe side a when it is a server group (members are NICs,
    NIC r of server s is member ``s * rails + r``).
    """
    if bundle.pattern == "full":
        block_a, block_b = -(-n_a // bundle.blocks), n_b // bundle.blocks
        a = np.repeat(np.arange(n_a, dtype=np.int64), block_b)
        b = (a // block_a) * block_b + np.tile(np.arange(block_b, dtype=np.int64), n_a)
    elif bundle.pattern == "striped":
        block_b = n_b // bundle.blocks
        a = np.repeat(np.arange(n_a, dtype=np.int64), block_b)
        b = (a % bundle.blocks) * block_b + np.tile(np.arange(block_b, dtype=np.int64), n_a)
    elif bundle.pattern == "one-to-one":
        a = np.arange(n_a, dtype=np.int64)
        b = a.copy()
    elif bundle.pattern == "rail":
        blocks = n_b // rails
        per_block = -(-servers // blocks)
        a = np.arange(servers * rails, dtype=np.int64)
        server, rail = a // rails, a % rails
        b = (server // per_block) * rails + rail
    else:  # validated before
        raise ValueError(bundle.pattern)
    if bundle.links_per_pair > 1:
        a = np.repeat(a, bundle.links_per_pair)
        b = np.repeat(b, bundle.links_per_pair)
    return _Wiring(a, b)


def _failed_cables(n: int, down: int) -> np.ndarray:
    """Indices of `down` of `n` cables, spread evenly over the bundle."""
    down = min(down, n)
    if down <= 0:
        return np.empty(0, dtype=np.int64)
    return (np.arange(down, dtype=np.int64) * n) // down


def header_efficiency(header_bytes: float, mtu_bytes: float) -> float:
    """The share of a link's bits that carry payload: each packet of `mtu_bytes` of payload
    pays `header_bytes` of headers (and, on Ethernet, preamble and inter-frame gap), so a
    larger MTU wastes less of the line."""
    return mtu_bytes / (mtu_bytes + header_bytes)


class _Builder:
    """Accumulates nodes and links while a scenario is expanded."""

    def __init__(self, scenario: Scenario, catalog: Catalog):
        self.s = scenario
        self.cat = catalog
        tech = catalog.technology(scenario.fabric.technology)
        f = scenario.fabric
        self.header_efficiency = (
            f.header_efficiency
            if f.header_efficiency is not None
            else header_efficiency(
                float(tech.value("header_bytes_per_packet")),
                f.mtu_bytes or float(tech.value("mtu_bytes")),
            )
        )
        self.fiber_ns_per_m = float(tech.value("fiber_propagation_ns_per_m"))
        self.copper_ns_per_m = float(tech.value("copper_propagation_ns_per_m"))
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.segments = Segments(scenario, catalog, self.header_efficiency, self._efficiency)

    def _efficiency(self, profile: str) -> float:
        tech = self.cat.technology(profile)
        mtu = self.s.fabric.mtu_bytes or float(tech.value("mtu_bytes"))
        return header_efficiency(float(tech.value("header_bytes_per_packet")), mtu)

    def switch_latency_s(self, g: DeviceGroup) -> float:
        if self.s.fabric.switch_latency_ns is not None and not is_gateway(g, self.cat):
            return self.s.fabric.switch_latency_ns * 1e-9
        return float(self.cat.get(g.model, "switch").value("latency_ns", g.overrides)) * 1e-9

    def nic_latency_s(self, g: DeviceGroup) -> float:
        if self.s.fabric.nic_latency_ns is not None:
            return self.s.fabric.nic_latency_ns * 1e-9
        nic = self.cat.get(self.cat.get(g.model, "server").value("nic"), "nic")
        return float(nic.value("latency_ns", g.overrides)) * 1e-9

    def propagation_s(self, b: LinkBundle) -> float:
        media = "copper" if b.length_m <= 3.0 else "fiber"
        if b.cable != "auto":
            media = "copper" if self.cat.get(b.cable).value("media") == "copper" else "fiber"
        per_m = self.copper_ns_per_m if media == "copper" else self.fiber_ns_per_m
        return b.length_m * per_m * 1e-9


def hop_latencies(
    scenario: Scenario, catalog: Catalog
) -> tuple[dict[str, float], dict[str, float]]:
    """The parts of the link latencies `expand` sums, for formats that keep them apart:
    each switch group's forwarding latency and each bundle's propagation delay, in s."""
    builder = _Builder(scenario, catalog)
    switches = {g.id: builder.switch_latency_s(g) for g in scenario.groups if g.kind == "switch"}
    return switches, {b.id: builder.propagation_s(b) for b in scenario.bundles}


def latency_classes(scenario: Scenario, catalog: Catalog) -> np.ndarray:
    """The latency of each link class, in s: class ``g`` for the NVLink links of server
    group ``g`` (half the NVLink latency each way), then two per bundle ``b`` at
    ``n_groups + 2b`` (into side b) and ``n_groups + 2b + 1`` (into side a): propagation,
    the receiving switch's forwarding or the receiving NIC, and the sending NIC.

    Links of a class share one latency, so a change of a latency field changes only this
    small table: a cached graph (`engine.topology.graph_cache`) takes it as it is.
    """
    builder = _Builder(scenario, catalog)
    groups = scenario.groups
    index = {g.id: i for i, g in enumerate(groups)}
    out = np.zeros(len(groups) + 2 * len(scenario.bundles))
    for gi, g in enumerate(groups):
        if g.kind == "server":
            srv = catalog.get(g.model, "server")
            out[gi] = float(srv.value("nvlink_latency_ns", g.overrides)) * 1e-9 / 2
    for bi, b in enumerate(scenario.bundles):
        ga, gb = groups[index[b.a]], groups[index[b.b]]
        prop = builder.propagation_s(b)
        into_b = prop + (
            builder.switch_latency_s(gb) if gb.kind == "switch" else builder.nic_latency_s(gb)
        )
        into_a = prop + (
            builder.switch_latency_s(ga) if ga.kind == "switch" else builder.nic_latency_s(ga)
        )
        if ga.kind == "server":
            into_b += builder.nic_latency_s(ga)  # NIC transmit side
        if gb.kind == "server":
            into_a += builder.nic_latency_s(gb)
        out[len(groups) + 2 * bi] = into_b
        out[len(groups) + 2 * bi + 1] = into_a
    out.flags.writeable = False
    return out


def expand(scenario: Scenario, catalog: Catalog | None = None) -> Fabric:
    """The flat `Fabric` of a scenario; `ScenarioError` lists every problem found.

    The graph of an equal structure is expanded once per process (`graph_cache`): a later
    scenario that differs only in what the graph does not read (a latency, the workload)
    shares its arrays, read-only, with its own latencies and scenario. A design with a
    storage network expands to its compute fabric (whose `scenario` is the compute part)
    with the storage network's own fabric as `storage`.
    """
    problems = check_structure(scenario, catalog or default_catalog())
    if problems:
        raise ScenarioError(problems)
    cat = scenario_catalog(scenario, catalog)
    parts = split_networks(scenario, cat)
    if parts.storage is not None:  # the compute fabric, with its storage network beside it
        try:
            storage = _expand_checked(parts.storage, storage_catalog(cat))
        except ScenarioError as exc:  # say which network the problem is in
            raise ScenarioError(
                [
                    replace(p, where="storage network") if p.where == "topology" else p
                    for p in exc.problems
                ]
            ) from None
        storage = replace(storage, server_write_Bps=_write_limits(storage, storage_catalog(cat)))
        return replace(_expand_checked(parts.compute, cat), storage=storage)
    return _expand_checked(scenario, cat)


def _write_limits(fabric: Fabric, cat: Catalog) -> np.ndarray | None:
    """Per server of a storage network what its drives can take in (`node_write_Bps` of
    a storage node, inf for the GPU servers); ``None`` when no node has drive figures."""
    by_group = np.array(
        [
            node_write_Bps(cat.devices[g.model]) if g.model.endswith(NODE) else np.inf
            for g in fabric.scenario.groups
        ]
    )
    limits = by_group[fabric.server_group]
    return limits if np.isfinite(limits).any() else None


def _expand_checked(scenario: Scenario, cat: Catalog) -> Fabric:
    """`expand` of one network already checked, on its merged catalog."""
    size_warnings = check_fits(estimate_size(scenario, cat), *memory_limit())
    class_latency = latency_classes(scenario, cat)
    key = graph_key(scenario, cat)
    known = GRAPHS.get(key)
    if known is None:
        known = _build(scenario, cat, class_latency)
        for value in vars(known).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False  # shared by every later expansion
        GRAPHS.put(key, known)
    link_latency = class_latency[known.link_latency_class]
    link_latency.flags.writeable = False
    return replace(
        known,
        scenario=scenario,
        link_latency=link_latency,
        class_latency=class_latency,
        warnings=size_warnings + known.warnings,
    )


def _build(scenario: Scenario, cat: Catalog, class_latency: np.ndarray) -> Fabric:
    """Expand `scenario` (already checked) into its arrays; links take their latency from
    `class_latency` (`latency_classes`)."""
    builder = _Builder(scenario, cat)
    groups = scenario.groups
    group_index = {g.id: i for i, g in enumerate(groups)}

    # --- nodes: GPUs, then NVLink switches, then fabric switches ----------------------------
    gpu_counts, server_groups, server_models = [], [], []
    for gi, g in enumerate(groups):
        if g.kind == "server":
            per = int(cat.get(g.model, "server").value("gpus_per_server"))
            gpu_counts.append(np.full(g.count, per, dtype=np.int64))
            server_groups.append(np.full(g.count, gi, dtype=np.int32))
            server_models.append(g)
    server_gpus = np.concatenate(gpu_counts)
    server_group = np.concatenate(server_groups)
    n_servers = server_gpus.shape[0]
    server_first_gpu = np.zeros(n_servers + 1, dtype=np.int64)
    np.cumsum(server_gpus, out=server_first_gpu[1:])
    n_gpus = int(server_first_gpu[-1])
    gpu_server = np.repeat(np.arange(n_servers, dtype=np.int32), server_gpus)
    gpu_local = (np.arange(n_gpus) - server_first_gpu[gpu_server]).astype(np.int32)
    server_nvswitch = n_gpus + np.arange(n_servers, dtype=np.int64)
    next_node = n_gpus + n_servers
    group_first_node = np.full(len(groups), -1, dtype=np.int64)
    group_first_gpu = {}
    first_server = 0
    for gi, g in enumerate(groups):
        if g.kind == "switch":
            group_first_node[gi] = next_node
            next_node += g.count
        else:
            group_first_gpu[gi] = (int(server_first_gpu[first_server]), first_server)
            first_server += g.count
    n_nodes = next_node
    node_kind = np.full(n_nodes, NODE_SWITCH, dtype=np.int8)
    node_kind[:n_gpus] = NODE_GPU
    node_kind[n_gpus : n_gpus + n_servers] = NODE_NVSWITCH
    node_group = np.empty(n_nodes, dtype=np.int32)
    node_member = np.empty(n_nodes, dtype=np.int32)
    node_group[:n_gpus] = server_group[gpu_server]
    first_gpu_of_group = np.zeros(len(groups), dtype=np.int64)
    for gi, (first_gpu, _) in group_first_gpu.items():
        first_gpu_of_group[gi] = first_gpu
    node_member[:n_gpus] = np.arange(n_gpus) - first_gpu_of_group[node_group[:n_gpus]]
    node_group[n_gpus : n_gpus + n_servers] = server_group
    node_member[n_gpus : n_gpus + n_servers] = np.arange(n_servers)
    for gi, g in enumerate(groups):
        if g.kind == "switch":
            first = group_first_node[gi]
            node_group[first : first + g.count] = gi
            node_member[first : first + g.count] = np.arange(g.count)

    # --- NVLink: every GPU to its server's NVLink switch, both ways ------------------------
    nv_bw = np.empty(n_gpus)
    for gi, g in enumerate(groups):
        if g.kind != "server":
            continue
        srv = cat.get(g.model, "server")
        first_gpu, _ = group_first_gpu[gi]
        count = g.count * int(srv.value("gpus_per_server"))
        nv_bw[first_gpu : first_gpu + count] = float(srv.value("nvlink_bw_GBps", g.overrides)) * 1e9
    gpus = np.arange(n_gpus, dtype=np.int64)
    nvs = server_nvswitch[gpu_server]
    src_parts = [gpus, nvs]
    dst_parts = [nvs, gpus]
    cap_parts = [nv_bw, nv_bw]
    nv_class = node_group[:n_gpus].astype(np.int32)  # class g: NVLink of server group g
    class_parts = [nv_class, nv_class]
    bundle_parts = [np.full(2 * n_gpus, NVLINK_BUNDLE, dtype=np.int32)]
    up_parts = [np.concatenate([np.ones(n_gpus, bool), np.zeros(n_gpus, bool)])]

    # --- cables --------------------------------------------------------------------------
    failed_switch_nodes = np.zeros(n_nodes, dtype=bool)
    for sf in scenario.failures.switches:
        failed_switch_nodes[group_first_node[group_index[sf.group]] + sf.index] = True
    links_down = {lf.bundle: lf.links_down for lf in scenario.failures.links}
    bundle_cables = np.zeros(len(scenario.bundles), dtype=np.int64)
    bundle_cables_up = np.zeros(len(scenario.bundles), dtype=np.int64)
    port_use: dict[
        int, list[tuple[float, np.ndarray]]
    ] = {}  # switch group -> (speed, cables/member)
    nic_use: dict[int, list[tuple[float, np.ndarray]]] = {}  # server group -> (speed, cables/NIC)
    for bi, b in enumerate(scenario.bundles):
        ia, ib = group_index[b.a], group_index[b.b]
        ga, gb = groups[ia], groups[ib]
        rails = servers = 0
        if ga.kind == "server":
            srv = cat.get(ga.model, "server")
            rails, servers = int(srv.value("nics_per_server")), ga.count
        wiring = wire_bundle(b, members(ga, cat), members(gb, cat), rails, servers)
        bundle_cables[bi] = wiring.a.shape[0]
        nodes_a = _member_nodes(ga, ia, wiring.a, cat, group_first_node, group_first_gpu, builder)
        nodes_b = _member_nodes(gb, ib, wiring.b, cat, group_first_node, group_first_gpu, builder)
        for g, gidx, idx in ((ga, ia, wiring.a), (gb, ib, wiring.b)):
            use = np.bincount(idx, minlength=members(g, cat))
            builder.segments.note(bi, g, gidx, use, cat)
            if g.kind == "switch":
                port_use.setdefault(gidx, []).append((b.speed_gbps, use))
            else:
                nic_use.setdefault(gidx, []).append((b.speed_gbps, use))
        alive = np.ones(wiring.a.shape[0], dtype=bool)
        alive[_failed_cables(wiring.a.shape[0], links_down.get(b.id, 0))] = False
        alive &= ~failed_switch_nodes[nodes_a] & ~failed_switch_nodes[nodes_b]
        nodes_a, nodes_b = nodes_a[alive], nodes_b[alive]
        bundle_cables_up[bi] = nodes_a.shape[0]
        capacity = builder.segments.cable_rate(bi, b.speed_gbps, (ga, gb), cat)
        n = nodes_a.shape[0]
        src_parts += [nodes_a, nodes_b]
        dst_parts += [nodes_b, nodes_a]
        cap_parts.append(np.full(2 * n, capacity))
        into_b = len(groups) + 2 * bi  # latency classes (see `latency_classes`)
        class_parts += [np.full(n, into_b, np.int32), np.full(n, into_b + 1, np.int32)]
        bundle_parts.append(np.full(2 * n, bi, dtype=np.int32))
        up_parts.append(np.concatenate([np.ones(n, bool), np.zeros(n, bool)]))

    problems = port_problems(scenario, cat, port_use, nic_use)
    problems += builder.segments.problems(scenario, cat)
    if problems:
        raise ScenarioError(problems)

    link_src = np.concatenate(src_parts).astype(np.int64)
    link_dst = np.concatenate(dst_parts).astype(np.int64)
    link_capacity = np.concatenate(cap_parts)
    link_bundle = np.concatenate(bundle_parts)
    network = link_bundle != NVLINK_BUNDLE
    link_latency_class = np.concatenate(class_parts)
    gpu_line_rate = np.zeros(n_gpus)
    out_of_gpu = network & (link_src < n_gpus)
    np.add.at(gpu_line_rate, link_src[out_of_gpu], link_capacity[out_of_gpu])

    fabric = Fabric(
        scenario=scenario,
        node_kind=node_kind,
        node_group=node_group,
        node_member=node_member,
        gpu_server=gpu_server,
        gpu_local=gpu_local,
        server_group=server_group,
        server_first_gpu=server_first_gpu,
        server_nvswitch=server_nvswitch,
        link_src=link_src,
        link_dst=link_dst,
        link_capacity=link_capacity,
        link_latency=class_latency[link_latency_class],
        link_latency_class=link_latency_class,
        class_latency=class_latency,
        link_bundle=link_bundle,
        link_upward=np.concatenate(up_parts),
        gpu_nvlink_up=np.arange(n_gpus, dtype=np.int64),
        gpu_nvlink_down=n_gpus + np.arange(n_gpus, dtype=np.int64),
        gpu_line_rate=gpu_line_rate,
        bundle_cables=bundle_cables,
        bundle_cables_up=bundle_cables_up,
        group_first_node=group_first_node,
        warnings=builder.warnings,
        bundle_ethernet=builder.segments.ethernet(),
    )
    problems = _reachability_problems(fabric)
    if problems:
        raise ScenarioError(problems)
    fabric.warnings.extend(_failure_warnings(fabric))
    return fabric


def _failure_warnings(fabric: Fabric) -> list[Problem]:
    """What the failed parts cost: cables down and GPUs left without a NIC link of their
    own (they reach the fabric over NVLink through a neighbour's NIC, PXN)."""
    f = fabric.scenario.failures
    if not (f.switches or f.links):
        return []
    total, up = int(fabric.bundle_cables.sum()), int(fabric.bundle_cables_up.sum())
    message = f"{total - up:,} of {total:,} cables down ({(total - up) / total:.1%})"
    cut_off = int(np.count_nonzero(fabric.gpu_line_rate <= 0))
    if cut_off:
        message += (
            f"; {cut_off:,} of {fabric.n_gpus:,} GPUs have no working link of their own and "
            "reach the fabric over NVLink through a neighbour's NIC (PXN); in-network "
            "reduction (SHARP), which needs every rank's NIC, is left out of auto"
        )
    return [Problem("failures", message, severity="warning")]


def _member_nodes(
    g: DeviceGroup,
    gi: int,
    idx: np.ndarray,
    cat: Catalog,
    group_first_node: np.ndarray,
    group_first_gpu: dict[int, tuple[int, int]],
    builder: _Builder,
) -> np.ndarray:
    """Node index of each wiring member (a switch, or the GPU owning a NIC)."""
    if g.kind == "switch":
        return group_first_node[gi] + idx
    srv = cat.get(g.model, "server")
    rails, per = int(srv.value("nics_per_server")), int(srv.value("gpus_per_server"))
    first_gpu, _ = group_first_gpu[gi]
    server, rail = idx // rails, idx % rails
    return first_gpu + server * per + (rail * per) // rails


def _reachability_problems(fabric: Fabric) -> list[Problem]:
    """GPUs that cannot reach each other over the working cables and NVLink."""
    labels = component_labels(fabric.n_nodes, fabric.link_src, fabric.link_dst)
    gpu_labels = labels[: fabric.n_gpus]
    unique, counts = np.unique(gpu_labels, return_counts=True)
    if unique.shape[0] <= 1:
        return []
    main = unique[np.argmax(counts)]
    cut_off = np.flatnonzero(gpu_labels != main)
    scenario = fabric.scenario
    lost_groups = sorted({int(fabric.node_group[g]) for g in cut_off})
    names = ", ".join(scenario.groups[i].id for i in lost_groups)
    first = int(cut_off[0])
    server = int(fabric.gpu_server[first])
    return [
        Problem(
            "topology",
            f"{cut_off.shape[0]} of {fabric.n_gpus} GPUs (in {names}; first: server {server}) have no path "
            f"to the others; connect their servers to the fabric or undo the failures that cut them off",
        )
    ]
