"""The NVL72 template: GB200 NVL72 racks as the unit of scale-up, their NICs on folded rails.

A GB200 NVL72 rack is one 72-GPU NVLink domain with 72 ConnectX-7 400G NICs (one per GPU);
NVIDIA's DGX GB200 SuperPOD builds its scalable unit from 8 such racks on an InfiniBand
compute fabric and scales to 128 racks (docs/scenario-format.md, Templates, cites the
reference architecture). The plain rail-optimized template gives each of the 72 NIC indices
its own leaf per scalable unit, so a few racks fill 72 leaves at one port each. Here the 72
rails are folded: leaf j takes NICs j, j+L, j+2L, ... of every rack (the `striped` pattern
with one block per leaf), L being the fewest leaves, a divisor of 72, whose down ports hold
every rack's share. A 2-tier spine joins the leaves; sizes beyond one leaf's down ports
(one NIC per rack per leaf) are refused with the largest that builds.
"""

from __future__ import annotations

import math

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import LinkBundle, Scenario
from engine.topology.template_parts import (
    default_mode,
    group,
    refuse,
    scenario,
    shape,
    split_ports,
    technology_of,
)


def _fold(racks: int, nics: int, down: int) -> int | None:
    """The fewest leaves L (a divisor of `nics`) whose `down` ports take every rack's
    nics / L NICs; ``None`` when not even one NIC per rack per leaf fits."""
    for leaves in range(1, nics + 1):
        if nics % leaves == 0 and racks * (nics // leaves) <= down:
            return leaves
    return None


def nvl72(
    gpus: int,
    server: str = "gb200-nvl72",
    switch: str = "qm9700",
    oversubscription: float = 1.0,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """NVL72 racks (or any server with many NICs) on a 2-tier fabric with the rack's rails
    folded onto the fewest leaves that hold them, so a few racks need a few leaves."""
    cat = catalog or default_catalog()
    s = shape("nvl72", gpus, server, switch, speed_gbps, cat)
    down, up = split_ports(s.radix, oversubscription, "nvl72")
    leaves = _fold(s.servers, s.nics, down)
    if leaves is None or leaves > s.radix:
        fits = [
            r for r in range(1, s.servers) if (_fold(r, s.nics, down) or s.radix + 1) <= s.radix
        ]
        largest = max(fits, default=0) * (gpus // s.servers)
        raise refuse(
            "nvl72",
            f"{s.servers} × {server} ({s.nics} NICs each) do not fit 2 tiers of {switch} ({down} down "
            f"ports a leaf, a spine reaching {s.radix} leaves at {s.speed_gbps:g}G); at most "
            f"{largest:,} GPUs",
        )
    used = s.servers * (s.nics // leaves)  # down ports in use on each leaf
    uplinks = math.ceil(used * up / down)  # the same oversubscription on the ports in use
    spines = math.ceil(leaves * uplinks / s.radix)
    while uplinks % spines:
        spines += 1
    folded = s.nics // leaves
    groups = [
        group("servers", "server", server, s.servers, "server"),
        group("leaf", "switch", switch, leaves, "leaf"),
        group("spine", "switch", switch, spines, "spine"),
    ]
    groups[0].name = f"NVL72 racks ({gpus // s.servers} GPUs each)"
    groups[1].name = f"Rail-group leaves ({s.nics} rails on {leaves})"
    bundles = [
        LinkBundle(
            "servers-leaf",
            "servers",
            "leaf",
            "striped",
            blocks=leaves,
            speed_gbps=s.speed_gbps,
            length_m=10.0,
        ),
        LinkBundle(
            "leaf-spine",
            "leaf",
            "spine",
            "full",
            links_per_pair=uplinks // spines,
            speed_gbps=s.speed_gbps,
            length_m=30.0,
        ),
    ]
    return scenario(
        f"nvl72 {gpus} GPUs",
        f"{s.servers} × {server} ({gpus // s.servers}-GPU NVLink domains), {s.nics} rails "
        f"folded onto {leaves} {switch} leaves ({folded} NICs of each rack per leaf), "
        f"{spines} spines, {s.speed_gbps:g}G, {oversubscription:g}:1 at the leaf",
        technology_of(switch, cat),
        default_mode(switch, cat),
        groups,
        bundles,
    )
