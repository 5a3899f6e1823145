"""File > Import nccl-tests…, driven as a user would: a fixture run stored in the window's
library, a malformed file shown in a message box with nothing stored, and an old output
that does not name its program answered from a list.

Every test uses a library and settings in tmp_path, never the user's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDialogButtonBox, QFileDialog, QInputDialog, QMessageBox

from engine.analysis import DEFAULT_PRESET, measurement_run
from engine.topology.generators import single_switch
from tests.ui.windows import shown_window
from ui.settings import app_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl_tests"

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def win(qtbot, library):
    w = shown_window(qtbot, settings=app_settings(), library=library)
    yield w
    w.close()  # while the library is still open (the session writes on close)


def choose_file(monkeypatch, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def file_menu_action(win, text: str):
    actions = [a for a in win.file_menu.actions() if a.text() == text]
    assert actions, [a.text() for a in win.file_menu.actions()]
    return actions[0]


def test_the_action_is_in_the_file_menu_and_stores_the_run(qtbot, win, library, monkeypatch):
    choose_file(monkeypatch, FIXTURES / "all_reduce_perf_8xh100.txt")
    file_menu_action(win, "Import &nccl-tests…").trigger()
    assert library.measurement_names() == ["all_reduce_perf_8xh100"]
    stored = library.measurement("all_reduce_perf_8xh100")
    assert (stored.op, stored.ranks, stored.gpu) == ("all-reduce", 8, "NVIDIA H100 80GB HBM3")
    assert stored.scenario == DEFAULT_PRESET == win.document.scenario.metadata.name
    assert len(stored.points) == 17
    message = win.statusBar().currentMessage()
    assert message.startswith("Imported all_reduce_perf_8xh100: all-reduce over 8 ranks, 17 points")
    assert "peak busbw 479.9 GB/s" in message
    assert win.library_session.dialog is None  # no error box


def test_a_malformed_file_is_shown_and_nothing_is_stored(
    qtbot, win, library, monkeypatch, tmp_path
):
    bad = tmp_path / "bad.txt"
    text = (FIXTURES / "all_gather_perf_16xa100.txt").read_text()
    bad.write_text(text.replace("    -1  ", "    -1  oops  ", 1))
    choose_file(monkeypatch, bad)
    win.library_session.import_nccl_tests_action.trigger()
    box = win.library_session.dialog
    assert isinstance(box, QMessageBox)
    assert f"Cannot import {bad}" in box.text()
    assert "bad.txt line 26: a table row of 14 columns" in box.text()
    qtbot.waitUntil(box.isVisible, timeout=2000)
    ok = [b for b in box.buttons() if b.text() == "OK"]
    qtbot.mouseClick(ok[0], Qt.MouseButton.LeftButton)
    assert library.measurement_names() == []
    assert "Cannot import" in win.statusBar().currentMessage()


def test_a_file_with_no_table_says_so(qtbot, win, library, monkeypatch, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("the job was cancelled before NCCL started\n")
    choose_file(monkeypatch, notes)
    win.library_session.import_nccl_tests_action.trigger()
    box = win.library_session.dialog
    assert isinstance(box, QMessageBox) and "no nccl-tests table found" in box.text()
    assert library.measurement_names() == []


def test_an_output_that_does_not_name_its_program_asks_which_ran(qtbot, win, library, monkeypatch):
    choose_file(monkeypatch, FIXTURES / "broadcast_oldest_out_of_place.txt")
    session = win.library_session
    session.import_nccl_tests_action.trigger()
    dialog = session.nccl_tests.dialog
    assert isinstance(dialog, QInputDialog) and library.measurement_names() == []
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    combo = dialog.findChild(QComboBox)
    combo.setCurrentIndex(combo.findText("broadcast_perf"))
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert library.measurement_names() == ["broadcast_oldest_out_of_place"]
    assert library.measurement("broadcast_oldest_out_of_place").op == "broadcast"


def test_a_cancelled_file_dialog_stores_nothing(qtbot, win, library, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: ("", ""))
    assert win.library_session.nccl_tests.ask_file() is False
    assert library.measurement_names() == []


def test_a_stored_run_is_drawn_beside_the_model_on_the_collective_plots(
    qtbot, library, monkeypatch
):
    scenario = single_switch(16, "dgx-h100", "sn5600")
    scenario.metadata.name = "two-servers"
    library.save(scenario)
    w = shown_window(qtbot, scenario, settings=app_settings(), library=library)
    try:
        with qtbot.waitSignal(w.worker.finished, timeout=60_000):
            w.evaluate_now()
        qtbot.wait(10)
        tab = w.results.collective_tab
        assert tab.measured_busbw.items == {}  # nothing measured yet
        choose_file(monkeypatch, FIXTURES / "all_reduce_perf_8xh100.txt")
        file_menu_action(w, "Import &nccl-tests…").trigger()
        label = "all_reduce_perf_8xh100 (8 ranks)"
        item = tab.measured_busbw.items[label]
        xs, ys = item.getOriginalDataset()
        stored = measurement_run(library.measurement("all_reduce_perf_8xh100"))
        assert list(xs) == [p.size_bytes for p in stored.points]
        assert list(ys) == [p.out_of_place.busbw_GBps for p in stored.points]
        _, times = tab.measured_time.items[label].getOriginalDataset()
        assert list(times) == [p.out_of_place.time_s for p in stored.points]
        legend = [text.text for _sample, text in tab.busbw_plot.getPlotItem().legend.items]
        assert f"measured: {label}" in legend
    finally:
        w.results.shutdown()
        w.congestion_tab.shutdown()
        w.sweep_panel.shutdown()
        w.worker.shutdown()
        w.close()
