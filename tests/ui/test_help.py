"""Help > Keyboard shortcuts and Help > User guide, as a user reaches them."""

from __future__ import annotations

from ui.help import GUIDE
from ui.main_window import MainWindow


def test_the_shortcuts_dialog_lists_every_action_with_its_keys(qtbot):
    win = MainWindow(evaluate_on_start=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    help_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Help")
    assert win.shortcuts_action in help_menu.actions()
    assert win.shortcuts_action.shortcut().toString() == "Ctrl+/"
    win.shortcuts_action.trigger()  # Help > Keyboard shortcuts
    qtbot.waitUntil(lambda: win.shortcuts_dialog.isVisible(), timeout=2000)
    table = win.shortcuts_dialog.table
    rows = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert rows["Undo"] == "Ctrl+Z" and rows["Evaluate"] == "F5"
    assert rows["Keyboard shortcuts"] == "Ctrl+/" and rows["User guide"] == "F1"
    assert "Fit to view" in rows and "Copy" in rows
    win.shortcuts_dialog.reject()


def test_the_user_guide_is_in_the_source_tree():
    assert GUIDE.is_file() and "FabricLab user guide" in GUIDE.read_text(encoding="utf-8")
