"""The results tabs driven as a user would: histogram, time and latency plots, pins, exports."""

from __future__ import annotations

import csv
import dataclasses
import math
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QFileDialog

from engine.analysis import LATENCIES_NS
from engine.topology.expand import expand
from engine.training.step import latency_sweep
from tests.ui.windows import shown_window
from ui.results.pins import PIN_PEN_STYLE
from ui.settings import app_settings

TIMEOUT_MS = 60_000
SVG = "{http://www.w3.org/2000/svg}"


pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def win(qtbot):
    """The main window on the default preset, after its first evaluation."""
    w = shown_window(qtbot, settings=app_settings())
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        w.evaluate_now()
    yield w
    w.results.shutdown()


def open_tab(qtbot, results, tab):
    """Click the tab's title in the results tab bar."""
    bar = results.tabs.tabBar()
    index = results.tabs.indexOf(tab)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert results.tabs.currentWidget() is tab
    qtbot.wait(50)  # let the plots lay out and take their ranges


def reevaluate(qtbot, win, path, value):
    """Edit one field of the scenario and wait for the new report."""
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.document.set_field(path, value)
        win.evaluate_now()


def legend_labels(plot):
    """The texts of a plot's legend entries."""
    return [label.text for _sample, label in plot.getPlotItem().legend.items]


def choose_export(qtbot, tab, fmt, stem, monkeypatch, path):
    """Click the tab's Export button, then the menu entry for `stem` as `fmt`, saving to
    `path` (the file dialog answers with it)."""
    asked = []

    def save_dialog(_parent, caption, default, _filter):
        asked.append((caption, default))
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    button = tab.export_button
    menu = button.menu()
    action = next(a for a in menu.actions() if a.objectName().endswith(f"_{stem}_{fmt}"))
    picked = []

    def pick():
        popup = QApplication.activePopupWidget()
        if popup is not menu:  # never leave a menu open: it would hang the test
            menu.close()
            return
        qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())
        picked.append(True)

    QTimer.singleShot(100, pick)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(picked) and bool(asked), timeout=5000)
    assert asked[0][1] == f"{stem}.{fmt}"
    return path


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def svg_root(path):
    root = ET.parse(path).getroot()  # raises on malformed XML
    assert root.tag == f"{SVG}svg"
    return root


def svg_texts(root):
    return [t.text.strip() for t in root.iter(f"{SVG}text") if t.text]


def drawn_in(root, color):
    """How many lines and shapes the SVG draws in `color` (stroke or fill of their group)."""
    count = 0
    for group in root.iter(f"{SVG}g"):
        if color in (group.get("stroke"), group.get("fill")):
            count += sum(1 for c in group if c.tag in (f"{SVG}path", f"{SVG}polyline"))
    return count


def curve_color(curve):
    return curve.opts["pen"].color().name()


# ---- what the tabs draw ------------------------------------------------------------------------


def test_histogram_bars_hold_the_engines_counts_per_tier(qtbot, win):
    results = win.results
    open_tab(qtbot, results, results.links_tab)
    histogram = win.last_report.permutation.utilization_histogram
    per_tier = win.last_report.permutation.link_utilization
    assert set(results.links_tab.bars) == set(histogram.tiers) == set(per_tier)
    for tier, counts in histogram.tiers.items():
        bar = results.links_tab.bars[tier]
        assert [int(h) for h in bar.opts["height"]] == list(counts)
        assert sum(counts) == per_tier[tier].links
        xs = list(bar.opts["x"])
        assert all(
            100 * lo < x < 100 * hi
            for x, lo, hi in zip(xs, histogram.edges, histogram.edges[1:], strict=False)
        )
    assert set(legend_labels(results.histogram_plot)) == set(histogram.tiers)
    colors = {bar.opts["brush"] for bar in results.links_tab.bars.values()}
    assert len(colors) == len(histogram.tiers)  # one colour per tier


def test_histogram_follows_a_reevaluation(qtbot, win):
    results = win.results
    reevaluate(qtbot, win, "bundles.leaf-spine.links_per_pair", "1")
    tiers = win.last_report.permutation.utilization_histogram.tiers
    for tier, counts in tiers.items():
        assert [int(h) for h in results.links_tab.bars[tier].opts["height"]] == list(counts)


def test_collective_tab_plots_busbw_and_time_per_algorithm_on_log_axes(win):
    results = win.results
    sweep = win.last_report.collective_sweep
    times = win.last_report.collective.curves_time_s
    assert set(results.time_curves) == set(times) == set(results.curves)
    for name, ts in times.items():
        xs, ys = results.time_curves[name].getOriginalDataset()
        assert list(xs) == list(sweep.sizes)
        assert list(ys) == list(ts)
    for plot in (results.plot, results.time_plot):
        assert plot.getPlotItem().ctrl.logXCheck.isChecked()
        assert plot.getPlotItem().ctrl.logYCheck.isChecked()
        assert "(B)" in plot.getAxis("bottom").labelText
    assert "(s)" in results.time_plot.getAxis("left").labelText
    assert "(GB/s)" in results.plot.getAxis("left").labelText
    assert set(legend_labels(results.time_plot)) == set(times)


def test_latency_plot_holds_the_engines_curve_once_the_training_tab_opens(qtbot, win, catalog):
    results = win.results
    report = win.last_report
    curves = results.latency_curves
    assert curves.rows(report) is None  # not part of every evaluation: too slow for it
    assert len(results.training_tab.latency_curve.getOriginalDataset()[0] or []) == 0
    open_tab(qtbot, results, results.training_tab)
    qtbot.waitUntil(lambda: curves.rows(report) is not None, timeout=TIMEOUT_MS)
    engine_rows = latency_sweep(expand(win.document.scenario, catalog), None, LATENCIES_NS, catalog)
    xs, ys = results.training_tab.latency_curve.getOriginalDataset()
    assert list(xs) == pytest.approx([1e-9 * r["switch_latency_ns"] for r in engine_rows])
    assert list(ys) == pytest.approx([100 * r["gpu_utilization"] for r in engine_rows])
    assert results.latency_plot.getPlotItem().ctrl.logXCheck.isChecked()
    assert "(%)" in results.latency_plot.getAxis("left").labelText
    assert f"{len(LATENCIES_NS)} switch latencies" in results.training_tab.latency_status.text()


def test_the_latency_axis_switches_to_end_to_end_path_latency_and_says_what_it_reaches(
    qtbot, win, catalog
):
    results, tab = win.results, win.results.training_tab
    open_tab(qtbot, results, tab)
    report = win.last_report
    qtbot.waitUntil(lambda: results.latency_curves.rows(report) is not None, timeout=TIMEOUT_MS)
    rows = results.latency_curves.rows(report)
    tab.axis_combo.setCurrentIndex(tab.axis_combo.findData("path_latency_ns"))
    xs, _ys = tab.latency_curve.getOriginalDataset()
    assert list(xs) == pytest.approx([1e-9 * r["path_latency_ns"] for r in rows])
    # a leaf-spine-leaf route pays the switch three times, plus NICs and cables
    assert all(r["path_latency_ns"] > 3 * r["switch_latency_ns"] for r in rows)
    assert "path latency" in results.latency_plot.getAxis("bottom").labelText
    text = tab.latency_reach.text()
    assert "end to end" in text and "step +" in text
    assert "the latency reaches" in text or "off the critical path" in text


def test_a_scenario_without_training_says_so_on_the_latency_plot(qtbot, win):
    results = win.results
    report = dataclasses.replace(win.last_report, training=None, training_error="no model fits")
    results.show_report(report)
    open_tab(qtbot, results, results.training_tab)
    assert "needs a training step" in results.training_tab.latency_status.text()
    assert "no model fits" in results.training_tab.message.text()
    assert not results.latency_worker.pending("current")


# ---- pins --------------------------------------------------------------------------------------


def test_pin_current_adds_a_dashed_legend_curve_that_survives_a_reevaluation(qtbot, win):
    results = win.results
    first = win.last_report
    name = first.topology.name
    qtbot.mouseClick(results.pin_button, Qt.MouseButton.LeftButton)
    assert results.pinned_labels() == [name]
    assert results.clear_pins_button.isEnabled()
    best_busbw = [row.busbw_GBps for row in first.collective.rows]
    best_time = [row.time_s for row in first.collective.rows]
    for plot, curves, best in (
        (results.plot, results.collective_tab.pinned_busbw.curves, best_busbw),
        (results.time_plot, results.collective_tab.pinned_time.curves, best_time),
    ):
        assert name in legend_labels(plot)
        curve = curves[name]
        assert curve.opts["pen"].style() == PIN_PEN_STYLE
        assert curve in plot.getPlotItem().listDataItems()
        assert list(curve.getOriginalDataset()[1]) == best

    reevaluate(qtbot, win, "groups.servers.count", "64")
    second = win.last_report
    assert second is not first
    assert results.pinned_labels() == [name]
    assert name in legend_labels(results.plot)
    pinned = results.collective_tab.pinned_busbw.curves[name]
    assert list(pinned.getOriginalDataset()[1]) == best_busbw  # still the pinned numbers
    current = results.curves["ring"].getOriginalDataset()[1]
    assert list(current) == list(second.collective_sweep.busbw_GBps["ring"])

    # the comparison tables: the current column and the pin's column, engine figures each
    table = results.cost_tab.comparison
    assert not table.isHidden()
    header = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert header == ["metric", "current", name]
    capex = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "capex (USD)")
    assert table.item(capex, 1).text() == f"{second.cost.capex_usd:,.0f}"
    assert table.item(capex, 2).text() == f"{first.cost.capex_usd:,.0f}"
    training = results.training_tab.comparison
    util = next(
        r for r in range(training.rowCount()) if training.item(r, 0).text() == "GPU utilization"
    )
    assert training.item(util, 2).text() == f"{first.training.gpu_utilization:.1%}"

    qtbot.mouseClick(results.pin_button, Qt.MouseButton.LeftButton)
    assert results.pinned_labels() == [name, f"{name} (2)"]
    colors = {curve_color(c) for c in results.collective_tab.pinned_busbw.curves.values()}
    assert len(colors) == 2


def test_clear_pins_removes_the_curves_legend_entries_and_columns(qtbot, win):
    results = win.results
    name = win.last_report.topology.name
    qtbot.mouseClick(results.pin_button, Qt.MouseButton.LeftButton)
    assert name in legend_labels(results.plot)
    items_with_pin = len(results.plot.getPlotItem().listDataItems())
    qtbot.mouseClick(results.clear_pins_button, Qt.MouseButton.LeftButton)
    assert results.pinned_labels() == []
    assert name not in legend_labels(results.plot)
    assert name not in legend_labels(results.time_plot)
    assert len(results.plot.getPlotItem().listDataItems()) == items_with_pin - 1
    assert results.cost_tab.comparison.isHidden()
    assert not results.clear_pins_button.isEnabled()


def test_pins_from_another_panel_and_unpin_one(qtbot, win):
    results = win.results
    first = win.last_report
    reevaluate(qtbot, win, "groups.servers.count", "64")
    results.pin_report("A", first)
    results.pin_report("B", win.last_report)
    assert results.pinned_labels() == ["A", "B"]
    results.pin_report("A", first)  # again: replaced, not doubled
    assert results.pinned_labels() == ["A", "B"]
    results.unpin("A")
    results.unpin("not pinned")  # nothing to do, no error
    assert results.pinned_labels() == ["B"]
    assert legend_labels(results.plot).count("B") == 1
    assert "A" not in legend_labels(results.plot)
    results.clear_pins()
    assert results.pinned_labels() == []


def test_a_pinned_scenario_gets_its_own_latency_curve(qtbot, win):
    results = win.results
    first = win.last_report
    results.pin_report("before", first)
    reevaluate(qtbot, win, "fabric.switch_latency_ns", "20000")
    open_tab(qtbot, results, results.training_tab)
    curves = results.latency_curves
    qtbot.waitUntil(
        lambda: curves.rows(first) is not None and curves.rows(win.last_report) is not None,
        timeout=TIMEOUT_MS,
    )
    pinned = results.training_tab.pinned_latency.curves["before"]
    assert pinned.opts["pen"].style() == PIN_PEN_STYLE
    ys = list(pinned.getOriginalDataset()[1])
    assert ys == pytest.approx([100 * r["gpu_utilization"] for r in curves.rows(first)])
    assert "before" in legend_labels(results.latency_plot)


def test_a_cached_report_without_its_scenario_is_pinned_without_a_latency_curve(qtbot, win):
    results = win.results
    old = dataclasses.replace(win.last_report, scenario=None)
    results.pin_report("old", old)
    open_tab(qtbot, results, results.training_tab)
    assert not results.latency_worker.pending("pin:old")
    assert "old" in legend_labels(results.plot)
    assert "old" not in results.training_tab.pinned_latency.curves


# ---- exports -----------------------------------------------------------------------------------


def test_busbw_plot_exports_png_svg_and_csv_from_the_menu(qtbot, win, tmp_path, monkeypatch):
    results = win.results
    tab = results.collective_tab
    qtbot.mouseClick(results.pin_button, Qt.MouseButton.LeftButton)
    pin = results.pinned_labels()[0]
    qtbot.wait(50)
    sweep = win.last_report.collective_sweep

    png = choose_export(qtbot, tab, "png", "busbw", monkeypatch, tmp_path / "busbw.png")
    image = QImage(str(png))
    assert not image.isNull() and image.width() >= 800
    step = max(1, image.width() // 60)
    samples = {
        image.pixel(x, y)
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    }
    assert len(samples) > 5  # axes, text and curves, not a blank fill
    assert "Saved" in tab.message.text()

    svg = choose_export(qtbot, tab, "svg", "busbw", monkeypatch, tmp_path / "busbw.svg")
    root = svg_root(svg)
    texts = svg_texts(root)
    for name in sweep.busbw_GBps:
        assert name in texts
        assert drawn_in(root, curve_color(results.curves[name])) >= len(sweep.sizes)
    assert pin in texts
    assert any("busbw (GB/s)" in t for t in texts)

    path = choose_export(qtbot, tab, "csv", "busbw", monkeypatch, tmp_path / "busbw.csv")
    rows = read_csv(path)
    names = list(sweep.busbw_GBps)
    assert rows[0] == ["bytes", *(f"{n} busbw (GB/s)" for n in names), f"{pin} busbw (GB/s)"]
    assert len(rows) == len(sweep.sizes) + 1
    for row, size, i in zip(rows[1:], sweep.sizes, range(len(sweep.sizes)), strict=True):
        assert float(row[0]) == size
        for c, name in enumerate(names, start=1):
            assert float(row[c]) == sweep.busbw_GBps[name][i]
        assert float(row[-1]) == sweep.best_busbw_GBps[i]


def test_time_plot_exports_csv_with_seconds(qtbot, win, tmp_path, monkeypatch):
    tab = win.results.collective_tab
    sweep = win.last_report.collective_sweep
    path = choose_export(qtbot, tab, "csv", "collective_time", monkeypatch, tmp_path / "t.csv")
    rows = read_csv(path)
    assert rows[0] == ["bytes", *(f"{n} time (s)" for n in sweep.time_s)]
    first_algo = next(iter(sweep.time_s))
    assert [float(r[1]) for r in rows[1:]] == list(sweep.time_s[first_algo])
    svg = choose_export(qtbot, tab, "svg", "collective_time", monkeypatch, tmp_path / "t.svg")
    assert "time (s)" in " ".join(svg_texts(svg_root(svg)))


def test_histogram_exports_svg_bars_and_csv_counts(qtbot, win, tmp_path, monkeypatch):
    results = win.results
    tab = results.links_tab
    open_tab(qtbot, results, tab)
    histogram = win.last_report.permutation.utilization_histogram

    path = choose_export(
        qtbot, tab, "csv", "utilization_histogram", monkeypatch, tmp_path / "h.csv"
    )
    rows = read_csv(path)
    tiers = list(histogram.tiers)
    assert rows[0] == ["utilization from (%)", "utilization to (%)", *(f"{t} links" for t in tiers)]
    assert len(rows) == len(histogram.edges)  # header + one row per bin
    for i, row in enumerate(rows[1:]):
        assert float(row[0]) == pytest.approx(100 * histogram.edges[i])
        assert float(row[1]) == pytest.approx(100 * histogram.edges[i + 1])
        assert [int(v) for v in row[2:]] == [histogram.tiers[t][i] for t in tiers]

    svg = choose_export(qtbot, tab, "svg", "utilization_histogram", monkeypatch, tmp_path / "h.svg")
    root = svg_root(svg)
    heights = [float(r.get("height")) for r in root.iter(f"{SVG}rect") if r.get("height") != "100%"]
    for counts in histogram.tiers.values():  # each tier's bars, in data units, in order
        n = len(counts)
        assert any(
            [round(h) for h in heights[i : i + n]] == list(counts)
            for i in range(len(heights) - n + 1)
        )
    assert set(tiers) <= set(svg_texts(root))

    png = choose_export(qtbot, tab, "png", "utilization_histogram", monkeypatch, tmp_path / "h.png")
    assert not QImage(str(png)).isNull()

    path = choose_export(qtbot, tab, "csv", "hottest_links", monkeypatch, tmp_path / "links.csv")
    rows = read_csv(path)
    assert rows[0] == ["link", "bundle", "utilization"]
    hottest = win.last_report.permutation.hottest_links
    assert [r[0] for r in rows[1:]] == [h.link for h in hottest]


def test_latency_plot_exports_csv_with_units(qtbot, win, tmp_path, monkeypatch):
    results = win.results
    tab = results.training_tab
    open_tab(qtbot, results, tab)
    report = win.last_report
    qtbot.waitUntil(lambda: results.latency_curves.rows(report) is not None, timeout=TIMEOUT_MS)
    path = choose_export(
        qtbot, tab, "csv", "gpu_utilization_vs_latency", monkeypatch, tmp_path / "l.csv"
    )
    rows = read_csv(path)
    assert rows[0] == ["switch latency (s)", "current GPU utilization (%)"]
    curve = results.latency_curves.rows(report)
    assert len(rows) == len(curve) + 1
    for row, point in zip(rows[1:], curve, strict=True):
        assert float(row[0]) == pytest.approx(1e-9 * point["switch_latency_ns"])
        assert float(row[1]) == pytest.approx(100 * point["gpu_utilization"])
    svg = choose_export(
        qtbot, tab, "svg", "gpu_utilization_vs_latency", monkeypatch, tmp_path / "l.svg"
    )
    root = svg_root(svg)
    assert drawn_in(root, curve_color(tab.latency_curve)) >= len(curve)


def test_cost_table_exports_csv(qtbot, win, tmp_path, monkeypatch):
    results = win.results
    tab = results.cost_tab
    open_tab(qtbot, results, tab)
    path = choose_export(qtbot, tab, "csv", "bom", monkeypatch, tmp_path / "bom.csv")
    rows = read_csv(path)
    assert rows[0] == [
        "item",
        "count",
        "unit price (USD)",
        "price (USD)",
        "power (W)",
        "vendor",
        "second sources",
        "lead time",
        "open standard",
        "host cores saved",
    ]
    bom = win.last_report.cost.bom
    assert [r[0] for r in rows[1:]] == [line.item for line in bom]


def test_a_file_that_cannot_be_written_is_a_message_not_a_crash(qtbot, win, tmp_path, monkeypatch):
    tab = win.results.collective_tab
    target = tmp_path / "missing-folder" / "busbw.svg"
    choose_export(qtbot, tab, "svg", "busbw", monkeypatch, target)
    assert not target.exists()
    assert "Cannot write" in tab.message.text()
    assert "d62728" in tab.message.styleSheet()


def test_a_file_name_without_suffix_gets_the_formats_one(qtbot, win, tmp_path, monkeypatch):
    tab = win.results.collective_tab
    choose_export(qtbot, tab, "csv", "busbw", monkeypatch, tmp_path / "plain")
    assert (tmp_path / "plain.csv").exists()
    assert not math.isnan(float(read_csv(tmp_path / "plain.csv")[1][1]))
