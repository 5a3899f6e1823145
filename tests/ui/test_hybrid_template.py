"""The hybrid template in the app: picking it gives two InfiniBand pods and an Ethernet core
joined through gateways, each card showing its technology (InfiniBand, Ethernet, IB ↔
Ethernet), evaluated without a problem; a cable the user drags from an InfiniBand spine
straight to the Ethernet core is marked as the problem it is, naming the bundle."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.canvas.test_edit import drag, node_point
from tests.ui.test_features import click_ok, fill_dialog
from tests.ui.windows import shown_window
from ui.canvas.items import TECHNOLOGY_TITLES
from ui.settings import app_settings

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def test_the_hybrid_template_gives_pods_gateways_and_an_ethernet_core(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    assert dialog.switch_combo.findData("skyway-ga100") == -1  # a gateway builds no pod
    fill_dialog(qtbot, dialog, "hybrid", 256, switch="qm9700")
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible() and dialog.error_label.text() == ""
    nodes = win.canvas.nodes
    assert {"p1-leaf", "p2-spine", "p1-gw", "p2-gw", "eth-core"} <= set(nodes)
    assert nodes["p1-leaf"].technology == "infiniband"
    assert nodes["p1-servers"].technology == "infiniband"
    assert nodes["eth-core"].technology == "ethernet"
    assert nodes["p2-gw"].technology == "gateway"
    assert TECHNOLOGY_TITLES[nodes["p2-gw"].technology] == "IB ↔ Ethernet"  # the card's text
    assert win.document.problems == []
    report = win.last_report
    assert report is not None and report.topology.gpus == 256
    # flows between the pods share the gateways: the mean is well under line rate
    assert report.permutation.throughput_fraction.min < 0.2
    win.close()


def test_a_spine_dragged_straight_to_the_ethernet_core_is_a_named_problem(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "hybrid", 256, switch="qm9700")
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    canvas = win.canvas
    canvas.fit()
    drag(
        qtbot,
        canvas.viewport(),
        node_point(canvas, "p1-spine"),
        node_point(canvas, "eth-core"),
        Qt.MouseButton.RightButton,
    )
    added = [b for b in win.document.scenario.bundles if {b.a, b.b} == {"p1-spine", "eth-core"}]
    assert len(added) == 1
    qtbot.waitUntil(lambda: bool(win.document.problems), timeout=10_000)
    wheres = [p.where for p in win.document.problems]
    assert f"bundles[{added[0].id}]" in wheres
    message = next(p.message for p in win.document.problems if p.where == f"bundles[{added[0].id}]")
    assert "meet only at a gateway" in message
    win.close()


def test_the_hybrid_templates_ethernet_pod_is_roce_behind_no_gateway(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "leaf-spine", 256, switch="qm9700")
    assert not dialog.ethernet_pod_combo.isEnabled()  # only the hybrid template has pods
    fill_dialog(qtbot, dialog, "hybrid", 256, switch="qm9700")
    assert dialog.ethernet_pod_combo.isEnabled()
    assert dialog.ethernet_pod_combo.findData("qm9700") == -1  # Ethernet switches only
    dialog.ethernet_pod_combo.setCurrentIndex(dialog.ethernet_pod_combo.findData("sn5600"))
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible() and dialog.error_label.text() == ""
    nodes = win.canvas.nodes
    assert nodes["p1-leaf"].technology == "infiniband"
    assert nodes["p2-leaf"].technology == nodes["p2-spine"].technology == "ethernet"
    assert nodes["p2-servers"].technology == "roce"
    assert "p1-gw" in nodes and "p2-gw" not in nodes
    assert win.document.problems == []
    assert win.last_report is not None and win.last_report.topology.gpus == 256
    win.close()
