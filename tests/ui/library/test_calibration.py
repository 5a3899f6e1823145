"""Run > Calibrate on Measured Runs, driven as a user would: the library's runs of the scenario
fitted off the GUI thread, the result one undoable edit, and no runs a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from engine.model.scenario import Calibration
from engine.topology.generators import single_switch
from tests.ui.windows import shown_window
from ui.settings import app_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl_tests"
TIMEOUT_MS = 60_000

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def win(qtbot, library):
    scenario = single_switch(16, "dgx-h100", "sn5600")
    scenario.metadata.name = "two-servers"
    library.save(scenario)
    w = shown_window(qtbot, scenario, settings=app_settings(), library=library)
    yield w
    w.library_session.calibration.shutdown()
    w.results.shutdown()
    w.congestion_tab.shutdown()
    w.sweep_panel.shutdown()
    w.worker.shutdown()
    w.close()


def run_menu_action(win, text: str):
    actions = [a for a in win.run_menu.actions() if a.text() == text]
    assert actions, [a.text() for a in win.run_menu.actions()]
    return actions[0]


def import_run(win, monkeypatch, name: str) -> None:
    path = str(FIXTURES / name)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (path, ""))
    win.library_session.import_nccl_tests_action.trigger()


def test_calibrating_fits_the_library_runs_and_undo_restores_the_defaults(qtbot, win, monkeypatch):
    import_run(win, monkeypatch, "all_reduce_perf_8xh100.txt")
    import_run(win, monkeypatch, "all_gather_perf_16xa100.txt")
    session = win.library_session
    worker = session.calibration.worker
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS):
        run_menu_action(win, "&Calibrate on Measured Runs").trigger()
        assert run_menu_action(win, "Cancel Ca&libration").isEnabled()
    calibration = win.document.scenario.calibration
    assert (calibration.name, calibration.version) == ("two-servers", 1)
    assert calibration.measured == ["all_reduce_perf_8xh100", "all_gather_perf_16xa100"]
    factors = (calibration.nic_efficiency, calibration.latency_scale, calibration.simple_efficiency)
    assert factors != (1.0, 1.0, 1.0)  # the fit moved at least one factor off its default
    assert win.statusBar().currentMessage().startswith("Calibrated two-servers v1")
    assert run_menu_action(win, "&Calibrate on Measured Runs").isEnabled()
    win.document.undo_stack.undo()
    assert win.document.scenario.calibration == Calibration()


def test_without_measured_runs_the_user_is_told_what_to_do(win):
    assert not win.library_session.calibration.start()
    box = win.library_session.dialog
    assert isinstance(box, QMessageBox)
    assert "No measured runs to calibrate on" in box.text()
    assert "File > Import nccl-tests" in box.text()
    assert win.document.scenario.calibration == Calibration()


def test_a_cancelled_fit_leaves_the_scenario_as_it_was(qtbot, win, monkeypatch):
    import_run(win, monkeypatch, "all_reduce_perf_8xh100.txt")
    calibration = win.library_session.calibration
    assert calibration.start()
    calibration.cancel()
    qtbot.waitUntil(lambda: not calibration.worker.running, timeout=TIMEOUT_MS)
    qtbot.wait(50)
    assert win.document.scenario.calibration == Calibration()
    assert "cancelled" in win.statusBar().currentMessage()
