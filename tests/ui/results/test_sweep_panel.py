"""The Sweep tab driven through its widgets: run, cancel, a bad parameter, export."""

from __future__ import annotations

import importlib
import time

import pytest
from PySide6.QtCore import Qt

from engine.analysis import SweepPoint, frontier_sweep
from tests.ui.windows import shown_window
from ui.results.plot_axes import axis_title

TIMEOUT_MS = 60_000
# the module, not the `sweep` function `engine.analysis` exports under the same name
sweep_module = importlib.import_module("engine.analysis.sweeps")


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot)
    yield w
    w.sweep_panel.shutdown()
    w.worker.shutdown()


def test_sweep_tab_defaults(win):
    panel = win.sweep_panel
    assert win.results.tabs.tabText(win.results.tabs.indexOf(panel)) == "Sweep"
    assert panel.param_edit.text() == "fabric.switch_latency_ns"
    assert panel.values_edit.text() == "100:20000:16"
    assert panel.metric_combo.currentText() == "busbw_GBps"


def test_a_small_sweep_draws_three_points(qtbot, win):
    win.document.set_field("workload.ranks", "64")
    panel = win.sweep_panel
    panel.values_edit.setText("100,1000,5000")
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [False]
    xs, ys = panel.curve.getData()
    assert list(xs) == [100.0, 1000.0, 5000.0]
    assert len(ys) == 3 and all(y > 0 for y in ys)
    assert panel.progress.value() == 3 and panel.progress.maximum() == 3
    assert "done" in panel.message.text()
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    # The axes say what the user sees in words and units, without a "(x0.001)" scale.
    assert panel.plot.getAxis("bottom").labelText == "switch latency (ns)"
    assert panel.plot.getAxis("left").labelText == axis_title(panel.metric_combo.currentText())
    assert not panel.plot.getAxis("left").autoSIPrefix


def test_cancel_after_the_first_point_keeps_the_finished_points(qtbot, win, monkeypatch):
    real_point = sweep_module.evaluate_metric

    def slow_point(*args, **kwargs):  # points this small finish faster than a click
        time.sleep(1.0)  # long enough that a loaded machine's GUI thread clicks in time
        return real_point(*args, **kwargs)

    def cancel_at_a_point(_key, _request, payload):
        if isinstance(payload, SweepPoint):
            panel.cancel_button.click()

    monkeypatch.setattr(sweep_module, "evaluate_metric", slow_point)
    win.document.set_field("workload.ranks", "64")
    panel = win.sweep_panel
    panel.values_edit.setText("100,1000,5000")
    panel.worker.partial.connect(cancel_at_a_point)
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [True]
    xs, _ = panel.curve.getData()
    assert 1 <= len(xs) < 3
    assert len(panel.points) == len(xs)
    assert "cancelled" in panel.message.text()


def test_a_bad_sweep_parameter_fails_with_a_message(qtbot, win):
    panel = win.sweep_panel
    panel.param_edit.setText("fabric.nope")
    panel.values_edit.setText("1,2")
    with qtbot.waitSignal(panel.runFailed, timeout=TIMEOUT_MS):
        panel.run_button.click()
    assert "Sweep failed" in panel.message.text()
    assert panel.points == [] and panel.run_button.isEnabled()


def test_the_sweep_curve_exports_as_csv_and_svg(qtbot, win, tmp_path, monkeypatch):
    import csv
    import xml.etree.ElementTree as ET

    from PySide6.QtWidgets import QFileDialog

    win.document.set_field("workload.ranks", "64")
    panel = win.sweep_panel
    panel.values_edit.setText("1000,100")
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    menu = panel.export_button.menu()
    for fmt in ("csv", "svg"):
        target = tmp_path / f"sweep.{fmt}"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        menu.findChild(type(menu.actions()[0]), f"sweepExport_sweep_{fmt}").trigger()
        assert target.exists(), panel.message.text()
    with open(tmp_path / "sweep.csv", newline="") as f:
        rows = list(csv.reader(f))
    metric = panel.metric_combo.currentText()
    assert rows[0] == [panel.param_edit.text(), metric]
    xs, ys = panel.curve.getData()
    assert [float(r[0]) for r in rows[1:]] == sorted(xs) == [100.0, 1000.0]
    assert sorted(float(r[1]) for r in rows[1:]) == sorted(ys)
    root = ET.parse(tmp_path / "sweep.svg").getroot()
    assert root.tag.endswith("svg") and any(e.tag.endswith("path") for e in root.iter())


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("fabric.switch_latency_ns", "switch latency (ns)"),
        ("busbw_GBps", "busbw (GB/s)"),
        ("gpu_utilization", "GPU utilization"),
        ("bundles.leaf-spine.speed_gbps", "speed (Gb/s)"),
        ("collective_time_s", "collective time (s)"),
        ("cost_per_gpu_usd", "cost per GPU (USD)"),
        ("mfu", "MFU"),
    ],
)
def test_axis_titles_are_words_with_units(name, title):
    assert axis_title(name) == title


def test_frontier_of_a_sweep_marks_the_front_and_greys_the_rest(qtbot, win):
    panel = win.sweep_panel
    panel.param_edit.setText("groups.spine.count")
    panel.values_edit.setText("8,16")
    panel.metric_combo.setCurrentText("step_s")
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    view = panel.frontier
    win.results.tabs.setCurrentWidget(panel)
    panel.views.setCurrentIndex(1)
    assert panel.views.tabText(1) == "Frontier" and view.isVisible()
    with qtbot.waitSignal(view.worker.finished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    expected = frontier_sweep(
        win.document.scenario, "groups.spine.count", "8,16", "capex_usd", "step_s"
    )
    assert view.result == expected
    assert [p.label for p in view.result.points] == [
        "groups.spine.count=8",
        "groups.spine.count=16",
    ]
    front = [view.result.points[i] for i in view.result.front]
    xs, ys = view.plot.front_curve.getData()
    assert list(xs) == [p.cost for p in front] and list(ys) == [p.performance for p in front]
    dominated = [p for p in view.result.points if not p.on_front]
    assert dominated  # 16 spines cost more for the same step: greyed
    grey_x, _ = view.plot.dominated_points.getData()
    assert list(grey_x) == [p.cost for p in dominated]
    assert view.plot.table.rowCount() == 2
    assert f"{len(front)} of 2 point(s) on the front" in view.message.text()


def test_frontier_refuses_a_metric_it_cannot_rank(win):
    panel = win.sweep_panel
    panel.metric_combo.setCurrentText("interruptions_per_day")
    assert panel.frontier.run() is None
    assert "interruptions_per_day is not one of them" in panel.frontier.message.text()
