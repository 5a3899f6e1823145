"""Bundle inspector and problems dock, driven through the widgets."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from tests.ui.windows import shown_window
from ui.problems import problem_text

TIMEOUT_MS = 60_000


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot)
    yield w
    w.sweep_panel.shutdown()
    w.worker.shutdown()


def click_edge(qtbot, win, bundle_id):
    canvas = win.canvas
    canvas.fit()
    edge = canvas.edges[bundle_id]
    mid = (edge.line().p1() + edge.line().p2()) / 2
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=canvas.mapFromScene(mid))
    qtbot.waitUntil(lambda: win.inspector.bundle_id == bundle_id, timeout=2000)


def type_into(qtbot, widget, text):
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Return)


# ---- bundle inspector -------------------------------------------------------------------------


def test_selecting_an_edge_shows_the_bundle_fields(qtbot, win):
    click_edge(qtbot, win, "leaf-spine")
    ins = win.inspector
    bundle = win.document.scenario.bundle("leaf-spine")
    assert ins.pages.currentIndex() == 2
    assert "leaf-spine" in ins.title.text()
    assert ins.pattern_combo.currentText() == bundle.pattern
    assert ins.links_spin.value() == bundle.links_per_pair
    assert ins.speed_spin.value() == bundle.speed_gbps
    assert ins.blocks_spin.value() == bundle.blocks
    assert ins.cable_edit.text() == "auto"
    assert ins.length_spin.value() == bundle.length_m
    # clicking empty space goes back to the fabric settings
    win.canvas.scene().clearSelection()
    assert ins.bundle_id == "" and ins.pages.currentIndex() == 0


def test_editing_bundle_fields_is_undoable(qtbot, win):
    doc = win.document
    original = doc.scenario
    click_edge(qtbot, win, "leaf-spine")
    ins = win.inspector
    type_into(qtbot, ins.links_spin, "3")
    assert doc.scenario.bundle("leaf-spine").links_per_pair == 3
    type_into(qtbot, ins.length_spin, "12.5")
    assert doc.scenario.bundle("leaf-spine").length_m == 12.5
    type_into(qtbot, ins.speed_spin, "800")
    assert doc.scenario.bundle("leaf-spine").speed_gbps == 800.0
    type_into(qtbot, ins.blocks_spin, "2")
    assert doc.scenario.bundle("leaf-spine").blocks == 2
    ins.pattern_combo.setFocus()
    index = ins.pattern_combo.findText("striped")
    ins.pattern_combo.setCurrentIndex(index)
    ins.pattern_combo.activated.emit(index)
    assert doc.scenario.bundle("leaf-spine").pattern == "striped"
    ins.cable_edit.setFocus()
    ins.cable_edit.selectAll()
    qtbot.keyClicks(ins.cable_edit, "some-cable")
    qtbot.keyClick(ins.cable_edit, Qt.Key.Key_Return)
    assert doc.scenario.bundle("leaf-spine").cable == "some-cable"
    texts = [doc.undo_stack.text(i) for i in range(doc.undo_stack.count())]
    assert doc.undo_stack.count() == 6, texts
    assert ins.bundle_id == "leaf-spine"
    for _ in range(6):
        doc.undo_stack.undo()
    assert doc.scenario == original
    assert ins.cable_edit.text() == "auto"
    assert ins.links_spin.value() == original.bundle("leaf-spine").links_per_pair


def test_a_refused_bundle_edit_shows_the_message(qtbot, win):
    click_edge(qtbot, win, "servers-leaf")
    ins = win.inspector
    before = win.document.scenario
    ins._bundle_edit("length_m", "abc")
    assert "cannot read" in ins.error_label.text()
    assert "Edit refused" in win.statusBar().currentMessage()
    assert win.document.scenario is before and win.document.undo_stack.count() == 0


# ---- problems dock ----------------------------------------------------------------------------


def test_problems_dock_lists_problems_and_double_click_selects(qtbot, win):
    panel = win.problems_panel
    assert panel.row_texts() == []
    win.document.set_field("groups.spine.model", "no-such-switch")
    rows = panel.row_texts()
    assert rows and any(r.startswith("groups[spine].model: ") for r in rows)
    assert panel.list.count() == len(rows)
    row = next(i for i, r in enumerate(rows) if r.startswith("groups[spine]"))
    win.findChild(QDockWidget, "problemsDock").raise_()
    qtbot.waitUntil(panel.list.isVisible, timeout=2000)
    item = panel.list.item(row)
    rect = panel.list.visualItemRect(item)
    qtbot.mouseClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(panel.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert win.canvas.selected_group() == "spine"
    win.document.undo_stack.undo()
    assert panel.row_texts() == []


def test_problems_dock_shows_expansion_problems_and_selects_bundles(qtbot, win):
    from engine.model.errors import Problem

    problem = Problem("bundles[leaf-spine]", "too many cables", "links_per_pair")
    win.document.set_expand_problems([problem])
    assert win.problems_panel.row_texts() == ["bundles[leaf-spine].links_per_pair: too many cables"]
    assert problem_text(problem) == win.problems_panel.row_texts()[0]
    win.problems_panel.list.itemDoubleClicked.emit(win.problems_panel.list.item(0))
    assert win.canvas.selected_bundles() == ["leaf-spine"]


def test_an_expansion_problem_from_the_worker_reaches_the_dock(qtbot, win):
    with qtbot.waitSignal(win.worker.invalid, timeout=TIMEOUT_MS):
        win.document.set_field("groups.leaf.count", "16")
        win.evaluate_now()
    rows = win.problems_panel.row_texts()
    assert any("more ports than" in r for r in rows)
