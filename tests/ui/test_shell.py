"""The desktop shell: the window opens on the default preset; no display gives a clear hint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from engine.presets.scenarios import DEFAULT_PRESET
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def test_main_window_opens_on_the_default_preset(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert DEFAULT_PRESET in window.windowTitle()
    summary = window.findChild(QLabel, "scenarioSummary")
    assert "128 × dgx-h100" in summary.text()


def test_quit_shortcut_closes_the_window(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    window.setFocus()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible())


def test_without_a_display_the_app_says_so_and_lists_headless_commands():
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    result = subprocess.run(
        [sys.executable, "main.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "needs a display" in result.stderr
    assert "python main.py evaluate" in result.stderr
    assert "Traceback" not in result.stderr
