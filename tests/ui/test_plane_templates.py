"""The template dialog's new templates: multi-plane offers its planes and preselects each
plane's share of the NIC's rate, and picking it gives a canvas of one card per plane's
leaves and spines, evaluated without a problem; NVL72 racks likewise."""

from __future__ import annotations

import pytest

from tests.ui.test_features import click_ok, fill_dialog, pick_server
from tests.ui.windows import shown_window
from ui.settings import app_settings

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def test_the_multi_plane_template_gives_an_evaluated_canvas_of_planes(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    assert not dialog.planes_spin.isEnabled()  # the default template has no planes
    fill_dialog(qtbot, dialog, "multi-plane", 1024, switch="sn5600")
    pick_server(dialog, "hgx-b300")
    assert dialog.planes_spin.isEnabled() and dialog.planes_spin.value() == 2
    assert dialog.speed_combo.currentData() == 400.0  # 800G NIC over two planes
    assert dialog.params()["planes"] == 2
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible() and dialog.error_label.text() == ""
    s = win.document.scenario
    assert set(win.canvas.nodes) == {"servers", "p1-leaf", "p1-spine", "p2-leaf", "p2-spine"}
    assert s.group("p1-leaf").name == "Plane 1 leaves"
    assert s.group("p2-spine").name == "Plane 2 spines"
    assert "2 independent planes" in s.metadata.description
    assert win.document.problems == []
    report = win.last_report
    assert report is not None and report.topology.gpus == 1024
    assert report.permutation.throughput_fraction.mean > 0.99
    assert "mean throughput" in win.results.summary.text()
    win.close()


def test_four_planes_on_a_nic_of_two_links_are_refused_in_the_dialog(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "multi-plane", 1024, switch="sn5600")
    pick_server(dialog, "hgx-b300")
    dialog.planes_spin.setValue(4)
    assert dialog.speed_combo.currentData() == 200.0
    click_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert "makes 2 link(s)" in dialog.error_label.text()
    assert win.document.undo_stack.count() == 0
    win.close()


def test_the_nvl72_template_gives_racks_on_folded_rails(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "nvl72", 576, switch="qm9700")
    pick_server(dialog, "gb200-nvl72")
    assert not dialog.planes_spin.isEnabled()
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    s = win.document.scenario
    assert s.group("servers").count == 8 and s.group("leaf").count == 18
    assert s.group("leaf").name == "Rail-group leaves (72 rails on 18)"
    assert win.canvas.tiers == ["server", "leaf", "spine"]
    assert win.document.problems == []
    assert win.last_report.topology.gpus == 576
    win.close()
