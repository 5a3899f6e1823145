"""The fabric canvas view: one node per device group in tier bands, one edge per link bundle.

`FabricCanvas` mirrors the document: it rebuilds its items on every change, outlines the
items problems name, draws the tier bands, keeps the selection, and after a run colours
switches and bundles by the permutation test's mean link utilization per tier (figures
from `engine.analysis`), or, in the congestion colouring mode, bundles by the pause and ECN
mark shares of the last transport study (`ui.canvas.heat`). Editing gestures come from `CanvasGestures`; every edit goes through
the document, so each is one undo step. Delete removes the selection; Ctrl+C / Ctrl+V copy
and paste groups.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QFont, QPainter
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsScene, QGraphicsView, QLabel, QWidget

from engine.analysis import TierUtilization, bundle_tier_labels, tier_peak, tier_utilization
from engine.model.errors import Problem
from engine.model.networks import storage_ids
from engine.model.pods import pods
from engine.model.scenario import TIERS, DeviceGroup, LinkBundle, Scenario
from ui.canvas.context_menu import CanvasContextMenu
from ui.canvas.gestures import CanvasGestures
from ui.canvas.heat import (
    CongestionShares,
    colour_congestion,
    colour_items,
    congestion_legend_html,
    legend_html,
)
from ui.canvas.items import EdgeItem, NodeItem, group_technology
from ui.canvas.layout import BAND_H, node_positions, tier_title, tier_y, tiers_in_use
from ui.canvas.network_frame import NetworkFrame, PodFrame
from ui.document.document import ScenarioDocument
from ui.theme import LIGHT, Theme, color

PASTE_OFFSET = (60.0, 60.0)
ZOOM_MIN, ZOOM_MAX = 0.05, 20.0
UTILIZATION, CONGESTION = "utilization", "congestion"
COLOUR_MODES = (UTILIZATION, CONGESTION)


class FabricCanvas(CanvasContextMenu, CanvasGestures, QGraphicsView):
    """A view of the document's groups and bundles; selection picks a group.

    Wheel or Ctrl+= / Ctrl+- zooms, `fit` shows everything. `groupSelected(id)` fires with
    the selected group's id, or ``""`` when nothing is selected; `bundleSelected(id)` then
    fires with the selected bundle's id (``""`` when a group or nothing is selected).
    `colour_mode` is ``utilization`` or ``congestion``; `colourModeChanged(mode)` follows
    each switch (`set_colour_mode`, or a new study shown by `show_congestion`). Right-click
    menus come from `CanvasContextMenu`; their "Properties" emits `propertiesRequested()`.
    """

    propertiesRequested = Signal()
    groupSelected = Signal(str)
    bundleSelected = Signal(str)
    colourModeChanged = Signal(str)

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
        self.storage_frame: NetworkFrame | None = None  # the storage network's, if any
        self.pod_frames: list[PodFrame] = []  # one a pod (engine.model.pods), if any
        # its items, never coloured by the compute fabric's utilization or congestion
        self.storage_groups: set[str] = set()
        self.storage_bundles: set[str] = set()
        self.edges: dict[str, EdgeItem] = {}
        self.positions: dict[str, QPointF] = {}
        self.clipboard: tuple[list[DeviceGroup], list[LinkBundle]] = ([], [])
        self.utilization: dict[str, float] = {}
        self.colour_mode = UTILIZATION
        self.congestion: CongestionShares | None = None
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
        return node_positions(scenario)

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
            self.storage_frame, self.pod_frames = None, []
            scenario = self.document.scenario
            self.positions = positions = self.layout(scenario)
            self.tiers = tiers_in_use(scenario)
            tier_labels = bundle_tier_labels(scenario)
            for g in scenario.groups:
                technology = group_technology(g, scenario, self.document.catalog)
                node = NodeItem(g, technology, self.theme)
                node.set_failed(len(self.document.failed_members(g.id)))
                node.setPos(positions[g.id])
                scene.addItem(node)
                self.nodes[g.id] = node
                node.setSelected(g.id in selected_groups)
            storage, self.storage_bundles = storage_ids(scenario)
            self.storage_groups = storage
            if storage:
                self.storage_frame = NetworkFrame([positions[g] for g in storage], self.theme)
                scene.addItem(self.storage_frame)
            for number, ids in enumerate(pods(scenario), start=1):
                servers = scenario.group(ids[0])
                size = f"{servers.count} × {servers.model}"
                frame = PodFrame([positions[g] for g in ids], self.theme, number, size)
                scene.addItem(frame)
                self.pod_frames.append(frame)
            for b in scenario.bundles:
                if b.a in positions and b.b in positions:
                    edge = EdgeItem(b, positions[b.a], positions[b.b], self.theme)
                    edge.tier_label = tier_labels[b.id]
                    edge.set_failed(self.document.links_down(b.id))
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
        for frame in [self.storage_frame, *self.pod_frames]:
            if frame is not None:
                frame.theme = theme
                frame.update()
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
                painter.drawText(QPointF(12.0, baseline), tier_title(tier))
        painter.restore()

    def _place_legend(self) -> None:
        """Keep the utilization legend in the viewport's top-right corner."""
        self.legend.move(max(8, self.viewport().width() - self.legend.width() - 8), 8)

    def resizeEvent(self, event) -> None:
        """Keep the legend in its corner when the view changes size."""
        super().resizeEvent(event)
        self._place_legend()

    # ---- link utilization -------------------------------------------------------------------

    def show_utilization(self, link_utilization: Mapping[str, TierUtilization] | None) -> None:
        """Colour switches and bundles by mean utilization per tier (``None``: clear)."""
        self.utilization = tier_utilization(link_utilization)
        self._apply_utilization()
        self.show_problems(self.document.problems)

    def node_utilization(self, tier: str) -> float | None:
        """The highest mean utilization of the tier labels touching `tier`."""
        return tier_peak(self.utilization, tier)

    def _apply_utilization(self) -> None:
        nodes = [n for gid, n in self.nodes.items() if gid not in self.storage_groups]
        edges = [e for bid, e in self.edges.items() if bid not in self.storage_bundles]
        if self.colour_mode == CONGESTION:
            colour_congestion(nodes, edges, self.congestion)
            self.legend.setText(congestion_legend_html(self.congestion))
        else:
            colour_items(nodes, edges, self.utilization)
            self.legend.setText(legend_html())
        shown = self.colour_mode == CONGESTION or bool(self.utilization)
        if shown:
            self.legend.adjustSize()
            self._place_legend()
        self.legend.setVisible(shown)

    # ---- congestion -------------------------------------------------------------------------

    def show_congestion(self, shares: CongestionShares | None, activate: bool = False) -> None:
        """Keep a study's pause and mark shares per bundle (``None``: no study), shown in
        congestion mode; `activate` switches to that mode (a new study just arrived)."""
        self.congestion = shares
        if activate and self.colour_mode != CONGESTION:
            self.set_colour_mode(CONGESTION)
            return
        self._apply_utilization()
        self.show_problems(self.document.problems)

    def set_colour_mode(self, mode: str) -> None:
        """Colour by link ``utilization`` (tiers) or by ``congestion`` (the last study)."""
        if mode not in COLOUR_MODES:
            raise ValueError(f"unknown colour mode {mode!r}; use one of {COLOUR_MODES}")
        if mode == self.colour_mode:
            return
        self.colour_mode = mode
        self.rebuild()  # fresh items: no tooltip or fill of the other mode stays behind
        self.colourModeChanged.emit(mode)

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

    # ---- zoom -------------------------------------------------------------------------------

    def zoom(self, factor: float) -> None:
        """Scale the view by `factor`, within 5 %..2000 %."""
        current = self.transform().m11()
        factor = max(ZOOM_MIN / current, min(ZOOM_MAX / current, factor))
        self.scale(factor, factor)

    def fit(self) -> None:
        """Show every item, below the utilization legend when it is shown (a card in the
        top band must not hide under it)."""
        rect = self.scene().itemsBoundingRect().adjusted(-40, -40, 40, 40)
        if rect.isEmpty():
            return
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        for _ in range(3 if self.legend.isVisible() else 0):  # the margin sets the scale
            scale = self.transform().m11() or 1.0
            margin = (self.legend.height() + 12) / scale
            self.fitInView(rect.adjusted(0, -margin, 0, 0), Qt.AspectRatioMode.KeepAspectRatio)
