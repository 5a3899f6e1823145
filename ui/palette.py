"""The palette dock: catalog servers and switches, searchable, dragged onto the canvas.

Each item carries its catalog id; dragging it produces `QMimeData` of type `DEVICE_MIME`
(the id as UTF-8) that the canvas accepts. Double-clicking an item (or pressing Enter on
it) emits `deviceActivated(id)`, which the main window turns into a new group. Each item
shows the same device icon as the canvas nodes (kind, technology badge), redrawn by
`set_theme` when the theme changes.

User-defined devices (the scenario's own and those of the user catalog beside the library)
are listed after the shipped ones of their section, marked ``(user-defined)`` and in italics
(`set_user_devices`). The context menu's "Duplicate as custom device…" (also
`duplicate_action`, on the current item) emits `duplicateRequested(id)`.
`set_theme` when the theme changes; its tooltip gives the part's supply and, for a server,
its NICs' offload (`ui.part_facts`).
"""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.catalog.devices import Catalog, Device
from ui.canvas.gestures import DEVICE_MIME
from ui.icons import device_icon
from ui.part_facts import part_tooltip
from ui.theme import LIGHT, Theme

MODEL_ROLE = Qt.ItemDataRole.UserRole
USER_ROLE = Qt.ItemDataRole.UserRole + 1  # True on a user-defined device's item
USER_MARK = "(user-defined)"
SECTIONS = (("server", "Servers"), ("switch", "Switches"), ("storage", "Storage nodes"))
# palette switches have no tier yet; storage nodes sit in the server tier
SECTION_TIERS = {"server": "server", "switch": "", "storage": "server"}
ICON_PX = 20


class DeviceTree(QTreeWidget):
    """The tree of devices; drags carry the catalog id under `DEVICE_MIME`."""

    def mimeTypes(self) -> list[str]:
        """The one type this tree drags."""
        return [DEVICE_MIME]

    def mimeData(self, items) -> QMimeData:
        """The catalog id of the first dragged device item."""
        data = QMimeData()
        for item in items:
            model = item.data(0, MODEL_ROLE)
            if model:
                data.setData(DEVICE_MIME, model.encode("utf-8"))
                data.setText(model)
                break
        return data


class Palette(QWidget):
    """Search box over a two-section tree (servers, switches) of the catalog's devices."""

    deviceActivated = Signal(str)
    duplicateRequested = Signal(str)

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("palette")
        self.search = QLineEdit()
        self.search.setObjectName("paletteSearch")
        self.search.setPlaceholderText("Search devices…")
        self.search.setClearButtonEnabled(True)
        self.tree = DeviceTree()
        self.tree.setObjectName("paletteTree")
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setIconSize(QSize(ICON_PX, ICON_PX))
        self.technologies: dict[str, str | None] = {}
        self.kinds: dict[str, str] = {}
        self.sections: dict[str, QTreeWidgetItem] = {}
        self.items: dict[str, QTreeWidgetItem] = {}
        self.catalog = catalog  # the supply and offload facts of the tooltips
        for kind, title in SECTIONS:
            section = QTreeWidgetItem(self.tree, [title])
            section.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.sections[kind] = section
            for device in catalog.of_kind(kind):
                self._add_item(section, device)
        self.tree.expandAll()
        self.theme = LIGHT
        self.set_theme(LIGHT)
        self.duplicate_action = QAction("Duplicate as custom device…", self)
        self.duplicate_action.setObjectName("duplicateDeviceAction")
        self.duplicate_action.triggered.connect(self._duplicate_current)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.search.textChanged.connect(self.filter)
        self.tree.itemActivated.connect(self._activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)

    def _add_item(self, section: QTreeWidgetItem, device: Device) -> QTreeWidgetItem:
        mark = f"  {USER_MARK}" if device.user_defined else ""
        item = QTreeWidgetItem(section, [device.id + mark])
        item.setData(0, MODEL_ROLE, device.id)
        item.setData(0, USER_ROLE, device.user_defined)
        item.setToolTip(0, part_tooltip(device, self.catalog) + mark)
        if device.user_defined:
            font = item.font(0)
            font.setItalic(True)
            item.setFont(0, font)
        item.setFlags(
            Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled
        )
        self.items[device.id] = item
        self.technologies[device.id] = device.technology
        self.kinds[device.id] = device.kind
        return item

    def set_user_devices(self, devices: list[Device]) -> None:
        """List `devices` (user-defined servers and switches) after the shipped ones, in
        place of those listed before; the filter stays applied."""
        for model in [m for m, item in self.items.items() if item.data(0, USER_ROLE)]:
            item = self.items.pop(model)
            item.parent().removeChild(item)
        for device in devices:
            section = self.sections.get(device.kind)
            if section is not None and device.id not in self.items:
                item = self._add_item(section, device)
                item.setIcon(0, self._icon(device.id, self.theme))
        self.filter(self.search.text())

    def user_models(self) -> list[str]:
        """The ids of the user-defined devices listed."""
        return [m for m, item in self.items.items() if item.data(0, USER_ROLE)]

    def _icon(self, model: str, theme: Theme):
        kind = self.kinds[model]
        return device_icon(kind, SECTION_TIERS[kind], self.technologies[model], theme)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        if item is None or not item.data(0, MODEL_ROLE):
            return
        self.tree.setCurrentItem(item)
        menu = QMenu(self)
        menu.addAction(self.duplicate_action)
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def _duplicate_current(self) -> None:
        item = self.tree.currentItem()
        model = item.data(0, MODEL_ROLE) if item is not None else None
        if model:
            self.duplicateRequested.emit(model)

    def set_theme(self, theme: Theme) -> None:
        """Draw every device's icon in `theme`'s colours."""
        self.theme = theme
        for model, item in self.items.items():
            kind = self.kinds[model]
            item.setIcon(0, device_icon(kind, SECTION_TIERS[kind], self.technologies[model], theme))

    def filter(self, text: str) -> None:
        """Show only devices whose id, name or vendor contains `text` (case-insensitive)."""
        needle = text.strip().lower()
        for section in self.sections.values():
            visible = 0
            for i in range(section.childCount()):
                item = section.child(i)
                haystack = f"{item.text(0)} {item.toolTip(0)}".lower()
                hidden = bool(needle) and needle not in haystack
                item.setHidden(hidden)
                visible += not hidden
            section.setHidden(visible == 0)

    def visible_models(self) -> list[str]:
        """The ids of the devices the filter currently shows."""
        return [m for m, item in self.items.items() if not item.isHidden()]

    def _activated(self, item: QTreeWidgetItem, column: int = 0) -> None:
        # itemActivated fires on double-click and on Enter (one signal per gesture)
        model = item.data(0, MODEL_ROLE)
        if not model:
            return
        self.deviceActivated.emit(model)
