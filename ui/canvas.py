"""The fabric canvas: one node per device group in tier bands, one edge per link bundle.

Editing on the canvas (all through the document, so every edit is one undo step):
dragging nodes moves them; dropping a palette item adds a group; dragging with the right
button (or Shift+left) from one node to another connects them; Delete removes the selection;
Ctrl+C / Ctrl+V copy and paste groups. After a run, `show_utilization` colours switch nodes
and bundle edges by the permutation test's mean link utilization per tier.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsObject,
    QGraphicsScene,
    QGraphicsView,
    QLabel,
    QStyleOptionGraphicsItem,
    QWidget,
)

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import TIERS, DeviceGroup, LinkBundle, Scenario
from ui.document import ScenarioDocument
from ui.icons import device_pixmap, technology_color
from ui.theme import LIGHT, Theme, color, readable_on

NODE_W = 200.0
NODE_H = 64.0
NODE_RADIUS = 8.0
ICON_SIZE = 36.0
ICON_PX = 128  # icon pixmap edge: sharp up to about 3.5× zoom
BAND_H = 150.0
DEVICE_MIME = "application/x-fabriclab-device"
PASTE_OFFSET = (60.0, 60.0)
TIER_TITLES = {"server": "SERVERS", "leaf": "LEAF", "spine": "SPINE", "core": "CORE"}
TECHNOLOGY_TITLES = {"infiniband": "InfiniBand", "ethernet": "Ethernet", "roce": "RoCE"}
SWITCH_TECHNOLOGIES = ("infiniband", "ethernet")


def utilization_color(u: float) -> QColor:
    """Green (idle) through yellow to red (saturated) for a utilization in 0..1."""
    u = max(0.0, min(1.0, float(u)))
    return QColor.fromHsvF((1.0 - u) * 120.0 / 360.0, 0.75, 0.9)


def tier_utilization(link_utilization: dict[str, Any]) -> dict[str, float]:
    """Mean utilization per tier label (``leaf->spine``), both directions folded into max."""
    out: dict[str, float] = {}
    for label, stats in link_utilization.items():
        if "->" not in label or not isinstance(stats, dict) or "mean" not in stats:
            continue
        a, b = label.split("->", 1)
        reverse = link_utilization.get(f"{b}->{a}", {})
        out[label] = max(float(stats["mean"]), float(reverse.get("mean", 0.0)))
    return out


def group_technology(group: DeviceGroup, scenario: Scenario, catalog: Catalog) -> str:
    """What a node's badge shows: a switch's own technology, else the scenario's fabric.

    Servers' NICs speak both (VPI), so their network is the one the scenario chooses.
    """
    device = catalog.devices.get(group.model)
    if device is not None and device.kind == "switch" and device.technology in SWITCH_TECHNOLOGIES:
        return device.technology
    return scenario.fabric.technology


def tier_y(tier: str) -> float:
    """The y of a tier's band (Qt y grows downwards: servers at the bottom, core on top)."""
    index = TIERS.index(tier) if tier in TIERS else 0
    return (len(TIERS) - 1 - index) * BAND_H


class NodeItem(QGraphicsObject):
    """A device group: a card with the device icon, the name, the model and a ×count badge.

    The icon follows the catalog kind and the tier (a switch shows its tier's mark) and
    carries the technology badge; after a run `fill` holds the utilization colour, and the
    text and icon switch to whichever of dark or light reads on it.
    """

    def __init__(
        self, group: DeviceGroup, technology: str | None = None, theme: Theme = LIGHT
    ) -> None:
        super().__init__()
        self.group_id = group.id
        self.lines = [group.name or group.id, f"×{group.count:,}", group.model]
        self.kind = group.kind
        self.tier = group.tier
        self.technology = technology
        self.theme = theme
        self.problems: list[Problem] = []
        self.fill: QColor | None = None
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable)
        tech = TECHNOLOGY_TITLES.get(technology or "", "")
        self.setToolTip(
            f"{group.id} ({group.kind}, tier {group.tier}{', ' + tech if tech else ''})"
        )

    def boundingRect(self) -> QRectF:
        """The node's rectangle, centred on its position, with room for outline and shadow."""
        return QRectF(-NODE_W / 2 - 3, -NODE_H / 2 - 3, NODE_W + 6, NODE_H + 8)

    def icon_rect(self) -> QRectF:
        """Where the device icon is drawn, in item coordinates."""
        return QRectF(-NODE_W / 2 + 12, -ICON_SIZE / 2, ICON_SIZE, ICON_SIZE)

    def set_problems(self, problems: list[Problem]) -> None:
        """Outline the node in red and list `problems` in its tooltip (none: normal)."""
        self.problems = problems
        if problems:
            self.setToolTip("\n".join(str(p) for p in problems))
        self.update()

    def set_theme(self, theme: Theme) -> None:
        """Draw in `theme` from the next paint on."""
        self.theme = theme
        self.update()

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Draw the card: shadow, fill, outline, icon, name, model, technology, badge."""
        theme = self.theme
        rect = QRectF(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color("#000000", 70 if theme.dark else 28))
        painter.drawRoundedRect(rect.translated(0, 2.5), NODE_RADIUS, NODE_RADIUS)
        if self.fill is not None:
            fill = self.fill
            text = readable_on(fill)
            subtext = QColor(text)
            subtext.setAlphaF(0.8)
        else:
            fill = color(theme.server_fill if self.kind == "server" else theme.switch_fill)
            text, subtext = color(theme.node_text), color(theme.node_subtext)
        if self.problems:
            pen = QPen(color(theme.problem), 3)
        elif self.isSelected():
            pen = QPen(color(theme.selection), 2.5)
        else:
            pen = QPen(color(theme.node_border), 1)
        painter.setBrush(QBrush(fill))
        painter.setPen(pen)
        painter.drawRoundedRect(rect, NODE_RADIUS, NODE_RADIUS)

        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        icon = device_pixmap(self.kind, self.tier, self.technology, theme, ICON_PX, text.name())
        painter.drawPixmap(self.icon_rect(), icon, QRectF(icon.rect()))

        left = self.icon_rect().right() + 10
        base = QFont(painter.font())
        badge_font = QFont(base)
        badge_font.setBold(True)
        badge_text = self.lines[1]
        badge_w = QFontMetricsF(badge_font).horizontalAdvance(badge_text) + 12
        badge = QRectF(rect.right() - 8 - badge_w, rect.top() + 9, badge_w, 18)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color(theme.badge_fill))
        painter.drawRoundedRect(badge, 9, 9)
        painter.setFont(badge_font)
        painter.setPen(color(theme.badge_text))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, badge_text)

        name_font = QFont(base)
        name_font.setBold(True)
        name_font.setPointSizeF(base.pointSizeF() * 1.1)
        name_rect = QRectF(left, rect.top() + 8, badge.left() - 6 - left, 22)
        name = QFontMetricsF(name_font).elidedText(
            self.lines[0], Qt.TextElideMode.ElideRight, name_rect.width()
        )
        painter.setFont(name_font)
        painter.setPen(text)
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(name_rect, align, name)

        painter.setFont(base)
        detail = QRectF(left, rect.top() + 33, rect.right() - 10 - left, 20)
        tech = TECHNOLOGY_TITLES.get(self.technology or "", "")
        if tech:
            tech_w = QFontMetricsF(base).horizontalAdvance(tech)
            tech_color = text if self.fill is not None else color(technology_hex(self, theme))
            painter.setPen(tech_color)
            right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(detail, right, tech)
            detail.setRight(detail.right() - tech_w - 8)
        model = QFontMetricsF(base).elidedText(
            self.lines[2], Qt.TextElideMode.ElideRight, detail.width()
        )
        painter.setPen(subtext)
        painter.drawText(detail, align, model)

    def shape(self) -> QPainterPath:
        """Hit area: the rounded rectangle."""
        path = QPainterPath()
        path.addRoundedRect(
            QRectF(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H), NODE_RADIUS, NODE_RADIUS
        )
        return path


def technology_hex(node: NodeItem, theme: Theme) -> str:
    """The theme colour of a node's technology (its subtext colour when it has none)."""
    return technology_color(node.technology, theme) or theme.node_subtext


class EdgeLabel(QGraphicsItem):
    """A bundle's label on a small pill in the canvas colour, centred on the edge."""

    def __init__(self, text: str, theme: Theme, parent: QGraphicsItem) -> None:
        super().__init__(parent)
        self._text = text
        self.theme = theme
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self._font = QFont()
        self._font.setPointSizeF(self._font.pointSizeF() * 0.9)
        metrics = QFontMetricsF(self._font)
        w, h = metrics.horizontalAdvance(text) + 10, metrics.height() + 4
        self._rect = QRectF(-w / 2, -h / 2, w, h)

    def text(self) -> str:
        """The label's text."""
        return self._text

    def boundingRect(self) -> QRectF:
        """The pill around the text, centred on the item's position."""
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        """The pill, then the text."""
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color(self.theme.edge_label_background, 225))
        painter.drawRoundedRect(self._rect, self._rect.height() / 2, self._rect.height() / 2)
        painter.setFont(self._font)
        painter.setPen(color(self.theme.edge_label))
        painter.drawText(self._rect, Qt.AlignmentFlag.AlignCenter, self._text)


class EdgeItem(QGraphicsLineItem):
    """A link bundle between two nodes, labelled ``pattern · links×speed G``."""

    def __init__(self, bundle: LinkBundle, a: QPointF, b: QPointF, theme: Theme = LIGHT) -> None:
        super().__init__()
        self.bundle_id = bundle.id
        self.a, self.b = bundle.a, bundle.b
        self.tier_label = ""
        self.theme = theme
        self.base_color: QColor | None = None
        self.setZValue(-1)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.base_pen = self._pen_for(None)
        self.setPen(self.base_pen)
        self.label = EdgeLabel(self.label_text(bundle), theme, self)
        self.set_ends(a, b)
        self.setToolTip(f"{bundle.id}: {bundle.a} → {bundle.b}")

    def _pen_for(self, base: QColor | None) -> QPen:
        if base is None:
            return QPen(color(self.theme.edge), 2)
        return QPen(base, 4)

    def set_ends(self, a: QPointF, b: QPointF) -> None:
        """Move the edge (and its label) to join `a` and `b`."""
        self.setLine(a.x(), a.y(), b.x(), b.y())
        self.label.setPos((a + b) / 2)

    def set_base_color(self, base: QColor | None) -> None:
        """Draw the edge in `base` (``None``: the theme's edge colour), thicker when coloured."""
        self.base_color = base
        self.base_pen = self._pen_for(base)
        self.setPen(self.base_pen)

    def set_theme(self, theme: Theme) -> None:
        """Draw in `theme`: the uncoloured pen and the label follow it."""
        self.theme = theme
        self.label.theme = theme
        if self.base_color is None and self.pen() == self.base_pen:
            self.base_pen = self._pen_for(None)
            self.setPen(self.base_pen)
        self.label.update()

    def paint(self, painter, option, widget=None) -> None:
        """The line, highlighted in the selection colour when selected."""
        if self.isSelected():
            painter.setPen(QPen(color(self.theme.selection), self.pen().widthF() + 2))
            painter.drawLine(self.line())
        else:
            super().paint(painter, option, widget)

    def shape(self) -> QPainterPath:
        """A wider hit area than the line itself, so an edge is easy to click."""
        path = QPainterPath()
        path.moveTo(self.line().p1())
        path.lineTo(self.line().p2())
        stroker = QPainterPathStroker()
        stroker.setWidth(10)
        return stroker.createStroke(path)

    @staticmethod
    def label_text(bundle: LinkBundle) -> str:
        """The edge's label, e.g. ``rail · 1×400 G``."""
        return f"{bundle.pattern} · {bundle.links_per_pair}×{bundle.speed_gbps:g} G"

    def set_problems(self, problems: list[Problem]) -> None:
        """Draw the edge red with the problems in its tooltip."""
        if problems:
            self.setPen(QPen(color(self.theme.problem), 3))
            self.setToolTip("\n".join(str(p) for p in problems))


class FabricCanvas(QGraphicsView):
    """A view of the document's groups and bundles; selection picks a group.

    Wheel or Ctrl+= / Ctrl+- zooms, `fit` shows everything. `groupSelected(id)` fires with
    the selected group's id, or ``""`` when nothing is selected; `bundleSelected(id)` then
    fires with the selected bundle's id (``""`` when a group or nothing is selected).
    """

    groupSelected = Signal(str)
    bundleSelected = Signal(str)

    def __init__(self, document: ScenarioDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setObjectName("fabricCanvas")
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        # the tier labels stay pinned to the left edge, so every repaint redraws the viewport
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setAcceptDrops(True)
        self.theme = LIGHT
        self.tiers: list[str] = []
        self.nodes: dict[str, NodeItem] = {}
        self.edges: dict[str, EdgeItem] = {}
        self.positions: dict[str, QPointF] = {}
        self.clipboard: tuple[list[DeviceGroup], list[LinkBundle]] = ([], [])
        self.utilization: dict[str, float] = {}
        self._connect_from = ""
        self._connect_line: QGraphicsLineItem | None = None
        self.legend = QLabel(self.viewport())
        self.legend.setObjectName("utilizationLegend")
        self.legend.setVisible(False)
        self.set_theme(self.theme)
        self.scene().selectionChanged.connect(self._on_selection)
        document.changed.connect(self.rebuild)
        document.problemsChanged.connect(self.show_problems)
        self.rebuild()

    # ---- mirroring the document -------------------------------------------------------------

    @staticmethod
    def layout(scenario: Scenario) -> dict[str, QPointF]:
        """Node centres: `group.position` when set, else spread along the tier's band."""
        positions: dict[str, QPointF] = {}
        per_tier: dict[str, int] = {}
        for g in scenario.groups:
            slot = per_tier.get(g.tier, 0)
            per_tier[g.tier] = slot + 1
            if g.position != (0.0, 0.0):
                positions[g.id] = QPointF(*g.position)
            else:
                positions[g.id] = QPointF(slot * (NODE_W + 40), tier_y(g.tier))
        return positions

    def rebuild(self) -> None:
        """Recreate the items from the scenario, keeping the selected items selected."""
        selected = self.selected_group()
        selected_groups = set(self.selected_groups())
        selected_bundles = set(self.selected_bundles())
        scene = self.scene()
        scene.blockSignals(True)
        try:
            self._cancel_connect()
            scene.clear()
            self.nodes, self.edges = {}, {}
            scenario = self.document.scenario
            self.positions = positions = self.layout(scenario)
            tiers = {g.id: g.tier for g in scenario.groups}
            self.tiers = [t for t in TIERS if t in tiers.values()]
            for g in scenario.groups:
                technology = group_technology(g, scenario, self.document.catalog)
                node = NodeItem(g, technology, self.theme)
                node.setPos(positions[g.id])
                scene.addItem(node)
                self.nodes[g.id] = node
                node.setSelected(g.id in selected_groups)
            for b in scenario.bundles:
                if b.a in positions and b.b in positions:
                    edge = EdgeItem(b, positions[b.a], positions[b.b], self.theme)
                    edge.tier_label = f"{tiers[b.a]}->{tiers[b.b]}"
                    scene.addItem(edge)
                    self.edges[b.id] = edge
                    edge.setSelected(b.id in selected_bundles)
        finally:
            scene.blockSignals(False)
        self._apply_utilization()
        self.show_problems(self.document.problems)
        if selected and selected not in self.nodes:
            self.groupSelected.emit(self.selected_group())

    def show_problems(self, problems: list[Problem]) -> None:
        """Outline the items named by `problems` (``groups[id]``, ``bundles[id]``)."""
        by_where: dict[str, list[Problem]] = {}
        for p in problems:
            by_where.setdefault(p.where, []).append(p)
        for gid, node in self.nodes.items():
            node.set_problems(by_where.get(f"groups[{gid}]", []))
        for bid, edge in self.edges.items():
            edge.set_problems(by_where.get(f"bundles[{bid}]", []))

    # ---- theme and tier bands ---------------------------------------------------------------

    def set_theme(self, theme: Theme) -> None:
        """Redraw the scene background, tier bands, nodes, bundles and legend in `theme`."""
        self.theme = theme
        self.setBackgroundBrush(QBrush(color(theme.canvas_background)))
        self.legend.setStyleSheet(
            f"QLabel#utilizationLegend {{ background: {theme.overlay_background};"
            f" color: {theme.overlay_text}; border: 1px solid {theme.mid};"
            " border-radius: 4px; padding: 4px 6px; }"
        )
        for node in self.nodes.values():
            node.set_theme(theme)
        for edge in self.edges.values():
            edge.set_theme(theme)
        self.show_problems(self.document.problems)
        self.viewport().update()

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        """The canvas colour, one band per tier in use, and the tier names at the left edge."""
        super().drawBackground(painter, rect)
        theme = self.theme
        painter.setPen(Qt.PenStyle.NoPen)
        for tier in self.tiers:
            top = tier_y(tier) - BAND_H / 2
            band = QRectF(rect.left(), top, rect.width(), BAND_H)
            painter.fillRect(band, color(theme.band_fills[TIERS.index(tier) % 2]))
        painter.save()
        painter.resetTransform()
        font = QFont(self.font())
        font.setBold(True)
        font.setPixelSize(11)
        font.setLetterSpacing(QFont.SpacingType.AbsoluteSpacing, 1.2)
        painter.setFont(font)
        painter.setPen(color(theme.band_label))
        for tier in self.tiers:
            # at the band's top, or at the view's top while the band runs off it
            top = self.mapFromScene(QPointF(0.0, tier_y(tier) - BAND_H / 2)).y()
            bottom = self.mapFromScene(QPointF(0.0, tier_y(tier) + BAND_H / 2)).y()
            baseline = max(top, 0) + 18.0
            if baseline < bottom - 4.0:
                painter.drawText(QPointF(12.0, baseline), TIER_TITLES.get(tier, tier.upper()))
        painter.restore()

    def _place_legend(self) -> None:
        """Keep the utilization legend in the viewport's top-right corner."""
        self.legend.move(max(8, self.viewport().width() - self.legend.width() - 8), 8)

    def resizeEvent(self, event) -> None:
        """Keep the legend in its corner when the view changes size."""
        super().resizeEvent(event)
        self._place_legend()

    # ---- link utilization -------------------------------------------------------------------

    def show_utilization(self, link_utilization: dict[str, Any] | None) -> None:
        """Colour switches and bundles by mean utilization per tier (``None``: clear)."""
        self.utilization = tier_utilization(link_utilization or {})
        self._apply_utilization()
        self.show_problems(self.document.problems)

    def node_utilization(self, tier: str) -> float | None:
        """The highest mean utilization of the tier labels touching `tier`."""
        values = [u for label, u in self.utilization.items() if tier in label.split("->")]
        return max(values) if values else None

    def _apply_utilization(self) -> None:
        util = self.utilization
        for node in self.nodes.values():
            u = self.node_utilization(node.tier) if node.kind == "switch" and util else None
            node.fill = utilization_color(u) if u is not None else None
            if u is not None:
                node.setToolTip(f"{node.group_id}: mean link utilization {u:.0%}")
            node.update()
        for edge in self.edges.values():
            u = util.get(edge.tier_label)
            edge.set_base_color(utilization_color(u) if u is not None else None)
            if u is not None:
                edge.setToolTip(f"{edge.bundle_id}: mean link utilization {u:.0%}")
        if util:
            swatches = " ".join(
                f'<span style="background:{utilization_color(v).name()}">&nbsp;&nbsp;&nbsp;</span>'
                f" {v:.0%}"
                for v in (0.0, 0.5, 1.0)
            )
            self.legend.setText(f"<small>link utilization</small><br>{swatches}")
            self.legend.adjustSize()
            self._place_legend()
        self.legend.setVisible(bool(util))

    # ---- selection --------------------------------------------------------------------------

    def selected_group(self) -> str:
        """The id of the selected group, or ``""``."""
        for gid, node in self.nodes.items():
            if node.isSelected():
                return gid
        return ""

    def selected_groups(self) -> list[str]:
        """The ids of every selected group, in scenario order."""
        return [gid for gid, node in self.nodes.items() if node.isSelected()]

    def selected_bundles(self) -> list[str]:
        """The ids of every selected bundle."""
        return [bid for bid, edge in self.edges.items() if edge.isSelected()]

    def select_group(self, group_id: str) -> None:
        """Select the node of `group_id` (``""`` clears the selection)."""
        self.scene().clearSelection()
        if group_id in self.nodes:
            self.nodes[group_id].setSelected(True)

    def select_bundle(self, bundle_id: str) -> bool:
        """Select the edge of `bundle_id` and centre it; whether such an edge exists."""
        edge = self.edges.get(bundle_id)
        if edge is None:
            return False
        self.scene().clearSelection()
        edge.setSelected(True)
        self.centerOn(edge)
        return True

    def _on_selection(self) -> None:
        group = self.selected_group()
        bundles = self.selected_bundles()
        self.groupSelected.emit(group)
        self.bundleSelected.emit(bundles[0] if bundles and not group else "")

    # ---- editing ----------------------------------------------------------------------------

    def delete_selected(self) -> bool:
        """Remove the selected groups (with their bundles) and bundles: one undo step."""
        groups, bundles = self.selected_groups(), self.selected_bundles()
        if not groups and not bundles:
            return False
        return self.document.remove_items(groups, bundles)

    def copy_selected(self) -> int:
        """Remember the selected groups (at their drawn positions) and the bundles among them."""
        ids = self.selected_groups()
        if not ids:
            return 0
        scenario = self.document.scenario
        groups = []
        for gid in ids:
            pos = self.positions.get(gid, QPointF())
            groups.append(dataclasses.replace(scenario.group(gid), position=(pos.x(), pos.y())))
        chosen = set(ids)
        bundles = [b for b in scenario.bundles if b.a in chosen and b.b in chosen]
        self.clipboard = (groups, bundles)
        return len(groups)

    def paste(self) -> list[str]:
        """Paste the copied groups with new ids (offset), selecting them."""
        groups, bundles = self.clipboard
        new_ids = self.document.paste_groups(groups, bundles, PASTE_OFFSET)
        if new_ids:
            self.scene().clearSelection()
            for gid in new_ids:
                if gid in self.nodes:
                    self.nodes[gid].setSelected(True)
        return new_ids

    def _node_at(self, view_pos) -> NodeItem | None:
        for item in self.items(view_pos):
            if isinstance(item, NodeItem):
                return item
        return None

    def _update_edges(self) -> None:
        for edge in self.edges.values():
            if edge.a in self.nodes and edge.b in self.nodes:
                edge.set_ends(self.nodes[edge.a].pos(), self.nodes[edge.b].pos())

    def _cancel_connect(self) -> None:
        if self._connect_line is not None and self._connect_line.scene() is not None:
            self.scene().removeItem(self._connect_line)
        self._connect_line = None
        self._connect_from = ""

    def mousePressEvent(self, event) -> None:
        """Right button (or Shift+left) on a node starts a connection drag."""
        pos = event.position().toPoint()
        right = event.button() == Qt.MouseButton.RightButton
        shift_left = event.button() == Qt.MouseButton.LeftButton and bool(
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        )
        node = self._node_at(pos) if right or shift_left else None
        if node is not None:
            self._connect_from = node.group_id
            start = node.pos()
            line = QGraphicsLineItem(start.x(), start.y(), start.x(), start.y())
            line.setPen(QPen(color(self.theme.selection), 2, Qt.PenStyle.DashLine))
            line.setZValue(10)
            self.scene().addItem(line)
            self._connect_line = line
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        """Stretch the connection line, or let nodes follow the drag with their edges."""
        if self._connect_from:
            end = self.mapToScene(event.position().toPoint())
            line = self._connect_line.line()
            self._connect_line.setLine(line.x1(), line.y1(), end.x(), end.y())
            event.accept()
            return
        super().mouseMoveEvent(event)
        self._update_edges()

    def mouseReleaseEvent(self, event) -> None:
        """End a connection drag (bundle added) or a node drag (one move command)."""
        if self._connect_from:
            source = self._connect_from
            target = self._node_at(event.position().toPoint())
            self._cancel_connect()
            event.accept()
            if target is not None and target.group_id != source:
                self.document.connect_groups(source, target.group_id)
            return
        super().mouseReleaseEvent(event)
        moved: dict[str, tuple[float, float]] = {}
        for gid, node in self.nodes.items():
            old = self.positions.get(gid)
            pos = node.pos()
            if old is not None and (pos - old).manhattanLength() > 0.5:
                x, y = pos.x(), pos.y()
                moved[gid] = (x, y) if (x, y) != (0.0, 0.0) else (0.0, 0.001)
        if moved:
            self.document.move_groups(moved)

    # ---- drops from the palette -------------------------------------------------------------

    def _accepts(self, event) -> bool:
        return event.mimeData().hasFormat(DEVICE_MIME)

    def dragEnterEvent(self, event) -> None:
        """Accept catalog devices dragged from the palette."""
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        """Keep accepting a palette drag while it moves over the canvas."""
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        """Add a group of the dropped catalog model at the drop position."""
        if not self._accepts(event):
            event.ignore()
            return
        model = bytes(event.mimeData().data(DEVICE_MIME)).decode("utf-8")
        at = self.mapToScene(event.position().toPoint())
        position = (at.x(), at.y()) if (at.x(), at.y()) != (0.0, 0.0) else (0.0, 0.001)
        try:
            gid = self.document.add_device(model, position)
        except KeyError:
            event.ignore()
            return
        event.acceptProposedAction()
        self.select_group(gid)

    # ---- zoom -------------------------------------------------------------------------------

    def zoom(self, factor: float) -> None:
        """Scale the view by `factor`, within 5 %..2000 %."""
        current = self.transform().m11()
        factor = max(0.05 / current, min(20.0 / current, factor))
        self.scale(factor, factor)

    def fit(self) -> None:
        """Show every item."""
        rect = self.scene().itemsBoundingRect().adjusted(-40, -40, 40, 40)
        if not rect.isEmpty():
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)

    def wheelEvent(self, event) -> None:
        """Zoom around the cursor."""
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom(1.15**steps)
        event.accept()

    def keyPressEvent(self, event) -> None:
        """Ctrl+= / Ctrl++ zooms in, Ctrl+- zooms out; Delete removes the selection."""
        if event.matches(QKeySequence.StandardKey.ZoomIn) or (
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
            and event.key() in (Qt.Key.Key_Plus, Qt.Key.Key_Equal)
        ):
            self.zoom(1.25)
        elif event.matches(QKeySequence.StandardKey.ZoomOut) or (
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
            and event.key() == Qt.Key.Key_Minus
        ):
            self.zoom(0.8)
        else:
            super().keyPressEvent(event)
