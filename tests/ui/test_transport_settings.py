"""The inspector's Transport group driven through its widgets: edits, undo, refusals and the
controls of each technology."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.topology.generators import single_switch
from tests.ui.windows import shown_window


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot, single_switch(16, "dgx-h100", "sn5600"))
    yield w
    w.congestion_tab.shutdown()
    w.sweep_panel.shutdown()
    w.worker.shutdown()


def type_into(qtbot, widget, text):
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClick(widget, Qt.Key.Key_Delete)
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Return)


def choose(combo, data):
    """Pick the entry holding `data` as a user does (the combo's `activated`)."""
    index = combo.findData(data)
    assert index >= 0, data
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


ROCE_ROWS = ("pfc", "pfc_xoff_bytes", "ecn_kmin_bytes", "ecn_kmax_bytes", "ecn_pmax", "dcqcn")
READING_ROWS = (
    "dcqcn_g_reading",
    "dcqcn_byte_unit_bytes",
    "dcqcn_byte_counter",
    "dcqcn_cnp_pacing",
)
BOTH_ROWS = ("model", "port_buffer_bytes", "mtu_bytes")


def visible(box):
    return {name for name, widget in box.controls().items() if widget.isVisible()}


def test_a_roce_fabric_shows_the_roce_controls_with_catalog_defaults(win):
    box = win.inspector.transport
    assert win.inspector.pages.currentIndex() == 0 and box.isVisible()
    assert box.title() == "Transport (RoCE)"
    assert visible(box) == {*ROCE_ROWS, "dcqcn_profile", *READING_ROWS, *BOTH_ROWS}
    # the defaults named as the catalog has them for the sn5600 and the ConnectX-7
    assert "150,000" in box.kmin_edit.placeholderText()
    assert "1,500,000" in box.kmax_edit.placeholderText()
    assert box.pfc_combo.currentText() == "default (on)"
    assert box.dcqcn_combo.currentText() == "default (on)"
    assert "dcqcn-nvidia" in box.profile_combo.currentText()
    profiles = [box.profile_combo.itemData(i) for i in range(box.profile_combo.count())]
    assert profiles == [None, "dcqcn-barre-retune", "dcqcn-nvidia", "dcqcn-paper"]
    assert box.mtu_combo.currentText() == "default (4096 B)"
    assert not box.leftover.isVisible()


def test_transport_edits_go_through_the_document_and_undo(qtbot, win):
    doc, box = win.document, win.inspector.transport
    original = doc.scenario
    choose(box.pfc_combo, False)
    assert doc.scenario.transport.pfc is False
    type_into(qtbot, box.kmin_edit, "300000")
    assert doc.scenario.transport.ecn_kmin_bytes == 300000.0
    choose(box.profile_combo, "dcqcn-paper")
    assert doc.scenario.transport.dcqcn_profile == "dcqcn-paper"
    choose(box.mtu_combo, 9000)
    assert doc.scenario.fabric.mtu_bytes == 9000
    choose(box.model_combo, "ideal")
    assert doc.scenario.transport.model == "ideal"
    assert doc.undo_stack.count() == 5
    assert box.kmin_edit.text() == "300000"
    # an empty field is the default again
    type_into(qtbot, box.kmin_edit, "")
    assert doc.scenario.transport.ecn_kmin_bytes is None
    for _ in range(6):
        win.undo_action.trigger()
    assert doc.scenario == original
    assert box.pfc_combo.currentData() is None and box.kmin_edit.text() == ""
    assert box.mtu_combo.currentData() is None


def test_a_value_the_checks_refuse_is_not_applied(qtbot, win):
    doc, box, ins = win.document, win.inspector.transport, win.inspector
    type_into(qtbot, box.kmin_edit, "300000")
    before = doc.scenario
    type_into(qtbot, box.kmax_edit, "100000")
    assert doc.scenario == before and doc.undo_stack.count() == 1
    assert "ecn_kmax_bytes" in ins.error_label.text()
    assert "above ecn_kmin_bytes" in ins.error_label.text()
    assert "Edit refused" in win.statusBar().currentMessage()
    assert box.kmax_edit.text() == ""  # the control shows the scenario again
    type_into(qtbot, box.pmax_edit, "2")
    assert doc.scenario == before and "[0, 1]" in ins.error_label.text()
    type_into(qtbot, box.buffer_edit, "lots")  # unreadable: the document's refusal
    assert doc.scenario == before and "cannot read" in ins.error_label.text()
    type_into(qtbot, box.pmax_edit, "0.2")
    assert doc.scenario.transport.ecn_pmax == 0.2 and ins.error_label.text() == ""


def test_the_technology_decides_which_controls_show(qtbot, win):
    doc, box = win.document, win.inspector.transport
    type_into(qtbot, box.pmax_edit, "0.5")
    doc.set_field("fabric.technology", "infiniband")
    assert box.title() == "Transport (InfiniBand)"
    assert visible(box) == {"ib_cc", *BOTH_ROWS}
    assert box.ib_cc_combo.currentText() == "default (off)"
    # the RoCE setting left behind is named, and one click clears it (one undo step)
    assert box.leftover.isVisible() and "ecn_pmax" in box.leftover_label.text()
    steps = doc.undo_stack.count()
    qtbot.mouseClick(box.clear_button, Qt.MouseButton.LeftButton)
    assert doc.scenario.transport.ecn_pmax is None and not box.leftover.isVisible()
    assert doc.undo_stack.count() == steps + 1
    choose(box.ib_cc_combo, True)
    assert doc.scenario.transport.ib_cc is True
    # back on RoCE, IB CC is the leftover and the RoCE rows return
    doc.set_field("fabric.technology", "roce")
    assert visible(box) == {*ROCE_ROWS, "dcqcn_profile", *READING_ROWS, *BOTH_ROWS}
    assert "ib_cc" in box.leftover_label.text()
    win.undo_action.trigger()
    assert visible(box) == {"ib_cc", *BOTH_ROWS}


def test_the_dcqcn_readings_are_chosen_named_and_undone(qtbot, win):
    doc, box = win.document, win.inspector.transport
    # the defaults as the NIC's firmware profile reads its registers
    assert box.g_reading_combo.currentText() == "default (retention)"
    assert box.byte_unit_combo.currentText() == "default (1 B)"
    assert box.byte_counter_combo.currentText() == "default (on)"
    assert box.cnp_pacing_combo.currentText() == "default (per flow)"
    choose(box.g_reading_combo, "gain")
    choose(box.byte_unit_combo, 64.0)
    choose(box.byte_counter_combo, False)
    t = doc.scenario.transport
    assert (t.dcqcn_g_reading, t.dcqcn_byte_unit_bytes, t.dcqcn_byte_counter) == ("gain", 64, False)
    assert doc.undo_stack.count() == 3
    for _ in range(3):
        win.undo_action.trigger()
    t = doc.scenario.transport
    assert (t.dcqcn_g_reading, t.dcqcn_byte_unit_bytes, t.dcqcn_byte_counter) == (None,) * 3
    assert box.g_reading_combo.currentData() is None
