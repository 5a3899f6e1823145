"""The Workload dock as a user drives it: pick the operation and the model, type the
parallelism and the message size; each edit is one undo step, and a negative number is
answered by the validation message instead of a dropped minus sign."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from engine.analysis import parse_bytes
from tests.ui.windows import shown_window
from ui.workload_panel import bytes_text


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot)
    yield w
    w.close()  # waits for a run an edit started, before the next test


@pytest.fixture
def panel(win):
    dock = win.findChild(QDockWidget, "workloadDock")
    dock.show()
    dock.raise_()
    return win.workload_panel


def type_into(qtbot, box, text):
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def test_the_dock_sits_beside_the_palette_and_shows_the_workload(win, panel):
    dock = win.findChild(QDockWidget, "workloadDock")
    assert dock.toggleViewAction() in win.view_menu.actions()
    assert win.findChild(QDockWidget, "paletteDock") in win.tabifiedDockWidgets(dock)
    w = win.document.scenario.workload
    assert panel.op_combo.currentText() == w.op
    assert panel.model_combo.currentText() == w.training.model
    assert panel.numbers["tp"].value() == w.training.tp
    assert panel.message_edit.text() == "1G" and w.message_bytes == 2**30


def test_choosing_the_operation_and_the_model(qtbot, win, panel):
    doc = win.document
    panel.op_combo.setFocus()
    qtbot.keyClick(panel.op_combo, Qt.Key.Key_Down)
    assert doc.scenario.workload.op == panel.op_combo.currentText() == "all-gather"
    index = panel.model_combo.findText("llama3-70b")
    assert index >= 0
    panel.model_combo.setFocus()
    while panel.model_combo.currentIndex() < index:
        qtbot.keyClick(panel.model_combo, Qt.Key.Key_Down)
    assert doc.scenario.workload.training.model == "llama3-70b"
    assert doc.undo_stack.count() == panel.model_combo.currentIndex() + 1


def test_typed_parallelism_and_message_size_are_undoable(qtbot, win, panel):
    doc = win.document
    before = doc.scenario
    type_into(qtbot, panel.numbers["tp"], "4")
    assert doc.scenario.workload.training.tp == 4
    type_into(qtbot, panel.message_edit, "256M")
    assert doc.scenario.workload.message_bytes == parse_bytes("256M") == 256 * 2**20
    assert panel.message_edit.text() == "256M"
    assert doc.undo_stack.count() == 2
    win.undo_action.trigger()
    win.undo_action.trigger()
    assert doc.scenario is before
    assert panel.numbers["tp"].value() == before.workload.training.tp
    assert panel.message_edit.text() == bytes_text(before.workload.message_bytes)


def test_a_negative_number_gets_the_validation_message(qtbot, win, panel):
    type_into(qtbot, panel.numbers["pp"], "-2")
    assert panel.numbers["pp"].value() == -2 or win.document.scenario.workload.training.pp == 0
    text = panel.error_label.text()
    assert "pp" in text and "-2" in text
    assert "0 (the preset's) or positive" in text or "must" in text
    type_into(qtbot, panel.numbers["pp"], "2")
    assert win.document.scenario.workload.training.pp == 2
    assert panel.error_label.text() == ""


def test_an_unreadable_message_size_is_named(qtbot, win, panel):
    before = win.document.scenario
    type_into(qtbot, panel.message_edit, "lots")
    assert "cannot read 'lots'" in panel.error_label.text()
    assert win.document.scenario is before


def test_byte_counts_read_back_as_typed():
    assert [bytes_text(v) for v in (2**30, 3 * 2**20, 4096, 1000, 1.5)] == [
        "1G",
        "3M",
        "4K",
        "1000",
        "1.5",
    ]
    assert all(parse_bytes(bytes_text(v)) == v for v in (2**30, 3 * 2**20, 4096, 1000))


def test_typed_curve_sizes_set_the_collective_curve(qtbot, win, panel):
    with qtbot.waitSignal(win.worker.finished, timeout=120_000):
        type_into(qtbot, panel.sizes_edit, "1M:1G")
        win.evaluate_now()
    assert win.document.scenario.workload.sizes == "1M:1G"
    sizes = win.last_report.collective_sweep.sizes
    assert sizes == tuple(float(2**20 * 4**i) for i in range(6))  # 1M .. 1G in steps of 4
    xs, _ = next(iter(win.results.curves.values())).getOriginalDataset()
    assert list(xs) == list(sizes)


def test_an_unreadable_size_range_is_named(qtbot, win, panel):
    type_into(qtbot, panel.sizes_edit, "1M:lots")
    assert "sizes" in panel.error_label.text() and "lots" in panel.error_label.text()
    panel.sizes_edit.selectAll()
    qtbot.keyClick(panel.sizes_edit, Qt.Key.Key_Backspace)
    qtbot.keyClick(panel.sizes_edit, Qt.Key.Key_Return)
    assert win.document.scenario.workload.sizes == ""
    assert panel.error_label.text() == ""
