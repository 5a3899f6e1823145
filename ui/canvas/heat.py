"""Colours on the canvas: link utilization per tier, or congestion per bundle.

Utilization: switch nodes and bundle edges coloured by their tier's load (green idle,
through yellow, to red saturated), from the engine (`engine.analysis.tier_utilization`,
`tier_peak`). Congestion: after a transport study (the Congestion tab), each bundle by the
share of time its links were paused (orange to red) or, where nothing paused, the share of
its bytes ECN marked (light to deep blue), from `TransportStudy.bundle_pause_fraction` and
`bundle_mark_fraction`. Here the figures only become colours, tooltips and legends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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


# ---- congestion: pause and ECN mark shares of each bundle, from a transport study ----------

CONGESTION_STEPS = (0.01, 0.5, 1.0)
QUIET_COLOR = "#5aa469"  # traversed, never paused nor marked


@dataclass(frozen=True)
class CongestionShares:
    """What the canvas colours bundles by after a transport study: the largest paused share
    of time (`pause`) and ECN-marked share of bytes (`mark`) over each bundle's links, by
    bundle id. `pause_label` names what pauses (``PFC`` or ``credit``); `current` is False
    once the scenario changed since the study (the colours are then withheld)."""

    pause: Mapping[str, float]
    mark: Mapping[str, float]
    pause_label: str = "PFC"
    current: bool = True


def pause_color(share: float) -> QColor:
    """Orange (a little paused) to deep red (paused all the time), for a share in 0..1."""
    f = max(0.0, min(1.0, float(share)))
    return QColor.fromHsvF((32.0 - 32.0 * f) / 360.0, 0.55 + 0.45 * f, 0.98 - 0.28 * f)


def mark_color(share: float) -> QColor:
    """Light blue (few bytes marked) to deep blue (every byte marked), for a share in 0..1."""
    f = max(0.0, min(1.0, float(share)))
    return QColor.fromHsvF((195.0 + 35.0 * f) / 360.0, 0.35 + 0.55 * f, 0.98 - 0.23 * f)


def bundle_congestion(shares: CongestionShares, bundle_id: str) -> tuple[QColor | None, str]:
    """A bundle's colour and tooltip line: its pause share where it paused, else its mark
    share where it was marked, else the quiet colour; no colour for a bundle the study's
    traffic did not cross."""
    pause = shares.pause.get(bundle_id)
    mark = shares.mark.get(bundle_id)
    if pause is None and mark is None:
        return None, f"{bundle_id}: no traffic in the congestion study"
    text = f"{bundle_id}: {shares.pause_label} paused {pause or 0.0:.1%} of the time"
    text += f", ECN-marked {mark:.1%} of bytes" if mark is not None else ""
    if pause:
        return pause_color(pause), text
    if mark:
        return mark_color(mark), text
    return QColor(QUIET_COLOR), text


def congestion_legend_html(shares: CongestionShares | None) -> str:
    """The legend in congestion mode: the two scales, or why nothing is coloured."""
    if shares is None:
        return "<small>congestion colours</small><br>no study yet: Run one in the Congestion tab"
    if not shares.current:
        return "<small>congestion colours</small><br><b>out of date</b>: the scenario changed, Run again"

    def swatches(paint) -> str:
        return " ".join(
            f'<span style="background:{paint(v).name()}">&nbsp;&nbsp;&nbsp;</span> {v:.0%}'
            for v in CONGESTION_STEPS
        )

    return (
        f"<small>{shares.pause_label} paused (share of time)</small><br>{swatches(pause_color)}"
        f"<br><small>else ECN-marked (share of bytes)</small><br>{swatches(mark_color)}"
        f'<br><span style="background:{QUIET_COLOR}">&nbsp;&nbsp;&nbsp;</span> neither'
    )


def colour_congestion(
    nodes: Iterable[NodeItem], edges: Iterable[EdgeItem], shares: CongestionShares | None
) -> None:
    """Colour edges by `bundle_congestion` (switches plain); nothing while `shares` is
    ``None`` or out of date."""
    for node in nodes:
        node.fill = None
        node.update()
    for edge in edges:
        if shares is None or not shares.current:
            edge.set_base_color(None)
            edge.setToolTip(f"{edge.bundle_id}: {edge.a} → {edge.b}")
            continue
        paint, text = bundle_congestion(shares, edge.bundle_id)
        edge.set_base_color(paint)
        edge.setToolTip(text)
