"""The Cost tab's vendor concentration, the multi-vendor constraint in the problems dock, and
the compare view's decision frontier, driven as a user would."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.windows import shown_window
from ui.results.tables import table_rows
from ui.settings import app_settings

TIMEOUT_MS = 60_000

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot, settings=app_settings())
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        w.evaluate_now()
    yield w
    w.close()


def test_the_cost_tab_shows_who_the_capex_goes_to(qtbot, win):
    results = win.results
    tab = results.cost_tab
    bar = results.tabs.tabBar()
    qtbot.mouseClick(
        bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(results.tabs.indexOf(tab)).center()
    )
    cost = win.last_report.cost
    supply = cost.supply
    rows = table_rows(tab.supply.vendors)
    assert [r[0] for r in rows] == [v.vendor for v in supply.by_vendor]
    assert rows[0][2] == f"{supply.by_vendor[0].share:.1%}"
    view = tab.supply
    assert view.figure("largest vendor") == f"{supply.top_vendor} {supply.top_vendor_share:.1%}"
    assert view.figure("host CPU cores saved by NIC offload") == "0"
    assert "qm9700" in view.figure("single-source parts")
    bom = table_rows(tab.table)
    switch = next(r for r, line in zip(bom, cost.bom, strict=True) if line.kind == "switch")
    assert switch[5] == "NVIDIA" and switch[6] == "0" and switch[8] == "no"


def test_multi_vendor_only_lists_every_single_source_part_in_the_problems_dock(win):
    assert win.problems_panel.row_texts() == []
    win.document.set_field("constraints.multi_vendor_only", "true")
    rows = win.problems_panel.row_texts()
    assert rows and all("multi-vendor only" in r for r in rows)
    assert {r.split(".model:")[0] for r in rows} == {
        f"groups[{g.id}]" for g in win.document.scenario.groups
    }
    win.document.undo_stack.undo()
    assert win.problems_panel.row_texts() == []


def test_the_compare_view_draws_the_frontier_of_ib_and_its_roce_variant(qtbot, win):
    ib_label = win.results.pin_current()
    win.roce_action.trigger()
    dialog = win.open_compare()
    current = win.document.scenario.metadata.name + " (current)"
    dialog.set_checked([f"pinned: {ib_label}", current])
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.compare_button, Qt.MouseButton.LeftButton)
    view = dialog.frontier
    result = view.result
    assert result is not None and len(result.points) == 2
    assert result.cost_metric == "capex_usd" and result.performance_metric == "step_s"
    rows = table_rows(view.table)
    assert [r[0] for r in rows] == [p.label for p in result.points]
    for row, point in zip(rows, result.points, strict=True):
        assert (row[3] == "on the front") == point.on_front
    xs, ys = view.front_curve.getData()
    front = [result.points[i] for i in result.front]
    assert list(xs) == [p.cost for p in front] and list(ys) == [p.performance for p in front]
    dominated = [p for p in result.points if not p.on_front]
    assert len(view.dominated_points.data) == len(dominated)
    assert "Front (cheapest first)" in view.summary.text()
    # another performance axis: higher tokens/s is better, the table follows
    index = view.performance_combo.findData("tokens_per_s")
    view.performance_combo.setCurrentIndex(index)
    assert view.result.performance_metric == "tokens_per_s" and view.result.better == "higher"
    assert [r[2] for r in table_rows(view.table)] != [r[2] for r in rows]
    dialog.close()


def test_the_palette_tells_a_parts_supply_and_a_servers_nic_offload(win):
    tips = {model: item.toolTip(0) for model, item in win.palette.items.items()}
    assert "second sources 0 on InfiniBand" in tips["qm9700"]
    assert "in-order only" in tips["hgx-h100-thor2"] and "reorders packets" in tips["hgx-h100"]


def test_spraying_on_a_server_whose_nic_cannot_reorder_is_a_problem_naming_it(qtbot):
    from engine.analysis import load_preset

    scenario = load_preset("hgx-h100-roce-ecmp-1k")
    w = shown_window(qtbot, scenario, settings=app_settings())
    servers = next(g.id for g in scenario.groups if g.kind == "server")
    w.document.set_field(f"groups.{servers}.model", "hgx-h100-thor2")
    assert w.problems_panel.row_texts() == []
    w.document.set_field("routing.mode", "spray")
    rows = w.problems_panel.row_texts()
    assert len(rows) == 1 and rows[0].startswith("routing.mode: ") and "thor2-400g" in rows[0]
    w.document.undo_stack.undo()
    assert w.problems_panel.row_texts() == []
    w.close()
