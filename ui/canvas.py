"""The fabric canvas: one node per device group in tier bands, one edge per link bundle."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QKeySequence, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsObject,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from engine.errors import Problem
from engine.model import TIERS, DeviceGroup, LinkBundle, Scenario
from ui.document import ScenarioDocument

NODE_W = 200.0
NODE_H = 64.0
BAND_H = 150.0
PROBLEM_PEN = QPen(QColor("#d62728"), 3)


def tier_y(tier: str) -> float:
    """The y of a tier's band (Qt y grows downwards: servers at the bottom, core on top)."""
    index = TIERS.index(tier) if tier in TIERS else 0
    return (len(TIERS) - 1 - index) * BAND_H


class NodeItem(QGraphicsObject):
    """A device group: rounded rectangle with its name, ``×count`` and model."""

    def __init__(self, group: DeviceGroup) -> None:
        super().__init__()
        self.group_id = group.id
        self.lines = [group.name or group.id, f"×{group.count:,}", group.model]
        self.kind = group.kind
        self.problems: list[Problem] = []
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setToolTip(f"{group.id} ({group.kind}, tier {group.tier})")

    def boundingRect(self) -> QRectF:
        """The node's rectangle, centred on its position, with room for the outline."""
        return QRectF(-NODE_W / 2 - 3, -NODE_H / 2 - 3, NODE_W + 6, NODE_H + 6)

    def set_problems(self, problems: list[Problem]) -> None:
        """Outline the node in red and list `problems` in its tooltip (none: normal)."""
        self.problems = problems
        if problems:
            self.setToolTip("\n".join(str(p) for p in problems))
        self.update()

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        """Draw the rounded rectangle and its three lines of text."""
        rect = QRectF(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H)
        fill = QColor("#dbe9f6") if self.kind == "server" else QColor("#e8e3f3")
        painter.setBrush(QBrush(fill))
        if self.problems:
            pen = PROBLEM_PEN
        elif self.isSelected():
            pen = QPen(QColor("#1f77b4"), 3)
        else:
            pen = QPen(QColor("#555555"), 1)
        painter.setPen(pen)
        painter.drawRoundedRect(rect, 10, 10)
        painter.setPen(QColor("#111111"))
        font = QFont(painter.font())
        for i, text in enumerate(self.lines):
            font.setBold(i == 0)
            painter.setFont(font)
            line = QRectF(rect.left(), rect.top() + 4 + i * 19, rect.width(), 19)
            painter.drawText(line, Qt.AlignmentFlag.AlignCenter, text)

    def shape(self) -> QPainterPath:
        """Hit area: the rounded rectangle."""
        path = QPainterPath()
        path.addRoundedRect(QRectF(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H), 10, 10)
        return path


class EdgeItem(QGraphicsLineItem):
    """A link bundle between two nodes, labelled ``pattern · links×speed G``."""

    def __init__(self, bundle: LinkBundle, a: QPointF, b: QPointF) -> None:
        super().__init__(a.x(), a.y(), b.x(), b.y())
        self.bundle_id = bundle.id
        self.setZValue(-1)
        self.setPen(QPen(QColor("#777777"), 2))
        self.label = QGraphicsSimpleTextItem(self.label_text(bundle), self)
        mid = (a + b) / 2
        self.label.setPos(mid.x() + 8, mid.y() - 8)
        self.setToolTip(f"{bundle.id}: {bundle.a} → {bundle.b}")

    @staticmethod
    def label_text(bundle: LinkBundle) -> str:
        """The edge's label, e.g. ``rail · 1×400 G``."""
        return f"{bundle.pattern} · {bundle.links_per_pair}×{bundle.speed_gbps:g} G"

    def set_problems(self, problems: list[Problem]) -> None:
        """Draw the edge red with the problems in its tooltip."""
        if problems:
            self.setPen(PROBLEM_PEN)
            self.setToolTip("\n".join(str(p) for p in problems))


class FabricCanvas(QGraphicsView):
    """A view of the document's groups and bundles; selection picks a group.

    Wheel or Ctrl+= / Ctrl+- zooms, `fit` shows everything. `groupSelected(id)` fires with
    the selected group's id, or ``""`` when nothing is selected.
    """

    groupSelected = Signal(str)

    def __init__(self, document: ScenarioDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setObjectName("fabricCanvas")
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.nodes: dict[str, NodeItem] = {}
        self.edges: dict[str, EdgeItem] = {}
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
        """Recreate the items from the scenario, keeping the selected group selected."""
        selected = self.selected_group()
        scene = self.scene()
        scene.blockSignals(True)
        try:
            scene.clear()
            self.nodes, self.edges = {}, {}
            scenario = self.document.scenario
            positions = self.layout(scenario)
            for g in scenario.groups:
                node = NodeItem(g)
                node.setPos(positions[g.id])
                scene.addItem(node)
                self.nodes[g.id] = node
            for b in scenario.bundles:
                if b.a in positions and b.b in positions:
                    edge = EdgeItem(b, positions[b.a], positions[b.b])
                    scene.addItem(edge)
                    self.edges[b.id] = edge
            if selected in self.nodes:
                self.nodes[selected].setSelected(True)
        finally:
            scene.blockSignals(False)
        self.show_problems(self.document.problems)
        if selected and selected not in self.nodes:
            self.groupSelected.emit("")

    def show_problems(self, problems: list[Problem]) -> None:
        """Outline the items named by `problems` (``groups[id]``, ``bundles[id]``)."""
        by_where: dict[str, list[Problem]] = {}
        for p in problems:
            by_where.setdefault(p.where, []).append(p)
        for gid, node in self.nodes.items():
            node.set_problems(by_where.get(f"groups[{gid}]", []))
        for bid, edge in self.edges.items():
            edge.set_problems(by_where.get(f"bundles[{bid}]", []))

    # ---- selection --------------------------------------------------------------------------

    def selected_group(self) -> str:
        """The id of the selected group, or ``""``."""
        for gid, node in self.nodes.items():
            if node.isSelected():
                return gid
        return ""

    def select_group(self, group_id: str) -> None:
        """Select the node of `group_id` (``""`` clears the selection)."""
        self.scene().clearSelection()
        if group_id in self.nodes:
            self.nodes[group_id].setSelected(True)

    def _on_selection(self) -> None:
        self.groupSelected.emit(self.selected_group())

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
        """Ctrl+= / Ctrl++ zooms in, Ctrl+- zooms out."""
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
