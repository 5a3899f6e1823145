"""Templates dialog, results tabs with CSV export, and persisted settings."""

from __future__ import annotations

import copy
import csv

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QDockWidget, QFileDialog, QSplitter

from engine.analysis import evaluation as evaluate_module
from engine.model.errors import Problem, ScenarioError
from tests.ui.windows import shown_window
from ui.main_window import MainWindow
from ui.settings import app_settings
from ui.templates import TemplateDialog

TIMEOUT_MS = 60_000


pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot, settings=app_settings())
    return w


@pytest.fixture
def evaluated(qtbot, win):
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    return win


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def pick_server(dialog, server):
    """Choose `server` in the template dialog's server list."""
    dialog.server_combo.setCurrentIndex(dialog.server_combo.findData(server))


def fill_dialog(qtbot, dialog, template, gpus, switch="qm9700", oversub=None):
    dialog.template_combo.setCurrentText(template)
    dialog.gpus_spin.setFocus()
    dialog.gpus_spin.selectAll()
    qtbot.keyClicks(dialog.gpus_spin, str(gpus))
    dialog.switch_combo.setCurrentIndex(dialog.switch_combo.findData(switch))
    if oversub is not None:
        dialog.oversub_spin.setValue(oversub)


def click_ok(qtbot, dialog):
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


# ---- templates -------------------------------------------------------------------------------


def test_template_dialog_generates_an_undoable_scenario(qtbot, win):
    original = copy.deepcopy(win.document.scenario)
    win.template_action.trigger()
    dialog = win.template_dialog
    assert dialog is not None and dialog.isVisible()
    fill_dialog(qtbot, dialog, "leaf-spine", 512, oversub=2.0)
    assert dialog.oversub_spin.isEnabled()
    assert dialog.speed_combo.currentData() == 400.0
    with qtbot.waitSignal(win.document.changed, timeout=2000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible()
    s = win.document.scenario
    assert "leaf-spine 512 GPUs" in s.metadata.name
    assert s.group("servers").count == 64
    assert win.document.undo_stack.count() == 1
    assert set(win.canvas.nodes) == {g.id for g in s.groups}
    assert "leaf-spine" in win.windowTitle()
    win.document.undo_stack.undo()
    assert win.document.scenario == original
    win.document.undo_stack.redo()
    assert win.document.scenario == s


def test_a_size_the_radix_cannot_build_keeps_the_dialog_open_with_the_message(qtbot, win):
    before = win.document.scenario
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "single-switch", 1024)
    assert not dialog.oversub_spin.isEnabled()
    click_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert "at most 64 GPUs" in dialog.error_label.text()
    assert "d62728" in dialog.error_label.styleSheet()
    assert win.document.scenario is before
    assert win.document.undo_stack.count() == 0
    fill_dialog(qtbot, dialog, "single-switch", 64)
    assert dialog.error_label.text() == ""
    click_ok(qtbot, dialog)
    assert not dialog.isVisible()
    assert win.document.scenario.group("leaf").count == 1


def test_template_speeds_follow_the_switch(qtbot, catalog):
    dialog = TemplateDialog(catalog)
    qtbot.addWidget(dialog)
    dialog.switch_combo.setCurrentIndex(dialog.switch_combo.findData("qm9700"))
    speeds = {dialog.speed_combo.itemData(i) for i in range(dialog.speed_combo.count())}
    assert speeds == set(catalog.switch_port_modes("qm9700"))
    dialog.template_combo.setCurrentText("rail-only")
    assert not dialog.oversub_spin.isEnabled()
    assert "oversubscription" not in dialog.params()


# ---- results tabs ----------------------------------------------------------------------------


def test_results_tabs_are_filled_from_one_evaluation(qtbot, evaluated):
    results = evaluated.results
    titles = [results.tabs.tabText(i) for i in range(results.tabs.count())]
    assert titles == [
        "Collective",
        "Links",
        "Training",
        "Cost",
        "Congestion",
        "Goodput",
        "Jobs",
        "Sweep",
    ]
    assert evaluated.last_report.ui_elapsed_s < 5.0
    assert results.links_table.rowCount() > 0
    assert results.links_table.item(0, 1).text() == "servers-leaf"
    components = [
        results.training_table.item(r, 0).text() for r in range(results.training_table.rowCount())
    ]
    assert components[0] == "compute" and "pipeline bubble" in components
    assert "exposed tp comm" in components and components[-1] == "step"
    assert "optimizer step" in components and "    matmuls" in components
    assert "GPU utilization: " in results.gpu_util_label.text()
    assert "MFU: " in results.mfu_label.text() and "%" in results.mfu_label.text()
    bom = evaluated.last_report.cost.bom
    assert results.cost_table.rowCount() == len(bom) > 0
    assert results.capex_label.text().startswith("Capex: $")
    assert "%" in results.network_share_label.text()
    assert "Cost per GPU: $" in results.cost_per_gpu_label.text()


def test_clicking_a_hot_link_selects_its_bundle_on_the_canvas(qtbot, evaluated):
    results = evaluated.results
    results.tabs.setCurrentWidget(results.links_tab)
    table = results.links_table
    rect = table.visualItemRect(table.item(0, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert evaluated.canvas.selected_bundles() == ["servers-leaf"]
    assert "Selected" in results.links_tab.message.text()


def test_every_tab_exports_csv(evaluated, tmp_path):
    results = evaluated.results
    results.export_collective_csv(str(tmp_path / "c.csv"))
    rows = read_csv(tmp_path / "c.csv")
    assert rows[0][0] == "bytes" and any("ring" in h for h in rows[0])
    assert len(rows) == 17
    for name, table in (
        ("links", results.links_table),
        ("training", results.training_table),
        ("cost", results.cost_table),
    ):
        path = tmp_path / f"{name}.csv"
        getattr(results, f"export_{name}_csv")(str(path))
        rows = read_csv(path)
        assert len(rows) == table.rowCount() + 1
        assert rows[1][0] == table.item(0, 0).text()


def test_a_training_failure_is_shown_in_its_tab_not_a_crash(qtbot, win, monkeypatch):
    def refuse(fabric, catalog, progress=None):
        raise ScenarioError(Problem("training", "no model fits on these GPUs"))

    monkeypatch.setattr(evaluate_module, "training_summary", refuse)
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    results = win.results
    assert "no model fits" in results.training_tab.message.text()
    assert results.training_table.rowCount() == 0
    assert results.mfu_label.text() == "MFU: –"
    assert results.cost_table.rowCount() > 0  # cost still evaluated, without tokens/s
    assert results.links_table.rowCount() > 0


# ---- settings --------------------------------------------------------------------------------


def test_geometry_and_dock_state_are_restored(qtbot, temp_settings):
    first = MainWindow(evaluate_on_start=False, settings=app_settings())
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    first.resize(760, 560)
    qtbot.waitUntil(lambda: first.width() == 760)
    size = (first.width(), first.height())
    assert size != (1280, 800)
    first.findChild(QDockWidget, "paletteDock").hide()
    first.close()
    assert list(temp_settings.rglob("*.ini"))
    second = MainWindow(evaluate_on_start=False, settings=app_settings())
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert (second.width(), second.height()) == size
    assert not second.findChild(QDockWidget, "paletteDock").isVisible()


def test_splitter_sizes_are_restored(qtbot, temp_settings):
    first = shown_window(qtbot, settings=app_settings())
    splitter = first.findChild(QSplitter, "trainingSplitter")
    first.results.tabs.setCurrentWidget(first.results.training_tab)
    first.resize(1280, 800)
    qtbot.wait(20)
    total = sum(splitter.sizes())
    splitter.setSizes([total // 2, 0, total - total // 2])  # the table takes half
    chosen = splitter.sizes()
    first.close()
    second = shown_window(qtbot, settings=app_settings())
    second.results.tabs.setCurrentWidget(second.results.training_tab)
    qtbot.wait(20)
    restored = second.findChild(QSplitter, "trainingSplitter").sizes()
    # the table's share of the width comes back (the window lays out at its own width;
    # without the saved state it would be the tab's default, about a third)
    assert abs(restored[0] / sum(restored) - chosen[0] / sum(chosen)) < 0.05


def test_open_recent_keeps_the_last_five_files(qtbot, win, tmp_path, monkeypatch):
    doc = win.document
    paths = []
    for i in range(6):
        path = tmp_path / f"s{i}.json"
        doc.set_field("metadata.name", f"scenario {i}")
        doc.save_to(path)
        paths.append(str(path))
    for path in paths:
        assert win.open_path(path)
    expected = list(reversed(paths))[:5]
    assert win.recent_files() == expected
    assert [a.text() for a in win.recent_menu.actions()] == expected
    other = MainWindow(evaluate_on_start=False, settings=app_settings())
    qtbot.addWidget(other)
    assert other.recent_files() == expected
    other.recent_menu.actions()[-1].trigger()  # s1.json
    assert other.document.scenario.metadata.name == "scenario 1"
    assert other.recent_files()[0] == paths[1]
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "new.json"), "")
    )
    assert other.save_file_as()
    assert other.recent_files()[0] == str(tmp_path / "new.json")
    assert len(other.recent_files()) == 5


def test_a_first_start_says_the_kernels_are_compiling(qtbot, monkeypatch):
    monkeypatch.setattr("ui.run_messages.kernels_ready", lambda: False)
    win = shown_window(qtbot)
    seen: list[str] = []
    win.statusBar().messageChanged.connect(seen.append)
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        win.evaluate_now()
    assert any("first start: compiling" in m for m in seen), seen
    seen.clear()
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        win.evaluate_now()  # the first run compiled them: the note is gone
    assert seen and not any("first start" in m for m in seen), seen
    win.close()
