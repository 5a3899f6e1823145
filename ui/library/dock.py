"""The Library dock's widget: search, tag filter, scenario list or trash, version history.

`LibraryPanel` edits the library itself for duplicate, delete and restore, and asks the
window to open or compare scenarios through its signals (`ui.library.session` listens).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.library.store import Entry, Library
from ui.library.dialogs import LIBRARY_ERRORS, ask_choice, ask_text, error_text, local_time

SEARCH_DEBOUNCE_MS = 200
ALL_TAGS = "All tags"
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
NAME_ROLE = Qt.ItemDataRole.UserRole
ERROR_STYLE = "color: #d62728"
BANNER_STYLE = "background: #fff3cd; color: #664d03; padding: 4px; border: 1px solid #ffe69c"


class _SortedItem(QTreeWidgetItem):
    """A list row that sorts by the key kept in `SORT_ROLE` (lower-case name, ISO time)."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        tree = self.treeWidget()
        column = tree.sortColumn() if tree is not None else 0
        mine, theirs = self.data(column, SORT_ROLE), other.data(column, SORT_ROLE)
        if mine is None or theirs is None:
            return super().__lt__(other)
        return mine < theirs


class LibraryPanel(QWidget):
    """Browse and manage the scenarios of `library`.

    `openRequested(name, version)` asks to open a scenario (``version`` 0: the latest);
    `compareRequested(names)` asks to compare two scenarios, or one with the current one;
    `libraryChanged()` follows every change made here (duplicate, delete, restore).
    """

    openRequested = Signal(str, int)
    compareRequested = Signal(list)
    libraryChanged = Signal()

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("libraryPanel")
        self.library = library
        self.current_name = ""
        self.dialog: QWidget | None = None

        self.banner = QLabel()
        self.banner.setObjectName("libraryBanner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(BANNER_STYLE)
        self.banner.setVisible(False)

        self.search_edit = QLineEdit()
        self.search_edit.setObjectName("librarySearch")
        self.search_edit.setPlaceholderText("Search names, descriptions, tags, notes")
        self.search_edit.setClearButtonEnabled(True)
        self.search_timer = QTimer(self)
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self.search_timer.timeout.connect(self.refresh)
        self.search_edit.textChanged.connect(self.search_timer.start)
        self.search_edit.returnPressed.connect(self.refresh)

        self.tag_filter = QComboBox()
        self.tag_filter.setObjectName("libraryTagFilter")
        self.tag_filter.addItem(ALL_TAGS, "")
        self.tag_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        self.trash_check = QCheckBox("Show trash")
        self.trash_check.setObjectName("libraryShowTrash")
        self.trash_check.setToolTip("List the scenarios moved to the trash (Restore brings back)")
        self.trash_check.toggled.connect(lambda _on: self.refresh())

        self.list = QTreeWidget()
        self.list.setObjectName("libraryList")
        self.list.setHeaderLabels(["Name", "Tags", "Modified"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setSortingEnabled(True)
        self.list.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.itemSelectionChanged.connect(self._selection_changed)
        self.list.itemActivated.connect(lambda _item, _col: self.open_selected())

        self.versions = QTreeWidget()
        self.versions.setObjectName("libraryVersions")
        self.versions.setHeaderLabels(["Version", "Saved", "Note"])
        self.versions.setRootIsDecorated(False)
        self.versions.setUniformRowHeights(True)
        self.versions.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.versions.itemActivated.connect(lambda item, _col: self.open_version(item))
        self.versions.itemSelectionChanged.connect(self._update_buttons)

        self.open_button = self._button("Open", "libraryOpen", self.open_selected)
        self.open_button.setToolTip(
            "Open the selected scenario (the version selected in the history, else the latest)"
        )
        self.duplicate_button = self._button("Duplicate…", "libraryDuplicate", self.duplicate)
        self.delete_button = self._button("Delete", "libraryDelete", self.delete_selected)
        self.delete_button.setToolTip("Move the selected scenarios to the trash")
        self.restore_button = self._button("Restore", "libraryRestore", self.restore_selected)
        self.restore_button.setToolTip("Take the selected scenarios out of the trash")
        self.compare_button = self._button("Compare", "libraryCompare", self.compare_selected)
        self.compare_button.setToolTip(
            "Compare two selected scenarios, or one with the scenario being edited"
        )

        self.message = QLabel()
        self.message.setObjectName("libraryMessage")
        self.message.setWordWrap(True)

        self._layout()
        self.set_read_only(library.read_only, library.message)
        self.refresh()

    def _button(self, text: str, name: str, slot: Callable[[], Any]) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    def _layout(self) -> None:
        filters = QHBoxLayout()
        filters.addWidget(self.tag_filter, 1)
        filters.addWidget(self.trash_check)
        history = QWidget()
        history_layout = QVBoxLayout(history)
        history_layout.setContentsMargins(0, 0, 0, 0)
        history_layout.addWidget(QLabel("History (double-click a version to open it)"))
        history_layout.addWidget(self.versions, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.list)
        splitter.addWidget(history)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        row1, row2 = QHBoxLayout(), QHBoxLayout()
        for button in (self.open_button, self.duplicate_button, self.compare_button):
            row1.addWidget(button)
        for button in (self.delete_button, self.restore_button):
            row2.addWidget(button)
        row2.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(self.search_edit)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)
        layout.addLayout(row1)
        layout.addLayout(row2)
        layout.addWidget(self.message)

    # ---- state ------------------------------------------------------------------------------

    def set_read_only(self, read_only: bool, message: str = "") -> None:
        """Show the library's notice (a read-only library: a banner, and writes disabled)."""
        if read_only:
            self.banner.setText(f"Read-only library: {message}")
        elif message:
            self.banner.setText(message)
        self.banner.setVisible(bool(read_only or message))
        self._update_buttons()

    def show_message(self, text: str, error: bool = False) -> None:
        """A line under the buttons: what was done, or what went wrong (red)."""
        self.message.setStyleSheet(ERROR_STYLE if error else "")
        self.message.setText(text)

    def set_current(self, name: str) -> None:
        """Mark the scenario open in the window (bold in the list)."""
        self.current_name = name
        bold = QFont(self.list.font())
        bold.setBold(True)
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            item.setFont(0, bold if item.data(0, NAME_ROLE) == name else self.list.font())

    def selected_names(self) -> list[str]:
        """The names of the selected scenarios, in list order."""
        items = [
            self.list.topLevelItem(i)
            for i in range(self.list.topLevelItemCount())
            if self.list.topLevelItem(i).isSelected()
        ]
        return [item.data(0, NAME_ROLE) for item in items]

    def visible_names(self) -> list[str]:
        """The names listed right now, top to bottom."""
        return [
            self.list.topLevelItem(i).data(0, NAME_ROLE)
            for i in range(self.list.topLevelItemCount())
        ]

    def showing_trash(self) -> bool:
        """Whether the list shows the trash."""
        return self.trash_check.isChecked()

    # ---- filling ----------------------------------------------------------------------------

    def refresh(self, select: str | None = None) -> None:
        """Fill the list from the library: search text, tag filter and trash toggle applied.

        The selection is kept by name (or moved to `select`).
        """
        self.search_timer.stop()
        keep = [select] if select else self.selected_names()
        query = self.search_edit.text().strip()
        trash = self.showing_trash()
        try:
            entries = self.library.list(trash=trash)
            if query and not trash:
                hits = set(self.library.search(query))
                shown = [e for e in entries if e.name in hits]
            elif query:
                shown = [e for e in entries if _matches(e, query)]
            else:
                shown = entries
        except LIBRARY_ERRORS as exc:
            self.show_message(f"Cannot read the library: {error_text(exc)}", error=True)
            return
        self._fill_tags(sorted({t for e in entries for t in e.tags}))
        tag = self.tag_filter.currentData()
        if tag:
            shown = [e for e in shown if tag in e.tags]
        self._fill_list(shown, keep)
        if not shown:
            what = "the trash is empty" if trash and not (query or tag) else "nothing matches"
            self.show_message("No scenarios: " + what if entries else "The library is empty")
        else:
            where = "in the trash" if trash else "in the library"
            self.show_message(f"{len(shown)} of {len(entries)} scenario(s) {where}")

    def _fill_tags(self, tags: list[str]) -> None:
        current = self.tag_filter.currentData() or ""
        self.tag_filter.blockSignals(True)
        self.tag_filter.clear()
        self.tag_filter.addItem(ALL_TAGS, "")
        for tag in tags:
            self.tag_filter.addItem(tag, tag)
        index = self.tag_filter.findData(current)
        self.tag_filter.setCurrentIndex(max(index, 0))
        self.tag_filter.blockSignals(False)

    def _fill_list(self, entries: list[Entry], keep: list[str]) -> None:
        self.list.blockSignals(True)
        self.list.setSortingEnabled(False)
        self.list.clear()
        for e in entries:
            item = _SortedItem([e.name, ", ".join(e.tags), local_time(e.modified)])
            item.setData(0, NAME_ROLE, e.name)
            item.setData(0, SORT_ROLE, e.name.lower())
            item.setData(1, SORT_ROLE, ", ".join(e.tags).lower())
            item.setData(2, SORT_ROLE, e.modified)
            item.setToolTip(0, f"{e.description}\n{e.versions} version(s)".strip())
            self.list.addTopLevelItem(item)
            if e.name in keep:
                item.setSelected(True)
                self.list.setCurrentItem(item, 0, QItemSelectionModel.SelectionFlag.NoUpdate)
        self.list.setSortingEnabled(True)
        self.list.blockSignals(False)
        self.set_current(self.current_name)
        self._selection_changed()

    def _selection_changed(self) -> None:
        self._fill_versions()
        self._update_buttons()

    def _fill_versions(self) -> None:
        self.versions.clear()
        names = self.selected_names()
        item = self.list.currentItem()
        name = item.data(0, NAME_ROLE) if item is not None and item.isSelected() else None
        if name is None and names:
            name = names[0]
        if name is None:
            return
        try:
            versions = self.library.versions(name)
        except LIBRARY_ERRORS as exc:
            self.show_message(f"Cannot read the history of {name}: {error_text(exc)}", True)
            return
        for v in reversed(versions):
            row = QTreeWidgetItem([f"v{v['number']}", local_time(v["created"]), v["note"] or ""])
            row.setData(0, NAME_ROLE, v["number"])
            row.setData(1, NAME_ROLE, name)
            self.versions.addTopLevelItem(row)

    def _update_buttons(self) -> None:
        names = self.selected_names()
        trash, writable = self.showing_trash(), not self.library.read_only
        self.open_button.setEnabled(len(names) == 1 and not trash)
        self.duplicate_button.setEnabled(len(names) == 1 and not trash and writable)
        self.delete_button.setEnabled(bool(names) and not trash and writable)
        self.restore_button.setEnabled(bool(names) and trash and writable)
        self.compare_button.setEnabled(len(names) in (1, 2) and not trash)

    # ---- actions ----------------------------------------------------------------------------

    def open_selected(self) -> None:
        """Open the selected scenario: the version selected in its history, else the latest."""
        names = self.selected_names()
        if len(names) != 1:
            self.show_message("Select one scenario to open", error=True)
            return
        if self.showing_trash():
            self.show_message(f"{names[0]} is in the trash: restore it to open it", error=True)
            return
        chosen = self.versions.selectedItems()
        version = int(chosen[0].data(0, NAME_ROLE)) if chosen else 0
        self.openRequested.emit(names[0], self._as_request(version))

    def open_version(self, item: QTreeWidgetItem) -> None:
        """Open the history row `item` (one version of the selected scenario)."""
        if self.showing_trash():
            self.show_message("Restore the scenario to open one of its versions", error=True)
            return
        self.openRequested.emit(item.data(1, NAME_ROLE), self._as_request(item.data(0, NAME_ROLE)))

    def _as_request(self, version: int) -> int:
        """0 for the newest version (the scenario's current body), else the number."""
        return 0 if version == self.versions.topLevelItemCount() else int(version)

    def duplicate(self) -> None:
        """Ask a name and copy the selected scenario under it (a history of its own)."""
        names = self.selected_names()
        if len(names) != 1:
            return
        name = names[0]
        self.dialog = ask_text(
            self,
            "Duplicate scenario",
            f"Name of the copy of {name}:",
            f"{name} copy",
            lambda new: self._duplicate(name, new.strip()),
        )

    def _duplicate(self, name: str, new_name: str) -> None:
        if not new_name:
            self.show_message("A copy needs a name", error=True)
            return
        if self._run(lambda: self.library.duplicate(name, new_name), f"Duplicated {name}"):
            self.refresh(select=new_name)
            self.show_message(f"Duplicated {name} as {new_name}")

    def delete_selected(self) -> None:
        """Ask, then move the selected scenarios to the trash."""
        names = self.selected_names()
        if not names:
            return
        listed = ", ".join(names)
        self.dialog = ask_choice(
            self,
            "Move to trash",
            f"Move {listed} to the trash?\n\nShow trash lists it; Restore brings it back.",
            [
                (
                    "Move to Trash",
                    QMessageBox.ButtonRole.DestructiveRole,
                    lambda: self._delete(names),
                ),
                ("Cancel", QMessageBox.ButtonRole.RejectRole, None),
            ],
        )

    def _delete(self, names: list[str]) -> None:
        def delete_all() -> None:
            for name in names:
                self.library.delete(name)

        if self._run(delete_all, ""):
            self.refresh()
            self.show_message(f"Moved {', '.join(names)} to the trash (Show trash to restore)")

    def restore_selected(self) -> None:
        """Take the selected scenarios out of the trash."""
        names = self.selected_names()

        def restore_all() -> None:
            for name in names:
                self.library.restore(name)

        if names and self._run(restore_all, ""):
            self.refresh()
            self.show_message(f"Restored {', '.join(names)}")

    def compare_selected(self) -> None:
        """Ask the window to compare the two selected scenarios (or one with the current)."""
        names = self.selected_names()
        if len(names) not in (1, 2):
            self.show_message("Select two scenarios, or one to compare with the current", True)
            return
        self.compareRequested.emit(names)

    def _run(self, action: Callable[[], Any], done: str) -> bool:
        """Run a library write; a failure becomes the panel's message. Whether it worked."""
        try:
            action()
        except LIBRARY_ERRORS as exc:
            self.show_message(error_text(exc), error=True)
            return False
        if done:
            self.show_message(done)
        self.libraryChanged.emit()
        return True


def _matches(entry: Entry, query: str) -> bool:
    """Whether every word of `query` is in the entry's name, description or tags (trash)."""
    text = " ".join([entry.name, entry.description, *entry.tags]).lower()
    return all(word in text for word in query.lower().split())
