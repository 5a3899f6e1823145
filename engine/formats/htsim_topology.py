"""htsim's fat-tree topology file (``-topo FILE``), written where the fabric is the 3-tier
fat-tree htsim builds: one NIC per host on a top-of-rack leaf, leaves fully meshed to the
spines of their pod, each spine striped to its plane of core switches.

The file, as csg-htsim's ``FatTreeTopology::load`` reads it, has a header (``Nodes``,
``Tiers``, ``Podsize``: hosts per pod) and one section per tier (``Tier 0`` the leaves,
``Tier 1`` the spines, ``Tier 2`` the cores) with ``Downlink_speed_Gbps``, ``Radix_Down``,
``Radix_Up`` (not on the top tier), ``Downlink_Latency_ns``, ``Switch_Latency_ns``,
``Oversubscribed`` and ``Bundle`` (parallel cables to each switch below). htsim derives the
switch counts from these; the reader here derives them the same way, so an export is
checked against the fabric's own counts. htsim's loader takes only 3-tier custom fat-trees,
so a 2-tier fabric gets no file (the connection matrix still holds its traffic).

Format source: Broadcom/csg-htsim, sim/datacenter/fat_tree_topology.cpp (``load`` and
``set_custom_params``); docs/formats.md.
"""

from __future__ import annotations

from engine.catalog.devices import Catalog
from engine.formats.lines import content_lines, refuse, whole
from engine.model.scenario import Scenario
from engine.topology.expand import Fabric, hop_latencies

TIER_KEYS = (
    "Downlink_speed_Gbps",
    "Radix_Down",
    "Radix_Up",
    "Downlink_Latency_ns",
    "Switch_Latency_ns",
    "Oversubscribed",
    "Bundle",
)


def fat_tree_params(scenario: Scenario, fabric: Fabric, catalog: Catalog) -> dict | None:
    """htsim's parameters of a 3-tier ToR-attached fat-tree; ``None`` for any other shape
    (other tiers, rails, failures, several GPUs per NIC, rates or ratios htsim's whole
    numbers cannot hold)."""
    tiers = {g.tier: g for g in scenario.groups}
    if sorted(tiers) != sorted(("server", "leaf", "spine", "core")) or len(scenario.groups) != 4:
        return None
    if scenario.failures.switches or scenario.failures.links or len(scenario.bundles) != 3:
        return None
    by_ends = {(b.a, b.b): b for b in scenario.bundles}
    srv, leaf, spine, core = (tiers[t] for t in ("server", "leaf", "spine", "core"))
    sl, ls, sc = (
        by_ends.get(e) for e in ((srv.id, leaf.id), (leaf.id, spine.id), (spine.id, core.id))
    )
    if None in (sl, ls, sc):
        return None
    model = catalog.get(srv.model, "server")
    if int(model.value("gpus_per_server")) != int(model.value("nics_per_server")):
        return None
    if (sl.pattern, sl.links_per_pair, ls.pattern, sc.pattern) != ("full", 1, "full", "striped"):
        return None
    hosts, pods = fabric.n_gpus, ls.blocks
    if sl.blocks != leaf.count or hosts % leaf.count or leaf.count % pods or spine.count % pods:
        return None
    if sc.blocks != spine.count // pods or core.count % sc.blocks:
        return None
    speeds = [sl.speed_gbps, ls.speed_gbps, sc.speed_gbps]
    if any(not float(s).is_integer() for s in speeds):
        return None
    switch_s, propagation_s = hop_latencies(scenario, catalog)
    radix_up = [
        (spine.count // pods) * ls.links_per_pair,
        (core.count // sc.blocks) * sc.links_per_pair,
    ]
    radix_down = [
        hosts // leaf.count,
        (leaf.count // pods) * ls.links_per_pair,
        pods * sc.links_per_pair,
    ]
    uplinks = [leaf.count * radix_up[0], spine.count * radix_up[1]]
    below = [hosts * speeds[0], uplinks[0] * speeds[1]]
    oversub = [below[i] / (speeds[i + 1] * uplinks[i]) for i in range(2)] + [1.0]
    if any(not o.is_integer() or o < 1 for o in oversub):
        return None
    tier_list = []
    for i, (g, b) in enumerate(((leaf, sl), (spine, ls), (core, sc))):
        tier = {
            "Downlink_speed_Gbps": int(speeds[i]),
            "Radix_Down": radix_down[i],
            "Downlink_Latency_ns": max(1, round(propagation_s[b.id] * 1e9)),
            "Switch_Latency_ns": round(switch_s[g.id] * 1e9),
            "Oversubscribed": int(oversub[i]),
            "Bundle": b.links_per_pair,
        }
        if i < 2:
            tier["Radix_Up"] = radix_up[i]
        tier_list.append({k: tier[k] for k in TIER_KEYS if k in tier})
    return {"Nodes": hosts, "Tiers": 3, "Podsize": hosts // pods, "tiers": tier_list}


def write_fat_tree_topo(params: dict, name: str = "") -> str:
    """The ``-topo`` file of `params` (from `fat_tree_params`)."""
    rows = [f"# FabricLab: {name}; htsim FatTreeTopology (-topo)"] if name else []
    rows += [f"Nodes {params['Nodes']}", f"Tiers {params['Tiers']}", f"Podsize {params['Podsize']}"]
    for i, tier in enumerate(params["tiers"]):
        rows += ["", f"Tier {i}"] + [f"{key} {value}" for key, value in tier.items()]
    return "\n".join(rows) + "\n"


def read_fat_tree_topo(text: str, source: str = "fat_tree.topo") -> dict:
    """The parameters of a ``-topo`` file (keys case-insensitive, as htsim reads them)."""
    header: dict[str, int] = {}
    tiers: list[dict[str, int]] = []
    names = {k.lower(): k for k in TIER_KEYS}
    for number, fields in content_lines(text):
        key = fields[0].lower()
        if len(fields) != 2:
            raise refuse(source, number, f"expected 'KEY VALUE', got {' '.join(fields)!r}")
        known = key in ("nodes", "tiers", "podsize", "tier") or (key in names and tiers)
        if not known:
            raise refuse(source, number, f"unknown or misplaced key {fields[0]!r}")
        value = whole(fields[1], source, number, fields[0])
        if key in ("nodes", "tiers", "podsize") and not tiers:
            header[key.capitalize()] = value
        elif key == "tier":
            if value != len(tiers) or value > 2:
                raise refuse(
                    source, number, f"Tier {value} out of order (expected Tier {len(tiers)})"
                )
            tiers.append({})
        elif key in names and tiers:
            if names[key] in tiers[-1]:
                raise refuse(source, number, f"{fields[0]} given twice for tier {len(tiers) - 1}")
            tiers[-1][names[key]] = value
        else:
            raise refuse(source, number, f"unknown or misplaced key {fields[0]!r}")
    for key in ("Nodes", "Tiers", "Podsize"):
        if not header.get(key):
            raise refuse(source, None, f"missing {key} in the header")
    if header["Tiers"] != 3 or len(tiers) != 3:
        raise refuse(source, None, "htsim's loader takes 3-tier fat-trees: Tier 0, 1 and 2")
    for i, tier in enumerate(tiers):
        needed = [k for k in TIER_KEYS[:5] if not (i == 2 and k == "Radix_Up")]
        missing = [k for k in needed if k not in tier]
        if missing:
            raise refuse(source, None, f"tier {i} lacks {', '.join(missing)}")
    return {**header, "tiers": [{k: t[k] for k in TIER_KEYS if k in t} for t in tiers]}


def switch_counts(params: dict, source: str = "fat_tree.topo") -> tuple[int, int, int]:
    """(leaves, spines, cores) htsim builds from `params`, derived as htsim does; what does
    not divide evenly is refused, as htsim asserts."""
    t0, t1, t2 = params["tiers"]
    nodes, podsize = params["Nodes"], params["Podsize"]
    o0, o1 = t0.get("Oversubscribed", 1), t1.get("Oversubscribed", 1)
    checks = [
        (nodes % podsize, "Nodes is not a multiple of Podsize"),
        (podsize % t0["Radix_Down"], "Podsize is not a multiple of tier 0's Radix_Down"),
        ((nodes * t0["Downlink_speed_Gbps"]) % (t1["Downlink_speed_Gbps"] * o0), "tier 0 uplinks"),
    ]
    for remainder, what in checks:
        if remainder:
            raise refuse(source, None, f"{what}: htsim would refuse this fat-tree")
    pods = nodes // podsize
    tor_uplinks = nodes * t0["Downlink_speed_Gbps"] // (t1["Downlink_speed_Gbps"] * o0)
    agg_uplinks_num = tor_uplinks * t1["Downlink_speed_Gbps"]
    if tor_uplinks % (pods * t1["Radix_Down"]) or agg_uplinks_num % (
        t2["Downlink_speed_Gbps"] * o1
    ):
        raise refuse(
            source, None, "tier 1 does not divide evenly: htsim would refuse this fat-tree"
        )
    agg_uplinks = agg_uplinks_num // (t2["Downlink_speed_Gbps"] * o1)
    if agg_uplinks % t2["Radix_Down"]:
        raise refuse(
            source, None, "tier 2 does not divide evenly: htsim would refuse this fat-tree"
        )
    leaves = pods * (podsize // t0["Radix_Down"])
    return (
        leaves,
        pods * (tor_uplinks // (pods * t1["Radix_Down"])),
        agg_uplinks // t2["Radix_Down"],
    )
