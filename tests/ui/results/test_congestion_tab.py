"""The Congestion tab driven through its widgets: a small incast, its plots and ports, the
canvas's congestion colours, results going out of date, cancel and a refused workload."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt

import ui.results.congestion_tab as congestion_module
from engine.analysis import TransportStudy
from engine.topology.generators import single_switch
from engine.topology.templates import generate
from tests.ui.windows import shown_window
from ui.canvas.heat import CongestionShares, bundle_congestion, mark_color, pause_color

TIMEOUT_MS = 60_000


def window(qtbot, gpus):
    w = shown_window(qtbot, single_switch(gpus, "dgx-h100", "sn5600"))
    w.results.tabs.setCurrentWidget(w.congestion_tab)
    return w


def close(w):
    w.congestion_tab.shutdown()
    w.sweep_panel.shutdown()
    w.worker.shutdown()


@pytest.fixture
def win(qtbot):
    """16 GPUs (two servers) on one SN5600: a 1:1 incast."""
    w = window(qtbot, 16)
    yield w
    close(w)


@pytest.fixture
def win4(qtbot):
    """32 GPUs (four servers) on one SN5600: a 3:1 incast that queues and marks."""
    w = window(qtbot, 32)
    yield w
    close(w)


def type_into(qtbot, widget, text):
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Return)


def run_incast(qtbot, w, senders, mib="4"):
    tab = w.congestion_tab
    type_into(qtbot, tab.form.senders_spin, str(senders))
    type_into(qtbot, tab.form.bytes_spin, mib)
    with qtbot.waitSignal(tab.runFinished, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [False], tab.message.text()
    return tab.study


def curves(plot):
    return [item for item in plot.getPlotItem().listDataItems() if item.name()]


def test_the_congestion_tab_sits_among_the_results(win):
    tabs = win.results.tabs
    assert tabs.tabText(tabs.indexOf(win.congestion_tab)) == "Congestion"
    form = win.congestion_tab.form
    assert form.kind() == "incast" and form.senders_spin.isVisible()
    form.set_kind("collective")
    assert form.op_combo.isVisible() and not form.senders_spin.isVisible()
    assert form.workload().kind == "collective" and not form.workload().victim


def test_the_algorithms_offered_follow_the_collective(qtbot, win):
    form = win.congestion_tab.form
    form.set_kind("collective")
    algorithms = form.algorithm_combo
    form.op_combo.setCurrentText("all-reduce")
    offered = [algorithms.itemText(i) for i in range(algorithms.count())]
    assert "tree" in offered and "ring" in offered
    algorithms.setCurrentText("tree")
    form.op_combo.setCurrentText("broadcast")  # broadcast has no tree: the choice moves on
    assert [algorithms.itemText(i) for i in range(algorithms.count())] == ["ring"]
    assert form.workload().algorithm == "ring"


def test_a_small_incast_shows_queues_rates_and_ports(qtbot, win):
    tab = win.congestion_tab
    study = run_incast(qtbot, win, 1)
    assert isinstance(study, TransportStudy)
    assert study.workload.senders == 1 and study.workload.bytes_per_flow == 4 * 2**20
    assert "efficiency" in tab.message.text() and "pfc + dcqcn" in tab.message.text()
    queues = curves(tab.queue_plot)
    assert len(queues) == len(study.port_series) > 0
    assert queues[0].name() in study.hottest[0].link.replace(" -> ", " → ")
    rates = curves(tab.rate_plot)
    assert len(rates) == len(study.flow_series) > 0
    assert tab.table.rowCount() == len(study.hottest) > 0
    assert tab.table.item(0, 0).text().startswith(("gpu", "leaf"))
    assert tab.run_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert not tab.progress.isVisible() and not tab.stale_label.isVisible()
    # a second run replaces the curves rather than adding to them
    run_incast(qtbot, win, 1, "2")
    assert len(curves(tab.queue_plot)) == len(tab.study.port_series)


def test_a_study_colours_the_canvas_by_congestion(qtbot, win4):
    canvas = win4.canvas
    assert canvas.colour_mode == "utilization"
    study = run_incast(qtbot, win4, 3)
    assert study.bundle_mark_fraction["servers-leaf"] > 0
    assert canvas.colour_mode == "congestion"
    assert win4.colour_actions["congestion"].isChecked()
    edge = canvas.edges["servers-leaf"]
    expected, tip = bundle_congestion(canvas.congestion, "servers-leaf")
    assert edge.toolTip() == tip
    assert edge.base_color == expected and "ECN-marked" in edge.toolTip()
    assert canvas.legend.isVisible() and "ECN-marked" in canvas.legend.text()
    # the View menu switches back to utilization (nothing evaluated: plain edges)
    win4.colour_actions["utilization"].trigger()
    assert canvas.colour_mode == "utilization"
    assert canvas.edges["servers-leaf"].base_color is None
    # clicking a port row selects its bundle on the canvas
    win4.congestion_tab.table.cellClicked.emit(0, 0)
    assert canvas.selected_bundles() == ["servers-leaf"]


def test_a_scenario_edit_marks_the_results_out_of_date(qtbot, win4):
    tab, canvas, doc = win4.congestion_tab, win4.canvas, win4.document
    run_incast(qtbot, win4, 3)
    doc.move_groups({"leaf": (10.0, 20.0)})  # where a node sits changes no result
    assert not tab.out_of_date and canvas.edges["servers-leaf"].base_color is not None
    win4.inspector.transport.pfc_combo.setCurrentIndex(2)
    win4.inspector.transport.pfc_combo.activated.emit(2)
    assert doc.scenario.transport.pfc is False
    assert tab.out_of_date and tab.stale_label.isVisible()
    assert "out of date" in tab.stale_label.text().lower()
    assert all(c.opacity() < 1 for c in curves(tab.queue_plot))  # faded, not current
    assert not tab.table.isEnabled()
    assert canvas.edges["servers-leaf"].base_color is None
    assert "out of date" in canvas.legend.text()
    win4.undo_action.trigger()  # the very scenario of the study: current again
    assert not tab.out_of_date and not tab.stale_label.isVisible()
    assert canvas.edges["servers-leaf"].base_color is not None
    assert all(c.opacity() == 1 for c in curves(tab.queue_plot))
    # a new run on the edited scenario is current
    win4.redo_action.trigger()
    assert tab.out_of_date
    run_incast(qtbot, win4, 3)
    assert not tab.out_of_date and "none" in tab.study.mechanisms


def test_cancel_stops_a_running_study(qtbot, win, monkeypatch):
    tab = win.congestion_tab
    started, stopped = threading.Event(), threading.Event()

    def slow_study(scenario, workload, catalog=None, progress=None):
        progress(0.1, "expand")
        started.set()
        try:
            while True:  # until the tab's cancel makes the request stale
                progress.poll("transport")
                threading.Event().wait(0.01)
        finally:
            stopped.set()

    monkeypatch.setattr(congestion_module, "transport_study", slow_study)
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert started.wait(10)
    qtbot.waitUntil(lambda: tab.progress.value() == 10, timeout=5000)
    assert tab.progress.isVisible() and not tab.run_button.isEnabled()
    with qtbot.waitSignal(tab.runFinished, timeout=5000) as blocker:
        qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [True]
    assert "cancelled" in tab.message.text()
    assert tab.run_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert stopped.wait(10)  # the job ended at its next checkpoint
    qtbot.wait(50)  # its (dropped) outcome arrives
    assert tab.study is None and tab.table.rowCount() == 0
    assert "cancelled" in tab.message.text()


def test_a_workload_the_fabric_cannot_hold_is_refused(qtbot, win):
    tab = win.congestion_tab
    type_into(qtbot, tab.form.senders_spin, "8")
    with qtbot.waitSignal(tab.runFailed, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert "servers" in blocker.args[0]
    assert tab.message.text().startswith("Study failed") and tab.run_button.isEnabled()


def test_a_sprayed_permutation_is_studied_after_the_user_picks_spray(qtbot):
    """The user switches routing to spray in the inspector and runs a permutation: the
    study runs the sprayed flows through the transport, each uplink set as one link."""
    w = shown_window(
        qtbot,
        generate("leaf-spine", gpus=256, server="hgx-h100", switch="sn5600", oversubscription=2.0),
    )
    try:
        combo = w.inspector.routing_combo
        combo.setCurrentText("spray")
        combo.activated.emit(combo.currentIndex())
        assert w.document.scenario.routing.mode == "spray"
        w.results.tabs.setCurrentWidget(w.congestion_tab)
        tab = w.congestion_tab
        tab.form.set_kind("permutation")
        type_into(qtbot, tab.form.bytes_spin, "1")
        with qtbot.waitSignal(tab.runFinished, timeout=TIMEOUT_MS) as blocker:
            qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
        assert blocker.args == [False], tab.message.text()
        assert tab.study.finished and tab.study.efficiency > 0.5
        assert "efficiency" in tab.message.text()
        rows = [tab.table.item(r, 0).text() for r in range(tab.table.rowCount())]
        assert any("links sprayed alike" in row for row in rows), rows
    finally:
        close(w)


def test_pauses_colour_before_marks():
    shares = CongestionShares(
        pause={"a": 0.3, "b": 0.0, "c": 0.0}, mark={"a": 0.9, "b": 0.2, "c": 0.0}
    )
    assert bundle_congestion(shares, "a")[0] == pause_color(0.3)
    assert bundle_congestion(shares, "b")[0] == mark_color(0.2)
    quiet, text = bundle_congestion(shares, "c")
    assert quiet is not None and "paused 0.0%" in text
    assert bundle_congestion(shares, "elsewhere")[0] is None


def test_an_all_to_all_of_every_gpu_runs_by_kinds(qtbot):
    """The all-to-all of every GPU of a tapered 1k rail-optimized InfiniBand fabric (over a
    million pairs) runs by kinds of flows: the study says so, its ports stand for their
    kind, and the congested uplinks colour the canvas."""
    w = shown_window(
        qtbot,
        generate(
            "rail-optimized", gpus=1024, server="dgx-h100", switch="qm9700", oversubscription=2.0
        ),
    )
    try:
        w.results.tabs.setCurrentWidget(w.congestion_tab)
        tab = w.congestion_tab
        tab.form.set_kind("all-to-all")
        type_into(qtbot, tab.form.ranks_spin, "0")
        type_into(qtbot, tab.form.bytes_spin, "0.25")
        with qtbot.waitSignal(tab.runFinished, timeout=TIMEOUT_MS) as blocker:
            qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
        assert blocker.args == [False], tab.message.text()
        study = tab.study
        assert study.flows == 1024**2 - 128 * 64 and study.classes < 10
        assert "kinds of flows" in tab.message.text()
        rows = [tab.table.item(r, 0).text() for r in range(tab.table.rowCount())]
        assert any("links alike" in row for row in rows), rows
        assert study.hottest[0].max_queue_bytes > 0  # the 2:1 uplinks queue
    finally:
        close(w)
