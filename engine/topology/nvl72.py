"""The NVL72 template: GB200 NVL72 racks as the unit of scale-up, their NICs on folded rails.

A GB200 NVL72 rack is one 72-GPU NVLink domain with 72 ConnectX-7 400G NICs (one per GPU);
NVIDIA's DGX GB200 SuperPOD builds its scalable unit from 8 such racks on an InfiniBand
compute fabric and scales to 128 racks (docs/scenario-format.md, Templates, cites the
reference architecture). The plain rail-optimized template gives each of the 72 NIC indices
its own leaf per scalable unit, so a few racks fill 72 leaves at one port each. Here the 72
rails are folded: leaf j takes NICs j, j+L, j+2L, ... of every rack (the `striped` pattern
with one block per leaf), L being the fewest leaves, a divisor of 72, whose down ports hold
every rack's share. A 2-tier spine joins the leaves. Sizes beyond one leaf's down ports
(one NIC per rack per leaf) build 3 tiers (`engine.topology.nvl72_pods`): pods of one
scalable unit of racks (the server's catalog ``scalable_unit_servers``, 8 for the GB200
NVL72), each with its own leaves and spines, joined by a core; a size that neither builds
is refused with the sizes that do.
"""

from __future__ import annotations

import math

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import LinkBundle, Scenario
from engine.topology.nvl72_pods import PodPlan, plan_pods, pod_parts
from engine.topology.template_parts import (
    Shape,
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
    folded onto the fewest leaves that hold them, so a few racks need a few leaves; past
    two tiers, pods of one scalable unit of racks under a core (`plan_pods`)."""
    cat = catalog or default_catalog()
    s = shape("nvl72", gpus, server, switch, speed_gbps, cat)
    down, up = split_ports(s.radix, oversubscription, "nvl72")
    leaves = _fold(s.servers, s.nics, down)
    if leaves is None or leaves > s.radix:
        unit = _unit(server, cat)
        plan = plan_pods(s.servers, unit, s.nics, (down, up), s.radix) if unit else None
        if plan is None:
            per_rack = gpus // s.servers
            raise refuse("nvl72", _refusal(s, (server, switch), (down, up), unit, per_rack))
        return _three_tier(plan, s, (server, switch), oversubscription, cat)
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


def _unit(server: str, cat: Catalog) -> int:
    """Racks in a scalable unit of `server` (the catalog's ``scalable_unit_servers``; 0
    when the catalog gives none: no pods are built)."""
    device = cat.get(server, "server")
    return int(device.value("scalable_unit_servers")) if device.has("scalable_unit_servers") else 0


def _two_tier_fits(racks: int, nics: int, down: int, radix: int) -> bool:
    """Whether `racks` racks fold onto leaves that one spine tier joins."""
    leaves = _fold(racks, nics, down)
    return leaves is not None and leaves <= radix


def _builds(racks: int, nics: int, ports: tuple[int, int], radix: int, unit: int) -> bool:
    """Whether `racks` racks build on 2 tiers or in pods of `unit` racks on 3."""
    if _two_tier_fits(racks, nics, ports[0], radix):
        return True
    return bool(unit) and plan_pods(racks, unit, nics, ports, radix) is not None


def _refusal(
    s: Shape, names: tuple[str, str], ports: tuple[int, int], unit: int, per_rack: int
) -> str:
    """Why `s.servers` racks build neither 2 nor 3 tiers, naming the sizes that do: the
    largest when there are too many, else the nearest below and above."""
    server, switch = names
    two_tier = max(
        (r for r in range(1, s.servers) if _two_tier_fits(r, s.nics, ports[0], s.radix)),
        default=0,
    )
    head = (
        f"{s.servers} × {server} ({s.nics} NICs each) do not fit 2 tiers of {switch} "
        f"({ports[0]} down ports a leaf, a spine reaching {s.radix} leaves at {s.speed_gbps:g}G)"
    )
    if not unit:
        return (
            f"{head}, and the catalog gives {server} no scalable unit (scalable_unit_servers) "
            f"to build pods of; at most {two_tier * per_rack:,} GPUs"
        )
    # a core switch reaches each pod with one cable at least: no more pods than its ports
    sizes = [r for r in range(1, unit * s.radix + 1) if _builds(r, s.nics, ports, s.radix, unit)]
    largest = max(sizes)
    if s.servers > largest:
        return (
            f"{head} nor 3 tiers in pods of {unit} racks (one scalable unit), whose core "
            f"switches reach at most {largest // unit} pods; at most {largest * per_rack:,} GPUs"
        )
    near = [
        max((r for r in sizes if r < s.servers), default=0),
        min(r for r in sizes if r > s.servers),
    ]
    counts = " or ".join(f"{r * per_rack:,}" for r in near if r)
    return (
        f"{head} nor whole pods of {unit} racks (one scalable unit) on 3 tiers; the nearest "
        f"GPU counts that build are {counts}"
    )


def _three_tier(
    plan: PodPlan, s: Shape, names: tuple[str, str], oversubscription: float, cat: Catalog
) -> Scenario:
    """The scenario of a 3-tier `plan` (`engine.topology.nvl72_pods`)."""
    server, switch = names
    groups, bundles = pod_parts(plan, server, switch, s.speed_gbps, s.nics)
    racks = plan.pods * plan.racks
    gpus = racks * int(cat.get(server, "server").value("gpus_per_server"))
    return scenario(
        f"nvl72 {gpus} GPUs",
        f"{racks} × {server} in {plan.pods} pods of {plan.racks} (one scalable unit each), "
        f"{s.nics} rails folded onto {plan.leaves} {switch} leaves a pod "
        f"({s.nics // plan.leaves} NICs of each rack per leaf), {plan.spines} spines a pod, "
        f"{plan.cores} core switches ({plan.spines} spine planes of {plan.cores_per_spine}), "
        f"{s.speed_gbps:g}G, {oversubscription:g}:1 at the leaf, non-blocking above; the "
        "switch counts are derived from the ports (an assumption: the reference "
        "architecture publishes no multi-SU table for GB200)",
        technology_of(switch, cat),
        default_mode(switch, cat),
        groups,
        bundles,
    )
