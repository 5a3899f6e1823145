"""The canvas's items: a card per device group, a labelled line per link bundle.

A `NodeItem` draws its group's device icon, name, model, technology and ×count badge, in
the utilization colour after a run; an `EdgeItem` draws a bundle between two node centres
with an `EdgeLabel` pill on it. Both outline themselves in red when a problem names them.
Failed parts (the scenario's `failures`) are drawn dashed: a bundle with cables down, a
switch group with members down (crossed out when every member is down), and their labels
say how many.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsObject,
    QStyleOptionGraphicsItem,
    QWidget,
)

from engine.catalog.devices import Catalog
from engine.model.errors import Problem
from engine.model.scenario import DeviceGroup, LinkBundle, Scenario
from engine.model.technology_checks import group_layers, has_gateway
from ui.canvas.layout import NODE_H, NODE_W
from ui.icons import device_pixmap, technology_color
from ui.theme import LIGHT, Theme, color, readable_on

NODE_RADIUS = 8.0
ICON_SIZE = 36.0
ICON_PX = 128  # icon pixmap edge: sharp up to about 3.5× zoom
TECHNOLOGY_TITLES = {
    "infiniband": "InfiniBand",
    "ethernet": "Ethernet",
    "roce": "RoCE",
    "gateway": "IB ↔ Ethernet",
}
SWITCH_TECHNOLOGIES = ("infiniband", "ethernet", "gateway")


def group_technology(group: DeviceGroup, scenario: Scenario, catalog: Catalog) -> str:
    """What a node's badge shows: a switch's own technology (a gateway's is both), RoCE on a
    storage node, else the scenario's fabric.

    Servers' NICs speak both (VPI), so their network is the one the scenario chooses; in a
    hybrid fabric (one with a gateway) it is that of the switches they are cabled to.
    """
    device = catalog.devices.get(group.model)
    if device is not None and device.kind == "switch" and device.technology in SWITCH_TECHNOLOGIES:
        return device.technology
    if group.kind == "storage":  # a storage network's node: Ethernet (engine.model.networks)
        return "roce"
    if group.kind == "server" and has_gateway(scenario, catalog):
        layer = group_layers(scenario, catalog).get(group.id)
        return "roce" if layer == "ethernet" else "infiniband"
    return scenario.fabric.technology


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
        self.count = group.count
        self.failed = 0
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

    def failure_text(self) -> str:
        """What the card says of its failed members ("✕ 2 down"; empty when none)."""
        return f"✕ {self.failed:,} down" if self.failed else ""

    def set_failed(self, failed: int) -> None:
        """`failed` members of the group are down: a dashed outline, "✕ N down" in place of
        the technology, and a cross over the card when all of them are."""
        self.failed = failed
        if failed:
            self.setToolTip(f"{self.toolTip()}\n{failed} of {self.count:,} failed")
        self.update()

    def border_pen(self) -> QPen:
        """The card's outline: red for a problem, dashed for failed members, else normal."""
        theme = self.theme
        if self.problems:
            pen = QPen(color(theme.problem), 3)
        elif self.isSelected():
            pen = QPen(color(theme.selection), 2.5)
        elif self.failed:
            pen = QPen(color(theme.problem), 2)
        else:
            pen = QPen(color(theme.node_border), 1)
        if self.failed:
            pen.setStyle(Qt.PenStyle.DashLine)
        return pen

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
            fill = color(theme.server_fill if self.kind != "switch" else theme.switch_fill)
            text, subtext = color(theme.node_text), color(theme.node_subtext)
        painter.setBrush(QBrush(fill))
        painter.setPen(self.border_pen())
        painter.drawRoundedRect(rect, NODE_RADIUS, NODE_RADIUS)
        if self.failed and self.failed >= self.count:  # every member down: crossed out
            painter.setPen(QPen(color(theme.problem), 2))
            painter.drawLine(rect.topLeft(), rect.bottomRight())
            painter.drawLine(rect.bottomLeft(), rect.topRight())

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
        tech = self.failure_text() or TECHNOLOGY_TITLES.get(self.technology or "", "")
        if tech:
            tech_w = QFontMetricsF(base).horizontalAdvance(tech)
            tech_color = text if self.fill is not None else color(technology_hex(self, theme))
            if self.failed and self.fill is None:
                tech_color = color(theme.problem)
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

    def set_text(self, text: str) -> None:
        """Show `text` (the pill grows or shrinks to fit it)."""
        self.prepareGeometryChange()
        self._text = text
        metrics = QFontMetricsF(self._font)
        w, h = metrics.horizontalAdvance(text) + 10, metrics.height() + 4
        self._rect = QRectF(-w / 2, -h / 2, w, h)
        self.update()

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
        self.links_down = 0
        self.setZValue(-1)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.base_pen = self._pen_for(None)
        self.setPen(self.base_pen)
        self.label = EdgeLabel(self.label_text(bundle), theme, self)
        self.set_ends(a, b)
        self.setToolTip(f"{bundle.id}: {bundle.a} → {bundle.b}")

    def _pen_for(self, base: QColor | None) -> QPen:
        pen = QPen(color(self.theme.edge), 2) if base is None else QPen(base, 4)
        if self.links_down:
            pen.setStyle(Qt.PenStyle.DashLine)
        return pen

    def set_failed(self, links_down: int) -> None:
        """`links_down` cables of the bundle are down: drawn dashed, the label says so."""
        self.links_down = links_down
        self.base_pen = self._pen_for(self.base_color)
        self.setPen(self.base_pen)
        text = self.label.text().split(" · ✕")[0]
        self.label.set_text(text + (f" · ✕ {links_down} down" if links_down else ""))
        if links_down:
            self.setToolTip(f"{self.toolTip()}\n{links_down} cable(s) failed")

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
            pen = QPen(color(self.theme.selection), self.pen().widthF() + 2)
            pen.setStyle(self.pen().style())
            painter.setPen(pen)
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
            pen = QPen(color(self.theme.problem), 3)
            if self.links_down:
                pen.setStyle(Qt.PenStyle.DashLine)
            self.setPen(pen)
            self.setToolTip("\n".join(str(p) for p in problems))
