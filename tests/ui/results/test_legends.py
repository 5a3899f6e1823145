"""Legends never clipped: at 1280×800 the collective plots' legends stay inside their plots,
also with a pinned scenario adding an entry, in the light and the dark theme."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from ui.main_window import MainWindow
from ui.results.plot_axes import FittingLegend, result_plot
from ui.settings import app_settings

TIMEOUT_MS = 60_000

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def legend_inside(plot) -> bool:
    item = plot.getPlotItem()
    legend = item.legend
    box = item.vb.sceneBoundingRect()
    return box.contains(legend.sceneBoundingRect())


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_collective_legends_fit_at_1280_by_800(qtbot, theme):
    win = MainWindow(evaluate_on_start=False, settings=app_settings())
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    win.set_theme(theme)
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        win.evaluate_now()
    win.results.pin_current()  # a pin: four entries on each collective plot
    QApplication.processEvents()
    tab = win.results.collective_tab
    for plot in (tab.busbw_plot, tab.time_plot):
        legend = plot.getPlotItem().legend
        assert isinstance(legend, FittingLegend)
        assert len(legend.items) == 4
        assert plot.getPlotItem().vb.sceneBoundingRect().height() < 200  # a short plot
        assert legend_inside(plot), (legend.sceneBoundingRect(), legend.columnCount)
        names = [label.text for _sample, label in legend.items]
        assert len(set(names)) == len(names)
    win.close()


def test_a_legend_takes_more_columns_only_when_short(qtbot):
    plot = result_plot("p", "x", "y", log_x=False, log_y=False)
    qtbot.addWidget(plot)
    plot.resize(700, 500)
    plot.show()
    for name in ("ring", "tree", "nvlstree", "pinned"):
        plot.plot([1, 2], [1, 2], name=name)
    QApplication.processEvents()
    legend = plot.getPlotItem().legend
    assert legend.columnCount == 1 and legend_inside(plot)  # room enough: one column
    plot.resize(700, 100)
    QApplication.processEvents()
    assert legend.columnCount > 1 and legend_inside(plot)
    plot.resize(700, 500)
    QApplication.processEvents()
    assert legend.columnCount == 1
