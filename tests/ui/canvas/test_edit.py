"""Structural editing: document commands, canvas gestures, palette, files, utilization."""

from __future__ import annotations

import copy
import json

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from engine.model.scenario import DeviceGroup, LinkBundle, from_json
from engine.presets.scenarios import DEFAULT_PRESET, load_preset
from tests.ui.windows import shown_window
from ui.canvas.gestures import DEVICE_MIME
from ui.canvas.heat import utilization_color
from ui.document.document import ScenarioDocument

TIMEOUT_MS = 60_000


@pytest.fixture
def doc(qtbot, catalog):
    return ScenarioDocument(load_preset(DEFAULT_PRESET), catalog)


@pytest.fixture
def win(qtbot):
    """The main window on the default preset, not evaluated (edits still debounce a run)."""
    w = shown_window(qtbot)
    w.canvas.fit()
    return w


def assert_undo_redo(doc, original, edited):
    doc.undo_stack.undo()
    assert doc.scenario == original
    doc.undo_stack.redo()
    assert doc.scenario == edited


# ---- document commands ---------------------------------------------------------------------


def test_add_group_is_one_undo_step_with_a_unique_id(doc):
    original = copy.deepcopy(doc.scenario)
    gid = doc.add_group(DeviceGroup("leaf", "switch", "qm9700", 4, "leaf"))
    assert gid == "leaf-2" and doc.scenario.group("leaf-2").count == 4
    assert doc.add_device("dgx-h100", (10.0, 20.0)) == "servers-2"
    g = doc.scenario.group("servers-2")
    assert (g.kind, g.tier, g.count, g.position) == ("server", "server", 1, (10.0, 20.0))
    assert doc.add_device("sn5600") == "leaf-3"
    assert doc.scenario.group("leaf-3").tier == "leaf"
    assert doc.undo_stack.count() == 3
    edited = copy.deepcopy(doc.scenario)
    for _ in range(3):
        doc.undo_stack.undo()
    assert doc.scenario == original
    for _ in range(3):
        doc.undo_stack.redo()
    assert doc.scenario == edited


def test_remove_groups_takes_their_bundles_and_failures_with_them(doc):
    doc.set_field("failures.links", '[{"bundle": "leaf-spine", "links_down": 2}]')
    original = copy.deepcopy(doc.scenario)
    assert doc.remove_groups(["spine"])
    s = doc.scenario
    assert [g.id for g in s.groups] == ["servers", "leaf"]
    assert [b.id for b in s.bundles] == ["servers-leaf"]
    assert s.failures.links == []
    assert doc.undo_stack.count() == 2
    assert_undo_redo(doc, original, copy.deepcopy(s))


def test_add_and_remove_bundle(doc):
    original = copy.deepcopy(doc.scenario)
    assert doc.remove_bundles(["servers-leaf"])
    removed = copy.deepcopy(doc.scenario)
    assert [b.id for b in removed.bundles] == ["leaf-spine"]
    bid = doc.add_bundle(LinkBundle("servers-leaf", "servers", "leaf", "rail"))
    assert bid == "servers-leaf"
    assert doc.remove_bundles(["nope"]) is False
    doc.undo_stack.undo()
    assert doc.scenario == removed
    doc.undo_stack.undo()
    assert doc.scenario == original


def test_moving_several_groups_is_one_undo_step(doc):
    original = copy.deepcopy(doc.scenario)
    assert doc.move_groups({"leaf": (5.0, 6.0), "spine": (7.0, 8.0)})
    assert doc.undo_stack.count() == 1
    assert doc.scenario.group("leaf").position == (5.0, 6.0)
    assert doc.scenario.group("spine").position == (7.0, 8.0)
    assert_undo_redo(doc, original, copy.deepcopy(doc.scenario))


def test_default_bundle_patterns_by_tier(doc):
    rail = doc.default_bundle("leaf", "servers")  # reversed: normalised to server first
    assert (rail.a, rail.b, rail.pattern, rail.speed_gbps) == ("servers", "leaf", "rail", 400.0)
    doc.set_field("groups.leaf.count", "12")  # not a multiple of 8 NICs per server
    assert doc.default_bundle("servers", "leaf").pattern == "full"
    up = doc.default_bundle("spine", "leaf")
    assert (up.a, up.b, up.pattern, up.speed_gbps) == ("leaf", "spine", "full", 400.0)
    doc.add_device("dgx-h100")
    assert doc.default_bundle("servers", "servers-2") is None
    assert doc.default_bundle("leaf", "leaf") is None
    assert doc.connect_groups("leaf", "nosuch") is None


def test_paste_gives_new_ids_and_keeps_internal_bundles(doc):
    original = copy.deepcopy(doc.scenario)
    s = doc.scenario
    new = doc.paste_groups([s.group("leaf"), s.group("spine")], list(s.bundles), (10.0, 0.0))
    assert new == ["leaf-2", "spine-2"]
    pasted = doc.scenario
    assert pasted.group("leaf-2").position == (10.0, 300.0)
    assert [(b.id, b.a, b.b) for b in pasted.bundles[2:]] == [
        ("leaf-2-spine-2", "leaf-2", "spine-2")
    ]
    assert pasted.bundles[2].links_per_pair == 2
    assert doc.undo_stack.count() == 1
    assert_undo_redo(doc, original, copy.deepcopy(pasted))


def test_save_and_load_round_trip_and_malformed_json_is_refused(doc, tmp_path):
    path = tmp_path / "s.json"
    doc.add_device("q3400")
    doc.save_to(path)
    assert from_json(path.read_text()) == doc.scenario
    other = ScenarioDocument(load_preset(DEFAULT_PRESET), doc.catalog)
    other.load_from(path)
    assert other.scenario == doc.scenario and other.undo_stack.count() == 0
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    before = other.scenario
    with pytest.raises(Exception, match="not valid JSON"):
        other.load_from(bad)
    assert other.scenario is before


# ---- canvas gestures -----------------------------------------------------------------------


def node_point(canvas, gid):
    return canvas.mapFromScene(canvas.nodes[gid].scenePos())


def drag(qtbot, widget, start, end, button, modifiers=Qt.KeyboardModifier.NoModifier):
    """Press at `start`, move in steps to `end` with the button held, release."""
    qtbot.mousePress(widget, button, modifiers, start)
    steps = 5
    for i in range(1, steps + 1):
        p = start + (end - start) * i / steps
        event = QMouseEvent(
            QMouseEvent.Type.MouseMove,
            QPointF(p),
            QPointF(widget.mapToGlobal(p)),
            Qt.MouseButton.NoButton,
            button,
            modifiers,
        )
        QApplication.sendEvent(widget, event)
    qtbot.mouseRelease(widget, button, modifiers, end)


def test_dragging_a_node_moves_it_in_one_undo_step(qtbot, win):
    doc, canvas = win.document, win.canvas
    original = copy.deepcopy(doc.scenario)
    start = node_point(canvas, "spine")
    drag(qtbot, canvas.viewport(), start, start + QPoint(80, 30), Qt.MouseButton.LeftButton)
    assert doc.undo_stack.count() == 1
    moved = doc.scenario.group("spine").position
    assert moved != original.group("spine").position
    assert canvas.nodes["spine"].pos() == QPointF(*moved)
    assert doc.scenario.group("leaf") == original.group("leaf")
    win.canvas.setFocus()
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert doc.scenario == original


def test_rubber_band_selection_and_drag_moves_two_nodes_as_one_step(qtbot, win):
    doc, canvas = win.document, win.canvas
    original = copy.deepcopy(doc.scenario)
    canvas.nodes["leaf"].setSelected(True)
    canvas.nodes["spine"].setSelected(True)
    start = node_point(canvas, "leaf")
    drag(qtbot, canvas.viewport(), start, start + QPoint(60, 0), Qt.MouseButton.LeftButton)
    assert doc.undo_stack.count() == 1
    assert doc.scenario.group("leaf").position != original.group("leaf").position
    assert doc.scenario.group("spine").position != original.group("spine").position
    doc.undo_stack.undo()
    assert doc.scenario == original


def test_delete_key_removes_the_selected_edge_and_right_drag_reconnects(qtbot, win):
    doc, canvas = win.document, win.canvas
    original = copy.deepcopy(doc.scenario)
    edge = canvas.edges["servers-leaf"]
    mid = (edge.line().p1() + edge.line().p2()) / 2
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=canvas.mapFromScene(mid))
    assert canvas.selected_bundles() == ["servers-leaf"]
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Delete)
    assert [b.id for b in doc.scenario.bundles] == ["leaf-spine"]
    drag(
        qtbot,
        canvas.viewport(),
        node_point(canvas, "servers"),
        node_point(canvas, "leaf"),
        Qt.MouseButton.RightButton,
    )
    bundle = doc.scenario.bundle("servers-leaf")
    assert (bundle.a, bundle.b, bundle.pattern, bundle.speed_gbps) == (
        "servers",
        "leaf",
        "rail",
        400.0,
    )
    assert "servers-leaf" in canvas.edges
    connected = copy.deepcopy(doc.scenario)
    assert doc.undo_stack.count() == 2
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.scenario == original
    doc.undo_stack.redo()
    doc.undo_stack.redo()
    assert doc.scenario == connected


def test_shift_drag_connects_switches_with_full_pattern(qtbot, win):
    doc, canvas = win.document, win.canvas
    doc.remove_bundles(["leaf-spine"])
    before = copy.deepcopy(doc.scenario)
    drag(
        qtbot,
        canvas.viewport(),
        node_point(canvas, "spine"),
        node_point(canvas, "leaf"),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ShiftModifier,
    )
    b = doc.scenario.bundle("leaf-spine")
    assert (b.a, b.b, b.pattern) == ("leaf", "spine", "full")
    assert doc.scenario.group("spine").position == before.group("spine").position
    doc.undo_stack.undo()
    assert doc.scenario == before


def test_right_drag_onto_empty_space_adds_nothing(qtbot, win):
    canvas = win.canvas
    start = node_point(canvas, "servers")
    drag(qtbot, canvas.viewport(), start, QPoint(2, 2), Qt.MouseButton.RightButton)
    assert win.document.undo_stack.count() == 0
    assert canvas._connect_line is None


def test_delete_key_removes_selected_groups_and_their_bundles(qtbot, win):
    doc, canvas = win.document, win.canvas
    original = copy.deepcopy(doc.scenario)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=node_point(canvas, "leaf"))
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_Delete)
    assert [g.id for g in doc.scenario.groups] == ["servers", "spine"]
    assert doc.scenario.bundles == []
    assert set(canvas.nodes) == {"servers", "spine"} and not canvas.edges
    assert doc.undo_stack.count() == 1
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert doc.scenario == original


def test_ctrl_c_ctrl_v_pastes_copies_with_new_ids(qtbot, win):
    doc, canvas = win.document, win.canvas
    original = copy.deepcopy(doc.scenario)
    canvas.nodes["leaf"].setSelected(True)
    canvas.nodes["spine"].setSelected(True)
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(canvas, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    s = doc.scenario
    assert [g.id for g in s.groups] == ["servers", "leaf", "spine", "leaf-2", "spine-2"]
    assert s.bundle("leaf-2-spine-2").a == "leaf-2"
    assert sorted(canvas.selected_groups()) == ["leaf-2", "spine-2"]
    assert doc.undo_stack.count() == 1
    pasted = copy.deepcopy(s)
    qtbot.keyClick(canvas, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert [g.id for g in doc.scenario.groups][-2:] == ["leaf-3", "spine-3"]
    doc.undo_stack.undo()
    assert doc.scenario == pasted
    doc.undo_stack.undo()
    assert doc.scenario == original


def test_delete_in_a_text_box_does_not_remove_canvas_items(qtbot, win):
    canvas = win.canvas
    canvas.nodes["leaf"].setSelected(True)
    spin = win.inspector.count_spin
    spin.setFocus()
    qtbot.keyClick(spin, Qt.Key.Key_Delete)
    assert win.document.scenario.group("leaf")


# ---- palette -------------------------------------------------------------------------------


def test_palette_lists_servers_and_switches_and_searches(qtbot, win):
    palette = win.palette
    assert {"dgx-h100", "qm9700", "sn5600"} <= set(palette.visible_models())
    assert palette.sections["server"].childCount() == len(win.catalog.of_kind("server"))
    qtbot.keyClicks(palette.search, "SN56")
    assert palette.visible_models() == ["sn5600"]
    assert palette.sections["server"].isHidden()
    palette.search.clear()
    assert len(palette.visible_models()) == len(palette.items)


def test_double_clicking_a_palette_item_adds_one_group(qtbot, win):
    doc, palette = win.document, win.palette
    original = copy.deepcopy(doc.scenario)
    item = palette.items["q3400"]
    rect = palette.tree.visualItemRect(item)
    # a real double-click is press, release, then the double-click event
    qtbot.mouseClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert doc.undo_stack.count() == 1
    g = doc.scenario.groups[-1]
    assert (g.id, g.model, g.kind, g.tier, g.count) == ("leaf-2", "q3400", "switch", "leaf", 1)
    assert win.canvas.selected_group() == "leaf-2"
    doc.undo_stack.undo()
    assert doc.scenario == original


def dropped(canvas, mime, pos):
    for etype in (QDropEvent.Type.DragEnter, QDropEvent.Type.DragMove, QDropEvent.Type.Drop):
        if etype == QDropEvent.Type.Drop:
            event = QDropEvent(
                QPointF(pos),
                Qt.DropAction.CopyAction,
                mime,
                Qt.MouseButton.LeftButton,
                Qt.KeyboardModifier.NoModifier,
            )
            QApplication.sendEvent(canvas.viewport(), event)
        else:
            cls = QDragEnterEvent if etype == QDropEvent.Type.DragEnter else QDragMoveEvent
            event = cls(
                pos,
                Qt.DropAction.CopyAction,
                mime,
                Qt.MouseButton.LeftButton,
                Qt.KeyboardModifier.NoModifier,
            )
            QApplication.sendEvent(canvas.viewport(), event)
        yield event


@pytest.mark.filterwarnings("ignore:Function.*QDrag:DeprecationWarning")  # PySide marks the
# only QDragEnterEvent/QDragMoveEvent constructors deprecated
def test_dropping_a_palette_item_on_the_canvas_adds_a_group_there(qtbot, win):
    doc, canvas, palette = win.document, win.canvas, win.palette
    original = copy.deepcopy(doc.scenario)
    mime = palette.tree.mimeData([palette.items["dgx-b200"]])
    assert mime.hasFormat(DEVICE_MIME)
    pos = QPoint(canvas.viewport().width() // 3, canvas.viewport().height() // 2)
    expected = canvas.mapToScene(pos)
    events = list(dropped(canvas, mime, pos))
    assert all(e.isAccepted() for e in events)
    g = doc.scenario.group("servers-2")
    assert (g.model, g.kind, g.tier, g.count) == ("dgx-b200", "server", "server", 1)
    assert g.position == pytest.approx((expected.x(), expected.y()))
    assert "servers-2" in canvas.nodes
    doc.undo_stack.undo()
    assert doc.scenario == original


@pytest.mark.filterwarnings("ignore:Function.*QDrag:DeprecationWarning")  # PySide marks the
# only QDragEnterEvent/QDragMoveEvent constructors deprecated
def test_the_canvas_refuses_foreign_drops(qtbot, win):
    mime = QMimeData()
    mime.setText("hello")
    events = list(dropped(win.canvas, mime, QPoint(10, 10)))
    assert not events[0].isAccepted()
    assert win.document.undo_stack.count() == 0


# ---- files ---------------------------------------------------------------------------------


def test_save_as_and_open_through_the_actions(qtbot, win, tmp_path, monkeypatch):
    path = tmp_path / "mine.json"
    win.document.add_device("sn5600")
    saved = copy.deepcopy(win.document.scenario)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    win.save_as_action.trigger()
    assert from_json(path.read_text()) == saved
    assert "Saved" in win.statusBar().currentMessage()
    win.document.undo_stack.undo()
    assert win.document.scenario != saved
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    win.open_action.trigger()
    assert win.document.scenario == saved
    assert "leaf-2" in win.canvas.nodes
    assert win.document.undo_stack.count() == 0


@pytest.mark.parametrize(
    "text",
    [
        "{ not json",
        json.dumps({"format": "other"}),
        '{"format": "fabriclab-scenario", "version": 1, "groups": 3}',
    ],
)
def test_opening_a_malformed_file_shows_a_message_and_keeps_the_scenario(
    qtbot, win, tmp_path, monkeypatch, text
):
    path = tmp_path / "bad.json"
    path.write_text(text)
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    before = win.document.scenario
    win.open_action.trigger()
    assert win.document.scenario is before
    assert shown and "Cannot open" in shown[0]
    assert "Cannot open" in win.statusBar().currentMessage()


def test_opening_a_missing_file_and_cancelling_dialogs(qtbot, win, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    assert win.open_path(str(tmp_path / "missing.json")) is False
    assert shown
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: ("", ""))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))
    assert win.open_file() is False and win.save_file_as() is False


# ---- utilization colouring -----------------------------------------------------------------


def test_a_run_colours_switches_and_edges_by_tier_utilization(qtbot, win):
    canvas = win.canvas
    assert not canvas.legend.isVisibleTo(canvas)
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    util = win.last_report.permutation.link_utilization
    leaf_spine = max(util["leaf->spine"].mean, util["spine->leaf"].mean)
    edge = canvas.edges["leaf-spine"]
    assert edge.pen().color() == utilization_color(leaf_spine)
    assert canvas.edges["servers-leaf"].tier_label == "server->leaf"
    assert canvas.nodes["spine"].fill == utilization_color(leaf_spine)
    assert canvas.nodes["leaf"].fill is not None
    assert canvas.nodes["servers"].fill is None
    assert "utilization" in canvas.nodes["spine"].toolTip()
    assert canvas.legend.isVisibleTo(canvas)
    assert "link utilization" in canvas.legend.text()
    canvas.show_utilization(None)
    assert canvas.nodes["spine"].fill is None
    assert not canvas.legend.isVisibleTo(canvas)


def test_fit_keeps_every_card_clear_of_the_legend(qtbot):
    # the hybrid preset's core band is as wide as the fabric: its right card sits in the corner
    win = shown_window(qtbot, load_preset("h100-ib-pods-eth-core-256"))
    canvas = win.canvas
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    assert canvas.legend.isVisibleTo(canvas)
    canvas.fit()
    legend = canvas.legend.geometry()
    for node in canvas.nodes.values():
        card = canvas.mapFromScene(node.sceneBoundingRect()).boundingRect()
        assert not card.intersects(legend), node.group_id
    win.close()


def test_utilization_colour_scale():
    assert utilization_color(0.0).hue() == 120
    assert utilization_color(1.0).hue() == 0
    assert utilization_color(2.0) == utilization_color(1.0)
