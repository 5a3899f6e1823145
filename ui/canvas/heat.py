"""Link utilization on the canvas: switch nodes and bundle edges coloured by their tier's load.

The figures come from the engine (`engine.analysis.tier_utilization`, `tier_peak`); here
they only become colours (green idle, through yellow, to red saturated), tooltips and the
legend's swatches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from PySide6.QtGui import QColor

from engine.analysis import tier_peak
from ui.canvas.items import EdgeItem, NodeItem

LEGEND_STEPS = (0.0, 0.5, 1.0)


def utilization_color(u: float) -> QColor:
    """Green (idle) through yellow to red (saturated) for a utilization in 0..1."""
    u = max(0.0, min(1.0, float(u)))
    return QColor.fromHsvF((1.0 - u) * 120.0 / 360.0, 0.75, 0.9)


def legend_html() -> str:
    """The legend's text: a title and a swatch for idle, half and fully used links."""
    swatches = " ".join(
        f'<span style="background:{utilization_color(v).name()}">&nbsp;&nbsp;&nbsp;</span> {v:.0%}'
        for v in LEGEND_STEPS
    )
    return f"<small>link utilization</small><br>{swatches}"


def colour_items(
    nodes: Iterable[NodeItem], edges: Iterable[EdgeItem], utilization: Mapping[str, float]
) -> None:
    """Fill switches and colour edges by `utilization` per tier label (empty: plain again)."""
    for node in nodes:
        u = tier_peak(utilization, node.tier) if node.kind == "switch" and utilization else None
        node.fill = utilization_color(u) if u is not None else None
        if u is not None:
            node.setToolTip(f"{node.group_id}: mean link utilization {u:.0%}")
        node.update()
    for edge in edges:
        u = utilization.get(edge.tier_label)
        edge.set_base_color(utilization_color(u) if u is not None else None)
        if u is not None:
            edge.setToolTip(f"{edge.bundle_id}: mean link utilization {u:.0%}")
