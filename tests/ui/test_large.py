"""The GUI thread keeps processing events while the 131,072-GPU preset evaluates."""

from __future__ import annotations

from PySide6.QtCore import QTimer

from engine.analysis import clear_caches
from engine.presets.scenarios import load_preset
from ui.main_window import MainWindow


def test_gui_keeps_ticking_while_the_131k_preset_evaluates(qtbot):
    clear_caches()  # a cold evaluation, as a first look at this fabric is
    win = MainWindow(load_preset("h100-roce-128k"), evaluate_on_start=False)
    qtbot.addWidget(win)
    ticks: list[int] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    with qtbot.waitSignal(win.worker.finished, timeout=240_000):
        win.evaluate_now()
    timer.stop()
    elapsed = win.last_report.ui_elapsed_s
    assert win.last_report.topology.gpus == 131072
    # A blocked GUI thread would tick a handful of times; a free one about elapsed / 20 ms.
    assert len(ticks) >= 0.3 * elapsed / 0.020, (len(ticks), elapsed)
