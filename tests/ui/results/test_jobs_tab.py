"""The Jobs tab driven through its widgets: Split sets equal jobs on the scenario (one
undoable edit), Run shows one row per job with its time alone and shared and its slowdown,
and an edit marks the result out of date."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.analysis import shared_run
from tests.engine.jobs.scenarios import bottleneck
from tests.ui.windows import shown_window

TIMEOUT_MS = 120_000


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot, bottleneck())
    w.results.tabs.setCurrentWidget(w.jobs_tab)
    yield w
    w.jobs_tab.shutdown()
    w.worker.shutdown()


def column(tab, name: str) -> list[str]:
    header = [tab.table.horizontalHeaderItem(i).text() for i in range(tab.table.columnCount())]
    c = header.index(name)
    return [tab.table.item(r, c).text() for r in range(tab.table.rowCount())]


def test_split_and_run_show_each_jobs_slowdown(qtbot, win):
    tab = win.jobs_tab
    assert win.results.tabs.tabText(win.results.tabs.indexOf(tab)) == "Jobs"
    tab.count_spin.setValue(2)
    tab.placement_combo.setCurrentText("spread")
    qtbot.mouseClick(tab.split_button, Qt.MouseButton.LeftButton)
    jobs = win.document.scenario.jobs
    assert [(j.name, j.gpus, j.placement) for j in jobs] == [
        ("job1", 16, "spread"),
        ("job2", 16, "spread"),
    ]
    with qtbot.waitSignal(tab.worker.finished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert column(tab, "job") == ["job1", "job2"]
    expected = shared_run(win.document.scenario, win.document.catalog).jobs
    assert column(tab, "slowdown") == [f"{j.slowdown:.2f}×" for j in expected]
    assert column(tab, "slowdown") == ["2.00×", "2.00×"]  # both rings on the one cable
    assert "worst slowdown 2.00×" in tab.message.text()
    # packed instead: each job on its own leaf, nothing shared
    tab.placement_combo.setCurrentText("packed")
    qtbot.mouseClick(tab.split_button, Qt.MouseButton.LeftButton)
    assert tab.stale_label.isVisible() and not tab.table.isEnabled()
    with qtbot.waitSignal(tab.worker.finished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert column(tab, "slowdown") == ["1.00×", "1.00×"]
    assert not tab.stale_label.isVisible()
    win.undo_action.trigger()
    assert [j.placement for j in win.document.scenario.jobs] == ["spread", "spread"]


def test_too_many_jobs_are_refused_in_the_tab(qtbot, win):
    tab = win.jobs_tab
    tab.count_spin.setValue(5)
    qtbot.mouseClick(tab.split_button, Qt.MouseButton.LeftButton)
    assert win.document.scenario.jobs == []
    assert "do not make 5 jobs" in tab.message.text()
    assert win.document.undo_stack.count() == 0


def test_inference_servers_join_as_a_background_job(qtbot, win):
    tab = win.jobs_tab
    tab.count_spin.setValue(1)
    tab.inference_spin.setValue(1)
    qtbot.mouseClick(tab.split_button, Qt.MouseButton.LeftButton)
    jobs = win.document.scenario.jobs
    # 4 servers: one inference server and one free front-end leave 2 for the job
    assert [(j.name, j.kind, j.gpus) for j in jobs] == [
        ("job1", "collective", 16),
        ("inference", "inference", 8),
    ]
    with qtbot.waitSignal(tab.worker.finished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    assert column(tab, "job") == ["job1", "inference"]
    expected = shared_run(win.document.scenario, win.document.catalog).jobs
    assert column(tab, "slowdown") == [f"{j.slowdown:.2f}×" for j in expected]
    # packed: the job's ring on leaf 0, the service and its front-end on leaf 1
    assert column(tab, "slowdown") == ["1.00×", "1.00×"]
