"""The template dialog at its default size: a fat-tree of 1,024 GPUs is accepted, drawn in
four tier bands and evaluated without a problem."""

from __future__ import annotations

import pytest

from tests.ui.test_features import click_ok, fill_dialog
from ui.main_window import MainWindow
from ui.settings import app_settings

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def test_the_fat_tree_template_at_1024_gpus_evaluates(qtbot):
    win = MainWindow(evaluate_on_start=False, settings=app_settings())
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    dialog = win.new_from_template()
    assert dialog.gpus_spin.value() == 1024  # the default size
    fill_dialog(qtbot, dialog, "fat-tree", 1024)
    with qtbot.waitSignal(win.worker.finished, timeout=60_000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible() and dialog.error_label.text() == ""
    assert win.canvas.tiers == ["server", "leaf", "spine", "core"]
    assert win.document.problems == []
    assert "3-tier fat-tree" in win.document.scenario.metadata.description
    assert "mean throughput" in win.results.summary.text()
    win.close()
