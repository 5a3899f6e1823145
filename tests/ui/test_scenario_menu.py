"""Scenario menu as a user reaches it: the RoCE / InfiniBand variant in one undoable step,
File > New (blank), and the compare view's table, curves and CSV."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import Qt

from engine.analysis import load_preset
from tests.ui.windows import shown_window
from ui.results.compare_view import BETTER_MARK
from ui.results.tables import table_header, table_rows
from ui.settings import app_settings

TIMEOUT_MS = 60_000

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def open_window(qtbot, scenario=None):
    w = shown_window(qtbot, scenario, settings=app_settings())
    return w


@pytest.fixture
def win(qtbot):
    w = open_window(qtbot)
    yield w
    w.close()  # waits for the runs an edit started, before the next test


def menu_named(win, title):
    return next(a.menu() for a in win.menuBar().actions() if a.text() == title)


def test_the_roce_variant_is_one_undoable_step(win, catalog):
    original = win.document.scenario
    menu = menu_named(win, "&Scenario")
    assert win.roce_action in menu.actions() and win.ib_action in menu.actions()
    assert not win.ib_action.isEnabled()  # the default preset is InfiniBand already
    win.roce_action.trigger()
    variant = win.document.scenario
    assert variant.fabric.technology == "roce"
    switches = [g for g in variant.groups if g.kind == "switch"]
    assert switches and all(catalog.get(g.model).technology == "ethernet" for g in switches)
    assert [(g.id, g.count) for g in variant.groups] == [(g.id, g.count) for g in original.groups]
    assert win.document.problems == []
    assert "(roce)" in win.windowTitle()
    assert win.ib_action.isEnabled() and not win.roce_action.isEnabled()
    assert win.document.undo_stack.count() == 1
    assert win.document.undo_stack.undoText() == "Make the Ethernet/RoCE variant"
    win.undo_action.trigger()
    assert win.document.scenario is original
    win.redo_action.trigger()
    win.ib_action.trigger()  # and back: an InfiniBand variant of the variant
    assert win.document.scenario.fabric.technology == "infiniband"
    assert [g.model for g in win.document.scenario.groups] == [g.model for g in original.groups]


def test_a_variant_no_switch_fits_is_refused_by_name(qtbot, monkeypatch):
    w = open_window(qtbot, load_preset("hgx-h100-roce-ecmp-1k"))
    said = []
    monkeypatch.setattr("ui.scenario_menu.QMessageBox.warning", lambda *args: said.append(args[2]))
    before = w.document.scenario
    w.ib_action.trigger()
    assert w.document.scenario is before and w.document.undo_stack.count() == 0
    assert "groups[leaf]" in said[0] and "no infiniband switch" in said[0]
    assert "No InfiniBand variant" in w.statusBar().currentMessage()


def test_file_new_gives_a_blank_canvas_that_undo_takes_back(win):
    original = win.document.scenario
    file_menu = menu_named(win, "&File")
    assert win.new_action in file_menu.actions()
    assert win.new_action.shortcut().toString() == "Ctrl+N"
    win.new_action.trigger()
    assert win.document.scenario.groups == [] and win.canvas.nodes == {}
    assert win.document.scenario.metadata.name == "untitled"
    win.undo_action.trigger()
    assert win.document.scenario is original
    assert set(win.canvas.nodes) == {g.id for g in original.groups}


def test_compare_ib_pinned_with_its_roce_variant(qtbot, win, tmp_path):
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    ib_label = win.results.pin_current()
    win.roce_action.trigger()
    dialog = win.open_compare()
    labels = [c.label for c in dialog.candidates]
    current = win.document.scenario.metadata.name + " (current)"
    assert labels[:2] == [current, f"pinned: {ib_label}"]
    dialog.set_checked([f"pinned: {ib_label}", current])
    dialog.baseline_combo.setCurrentText(f"pinned: {ib_label}")
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.compare_button, Qt.MouseButton.LeftButton)
    header = table_header(dialog.table)
    assert header == ["figure", f"pinned: {ib_label}", current, f"Δ {current}"]
    rows = {r[0].split(" (")[0]: r[1:] for r in table_rows(dialog.table)}
    for figure in ("training step time", "GPU utilization", "tokens/s", "capex"):
        assert figure in rows
    assert {"opex per year", "power", "cost per GPU", "USD per busbw GB/s"} <= set(rows)
    big = next(title for title in rows if title.endswith("busbw at 2 GiB"))
    ib_value, roce_value, delta = rows[big]
    result = dialog.table_result.row(big)
    assert ib_value.startswith(f"{result.values[0]:,.1f} GB/s")
    assert roce_value.startswith(f"{result.values[1]:,.1f} GB/s")
    assert delta.endswith(f"({result.relative[1]:+.1%})")
    # the better value is ticked and bold; capex: lower is better
    capex = dialog.table_result.row("capex")
    ticked = [c for c in rows["capex"][:2] if c.endswith(BETTER_MARK)]
    assert len(ticked) == 1 and ticked[0].startswith(f"${min(v for v in capex.values):,.0f}")
    row_index = [r[0].split(" (")[0] for r in table_rows(dialog.table)].index("capex")
    assert dialog.table.item(row_index, 1 + capex.best).font().bold()
    # curves on a linear busbw axis, log as an option
    plot_item = dialog.plot.getPlotItem()
    assert len(plot_item.listDataItems()) == 2
    assert not plot_item.ctrl.logYCheck.isChecked()
    dialog.log_box.setChecked(True)
    assert plot_item.ctrl.logYCheck.isChecked()
    path = tmp_path / "comparison.csv"
    dialog.export_csv(str(path))
    with open(path, newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    assert lines[0][:5] == ["figure", "unit", "better", f"pinned: {ib_label}", current]
    csv_capex = next(line for line in lines if line[0] == "capex")
    assert float(csv_capex[4]) == capex.values[1] and float(csv_capex[5]) == capex.deltas[1]
    dialog.close()


def test_compare_needs_two_ticks(win):
    dialog = win.open_compare()
    dialog.set_checked([dialog.candidates[0].label])
    assert not dialog.compare()
    assert "at least two" in dialog.status.text()
    dialog.close()


def test_from_the_default_preset_to_roce_side_by_side_with_one_spine_down(qtbot, win):
    """The issue's yardstick, click by click: pin the InfiniBand run, make the RoCE variant,
    fail a spine from its context menu, compare the two."""
    from tests.ui.canvas.test_context_menu import entry, right_click

    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    qtbot.mouseClick(win.results.pin_button, Qt.MouseButton.LeftButton)
    win.roce_action.trigger()
    entry(right_click(win.canvas, win.canvas.nodes["spine"]), "Fail switch").trigger()
    assert win.canvas.nodes["spine"].failure_text() == "✕ 1 down"
    win.compare_action.trigger()
    dialog = win.compare_dialog
    pinned = next(c.label for c in dialog.candidates if c.label.startswith("pinned: "))
    dialog.baseline_combo.setCurrentText(pinned)
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.compare_button, Qt.MouseButton.LeftButton)
    result = dialog.table_result
    assert result.labels[0] == pinned and "(roce)" in result.labels[1]
    throughput = result.row("permutation throughput (mean)")
    assert throughput.values[1] < throughput.values[0]  # a spine down costs throughput
    assert throughput.best == 0
    first_column = [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())]
    assert "permutation throughput (mean) (higher is better)" in first_column
    again = dialog.compare()  # both reports are kept: shown at once, nothing evaluated
    assert again and not dialog.busy and dialog.worker.current("compare-0") is None
    dialog.close()


def test_export_report_writes_one_html_file_with_everything(qtbot, win, tmp_path, monkeypatch):
    assert win.export_report(str(tmp_path / "none.html")) is None  # nothing evaluated yet
    assert "evaluate the scenario first" in win.statusBar().currentMessage()
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    label = win.results.pin_current()
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.roce_action.trigger()  # the edit is evaluated after the debounce
    dialog = win.open_compare()
    dialog.set_checked([f"pinned: {label}", dialog.candidates[0].label])
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS):
        dialog.compare()
    path = tmp_path / "report.html"
    monkeypatch.setattr(
        "ui.scenario_menu.QFileDialog.getSaveFileName", lambda *a, **k: (str(path), "")
    )
    assert win.report_action in menu_named(win, "&File").actions()
    win.report_action.trigger()
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "<h1>FabricLab report: dgx-h100-ib-ndr-1k (roce)</h1>" in text
    assert text.count('src="data:image/png;base64,') == 3  # busbw, time, the comparison
    assert "<h2>Comparison</h2>" in text and "capex (lower is better)" in text
    report = win.last_report
    assert f"<td>{report.cost.bom[0].item}</td>" in text  # the bill of materials
    assert "https://docs.nvidia.com/dgx/dgxh100-user-guide" in text  # a source
    assert report.training.assumptions[0][:40] in text
    assert 'src="http' not in text  # self-contained: nothing fetched from elsewhere
    assert "Report written to" in win.statusBar().currentMessage()
    dialog.close()
