"""Right-click menus on the canvas, as a user reaches them: fail and restore links and
switches (drawn dashed, undoable), rename, duplicate, delete, properties."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QDockWidget

from tests.ui.windows import shown_window


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot)
    w.canvas.fit()
    QApplication.processEvents()
    yield w
    w.close()  # waits for a run an edit started, before the next test


def right_click(canvas, item):
    """Send the context-menu event a right click on `item` gives; the menu it opened."""
    pos = canvas.mapFromScene(item.sceneBoundingRect().center())
    if hasattr(item, "line"):  # an edge: a point on its line, away from the label pill
        line = item.line()
        pos = canvas.mapFromScene(line.pointAt(0.25))
    event = QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, pos, canvas.viewport().mapToGlobal(pos)
    )
    canvas.contextMenuEvent(event)
    menu = canvas.context_menu
    assert menu is not None and menu.isVisible()
    return menu


def entry(menu, text):
    return next(a for a in menu.actions() if a.text() == text)


def test_fail_one_link_draws_the_bundle_dashed_and_undo_restores_it(win):
    canvas, doc = win.canvas, win.document
    original = doc.scenario
    edge = canvas.edges["leaf-spine"]
    assert edge.pen().style() == Qt.PenStyle.SolidLine
    menu = right_click(canvas, edge)
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts == ["Fail 1 link", "Fail N links…", "Restore", "Delete", "Properties"]
    assert not entry(menu, "Restore").isEnabled()
    entry(menu, "Fail 1 link").trigger()
    assert [(f.bundle, f.links_down) for f in doc.scenario.failures.links] == [("leaf-spine", 1)]
    edge = canvas.edges["leaf-spine"]
    assert edge.pen().style() == Qt.PenStyle.DashLine
    assert edge.label.text().endswith("✕ 1 down")
    entry(right_click(canvas, edge), "Fail 1 link").trigger()
    assert doc.links_down("leaf-spine") == 2
    win.undo_action.trigger()
    win.undo_action.trigger()
    assert doc.scenario is original
    assert canvas.edges["leaf-spine"].pen().style() == Qt.PenStyle.SolidLine


def test_fail_n_links_asks_how_many_and_restore_brings_them_back(win, monkeypatch):
    canvas, doc = win.canvas, win.document
    monkeypatch.setattr("ui.canvas.context_menu.QInputDialog.getInt", lambda *args, **kw: (8, True))
    entry(right_click(canvas, canvas.edges["leaf-spine"]), "Fail N links…").trigger()
    assert doc.links_down("leaf-spine") == 8
    menu = right_click(canvas, canvas.edges["leaf-spine"])
    assert entry(menu, "Restore").isEnabled()
    entry(menu, "Restore").trigger()
    assert doc.scenario.failures.links == []
    assert canvas.edges["leaf-spine"].pen().style() == Qt.PenStyle.SolidLine
    assert doc.undo_stack.count() == 2


def test_fail_switch_marks_the_group_and_the_run_routes_around_it(win):
    canvas, doc = win.canvas, win.document
    spine = canvas.nodes["spine"]
    menu = right_click(canvas, spine)
    assert [a.text() for a in menu.actions() if not a.isSeparator()] == [
        "Fail switch",
        "Restore",
        "Rename…",
        "Duplicate",
        "Delete",
        "Properties",
    ]
    entry(menu, "Fail switch").trigger()
    entry(right_click(canvas, canvas.nodes["spine"]), "Fail switch").trigger()
    assert [(f.group, f.index) for f in doc.scenario.failures.switches] == [
        ("spine", 0),
        ("spine", 1),
    ]
    node = canvas.nodes["spine"]
    assert node.border_pen().style() == Qt.PenStyle.DashLine
    assert node.failure_text() == "✕ 2 down"
    assert doc.problems == []  # a failure is a what-if, not a mistake
    entry(right_click(canvas, node), "Restore").trigger()
    assert doc.scenario.failures.switches == []
    assert canvas.nodes["spine"].border_pen().style() == Qt.PenStyle.SolidLine


def test_servers_have_no_fail_switch_entry(win):
    menu = right_click(win.canvas, win.canvas.nodes["servers"])
    assert "Fail switch" not in [a.text() for a in menu.actions()]


def test_rename_duplicate_delete_and_properties(win, monkeypatch):
    canvas, doc = win.canvas, win.document
    monkeypatch.setattr(
        "ui.canvas.context_menu.QInputDialog.getText", lambda *args, **kw: ("Spines", True)
    )
    entry(right_click(canvas, canvas.nodes["spine"]), "Rename…").trigger()
    assert doc.scenario.group("spine").name == "Spines"
    assert canvas.nodes["spine"].lines[0] == "Spines"
    entry(right_click(canvas, canvas.nodes["leaf"]), "Duplicate").trigger()
    assert "leaf-2" in canvas.nodes and canvas.selected_groups() == ["leaf-2"]
    assert doc.scenario.group("leaf-2").count == doc.scenario.group("leaf").count
    entry(right_click(canvas, canvas.nodes["leaf-2"]), "Delete").trigger()
    assert "leaf-2" not in canvas.nodes
    dock = win.findChild(QDockWidget, "inspectorDock")
    dock.hide()
    entry(right_click(canvas, canvas.nodes["leaf"]), "Properties").trigger()
    assert dock.isVisible() and canvas.selected_groups() == ["leaf"]
    assert win.inspector.isVisible()


def test_a_right_click_with_the_mouse_opens_the_menu_and_a_right_drag_still_connects(qtbot, win):
    canvas = win.canvas
    node = canvas.nodes["spine"]
    pos = canvas.mapFromScene(node.sceneBoundingRect().center())
    qtbot.mousePress(canvas.viewport(), Qt.MouseButton.RightButton, pos=pos)
    event = QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, pos, canvas.viewport().mapToGlobal(pos)
    )
    QApplication.sendEvent(canvas.viewport(), event)  # as the platform sends it on press
    assert canvas.context_menu is None or not canvas.context_menu.isVisible()
    qtbot.mouseRelease(canvas.viewport(), Qt.MouseButton.RightButton, pos=pos)
    assert canvas.context_menu is not None and canvas.context_menu.isVisible()
    assert entry(canvas.context_menu, "Fail switch").isEnabled()
    canvas.context_menu.close()
    bundles = len(win.document.scenario.bundles)
    servers = canvas.mapFromScene(canvas.nodes["servers"].sceneBoundingRect().center())
    qtbot.mousePress(canvas.viewport(), Qt.MouseButton.RightButton, pos=servers)
    qtbot.mouseMove(canvas.viewport(), pos=pos)
    qtbot.mouseRelease(canvas.viewport(), Qt.MouseButton.RightButton, pos=pos)
    assert len(win.document.scenario.bundles) == bundles + 1


def test_the_results_say_what_the_run_had_failed(qtbot, win):
    canvas = win.canvas
    entry(right_click(canvas, canvas.nodes["spine"]), "Fail switch").trigger()
    entry(right_click(canvas, canvas.edges["servers-leaf"]), "Fail 1 link").trigger()
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        win.evaluate_now()
    summary = win.results.summary.text()
    assert summary.endswith("— with 1 switch of spine and 1 cable of servers-leaf down")
    assert "mean throughput" in summary
