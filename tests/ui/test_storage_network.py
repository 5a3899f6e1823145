"""A storage network from the template dialog: choosing storage nodes builds them and their
Ethernet leaves beside the compute fabric, framed on the canvas as a network of their own
and left out of the compute run's colours, evaluated without a problem, priced on storage
lines of the bill of materials and summed up (nodes, checkpoint) on the summary line; a
storage node dragged from the palette joins the scenario as a storage group."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF

from tests.ui.test_features import click_ok, fill_dialog
from tests.ui.windows import shown_window
from ui.canvas.network_frame import TITLE
from ui.settings import app_settings

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def test_storage_nodes_in_the_template_dialog_build_a_storage_network(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "hybrid", 256, switch="qm9700")
    assert dialog.storage_spin.value() == 0 and dialog.storage_spin.text() == "none"
    dialog.storage_spin.setFocus()
    dialog.storage_spin.selectAll()
    qtbot.keyClicks(dialog.storage_spin, "8")
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible() and dialog.error_label.text() == ""
    canvas = win.canvas
    assert {"storage-nodes", "storage-leaf", "p1-leaf", "eth-core"} <= set(canvas.nodes)
    assert canvas.nodes["storage-nodes"].kind == "storage"
    assert canvas.nodes["storage-leaf"].technology == "ethernet"
    assert canvas.nodes["storage-nodes"].technology == "roce"
    # the compute run colours the compute fabric only: the storage network stays plain
    assert canvas.nodes["p1-leaf"].fill is not None
    assert canvas.nodes["storage-leaf"].fill is None
    assert canvas.edges["p1-servers-leaf"].base_color is not None
    assert canvas.edges["p1-servers-storage"].base_color is None
    frame = canvas.storage_frame
    assert frame is not None and frame.title == TITLE
    inside = frame.sceneBoundingRect()
    for gid in ("storage-nodes", "storage-leaf"):
        assert inside.contains(canvas.nodes[gid].scenePos())
    for gid in ("p1-leaf", "p2-spine", "eth-core"):
        assert not inside.contains(canvas.nodes[gid].scenePos())
    assert win.document.problems == []
    report = win.last_report
    assert report is not None and report.topology.gpus == 256  # storage nodes are no GPUs
    storage_rows = [row for row in report.cost.bom if row.tier.startswith("storage")]
    node = next(row for row in storage_rows if row.kind == "storage")
    assert node.count == 8
    assert any(row.kind == "switch" and row.catalog_id == "sn5600" for row in storage_rows)
    # the summary line names the storage network and its checkpoint
    assert report.storage is not None and report.storage.nodes == 8
    summary = win.results.summary.text()
    assert "storage network: 8 nodes" in summary and report.storage.checkpoint_bound in summary
    win.close()


def test_a_storage_node_from_the_palette_is_a_storage_group(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    palette = win.palette
    assert "storage-node-2x400g" in palette.items
    gid = win.document.add_device("storage-node-2x400g", (400.0, 450.0))
    group = win.document.scenario.group(gid)
    assert (group.kind, group.tier) == ("storage", "server")
    qtbot.waitUntil(lambda: gid in win.canvas.nodes, timeout=10_000)
    assert win.canvas.storage_frame is not None
    assert win.canvas.storage_frame.sceneBoundingRect().contains(QPointF(400.0, 450.0))
    win.close()
