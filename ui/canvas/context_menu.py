"""Right-click menus of the canvas: fail and restore parts, rename, duplicate, delete,
properties.

`CanvasContextMenu` is mixed into `FabricCanvas` (before `QGraphicsView`). A right click on
a bundle offers "Fail 1 link", "Fail N links…" and "Restore"; on a switch group "Fail
switch" (its first working member) and "Restore"; every item also "Rename…" (groups),
"Duplicate" (groups), "Delete" and "Properties" (selects it and asks for the inspector).
Every entry is one call of the document, so one undo step; the failures land in the
scenario's `failures` and the canvas draws the failed parts dashed (`ui.canvas.items`).

A right press on a node also starts a connection drag (`ui.canvas.gestures`): when the
platform sends the context-menu event on press, the menu waits for the release and opens
only if the button comes up on the same node, so a right-drag still connects.
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QPoint, QPointF
from PySide6.QtGui import QAction, QContextMenuEvent
from PySide6.QtWidgets import QGraphicsItem, QInputDialog, QMenu

from ui.canvas.items import EdgeItem, EdgeLabel, NodeItem
from ui.document.document import ScenarioDocument

DUPLICATE_OFFSET = (60.0, 60.0)


class CanvasContextMenu:
    """The canvas's context menus (a mixin; see the module docstring).

    The view provides `document`, `nodes`, `edges`, `items`, `scene`, `select_group`,
    `select_bundle`, `delete_selected` and the connection-drag state of `CanvasGestures`.
    Its "Properties" entries emit the view's `propertiesRequested()`.
    """

    document: ScenarioDocument
    nodes: dict[str, NodeItem]
    edges: dict[str, EdgeItem]
    positions: dict[str, QPointF]
    _connect_from: str
    context_menu: QMenu | None = None
    _pending_menu: tuple[str, QPoint] | None = None

    def _item_at(self, view_pos: QPoint) -> QGraphicsItem | None:
        for item in self.items(view_pos):
            if isinstance(item, EdgeLabel):
                item = item.parentItem()
            if isinstance(item, (NodeItem, EdgeItem)):
                return item
        return None

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """Open the menu of the node or bundle under the cursor (after a right release
        when a connection drag is under way)."""
        item = self._item_at(event.pos())
        if item is None:
            super().contextMenuEvent(event)
            return
        event.accept()
        if self._connect_from:
            self._pending_menu = (self._connect_from, event.globalPos())
            return
        self.popup_menu(item, event.globalPos())

    def _release_menu(self, released_on: str) -> bool:
        """Open a menu that waited for a right release on the same node; whether it did."""
        pending, self._pending_menu = self._pending_menu, None
        if pending is None or pending[0] != released_on or released_on not in self.nodes:
            return False
        self.popup_menu(self.nodes[released_on], pending[1])
        return True

    def popup_menu(self, item: QGraphicsItem, at: QPoint) -> QMenu:
        """Select `item` and show its menu at `at` (global), without blocking."""
        menu = self.menu_for(item)
        if self.context_menu is not None:
            self.context_menu.deleteLater()
        self.context_menu = menu
        menu.popup(at)
        return menu

    def menu_for(self, item: QGraphicsItem) -> QMenu:
        """The context menu of a node or bundle item (the item is selected first)."""
        menu = QMenu(self)
        menu.setObjectName("canvasContextMenu")
        if isinstance(item, NodeItem):
            self.select_group(item.group_id)
            self._group_entries(menu, item.group_id)
        elif isinstance(item, EdgeItem):
            self.select_bundle(item.bundle_id)
            self._bundle_entries(menu, item.bundle_id)
        return menu

    @staticmethod
    def _add(menu: QMenu, text: str, slot, enabled: bool = True) -> QAction:
        action = menu.addAction(text)
        action.triggered.connect(lambda _checked=False: slot())
        action.setEnabled(enabled)
        return action

    def _group_entries(self, menu: QMenu, group_id: str) -> None:
        doc = self.document
        group = doc.scenario.group(group_id)
        if group.kind == "switch":
            failed = doc.failed_members(group_id)
            self._add(
                menu,
                "Fail switch",
                lambda: doc.fail_switch(group_id),
                len(failed) < group.count,
            )
            self._add(menu, "Restore", lambda: doc.restore(group_ids=[group_id]), bool(failed))
            menu.addSeparator()
        self._add(menu, "Rename…", lambda: self.rename_group(group_id))
        self._add(menu, "Duplicate", lambda: self.duplicate_group(group_id))
        self._add(menu, "Delete", lambda: doc.remove_items([group_id], []))
        menu.addSeparator()
        self._add(menu, "Properties", self._properties)

    def _bundle_entries(self, menu: QMenu, bundle_id: str) -> None:
        doc = self.document
        down = doc.links_down(bundle_id)
        self._add(menu, "Fail 1 link", lambda: doc.set_links_down(bundle_id, down + 1))
        self._add(menu, "Fail N links…", lambda: self.ask_links_down(bundle_id))
        self._add(menu, "Restore", lambda: doc.restore(bundle_ids=[bundle_id]), down > 0)
        menu.addSeparator()
        self._add(menu, "Delete", lambda: doc.remove_items([], [bundle_id]))
        menu.addSeparator()
        self._add(menu, "Properties", self._properties)

    # ---- the entries' actions ---------------------------------------------------------------

    def ask_links_down(self, bundle_id: str) -> bool:
        """Ask how many cables of the bundle are down, and fail that many (one undo step)."""
        count, ok = QInputDialog.getInt(
            self,
            "Fail links",
            f"Cables of {bundle_id} that are down:",
            max(1, self.document.links_down(bundle_id)),
            0,
            1_000_000,
        )
        return ok and self.document.set_links_down(bundle_id, count)

    def rename_group(self, group_id: str) -> bool:
        """Ask for the group's shown name and set it (one undo step; the id stays)."""
        group = self.document.scenario.group(group_id)
        name, ok = QInputDialog.getText(self, "Rename", f"Name of {group_id}:", text=group.name)
        if not ok or not name.strip() or name == group.name:
            return False
        return self.document.set_field(f"groups.{group_id}.name", name.strip()) is None

    def duplicate_group(self, group_id: str) -> list[str]:
        """Add a copy of the group beside it (a new id; one undo step); selects the copy."""
        group = self.document.scenario.group(group_id)
        pos = self.positions.get(group_id)
        if pos is not None:
            group = dataclasses.replace(group, position=(pos.x(), pos.y()))
        new_ids = self.document.paste_groups([group], [], DUPLICATE_OFFSET)
        if new_ids:
            self.select_group(new_ids[0])
        return new_ids

    def _properties(self) -> None:
        self.propertiesRequested.emit()
