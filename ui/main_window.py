"""The main window. For now: the shell the canvas, inspector and plots will live in."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow

from engine.presets import DEFAULT_PRESET, load_preset


class MainWindow(QMainWindow):
    """FabricLab's top-level window, opened on the default preset."""

    def __init__(self) -> None:
        super().__init__()
        self.scenario = load_preset(DEFAULT_PRESET)
        self.setWindowTitle(f"FabricLab — {self.scenario.metadata.name}")
        self.resize(1280, 800)
        groups = "\n".join(f"{g.count:,} × {g.model}  ({g.tier})" for g in self.scenario.groups)
        label = QLabel(
            f"<h2>{self.scenario.metadata.name}</h2><p>{self.scenario.metadata.description}</p>"
            f"<pre>{groups}</pre>"
        )
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        label.setObjectName("scenarioSummary")
        self.setCentralWidget(label)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        quit_action.triggered.connect(self.close)
        self.menuBar().addMenu("&File").addAction(quit_action)
        self.addAction(quit_action)
        self.statusBar().showMessage("Ready")
