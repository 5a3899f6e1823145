"""Topology templates: grouped scenarios for the designs clusters are built from.

Each generator returns a `Scenario` with a handful of device groups and bundles standing for
the whole cluster: a single switch, a 2-tier leaf-spine (ToR attach, chosen oversubscription),
a 3-tier fat-tree, rail-optimized (DGX SuperPOD style: one leaf per rail per scalable unit,
spines above, a core tier when one spine tier cannot reach) and rail-only (one network per
rail, no spine across rails; cross-rail traffic goes over NVLink inside the server).

Sizes the switch radix cannot build are refused with the largest size it can.
"""

from __future__ import annotations

import math

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import LinkBundle, Scenario
from engine.topology.template_parts import default_mode as _default_mode
from engine.topology.template_parts import group as _group
from engine.topology.template_parts import refuse as _refuse
from engine.topology.template_parts import scenario as _scenario
from engine.topology.template_parts import shape as _shape
from engine.topology.template_parts import split_ports as _split_ports
from engine.topology.template_parts import technology_of as _technology_of


def single_switch(
    gpus: int,
    server: str,
    switch: str,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """Every NIC of every server on one switch."""
    cat = catalog or default_catalog()
    s = _shape("single-switch", gpus, server, switch, speed_gbps, cat)
    if s.servers * s.nics > s.radix:
        largest = (s.radix // s.nics) * (gpus // s.servers)
        raise _refuse(
            "single-switch",
            f"{gpus} GPUs need {s.servers * s.nics} ports; "
            f"one {switch} has {s.radix} at {s.speed_gbps:g}G, so at most {largest} GPUs",
        )
    groups = [
        _group("servers", "server", server, s.servers, "server"),
        _group("leaf", "switch", switch, 1, "leaf"),
    ]
    bundles = [
        LinkBundle("servers-leaf", "servers", "leaf", "full", speed_gbps=s.speed_gbps, length_m=3.0)
    ]
    return _scenario(
        f"single switch {gpus} GPUs",
        f"{s.servers} × {server} on one {switch}",
        _technology_of(switch, cat),
        _default_mode(switch, cat),
        groups,
        bundles,
    )


def _three_tier_pods(
    leaves: int, leaves_per_pod: int, spines_per_pod: int, half: int, radix: int
) -> int | None:
    """The fewest pods the leaves fill evenly (at most `leaves_per_pod` each) whose core
    switches split into `spines_per_pod` planes, each plane's cores taking an equal share of
    every pod's spine uplinks; ``None`` when no pod count does. Full pods of `leaves_per_pod`
    come first, as the classic k-ary fat-tree has them; a fabric of one pod's worth of
    leaves gets two half pods instead (one pod would leave a core plane with half a switch)."""
    for pods in range(math.ceil(leaves / leaves_per_pod), leaves + 1):
        if leaves % pods:
            continue
        core_ports = pods * spines_per_pod * half
        if core_ports % radix:
            continue
        cores = core_ports // radix
        if cores % spines_per_pod:
            continue
        per_plane = cores // spines_per_pod
        if half % per_plane == 0:
            return pods
    return None


def _buildable_neighbours(
    leaves: int, step: int, max_leaves: int, pod_shape: tuple[int, int, int, int]
) -> list[int]:
    """The nearest leaf counts below and above `leaves` (in steps of `step`, at most
    `max_leaves`) whose pods `_three_tier_pods` can build: what a refusal suggests."""
    found = []
    below = range(leaves - step, 0, -step)
    above = range(leaves + step, max_leaves + 1, step)
    for candidates in (below, above):
        for n in candidates:
            if _three_tier_pods(n, *pod_shape) is not None:
                found.append(n)
                break
    return found


def _clos(
    template: str,
    gpus: int,
    server: str,
    switch: str,
    oversubscription: float,
    speed_gbps: float | None,
    attach: str,
    force_three_tier: bool,
    cat: Catalog,
) -> Scenario:
    """A 2- or 3-tier folded Clos with servers attached per rail or per ToR."""
    s = _shape(template, gpus, server, switch, speed_gbps, cat)
    down, up = _split_ports(s.radix, oversubscription, template, 1 if attach == "rail" else s.nics)
    gpus_per_server = gpus // s.servers
    if attach == "rail":
        block_servers = down  # one scalable unit: `down` servers, one leaf per rail
        leaves = math.ceil(s.servers / block_servers) * s.nics
    else:
        if down < s.nics:
            raise _refuse(
                template, f"a leaf with {down} down ports cannot hold one server's {s.nics} NICs"
            )
        block_servers = down // s.nics
        leaves = math.ceil(s.servers / block_servers)
    half = s.radix // 2
    max_two_tier_leaves = s.radix  # each spine has one port per leaf at least
    three_tier = force_three_tier or leaves > max_two_tier_leaves
    per_leaf_endpoints = down if attach == "rail" else block_servers * s.nics
    if three_tier:
        leaves_per_pod = half
        max_leaves = s.radix * leaves_per_pod
        if leaves > max_leaves:
            largest = max_leaves * per_leaf_endpoints // s.nics * gpus_per_server
            raise _refuse(
                template,
                f"{gpus} GPUs need {leaves} leaves; a 3-tier fabric of {switch} "
                f"(radix {s.radix} at {s.speed_gbps:g}G) reaches {max_leaves} leaves, "
                f"so at most {largest} GPUs",
            )
        spines_per_pod = up
        pods = _three_tier_pods(leaves, leaves_per_pod, spines_per_pod, half, s.radix)
        if pods is None:
            step = s.nics if attach == "rail" else 1  # leaves come per scalable unit of rails
            sizes = _buildable_neighbours(
                leaves, step, max_leaves, (leaves_per_pod, spines_per_pod, half, s.radix)
            )
            unit = block_servers * gpus_per_server
            near = " or ".join(f"{(n // step) * unit:,}" for n in sizes)
            raise _refuse(
                template,
                f"{leaves} leaves do not fill whole pods of at most {leaves_per_pod} whose "
                f"core switches divide into {spines_per_pod} planes; "
                + (f"the nearest GPU counts that build are {near}" if near else "no size builds"),
            )
        spines = pods * spines_per_pod
        cores = spines * half // s.radix
        lpp_core = half // (cores // spines_per_pod)
    else:
        spines = math.ceil(leaves * up / s.radix)
        if up % spines:
            spines = next(n for n in range(spines, up + 1) if up % n == 0)
        lpp_spine = up // spines

    groups = [
        _group("servers", "server", server, s.servers, "server"),
        _group("leaf", "switch", switch, leaves, "leaf"),
    ]
    bundles = [
        LinkBundle(
            "servers-leaf",
            "servers",
            "leaf",
            "rail" if attach == "rail" else "full",
            blocks=1 if attach == "rail" else leaves,
            speed_gbps=s.speed_gbps,
            length_m=3.0,
        )
    ]
    if three_tier:
        groups.append(_group("spine", "switch", switch, spines, "spine"))
        groups.append(_group("core", "switch", switch, cores, "core"))
        bundles.append(
            LinkBundle(
                "leaf-spine",
                "leaf",
                "spine",
                "full",
                blocks=pods,
                speed_gbps=s.speed_gbps,
                length_m=30.0,
            )
        )
        bundles.append(
            LinkBundle(
                "spine-core",
                "spine",
                "core",
                "striped",
                blocks=spines_per_pod,
                links_per_pair=lpp_core,
                speed_gbps=s.speed_gbps,
                length_m=100.0,
            )
        )
    else:
        groups.append(_group("spine", "switch", switch, spines, "spine"))
        bundles.append(
            LinkBundle(
                "leaf-spine",
                "leaf",
                "spine",
                "full",
                links_per_pair=lpp_spine,
                speed_gbps=s.speed_gbps,
                length_m=30.0,
            )
        )
    tiers = 3 if three_tier else 2
    ratio = f"{oversubscription:g}:1"
    description = (
        f"{s.servers} × {server}, {tiers}-tier {template} on {switch} at "
        f"{s.speed_gbps:g}G, {ratio} at the leaf"
    )
    return _scenario(
        f"{template} {gpus} GPUs",
        description,
        _technology_of(switch, cat),
        _default_mode(switch, cat),
        groups,
        bundles,
    )


def leaf_spine(
    gpus: int,
    server: str,
    switch: str,
    oversubscription: float = 1.0,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """A 2-tier leaf-spine; each server's NICs share one leaf (top of rack)."""
    cat = catalog or default_catalog()
    s = _shape("leaf-spine", gpus, server, switch, speed_gbps, cat)
    down, _ = _split_ports(s.radix, oversubscription, "leaf-spine", s.nics)
    leaves = math.ceil(s.servers / max(1, down // s.nics))
    if leaves > s.radix:
        largest = s.radix * (down // s.nics) * (gpus // s.servers)
        raise _refuse(
            "leaf-spine",
            f"{gpus} GPUs need {leaves} leaves; 2 tiers of {switch} "
            f"hold {s.radix} leaves, so at most {largest} GPUs (use fat-tree beyond)",
        )
    return _clos(
        "leaf-spine", gpus, server, switch, oversubscription, speed_gbps, "tor", False, cat
    )


def fat_tree(
    gpus: int,
    server: str,
    switch: str,
    oversubscription: float = 1.0,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """A 3-tier fat-tree (leaf, pod spine, core) with servers attached per ToR."""
    cat = catalog or default_catalog()
    return _clos("fat-tree", gpus, server, switch, oversubscription, speed_gbps, "tor", True, cat)


def rail_optimized(
    gpus: int,
    server: str,
    switch: str,
    oversubscription: float = 1.0,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """DGX SuperPOD style: NIC r of every server in a scalable unit on that unit's rail-r leaf."""
    cat = catalog or default_catalog()
    return _clos(
        "rail-optimized", gpus, server, switch, oversubscription, speed_gbps, "rail", False, cat
    )


def rail_only(
    gpus: int,
    server: str,
    switch: str,
    speed_gbps: float | None = None,
    catalog: Catalog | None = None,
) -> Scenario:
    """One network per rail and no spine across rails (Wang et al., arXiv 2307.12169)."""
    cat = catalog or default_catalog()
    s = _shape("rail-only", gpus, server, switch, speed_gbps, cat)
    groups = [_group("servers", "server", server, s.servers, "server")]
    if s.servers <= s.radix:
        groups.append(_group("leaf", "switch", switch, s.nics, "leaf"))
        bundles = [
            LinkBundle(
                "servers-leaf", "servers", "leaf", "rail", speed_gbps=s.speed_gbps, length_m=10.0
            )
        ]
    else:
        half = s.radix // 2
        leaves_per_rail = math.ceil(s.servers / half)
        if leaves_per_rail > s.radix:
            largest = s.radix * half * (gpus // s.servers)
            raise _refuse(
                "rail-only",
                f"{gpus} GPUs need {leaves_per_rail} leaves per rail; a 2-tier "
                f"rail of {switch} holds {s.radix}, so at most {largest} GPUs",
            )
        spines_per_rail = math.ceil(leaves_per_rail * half / s.radix)
        while half % spines_per_rail:
            spines_per_rail += 1
        groups.append(_group("leaf", "switch", switch, leaves_per_rail * s.nics, "leaf"))
        groups.append(_group("spine", "switch", switch, spines_per_rail * s.nics, "spine"))
        bundles = [
            LinkBundle(
                "servers-leaf", "servers", "leaf", "rail", speed_gbps=s.speed_gbps, length_m=3.0
            ),
            LinkBundle(
                "leaf-spine",
                "leaf",
                "spine",
                "striped",
                blocks=s.nics,
                links_per_pair=half // spines_per_rail,
                speed_gbps=s.speed_gbps,
                length_m=30.0,
            ),
        ]
    for g in groups[1:]:  # the cards say what they are: one network per rail, no spine across
        g.name = f"Rail {'leaves' if g.tier == 'leaf' else 'spines'} ({s.nics} rails)"
    per_rail = " + ".join(f"{g.count // s.nics} {g.tier}" for g in groups[1:])
    return _scenario(
        f"rail-only {gpus} GPUs",
        f"{s.servers} × {server}, one {switch} network per rail: {s.nics} rails of "
        f"{per_rail}, no switch between rails (cross-rail traffic goes over NVLink)",
        _technology_of(switch, cat),
        _default_mode(switch, cat),
        groups,
        bundles,
    )
