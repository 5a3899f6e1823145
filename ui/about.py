"""Help > About FabricLab: the app's version, the versions it runs on, and the catalog's date.

The versions are read from the running modules (not typed in), so a bug report that copies
them ("Copy versions") says exactly what was running, in a checkout or a bundled app. The
application icon is loaded here too, through `resource_path`, for the window and the dialog.
"""

from __future__ import annotations

import platform

import numba
import numpy
import pyqtgraph
import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine import __version__
from engine.analysis import resource_path
from engine.catalog.devices import Catalog, default_catalog

ICON_PNG = ("icons", "fabriclab.png")


def application_icon() -> QIcon:
    """FabricLab's icon (the 256 px PNG, which needs no SVG plugin; empty if it is missing)."""
    return QIcon(str(resource_path(*ICON_PNG)))


def version_rows() -> list[tuple[str, str]]:
    """(component, version) for FabricLab and what it runs on, read from the live modules."""
    return [
        ("FabricLab", __version__),
        ("Python", platform.python_version()),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("numba", numba.__version__),
        ("numpy", numpy.__version__),
        ("pyqtgraph", pyqtgraph.__version__),
    ]


def catalog_note(catalog: Catalog) -> str:
    """Where the default device figures come from, in one sentence."""
    updated = f", updated {catalog.updated}" if catalog.updated else ""
    return (
        f"Device catalog{updated}: {len(catalog.devices)} devices whose figures each name one of "
        f"{len(catalog.sources)} public sources or an explicit assumption."
    )


def versions_text(catalog: Catalog) -> str:
    """The versions and the catalog note as plain text (what "Copy versions" copies)."""
    lines = [f"{name}: {version}" for name, version in version_rows()]
    return "\n".join([*lines, catalog_note(catalog)])


class AboutDialog(QDialog):
    """The About box: icon, name and version, a versions table, the catalog note.

    Each version label is named ``version_<component>`` (lower case) so tests and
    accessibility tools can find it.
    """

    def __init__(self, catalog: Catalog | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About FabricLab")
        self.catalog = catalog or default_catalog()

        icon = QLabel()
        icon.setObjectName("aboutIcon")
        pixmap = QPixmap(str(resource_path(*ICON_PNG)))
        if not pixmap.isNull():
            icon.setPixmap(
                pixmap.scaled(
                    96,
                    96,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            )
        title = QLabel(f"<h2>FabricLab {__version__}</h2>")
        title.setObjectName("aboutTitle")
        blurb = QLabel(
            "A what-if explorer for the networks of AI training clusters: build a fabric, "
            "pick a technology and a workload, and see bandwidth, step time and cost."
        )
        blurb.setWordWrap(True)
        heading = QVBoxLayout()
        heading.addWidget(title)
        heading.addWidget(blurb)
        top = QHBoxLayout()
        top.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        top.addLayout(heading, 1)

        form = QFormLayout()
        self.version_labels: dict[str, QLabel] = {}
        for name, version in version_rows():
            label = QLabel(version)
            label.setObjectName(f"version_{name.lower()}")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(f"{name}:", label)
            self.version_labels[name] = label

        self.catalog_label = QLabel(catalog_note(self.catalog))
        self.catalog_label.setObjectName("catalogNote")
        self.catalog_label.setWordWrap(True)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("Copy versions")
        self.copy_button.setObjectName("copyVersionsButton")
        self.copy_button.setToolTip("Copy these versions to the clipboard, e.g. for a bug report")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self.copy_versions)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(form)
        layout.addWidget(self.catalog_label)
        layout.addWidget(buttons)

    def copy_versions(self) -> None:
        """Put the versions and the catalog note on the clipboard as plain text."""
        QGuiApplication.clipboard().setText(versions_text(self.catalog))
