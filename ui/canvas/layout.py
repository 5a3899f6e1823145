"""Where things sit on the canvas: one horizontal band per tier, nodes spread along their band.

Qt's y grows downwards, so servers sit in the bottom band and the core on top. A group with
a stored `position` keeps it; the others are laid out left to right in their tier's band.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF

from engine.model.scenario import TIERS, Scenario

NODE_W = 200.0
NODE_H = 64.0
BAND_H = 150.0
NODE_GAP = 40.0
TIER_TITLES = {"server": "SERVERS", "leaf": "LEAF", "spine": "SPINE", "core": "CORE"}


def tier_y(tier: str) -> float:
    """The y of a tier's band (Qt y grows downwards: servers at the bottom, core on top)."""
    index = TIERS.index(tier) if tier in TIERS else 0
    return (len(TIERS) - 1 - index) * BAND_H


def tier_title(tier: str) -> str:
    """The name a tier's band shows at the left edge (``SPINE``)."""
    return TIER_TITLES.get(tier, tier.upper())


def tiers_in_use(scenario: Scenario) -> list[str]:
    """The tiers some group of `scenario` is in, bottom-up in `TIERS` order (one tier per
    group id, as the nodes are keyed by id)."""
    used = set({g.id: g.tier for g in scenario.groups}.values())
    return [t for t in TIERS if t in used]


def node_positions(scenario: Scenario) -> dict[str, QPointF]:
    """Node centres: `group.position` when set, else spread along the tier's band."""
    positions: dict[str, QPointF] = {}
    per_tier: dict[str, int] = {}
    for g in scenario.groups:
        slot = per_tier.get(g.tier, 0)
        per_tier[g.tier] = slot + 1
        if g.position != (0.0, 0.0):
            positions[g.id] = QPointF(*g.position)
        else:
            positions[g.id] = QPointF(slot * (NODE_W + NODE_GAP), tier_y(g.tier))
    return positions


def tier_at(y: float) -> str:
    """The tier whose band holds scene height `y` (the nearest band above or below)."""
    index = len(TIERS) - 1 - round(y / BAND_H)
    return TIERS[max(0, min(len(TIERS) - 1, index))]
