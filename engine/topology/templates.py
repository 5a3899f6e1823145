"""The named topology templates and the one call that builds any of them.

Each template lives in the module of its design: `generators` (single switch, leaf-spine,
fat-tree, rail-optimized, rail-only), `planes` (multi-plane, dual-ToR) and `nvl72` (GB200
NVL72 racks on folded rails). Front ends list `TEMPLATES` and call `generate`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.model.scenario import Scenario
from engine.topology.generators import (
    fat_tree,
    leaf_spine,
    rail_only,
    rail_optimized,
    single_switch,
)
from engine.topology.nvl72 import nvl72
from engine.topology.planes import dual_tor, multi_plane
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
}
TEMPLATES = tuple(_TABLE)
# Templates whose leaves take an oversubscription, and those built of planes.
OVERSUBSCRIBED = ("leaf-spine", "fat-tree", "rail-optimized", "multi-plane", "dual-tor", "nvl72")
PLANED = ("multi-plane",)


def generate(template: str, **params: Any) -> Scenario:
    """The scenario of a named template (see `TEMPLATES`) with its parameters."""
    if template not in _TABLE:
        raise refuse(template, f"unknown template; choose one of {', '.join(TEMPLATES)}")
    return _TABLE[template](**params)
