"""The Collective tab's Algorithm and Protocol combos, driven as a user would: a choice is one
undoable edit of the document's workload and a new evaluation through the worker, the plots
say what was forced, and the combos follow undo, a load and an edit made elsewhere."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from engine.analysis import COLLECTIVE_ALGORITHMS, CollectiveRow
from engine.topology.generators import single_switch
from tests.ui.windows import shown_window
from ui.results.collective_controls import choice_text, forcing_text, picks_text, size_text

TIMEOUT_MS = 60_000


@pytest.fixture
def win(qtbot):
    """16 GPUs (two servers) on one SN5600, after its first evaluation."""
    w = shown_window(qtbot, single_switch(16, "dgx-h100", "sn5600"))
    w.results.tabs.setCurrentWidget(w.results.collective_tab)
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        w.evaluate_now()
    yield w
    w.results.shutdown()
    w.congestion_tab.shutdown()
    w.sweep_panel.shutdown()
    w.worker.shutdown()


def controls(w):
    return w.results.collective_tab.controls


def values(combo):
    return [combo.itemData(i) for i in range(combo.count())]


def texts(combo):
    return [combo.itemText(i) for i in range(combo.count())]


def choose(qtbot, w, combo, value):
    """Pick `value` in `combo` as a user would and wait for the evaluation it starts."""
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        combo.setCurrentIndex(combo.findData(value))
    qtbot.wait(10)  # let the window show the report


def legend_labels(plot):
    return [label.text for _sample, label in plot.getPlotItem().legend.items]


def title(plot):
    return plot.getPlotItem().titleLabel.text


def test_the_bar_shows_the_documents_workload_and_the_ops_algorithms(win):
    bar = controls(win)
    assert bar.isVisible()
    assert values(bar.algorithm_combo) == ["auto", *COLLECTIVE_ALGORITHMS["all-reduce"]]
    assert texts(bar.protocol_combo) == ["auto", "LL", "LL128", "Simple"]
    assert values(bar.protocol_combo) == ["auto", "ll", "ll128", "simple"]
    assert bar.algorithm_combo.currentData() == "auto"
    assert bar.protocol_combo.currentData() == "auto"
    assert bar.note.text() == ""
    assert "(forced)" not in title(win.results.plot)


def test_forcing_an_algorithm_is_one_undoable_edit_that_reevaluates(qtbot, win):
    bar, results, stack = controls(win), win.results, win.document.undo_stack
    shown = set(win.last_report.collective_sweep.busbw_GBps)
    assert len(shown) > 1 and "ring" in shown
    before = stack.count()
    choose(qtbot, win, bar.algorithm_combo, "ring")

    assert win.document.scenario.workload.algorithm == "ring"
    assert stack.count() == before + 1 and "workload.algorithm" in stack.undoText()
    assert list(win.last_report.collective_sweep.busbw_GBps) == ["ring"]
    assert legend_labels(results.plot) == ["ring"] == legend_labels(results.time_plot)
    assert "ring (forced)" in title(results.plot) and "ring (forced)" in title(results.time_plot)
    info = results.collective_tab.message.text()
    assert "ring (forced)" in info and "protocol by size" in info

    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        stack.undo()
    qtbot.wait(10)
    assert win.document.scenario.workload.algorithm == "auto"
    assert bar.algorithm_combo.currentData() == "auto"  # the combo followed the undo
    assert set(win.last_report.collective_sweep.busbw_GBps) == shown
    assert set(legend_labels(results.plot)) == shown  # the other curves are back
    assert "(forced)" not in title(results.plot)


def test_protocol_chosen_by_keyboard_and_undone_step_by_step(qtbot, win):
    combo, stack = controls(win).protocol_combo, win.document.undo_stack
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert win.document.scenario.workload.protocol == "ll"
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    qtbot.wait(10)
    assert win.document.scenario.workload.protocol == "ll128"
    assert combo.currentText() == "LL128"
    assert {row.protocol for row in win.last_report.collective.rows} == {"ll128"}
    assert "LL128 (forced)" in title(win.results.plot)

    stack.undo()
    assert win.document.scenario.workload.protocol == "ll"
    assert combo.currentText() == "LL"
    stack.undo()
    assert win.document.scenario.workload.protocol == "auto"
    assert combo.currentText() == "auto"
    stack.redo()
    assert combo.currentText() == "LL"


def test_a_forced_pair_is_named_on_the_plots_and_in_each_points_tooltip(qtbot, win):
    bar, tab = controls(win), win.results.collective_tab
    bar.algorithm_combo.setCurrentIndex(bar.algorithm_combo.findData("ring"))
    choose(qtbot, win, bar.protocol_combo, "ll128")
    workload = win.document.scenario.workload
    assert (workload.algorithm, workload.protocol) == ("ring", "ll128")
    assert "ring, LL128 (forced)" in title(win.results.plot)
    assert "LL128 at every size" in tab.message.text()

    points = tab.curves["ring"].scatter.points()
    rows = win.last_report.collective.rows
    assert len(points) == len(rows)
    tip = tab.curves["ring"].scatter.opts["tip"]
    first = tip(x=0.0, y=0.0, data=points[0].data())
    assert first.startswith(f"ring, {size_text(rows[0].bytes)}:") and "GB/s" in first
    assert "NCCL's pick here, with LL128" in first
    last_time = tab.time_curves["ring"].scatter.points()[-1].data()
    assert last_time.endswith("NCCL's pick here, with LL128") and "s\n" in last_time


def test_the_combos_follow_an_op_edited_elsewhere_and_a_load(qtbot, win):
    bar, document = controls(win), win.document
    document.set_field("workload.op", "all-gather")
    assert values(bar.algorithm_combo) == ["auto", *COLLECTIVE_ALGORITHMS["all-gather"]]
    assert bar.algorithm_combo.currentData() == "auto"
    document.undo_stack.undo()
    assert values(bar.algorithm_combo) == ["auto", *COLLECTIVE_ALGORITHMS["all-reduce"]]

    scenario = document.scenario
    workload = dataclasses.replace(scenario.workload, algorithm="tree", protocol="simple")
    document.load(dataclasses.replace(scenario, workload=workload))
    assert bar.algorithm_combo.currentData() == "tree"
    assert bar.protocol_combo.currentText() == "Simple"
    assert document.undo_stack.count() == 0  # loading is no edit of its own
    win.debounce.stop()


def test_a_combination_the_engine_refuses_is_named_beside_the_combos(qtbot, win):
    bar = controls(win)
    bar.algorithm_combo.setCurrentIndex(bar.algorithm_combo.findData("nvlstree"))
    with qtbot.waitSignal(win.worker.failed, timeout=TIMEOUT_MS):
        bar.protocol_combo.setCurrentIndex(bar.protocol_combo.findData("ll"))
    assert "simple protocol only" in bar.note.text()
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.document.undo_stack.undo()
    assert bar.protocol_combo.currentData() == "auto"
    assert bar.note.text() == ""


def test_a_panel_without_a_document_hides_the_bar(qtbot):
    from ui.results.panel import ResultsPanel

    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.collective_tab.controls.isVisible()
    panel.shutdown()


def row(size, algorithm, protocol):
    return CollectiveRow(size, 1.0, 1.0, 1.0, algorithm, protocol)


def test_the_texts_word_what_was_forced_and_the_picks_by_size():
    assert choice_text("auto", "auto") == ""
    assert choice_text("ring", "ll128") == "ring, LL128 (forced)"
    assert choice_text("tree", "auto") == "tree (forced)"
    assert choice_text("auto", "simple") == "Simple (forced)"
    assert size_text(8) == "8 B" and size_text(32768) == "32 KiB"
    assert size_text(4 * 2**20) == "4 MiB"
    rows = [
        row(8, "tree", "ll"),
        row(32768, "tree", "ll"),
        row(65536, "ring", "ll128"),
        row(2**30, "ring", "simple"),
    ]
    assert picks_text(rows, algorithm_forced=False) == (
        "tree/LL ≤ 32 KiB, ring/LL128 ≤ 64 KiB, ring/Simple above"
    )
    assert picks_text(rows[2:3], algorithm_forced=True) == "LL128 at every size"
    assert picks_text([], algorithm_forced=False) == ""


def test_the_what_if_of_forcing_names_the_size_where_it_pays_most():
    def timed(size, time_s, fastest_time_s, fastest=("ring", "simple")):
        return CollectiveRow(
            size, time_s, 1.0, 1.0, "nvlstree", "simple", time_s, *fastest, fastest_time_s
        )

    rows = [
        timed(2**20, 1.0, 1.0, ("nvlstree", "simple")),  # NCCL's pick is the fastest
        timed(2**30, 1.0, 0.8),
        timed(2**33, 1.0, 0.59),
    ]
    assert forcing_text(rows) == "forcing ring/Simple would be 41% faster at 8 GiB (2 sizes gain)"
    assert forcing_text(rows[:1]) == ""
    assert forcing_text([row(8, "tree", "ll")]) == ""  # a report from before the what-if


def test_nccl_s_pick_is_drawn_under_the_curves_in_auto_mode_only(qtbot, win):
    tab = win.results.collective_tab
    rows = win.last_report.collective.rows
    xs, ys = tab.pick_busbw.getOriginalDataset()
    assert list(xs) == [float(r.bytes) for r in rows]
    assert list(ys) == [r.busbw_GBps for r in rows]
    assert "NCCL's pick" not in legend_labels(tab.busbw_plot)  # named in the info line
    assert "the wide grey line: NCCL's pick" in tab.message.text()
    bar = controls(win)
    choose(qtbot, win, bar.algorithm_combo, "ring")
    xs, _ = tab.pick_busbw.getOriginalDataset()
    assert xs is None or len(xs) == 0
    assert "NCCL's pick" not in tab.message.text()
