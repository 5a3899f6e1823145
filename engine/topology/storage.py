"""A storage network added to any template: storage nodes on an Ethernet leaf-spine that the
GPU servers reach through their front-end ports.

NVIDIA's BasePOD cables each DGX H100's two front-end ConnectX-7 ports (one of each
dual-port card, bonded) to the Ethernet switches of its storage and in-band management
network, apart from the compute fabric (catalog source ``nv-basepod-network``). `add_storage`
builds that network beside a template's compute fabric: one leaf per front-end port (a
rail, as the bonded pair goes to two switches) holding one port of every GPU server and of
every storage node, non-blocking; when the ports do not fit one switch, each rail is split
into blocks of leaves with as many uplinks as down ports to a spine group. A server with more
front-end ports than the node has rails (a GB200 NVL72 rack: two per compute tray) spreads
them over the leaves round robin (the ``striped`` pattern: port i to leaf i mod leaves).
The storage nodes and switches sit to the right of the compute fabric on the canvas, named
as the storage network's; `engine.model.networks` keeps them out of the compute fabric's evaluation.
"""

from __future__ import annotations

import math
from dataclasses import replace

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import DeviceGroup, LinkBundle, Scenario
from engine.topology.template_parts import group, refuse

STORAGE_NODE = "storage-node-2x400g"  # the catalog's storage node
STORAGE_SWITCH = "sn5600"  # Spectrum-4: an Ethernet switch the catalog sources
_GAP = 720.0  # scene units between the compute fabric and the storage network


def _speed(cat: Catalog, switch: str, gbps: float, what: str) -> float:
    """`gbps` when the storage switch has ports of that speed; refused otherwise."""
    modes = cat.switch_port_modes(switch)
    if float(gbps) not in modes:
        have = ", ".join(f"{s:g}G" for s in sorted(modes))
        raise refuse("storage", f"{what} run at {gbps:g}G; switch {switch} has {have}")
    return float(gbps)


def add_storage(
    scenario: Scenario,
    nodes: int,
    switch: str = STORAGE_SWITCH,
    node_model: str = STORAGE_NODE,
    catalog: Catalog | None = None,
) -> Scenario:
    """`scenario` with a storage network of `nodes` storage nodes of `node_model` on
    `switch` leaves (and spines when needed), every GPU server group cabled to it by its
    front-end ports; refused, naming the part, when a server has none or a speed does not
    fit the switch."""
    cat = catalog or default_catalog()
    if nodes < 1:
        raise refuse("storage", f"{nodes} storage nodes: a storage network needs at least one")
    try:
        node = cat.get(node_model, "storage")
        cat.get(switch, "switch")
    except KeyError as exc:
        raise refuse("storage", f"unknown storage node or switch model {exc.args[0]!r}") from None
    servers = [g for g in scenario.groups if g.kind == "server"]
    rails = int(node.value("ports"))
    speeds, ports = [], []
    for g in servers:
        srv = cat.get(g.model, "server")
        if not srv.has("frontend_nics_per_server"):
            raise refuse("storage", f"{g.model} has no front-end (storage) ports in the catalog")
        fe = int(srv.value("frontend_nics_per_server"))
        if fe < rails or fe % rails:
            raise refuse(
                "storage",
                f"{g.model} has {fe} front-end ports and {node_model} {rails}; the rails need "
                "as many of each, or a whole multiple on the server",
            )
        ports.append(fe)
        speeds.append(_speed(cat, switch, srv.value("frontend_port_gbps"), f"{g.model}'s ports"))
    node_speed = _speed(cat, switch, node.value("port_gbps"), f"{node_model}'s ports")
    radix = cat.switch_port_modes(switch)[max([node_speed, *speeds])]
    # ports of each group on every rail: one per member, or fe / rails on a striped server
    per_rail = sum(g.count * fe // rails for g, fe in zip(servers, ports, strict=True)) + nodes
    blocks = 1 if per_rail <= radix else math.ceil(per_rail / (radix // 2))
    leaves = rails * blocks
    # each leaf holds ceil(count / blocks) of every rail-cabled group (the rail pattern's
    # blocks) and ceil(count x fe / leaves) ports of every striped one
    down = sum(
        -(-g.count // blocks) if fe == rails else -(-(g.count * fe) // leaves)
        for g, fe in zip(servers, ports, strict=True)
    ) + -(-nodes // blocks)
    x = max((g.position[0] for g in scenario.groups), default=0.0) + _GAP
    leaf = group("storage-leaf", "switch", switch, leaves, "leaf", x)
    leaf.name = "Storage leaves (Ethernet)"
    store = DeviceGroup(
        "storage-nodes", "storage", node_model, nodes, "server", "Storage nodes", (x, 450.0)
    )
    groups = [store, leaf]
    bundles = [
        LinkBundle(
            f"{g.id}-storage",
            g.id,
            leaf.id,
            "rail" if fe == rails else "striped",
            speed_gbps=s,
            blocks=1 if fe == rails else leaves,
            length_m=10.0,
        )
        for g, s, fe in zip(servers, speeds, ports, strict=True)
    ]
    bundles.append(
        LinkBundle("storage-nodes-leaf", store.id, leaf.id, "rail", speed_gbps=node_speed)
    )
    if blocks > 1:
        spines = next(
            d for d in range(1, down + 1) if down % d == 0 and leaves * down // d <= radix
        )
        spine = group("storage-spine", "switch", switch, spines, "spine", x)
        spine.name = "Storage spines (Ethernet)"
        groups.append(spine)
        bundles.append(
            LinkBundle(
                "storage-leaf-spine",
                leaf.id,
                spine.id,
                "full",
                links_per_pair=down // spines,
                speed_gbps=node_speed,
                length_m=30.0,
            )
        )
    description = (
        f"{scenario.metadata.description}; storage network: {nodes} × {node_model} on "
        f"{leaves} {switch} leaves, reached through the servers' front-end ports"
    )
    return replace(
        scenario,
        metadata=replace(scenario.metadata, description=description),
        groups=[*scenario.groups, *groups],
        bundles=[*scenario.bundles, *bundles],
    )
