"""The main window's actions, menus and toolbar, and where the library session's go.

`WindowMenus` is mixed into `MainWindow` (before `QMainWindow`): `_build_actions` creates
every action with its shortcut and puts it in the menu bar and the toolbar, under the names
the rest of the app reads (`open_action`, `file_menu`, `theme_actions`…); File > Open
Recent is filled from the window's settings; `_add_library` places a `LibrarySession`'s
dock and File menu entries, which take over the JSON file's Save As and its shortcut.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu

from ui.help import ShortcutsDialog, open_user_guide
from ui.library.session import LibrarySession
from ui.settings import SettingsStore
from ui.theme import add_theme_actions

ZOOM_IN, ZOOM_OUT = 1.25, 0.8
COLOUR_TITLES = {
    "utilization": "Link &utilization (permutation test)",
    "congestion": "&Congestion (pauses, ECN marks; Congestion tab)",
}


class WindowMenus:
    """Actions, menus, toolbar and Open Recent of the main window (a mixin).

    The window provides `document`, `canvas`, `worker`, `store` (its `SettingsStore`) and
    the handlers the actions call (`evaluate_now`, `open_file`, `open_path`,
    `save_file_as`, `new_from_template`, `set_theme`, `show_about`, and `export_fabric`,
    `import_topology_file` and `import_traffic_file` of `ui.formats`).
    """

    store: SettingsStore

    def show_shortcuts(self) -> ShortcutsDialog:
        """Open Help > Keyboard shortcuts: every action with its keys."""
        dialog = ShortcutsDialog(self)
        self.shortcuts_dialog = dialog
        dialog.open()
        return dialog

    def _build_actions(self, *docks: QDockWidget) -> None:
        stack = self.document.undo_stack
        self.undo_action = stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.redo_action = stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.fit_action = QAction("&Fit to view", self)
        self.fit_action.setShortcut(QKeySequence("Ctrl+0"))
        self.fit_action.triggered.connect(self.canvas.fit)
        zoom_in = QAction("Zoom &in", self)
        zoom_in.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
        zoom_in.triggered.connect(lambda: self.canvas.zoom(ZOOM_IN))
        zoom_out = QAction("Zoom &out", self)
        zoom_out.setShortcut(QKeySequence("Ctrl+-"))
        zoom_out.triggered.connect(lambda: self.canvas.zoom(ZOOM_OUT))
        self.evaluate_action = QAction("&Evaluate", self)
        self.evaluate_action.setShortcut(QKeySequence("F5"))
        self.evaluate_action.triggered.connect(self.evaluate_now)
        self.cancel_action = QAction("&Cancel evaluation", self)
        self.cancel_action.setShortcut(QKeySequence("Esc"))
        self.cancel_action.triggered.connect(self.worker.cancel)
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(self.close)
        self.open_action = QAction("&Open…", self)
        self.open_action.setShortcut(QKeySequence("Ctrl+O"))
        self.open_action.triggered.connect(self.open_file)
        self.save_as_action = QAction("Save &As…", self)
        self.save_as_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.save_as_action.triggered.connect(self.save_file_as)
        self.export_fabric_action = QAction("E&xport fabric…", self)
        self.export_fabric_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_fabric_action.triggered.connect(self.export_fabric)
        self.import_topology_action = QAction("&Import topology…", self)
        self.import_topology_action.setShortcut(QKeySequence("Ctrl+I"))
        self.import_topology_action.triggered.connect(self.import_topology_file)
        self.import_traffic_action = QAction("Import traffic &matrix…", self)
        self.import_traffic_action.triggered.connect(self.import_traffic_file)
        self.template_action = QAction("New from &template…", self)
        self.template_action.setShortcut(QKeySequence("Ctrl+N"))
        self.template_action.triggered.connect(self.new_from_template)
        # canvas edits: only while the canvas has focus, so text boxes keep their keys
        self.delete_action = QAction("&Delete", self)
        self.delete_action.setShortcuts([QKeySequence("Delete"), QKeySequence("Backspace")])
        self.delete_action.triggered.connect(self.canvas.delete_selected)
        self.copy_action = QAction("&Copy", self)
        self.copy_action.setShortcut(QKeySequence("Ctrl+C"))
        self.copy_action.triggered.connect(self.canvas.copy_selected)
        self.paste_action = QAction("&Paste", self)
        self.paste_action.setShortcut(QKeySequence("Ctrl+V"))
        self.paste_action.triggered.connect(self.canvas.paste)
        for action in (self.delete_action, self.copy_action, self.paste_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.canvas.addAction(action)

        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        self.file_menu = file_menu
        file_menu.addAction(self.template_action)
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setObjectName("recentMenu")
        file_menu.addAction(self.save_as_action)
        file_menu.addSeparator()
        file_menu.addActions(
            [self.import_topology_action, self.import_traffic_action, self.export_fabric_action]
        )
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = menu.addMenu("&Edit")
        edit_menu.addActions([self.undo_action, self.redo_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.copy_action, self.paste_action, self.delete_action])
        view_menu = menu.addMenu("&View")
        self.view_menu = view_menu
        view_menu.addActions([self.fit_action, zoom_in, zoom_out])
        view_menu.addSeparator()
        for dock in docks:
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addSeparator()
        self.theme_menu = view_menu.addMenu("&Theme")
        self.theme_actions = add_theme_actions(self, self.theme_menu, self.set_theme)
        self._add_colour_actions(view_menu)
        run_menu = self.run_menu = menu.addMenu("&Run")
        run_menu.addActions([self.evaluate_action, self.cancel_action])
        help_menu = menu.addMenu("&Help")
        # owned by the window, so their keys work wherever its focus is (not only in the menu)
        self.guide_action = QAction("&User guide", self)
        self.guide_action.setShortcut(QKeySequence("F1"))
        self.guide_action.triggered.connect(lambda: open_user_guide(self))
        self.shortcuts_action = QAction("&Keyboard shortcuts", self)
        self.shortcuts_action.setShortcut(QKeySequence("Ctrl+/"))
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        help_menu.addActions([self.guide_action, self.shortcuts_action])
        help_menu.addSeparator()
        self.about_action = help_menu.addAction("&About FabricLab")
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(self.show_about)

        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("mainToolBar")
        toolbar.setIconSize(QSize(20, 20))  # icon buttons as tall as the former text buttons
        toolbar.layout().setContentsMargins(0, 0, 0, 0)
        toolbar.addActions([self.template_action, self.open_action, self.save_as_action])
        toolbar.addSeparator()
        toolbar.addActions([self.undo_action, self.redo_action, self.fit_action])
        toolbar.addSeparator()
        toolbar.addActions([self.evaluate_action, self.cancel_action])
        for action in (
            self.quit_action,
            self.open_action,
            self.save_as_action,
            self.template_action,
            self.import_topology_action,
            self.export_fabric_action,
            self.undo_action,
            self.redo_action,
            self.fit_action,
            zoom_in,
            zoom_out,
            self.evaluate_action,
            self.cancel_action,
        ):
            self.addAction(action)
        # (action, icon) pairs: the icons are redrawn in the theme's colours on every switch
        self.action_icons = [
            (self.template_action, "template"),
            (self.open_action, "open"),
            (self.save_as_action, "save"),
            (self.undo_action, "undo"),
            (self.redo_action, "redo"),
            (self.fit_action, "fit"),
            (zoom_in, "zoom-in"),
            (zoom_out, "zoom-out"),
            (self.evaluate_action, "run"),
            (self.cancel_action, "stop"),
        ]

    def _add_colour_actions(self, view_menu: QMenu) -> None:
        """View > Canvas colours: link utilization or congestion (the canvas's two modes),
        kept checked as the canvas switches (a new transport study switches to congestion)."""
        self.colour_menu = view_menu.addMenu("Canvas &colours")
        group = QActionGroup(self)
        group.setExclusive(True)
        self.colour_actions: dict[str, QAction] = {}
        for mode, title in COLOUR_TITLES.items():
            action = QAction(title, self)
            action.setObjectName(f"colours_{mode}")
            action.setCheckable(True)
            action.setChecked(mode == self.canvas.colour_mode)
            group.addAction(action)
            self.colour_menu.addAction(action)
            action.triggered.connect(lambda _checked=False, m=mode: self.canvas.set_colour_mode(m))
            self.colour_actions[mode] = action
        self.canvas.colourModeChanged.connect(lambda m: self.colour_actions[m].setChecked(True))

    # ---- Open Recent -------------------------------------------------------------------------

    def recent_files(self) -> list[str]:
        """The last opened or saved scenario files, newest first."""
        return self.store.recent_files()

    def add_recent_file(self, path: str) -> None:
        """Put `path` first in the recent files (at most `ui.settings.MAX_RECENT`)."""
        self.store.add_recent_file(path)
        self._fill_recent_menu()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for path in files:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(files))

    # ---- the library session's dock and actions ---------------------------------------------

    def _add_library(self, session: LibrarySession) -> None:
        """Place the session's dock beside the palette and its actions in File and View.

        The library keeps the scenario now: File > Save As (a JSON file) gives up its place
        and its shortcut to the library's, and Open reads "Open JSON File…".
        """
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, session.dock)
        palette = self.findChild(QDockWidget, "paletteDock")
        if palette is not None:
            self.tabifyDockWidget(palette, session.dock)
        session.dock.raise_()
        self.save_as_action.setShortcut(QKeySequence())
        self.file_menu.removeAction(self.save_as_action)
        self.removeAction(self.save_as_action)
        self.open_action.setText("&Open JSON File…")
        menu_actions = self.file_menu.actions()
        index = menu_actions.index(self.recent_menu.menuAction()) + 1
        following = menu_actions[index] if index < len(menu_actions) else None
        for action in [None, *session.file_actions, None, *session.transfer_actions]:
            if action is None:
                action = QAction(self)
                action.setSeparator(True)
            self.file_menu.insertAction(following, action)
        self.addActions([*session.file_actions, *session.transfer_actions])
        self.run_menu.addSeparator()
        self.run_menu.addActions(session.run_actions)
        self.view_menu.addAction(session.dock.toggleViewAction())
