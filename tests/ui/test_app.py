"""The main window driven as a user would: select, type, undo, evaluate, cancel."""

from __future__ import annotations

import copy

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLineEdit

from engine.analysis import clear_caches
from engine.presets.scenarios import load_preset
from ui.main_window import MainWindow

TIMEOUT_MS = 60_000


@pytest.fixture
def window(qtbot):
    """The main window on the default preset, its first evaluation done."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    if win.worker.running:
        qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS).wait()
    return win


def click_node(qtbot, win, group_id):
    """Click the canvas node of `group_id` with the mouse."""
    canvas = win.canvas
    canvas.fit()
    point = canvas.mapFromScene(canvas.nodes[group_id].scenePos())
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: win.inspector.group_id == group_id, timeout=2000)


def type_into(qtbot, spin, text):
    """Replace a spin box's text by typing, then press Enter."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def test_start_up_evaluation_fills_the_plot_and_the_summary(window):
    assert window.last_report is not None
    assert set(window.results.curves) >= {"ring", "tree"}
    for curve in window.results.curves.values():
        xs, ys = curve.getData()
        assert xs is not None and len(xs) == 16 and len(ys) == 16
    assert "mean throughput" in window.results.summary.text()
    assert "engine:" in window.engine_label.text()
    assert "valid" in window.validation_label.text()


def test_typing_a_count_edits_the_document_and_ctrl_z_restores_it(qtbot, window):
    original = copy.deepcopy(window.document.scenario)
    click_node(qtbot, window, "servers")
    spin = window.inspector.count_spin
    assert spin.value() == 128
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS):  # after the debounce
        with qtbot.waitSignal(window.document.changed, timeout=2000):
            type_into(qtbot, spin, "64")
        assert window.document.scenario.group("servers").count == 64
        assert "×64" in window.canvas.nodes["servers"].lines
        assert window.document.undo_stack.count() == 1
    assert window.last_report.topology.gpus == 512
    window.canvas.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.document.scenario == original
    assert window.inspector.count_spin.value() == 128
    redo = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(window, Qt.Key.Key_Z, redo)
    assert window.document.scenario.group("servers").count == 64


def test_an_expansion_problem_outlines_the_node_in_red(qtbot, window):
    click_node(qtbot, window, "leaf")
    with qtbot.waitSignal(window.worker.failed, timeout=TIMEOUT_MS):
        type_into(qtbot, window.inspector.count_spin, "16")
    node = window.canvas.nodes["leaf"]
    assert node.problems and "more ports than" in node.toolTip()
    assert "problem" in window.validation_label.text()
    assert "Evaluation failed" in window.statusBar().currentMessage()
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not window.canvas.nodes["leaf"].problems


def test_out_of_range_count_is_refused_by_the_spin_box(qtbot, window):
    click_node(qtbot, window, "servers")
    spin = window.inspector.count_spin
    type_into(qtbot, spin, "2000000")
    count = window.document.scenario.group("servers").count
    assert 1 <= count <= 1_000_000
    assert spin.value() <= 1_000_000
    type_into(qtbot, spin, "0")
    assert window.document.scenario.group("servers").count >= 1


def test_a_bad_override_is_refused_with_a_message_and_no_undo_entry(qtbot, window):
    edit = window.findChild(QLineEdit, "overrideEdit")
    before = window.document.scenario
    edit.setFocus()
    qtbot.keyClicks(edit, "routing.mode.nope=3")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.inspector.error_label.text()
    assert "Edit refused" in window.statusBar().currentMessage()
    assert window.document.undo_stack.count() == 0
    assert window.document.scenario is before
    edit.clear()
    qtbot.keyClicks(edit, "routing.mode=spray")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert window.document.scenario.routing.mode == "spray"
    assert window.inspector.error_label.text() == ""


def test_structural_problem_outlines_the_node_and_skips_evaluation(qtbot, window):
    window.document.set_field("groups.spine.model", "no-such-switch")
    node = window.canvas.nodes["spine"]
    assert node.problems and "no-such-switch" in node.toolTip()
    assert "problem" in window.validation_label.text()
    assert window.evaluate_now() is None
    window.document.undo_stack.undo()
    assert not window.canvas.nodes["spine"].problems


def test_gui_stays_responsive_during_a_16k_evaluation(qtbot):
    clear_caches()  # a cold evaluation: seconds of routing and transport, not a lookup
    win = MainWindow(load_preset("h100-ib-ndr-16k"), evaluate_on_start=False)
    qtbot.addWidget(win)
    ticks = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
        assert win.cancel_button.isVisibleTo(win)
    timer.stop()
    elapsed = win.last_report.ui_elapsed_s
    assert len(ticks) >= 5, (len(ticks), elapsed)
    assert len(ticks) >= 0.3 * elapsed / 0.020
    assert not win.cancel_button.isVisibleTo(win)


def test_cancel_makes_the_running_result_stale(qtbot, window):
    window.last_report = None
    curves_before = {n: c.getData()[1].copy() for n, c in window.results.curves.items()}
    with qtbot.waitSignal(window.worker.discarded, timeout=TIMEOUT_MS):
        request = window.evaluate_now()
        assert window.cancel_button.isVisibleTo(window)
        qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
        assert window.results.summary.text() == "cancelled"
        assert not window.worker.running
    assert request is not None
    assert window.last_report is None
    assert window.results.summary.text() == "cancelled"
    for name, ys in curves_before.items():
        assert (window.results.curves[name].getData()[1] == ys).all()


def test_a_new_request_supersedes_the_old_one(qtbot, window):
    first = window.evaluate_now()
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS) as blocker:
        second = window.evaluate_now()
    assert blocker.args[0] == second != first


def test_png_export_writes_an_image(window, tmp_path):
    path = tmp_path / "busbw.png"
    window.results.export_png(str(path))
    assert path.stat().st_size > 1000
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_cancel_stops_a_long_run_at_its_next_checkpoint(qtbot):
    # a long run: the 16k preset routed from scratch (an earlier test may have left its
    # routes in the process's caches, and a cached run can finish before the click lands)
    clear_caches()
    win = MainWindow(load_preset("h100-ib-ndr-16k"), evaluate_on_start=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    # every checkpoint the job passes, stale or not (called on the pool thread)
    stages: list[str] = []
    win.worker.tasks._bridge.progress.connect(lambda _key, _id, _f, stage: stages.append(stage))
    with qtbot.waitSignal(win.worker.progress, timeout=TIMEOUT_MS):
        win.evaluate_now()
    qtbot.waitUntil(lambda: win.progress.isVisibleTo(win), timeout=TIMEOUT_MS)
    with qtbot.waitSignal(win.worker.discarded, timeout=TIMEOUT_MS):
        qtbot.mouseClick(win.cancel_button, Qt.MouseButton.LeftButton)
    assert win.worker.tasks._pool.waitForDone(TIMEOUT_MS)
    assert win.last_report is None
    # (the training step starts at once, on its own thread beside the other probes)
    assert "done" not in stages and "cost" not in stages, stages
    assert win.statusBar().currentMessage() == "Evaluation cancelled"


def test_a_latency_edit_says_it_reused_the_routes(qtbot, window):
    """Typing a new switch latency re-evaluates without routing again, and the status bar
    says what the run took from the engine's caches."""
    click_node(qtbot, window, "leaf")
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS):
        type_into(qtbot, window.inspector.latency_spin, "900")
    assert window.document.scenario.fabric.switch_latency_ns == 900
    assert any(note.startswith("routes ") for note in window.last_report.reused)
    assert "reused routes" in window.statusBar().currentMessage()


def test_results_say_their_revision_and_go_grey_when_a_run_fails(qtbot, window):
    """The results name the scenario revision they belong to; after a failed run they stay,
    greyed, under a banner naming the last good revision, until a run succeeds again."""
    panel = window.results
    good = window.document.revision
    assert panel.revision_label.text() == f"revision {good}" and not panel.stale
    click_node(qtbot, window, "leaf")
    with qtbot.waitSignal(window.worker.failed, timeout=TIMEOUT_MS):
        type_into(qtbot, window.inspector.count_spin, "16")
    assert window.document.revision > good
    assert panel.stale and panel.stale_banner.isVisibleTo(window)
    assert f"last good run of revision {good}" in panel.stale_banner.text()
    assert panel.tabs.graphicsEffect().isEnabled()  # greyed, still readable
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS):
        window.canvas.setFocus()
        qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not panel.stale and not panel.tabs.graphicsEffect().isEnabled()
    assert panel.revision_label.text() == f"revision {window.document.revision}"


def test_a_cancelled_run_leaves_the_results_marked_out_of_date(qtbot, window):
    good = window.results.revision
    with qtbot.waitSignal(window.worker.discarded, timeout=TIMEOUT_MS):
        window.document.set_field("fabric.switch_latency_ns", "777")
        window.evaluate_now()
        qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    banner = window.results.stale_banner.text()
    assert window.results.stale and f"revision {good}" in banner and "cancelled" in banner
