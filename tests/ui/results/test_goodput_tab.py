"""The Goodput tab driven through its widgets: Run shows InfiniBand beside RoCE, a chosen
checkpoint interval shows up, and a scenario edit marks the result out of date."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.analysis import goodput_by_technology, link_errors
from engine.topology.generators import single_switch
from tests.ui.windows import shown_window

TIMEOUT_MS = 120_000


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot, single_switch(16, "dgx-h100", "sn5600"))
    w.results.tabs.setCurrentWidget(w.goodput_tab)
    yield w
    w.goodput_tab.shutdown()
    w.congestion_tab.shutdown()
    w.sweep_panel.shutdown()
    w.worker.shutdown()


def run(qtbot, tab):
    with qtbot.waitSignal(tab.worker.finished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)


def cell(tab, figure: str, column: int) -> str:
    for row in range(tab.table.rowCount()):
        if tab.table.item(row, 0).text() == figure:
            return tab.table.item(row, column).text()
    raise AssertionError(f"no row {figure!r}")


def test_run_shows_goodput_of_infiniband_beside_roce(qtbot, win):
    tab = win.goodput_tab
    assert win.results.tabs.tabText(win.results.tabs.indexOf(tab)) == "Goodput"
    run(qtbot, tab)
    header = [tab.table.horizontalHeaderItem(i).text() for i in range(tab.table.columnCount())]
    assert header == ["figure", "infiniband", "roce"]
    expected = goodput_by_technology(win.document.scenario, win.document.catalog).results
    for column, result in enumerate(expected, start=1):
        assert cell(tab, "Goodput (tokens/s)", column) == f"{result.goodput_tokens_per_s:,.0f}"
        assert cell(tab, "Interruptions per day", column) == f"{result.interruptions_per_day:.2f}"
    assert f"{expected[0].goodput_share:.1%}" in tab.goodput_label.text()
    assert "roce" in tab.goodput_label.text()
    assert cell(tab, "GPUs: count, per day (0.111 per part-year)", 1).startswith("16, ")


def test_a_chosen_interval_is_used_and_an_edit_makes_the_result_out_of_date(qtbot, win):
    tab = win.goodput_tab
    tab.interval_min.setValue(30.0)
    run(qtbot, tab)
    assert cell(tab, "Checkpoint interval", 1) == "30.0 min"
    assert not tab.out_of_date and not tab.stale_label.isVisible()
    win.document.move_groups({"leaf": (10.0, 20.0)})  # where a node sits changes no result
    assert not tab.out_of_date
    win.document.set_field("workload.training.global_batch", "2048")
    assert tab.out_of_date and tab.stale_label.isVisible()
    assert not tab.table.isEnabled()
    win.undo_action.trigger()
    assert not tab.out_of_date


def test_hot_spares_shorten_detection_and_restart(qtbot, win):
    tab = win.goodput_tab
    tab.interval_min.setValue(30.0)
    run(qtbot, tab)
    without = cell(tab, "Detection + restart", 1)
    qtbot.mouseClick(tab.spares_box, Qt.MouseButton.LeftButton)
    assert tab.spares_box.isChecked()
    run(qtbot, tab)
    with_spares = cell(tab, "Detection + restart", 1)
    assert float(with_spares.split()[0]) < float(without.split()[0])


def test_link_errors_box_shows_the_engines_loss_and_costs(qtbot, win):
    box = win.goodput_tab.link_errors
    box.ber_edit.setText("1e-3")
    with qtbot.waitSignal(box.worker.finished, timeout=TIMEOUT_MS):
        qtbot.mouseClick(box.run_button, Qt.MouseButton.LeftButton)
    expected = link_errors(win.document.scenario, win.document.catalog, 1e-3)
    rows = {
        box.table.item(r, 0).text(): box.table.item(r, 1).text()
        for r in range(box.table.rowCount())
    }
    assert rows["Post-FEC loss per link"] == f"{expected.packet_loss_per_link:.3g} per packet"
    assert rows["Expected losses per step"] == f"{expected.expected_losses_per_step:.3g}"
    own = next(k for k in rows if k.endswith("(this fabric's)"))
    assert own == f"Cost with {expected.recovery} (this fabric's)"
    assert len([k for k in rows if k.startswith("Cost with")]) == 3
    assert "above the PMD limit" in box.summary.text()
