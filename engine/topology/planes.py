"""Multi-plane and dual-ToR templates: each NIC's links on independent planes.

A plane is a whole leaf-spine fabric of its own; every server has one link on each plane,
and no switch joins two planes. Spectrum-X multi-plane designs split a SuperNIC's port
(a ConnectX-8's 800G as 2 x 400GbE) over planes; Alibaba HPN (SIGCOMM 2024) gives each
NIC's two 200G ports to two ToRs that sit in two planes (non-stacked dual-ToR, dual-plane),
so a ToR or a whole plane that fails leaves every NIC its other link at half the rate.
The groups are named per plane ("Plane 1 leaves") and placed side by side on the canvas.
A NIC must offer as many links as there are planes: ports, or a port that splits
(catalog `port_split`).
"""

from __future__ import annotations

import dataclasses

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import DeviceGroup, LinkBundle, Scenario
from engine.topology.generators import leaf_spine, rail_optimized
from engine.topology.template_parts import refuse

_PLURAL = {"leaf": "leaves", "spine": "spines", "core": "cores"}
_PLANE_WIDTH = 480.0  # scene units between the planes' columns on the canvas


def _plane_speed(template: str, server: str, planes: int, speed: float | None, cat: Catalog):
    """Each plane's link speed: the NIC's rate shared by the planes unless given; refused
    when the NIC cannot make that many links."""
    if planes < 2:
        raise refuse(template, f"{planes} plane(s): a multi-plane fabric has at least 2")
    try:
        nic = cat.get(cat.get(server, "server").value("nic"), "nic")
    except KeyError:
        raise refuse(template, f"unknown server model {server!r}") from None
    ports = int(nic.value("ports"))
    split = int(nic.value("port_split")) if nic.has("port_split") else 1
    rate = ports * float(nic.value("port_gbps"))
    if planes > ports * split:
        raise refuse(
            template,
            f"a {nic.id} makes {ports * split} link(s) ({ports} port(s)"
            + (f", each split in {split}" if split > 1 else "")
            + f"), not one per plane for {planes} planes; choose a server whose NIC splits "
            "its port (hgx-b300: ConnectX-8 as 2 x 400GbE) or fewer planes",
        )
    chosen = float(speed) if speed is not None else rate / planes
    if chosen * planes > rate + 1e-9:
        raise refuse(
            template,
            f"{planes} planes at {chosen:g}G need {chosen * planes:g}G of a {nic.id}'s {rate:g}G",
        )
    return chosen


def _replicate(base: Scenario, planes: int) -> Scenario:
    """`planes` copies of the base fabric's switch groups and bundles, one per plane, on
    the base's one server group."""
    switches = [g for g in base.groups if g.kind == "switch"]
    servers = [g for g in base.groups if g.kind == "server"]
    groups: list[DeviceGroup] = list(servers)
    bundles: list[LinkBundle] = []
    for p in range(1, planes + 1):
        x = (p - 1 - (planes - 1) / 2) * _PLANE_WIDTH
        ids = {g.id: f"p{p}-{g.id}" for g in switches}
        for g in switches:
            groups.append(
                dataclasses.replace(
                    g,
                    id=ids[g.id],
                    name=f"Plane {p} {_PLURAL[g.tier]}",
                    position=(x, g.position[1]),
                    overrides=dict(g.overrides),
                )
            )
        for b in base.bundles:
            a, z = ids.get(b.a, b.a), ids.get(b.b, b.b)
            bundles.append(dataclasses.replace(b, id=f"{a}-{z}", a=a, b=z))
    return dataclasses.replace(
        base, groups=groups, bundles=bundles, metadata=dataclasses.replace(base.metadata)
    )


def multi_plane(
    gpus: int,
    server: str,
    switch: str,
    planes: int = 2,
    oversubscription: float = 1.0,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """`planes` independent rail-optimized leaf-spine fabrics, each NIC's port split into
    one link per plane (Spectrum-X multi-plane)."""
    cat = catalog or default_catalog()
    speed = _plane_speed("multi-plane", server, planes, speed_gbps, cat)
    base = rail_optimized(gpus, server, switch, oversubscription, speed, cat)
    s = _replicate(base, planes)
    s.routing.flows_per_connection = planes  # NCCL opens a connection's channels on each port
    tiers = len({g.tier for g in s.groups}) - 1
    s.metadata.name = f"multi-plane {gpus} GPUs"
    s.metadata.description = (
        f"{s.groups[0].count} × {server}, {planes} independent planes, each a {tiers}-tier "
        f"rail-optimized {switch} fabric at {speed:g}G ({oversubscription:g}:1 at the leaf); "
        f"every NIC has one link on each plane and no switch joins two planes"
    )
    return s


def dual_tor(
    gpus: int,
    server: str,
    switch: str,
    oversubscription: float = 1.0,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """Each NIC's two links to a pair of ToRs, the two ToRs in two planes of their own
    (Alibaba HPN's non-stacked dual-ToR): a failed ToR leaves its servers half the rate."""
    cat = catalog or default_catalog()
    speed = _plane_speed("dual-tor", server, 2, speed_gbps, cat)
    base = leaf_spine(gpus, server, switch, oversubscription, speed, cat)
    s = _replicate(base, 2)
    s.routing.flows_per_connection = 2  # a connection's flows on both ToRs
    for g in s.groups:
        if g.tier == "leaf":
            g.name = f"ToR {'A' if g.id.startswith('p1-') else 'B'} (plane {g.id[1]})"
    tiers = len({g.tier for g in s.groups}) - 1
    s.metadata.name = f"dual-tor {gpus} GPUs"
    s.metadata.description = (
        f"{s.groups[0].count} × {server}, dual-ToR: each NIC's two {speed:g}G links to ToR A "
        f"and ToR B of its rack, the A and B ToRs in two {tiers}-tier {switch} planes "
        f"({oversubscription:g}:1 at the ToR); a failed ToR leaves its NICs half the rate"
    )
    return s
