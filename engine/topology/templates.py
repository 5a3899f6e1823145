"""The named topology templates and the one call that builds any of them.

Each template lives in the module of its design: `generators` (single switch, leaf-spine,
fat-tree, rail-optimized, rail-only), `planes` (multi-plane, dual-ToR), `nvl72` (GB200
NVL72 racks on folded rails) and `hybrid` (InfiniBand pods joined by an Ethernet core
through gateways). Front ends list `TEMPLATES` and call `generate`, which adds a storage
network to any of them (`engine.topology.storage`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.catalog.devices import Catalog, default_catalog
from engine.model.scenario import Scenario
from engine.topology.generators import (
    fat_tree,
    leaf_spine,
    rail_only,
    rail_optimized,
    single_switch,
)
from engine.topology.hybrid import hybrid
from engine.topology.nvl72 import nvl72
from engine.topology.planes import dual_tor, multi_plane
from engine.topology.storage import add_storage
from engine.topology.template_parts import refuse

_TABLE: dict[str, Callable[..., Scenario]] = {
    "single-switch": single_switch,
    "leaf-spine": leaf_spine,
    "fat-tree": fat_tree,
    "rail-optimized": rail_optimized,
    "rail-only": rail_only,
    "multi-plane": multi_plane,
    "dual-tor": dual_tor,
    "nvl72": nvl72,
    "hybrid": hybrid,
}
TEMPLATES = tuple(_TABLE)
# Templates whose leaves take an oversubscription, and those built of planes.
OVERSUBSCRIBED = ("leaf-spine", "fat-tree", "rail-optimized", "multi-plane", "dual-tor", "nvl72")
PLANED = ("multi-plane",)
MIXED_PODS = ("hybrid",)  # templates whose last pod may be Ethernet (`ethernet_pod`)
# Templates whose NICs' rate is shared by several links (one per plane or ToR), and how many.
_LINKS = {"multi-plane": None, "dual-tor": 2}


def template_speed(
    template: str, server: str, planes: int = 2, catalog: Catalog | None = None
) -> float | None:
    """The port speed (Gb/s) a template uses by default: the server NIC's rate, shared by
    the planes (or the ToR pair) where the template splits it; ``None`` for an unknown
    server. The template dialog preselects it."""
    cat = catalog or default_catalog()
    try:
        srv = cat.get(server, "server")
    except KeyError:
        return None
    rate = float(srv.value("nic_port_gbps"))
    if template not in _LINKS:
        return rate
    links = _LINKS[template] or max(1, planes)
    return rate / links


def generate(template: str, storage_nodes: int = 0, **params: Any) -> Scenario:
    """The scenario of a named template (see `TEMPLATES`) with its parameters; with
    `storage_nodes`, a storage network of that many nodes beside it (`add_storage`)."""
    if template not in _TABLE:
        raise refuse(template, f"unknown template; choose one of {', '.join(TEMPLATES)}")
    scenario = _TABLE[template](**params)
    if storage_nodes:
        scenario = add_storage(scenario, storage_nodes, catalog=params.get("catalog"))
    return scenario
