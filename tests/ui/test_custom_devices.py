"""Custom devices in the window: duplicate a palette entry through the form, undo it, keep
it in the user catalog beside the library and add a group of it from there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from engine.analysis import import_topology, open_library
from engine.catalog.custom import USER_CATALOG_NAME
from tests.ui.windows import shown_window
from ui.palette import USER_MARK

TIMEOUT_MS = 60_000  # a first run may compile the engine's kernels


@pytest.fixture
def library(tmp_path):
    lib = open_library(tmp_path / "lib.fabriclab")
    yield lib
    lib.close()


def _choose_from_context_menu(qtbot, palette, model: str, text: str) -> None:
    """Right-click `model` in the palette and click the menu entry `text`."""
    item = palette.items[model]
    palette.tree.scrollToItem(item)
    point = palette.tree.visualItemRect(item).center()
    qtbot.mouseClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=point)
    clicked = []

    def click_entry() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        action = next(a for a in menu.actions() if a.text() == text)
        qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())
        clicked.append(action)

    QTimer.singleShot(100, click_entry)
    palette.tree.customContextMenuRequested.emit(point)
    assert clicked


def _type(qtbot, widget, text: str) -> None:
    editor = widget.lineEdit() if hasattr(widget, "lineEdit") else widget
    editor.selectAll()
    qtbot.keyClicks(editor, text)


def test_duplicate_a_server_as_a_one_gpu_host_through_the_form_then_undo(qtbot, library):
    win = shown_window(qtbot, library=library)
    doc, palette = win.document, win.palette
    before = doc.scenario
    _choose_from_context_menu(qtbot, palette, "dgx-h100", "Duplicate as custom device…")
    dialog = win.custom_devices.dialog
    assert dialog is not None and dialog.isVisible()
    _type(qtbot, dialog.name_edit, "Sim host")
    assert dialog.id_edit.text() == "sim-host"
    _type(qtbot, dialog.gpus_spin, "1")
    _type(qtbot, dialog.nics_spin, "1")
    _type(qtbot, dialog.price_spin, "40000")
    _type(qtbot, dialog.power_spin, "1500")
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    (device,) = doc.scenario.devices
    assert (device.id, device.kind, device.based_on) == ("sim-host", "server", "dgx-h100")
    assert device.fields["gpus_per_server"] == 1 and device.fields["nics_per_server"] == 1
    assert device.fields["price_usd"] == 40000 and device.fields["power_w"] == 1500
    assert doc.catalog.get("sim-host", "server").user_defined
    item = palette.items["sim-host"]
    assert USER_MARK in item.text(0) and item.font(0).italic()
    # the new device is a palette entry like any other: a double-click adds a group of it
    palette.tree.scrollToItem(item)
    rect = palette.tree.visualItemRect(item)
    qtbot.mouseClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert doc.scenario.groups[-1].model == "sim-host"
    assert not [p for p in doc.structural_problems if p.where.startswith("devices")]
    doc.undo_stack.undo()  # the group
    doc.undo_stack.undo()  # the device
    assert doc.scenario == before
    assert "sim-host" not in palette.items
    doc.undo_stack.redo()
    assert "sim-host" in palette.items


def test_the_form_keeps_a_refused_device_open_with_the_reason(qtbot, library):
    win = shown_window(qtbot, library=library)
    _choose_from_context_menu(qtbot, win.palette, "qm9700", "Duplicate as custom device…")
    dialog = win.custom_devices.dialog
    _type(qtbot, dialog.id_edit, "qm9700")  # the id of a shipped switch
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible()
    assert "already a catalog device" in dialog.error_label.text()
    assert win.document.scenario.devices == []
    _type(qtbot, dialog.id_edit, "tor-16")
    _type(qtbot, dialog.radix_spin, "16")
    _type(qtbot, dialog.latency_spin, "900")
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    switch = win.document.catalog.get("tor-16", "switch")
    assert switch.value("port_modes") == {"400": 16}
    assert switch.value("latency_ns") == 900


def test_a_device_kept_in_the_user_catalog_is_offered_by_the_next_window(qtbot, library, tmp_path):
    first = shown_window(qtbot, library=library)
    _choose_from_context_menu(qtbot, first.palette, "qm9700", "Duplicate as custom device…")
    dialog = first.custom_devices.dialog
    _type(qtbot, dialog.name_edit, "Lab switch")
    qtbot.mouseClick(dialog.keep_check, Qt.MouseButton.LeftButton)
    assert dialog.keep_check.isChecked()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    path = tmp_path / USER_CATALOG_NAME
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert [d["id"] for d in kept["devices"]] == ["lab-switch"]

    second = shown_window(qtbot, library=library)
    doc = second.document
    assert "lab-switch" not in {d.id for d in doc.scenario.devices}
    item = second.palette.items["lab-switch"]
    assert USER_MARK in item.text(0)
    before = doc.scenario
    second.palette.tree.scrollToItem(item)
    rect = second.palette.tree.visualItemRect(item)
    qtbot.mouseClick(second.palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(second.palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert doc.scenario.groups[-1].model == "lab-switch"
    assert [d.id for d in doc.scenario.devices] == ["lab-switch"]  # carried by the scenario
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert doc.scenario == before


def test_the_bill_of_materials_marks_user_defined_devices(qtbot):
    path = Path(__file__).resolve().parents[1] / "fixtures/formats/samples/one-nic-hosts.links.csv"
    scenario = import_topology(path, switch_model="qm9700")
    win = shown_window(qtbot, scenario)
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    table = win.results.cost_table
    cells = [
        table.item(r, c).text()
        for r in range(table.rowCount())
        for c in range(table.columnCount())
        if table.item(r, c) is not None
    ]
    assert any("[user-defined]" in text and "imported host" in text for text in cells)
    assert USER_MARK in win.palette.items["host-1x400g"].text(0)
