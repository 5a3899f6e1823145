"""The frame every results tab shares: a message line, an Export menu and a body."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ui.results.plot_export import ExportButton, ExportTarget

ERROR_STYLE = "color: #d62728"


class ResultTab(QWidget):
    """A results tab: a message label and an Export button above `body`."""

    def __init__(self, name: str, body: QWidget) -> None:
        super().__init__()
        self.setObjectName(name)
        self.message = QLabel()
        self.message.setObjectName(f"{name}Message")
        self.message.setWordWrap(True)
        self.export_button: ExportButton | None = None
        self.top = QHBoxLayout()
        self.top.addWidget(self.message, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(self.top)
        layout.addWidget(body, 1)
        self.body_layout = layout

    def set_exports(self, targets: list[ExportTarget]) -> ExportButton:
        """Put the Export menu for `targets` at the right of the message line."""
        button = ExportButton(
            f"{self.objectName()}Export",
            targets,
            on_error=self.set_error,
            on_saved=lambda path: self.set_info(f"Saved {path}"),
        )
        self.top.addWidget(button)
        self.export_button = button
        return button

    def set_error(self, text: str) -> None:
        """Show a failure message in red."""
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setText(text)

    def set_info(self, text: str) -> None:
        """Show an informational line."""
        self.message.setStyleSheet("")
        self.message.setText(text)
