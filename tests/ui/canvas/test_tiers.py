"""Canvas editing of tiers: a switch dropped in the spine band is a spine, and the inspector
moves a group to another tier (one undo step, the node into the new band)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication

from tests.ui.canvas.test_edit import drag, dropped, node_point
from tests.ui.windows import shown_window
from ui.canvas.layout import tier_at, tier_y


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot)
    w.canvas.fit()
    QApplication.processEvents()
    yield w
    w.close()  # waits for a run an edit started, before the next test


def test_the_band_under_a_point_names_its_tier():
    assert [tier_at(tier_y(t)) for t in ("server", "leaf", "spine", "core")] == [
        "server",
        "leaf",
        "spine",
        "core",
    ]
    assert tier_at(tier_y("spine") + 60) == "spine" and tier_at(-10_000) == "core"


@pytest.mark.filterwarnings("ignore:Function.*QDrag:DeprecationWarning")
@pytest.mark.parametrize(("tier", "model"), [("spine", "qm9700"), ("leaf", "q3400")])
def test_a_switch_dropped_in_a_band_joins_that_tier(win, tier, model):
    canvas, doc = win.canvas, win.document
    spine_x = canvas.nodes["spine"].pos().x() + 400
    pos = canvas.mapFromScene(QPointF(spine_x, tier_y(tier) + 20))
    assert 0 <= pos.y() < canvas.viewport().height()
    mime = win.palette.tree.mimeData([win.palette.items[model]])
    events = list(dropped(canvas, mime, QPoint(pos)))
    assert all(e.isAccepted() for e in events)
    added = doc.scenario.groups[-1]
    assert (added.model, added.kind, added.tier) == (model, "switch", tier)
    assert added.id.startswith(tier)
    assert canvas.nodes[added.id].tier == tier
    assert canvas.selected_groups() == [added.id]
    assert win.inspector.tier_combo.currentText() == tier


def test_a_server_dropped_in_the_spine_band_stays_a_server(win):
    doc = win.document
    gid = doc.add_device("dgx-h100", (0.0, tier_y("spine")), "spine")
    assert doc.scenario.group(gid).tier == "server"


def test_the_inspector_moves_a_switch_to_another_tier(qtbot, win):
    doc, canvas, inspector = win.document, win.canvas, win.inspector
    gid = doc.add_device("qm9700", (900.0, tier_y("leaf")), "leaf")
    canvas.select_group(gid)
    combo = inspector.tier_combo
    assert combo.isEnabled()
    assert [combo.itemText(i) for i in range(combo.count())] == ["leaf", "spine", "core"]
    before = doc.scenario
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # leaf -> spine
    assert doc.scenario.group(gid).tier == "spine"
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # spine -> core
    group = doc.scenario.group(gid)
    assert group.tier == "core" and group.position == (900.0, tier_y("core"))
    assert canvas.nodes[gid].pos().y() == tier_y("core")
    assert canvas.nodes[gid].tier == "core"
    assert doc.undo_stack.undoText() == f"Set groups.{gid}.tier = core"
    win.undo_action.trigger()
    win.undo_action.trigger()
    assert doc.scenario is before
    assert combo.currentText() == "leaf"


def test_a_servers_tier_is_not_editable(win):
    win.canvas.select_group("servers")
    assert win.inspector.tier_combo.currentText() == "server"
    assert not win.inspector.tier_combo.isEnabled()


def test_a_switch_dragged_into_the_spine_band_becomes_a_spine(qtbot, win):
    doc, canvas = win.document, win.canvas
    before = doc.scenario
    start = node_point(canvas, "leaf")
    end = canvas.mapFromScene(QPointF(canvas.nodes["leaf"].pos().x() + 300, tier_y("spine")))
    drag(qtbot, canvas.viewport(), start, end, Qt.MouseButton.LeftButton)
    leaf = doc.scenario.group("leaf")
    assert leaf.tier == "spine" and canvas.nodes["leaf"].tier == "spine"
    assert doc.undo_stack.count() == 1
    servers = node_point(canvas, "servers")  # a server group stays a server wherever it goes
    drag(
        qtbot,
        canvas.viewport(),
        servers,
        node_point(canvas, "spine") + QPoint(250, 0),
        Qt.MouseButton.LeftButton,
    )
    assert doc.scenario.group("servers").tier == "server"
    win.undo_action.trigger()
    win.undo_action.trigger()
    assert doc.scenario is before
