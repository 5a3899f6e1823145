"""Saving what a results tab shows: plots as PNG or SVG, plotted data and tables as CSV.

`ExportButton` is the one "Export" menu of a tab: for each of its targets (a plot, a table)
it offers the formats that target has, asks for a file name and writes it, reporting a
failure through a callback instead of raising. The writers are plain functions so scripts
and tests can call them without the dialog.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter, SVGExporter
from PySide6.QtWidgets import QFileDialog, QMenu, QToolButton, QWidget

MIN_PNG_WIDTH_PX = 800  # a plot in a small dock still exports at a readable size
FORMATS = {"png": "PNG image", "svg": "SVG drawing", "csv": "CSV data"}

Series = tuple[str, Sequence[float], Sequence[float]]


def write_csv(path: str, header: list[str], rows: list[list[Any]]) -> None:
    """Write `header` and `rows` to `path` with the csv module."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def export_png(plot: pg.PlotWidget, path: str) -> None:
    """Write the plot (axes, curves, legend) to `path` as a PNG image."""
    exporter = ImageExporter(plot.getPlotItem())
    params = exporter.parameters()
    if params["width"] < MIN_PNG_WIDTH_PX:
        params["width"] = MIN_PNG_WIDTH_PX  # the height follows, keeping the aspect ratio
    if not exporter.export(path):
        raise OSError(f"cannot write the image {path}")


def export_svg(plot: pg.PlotWidget, path: str) -> None:
    """Write the plot to `path` as an SVG drawing (vector paths, for papers and slides)."""
    with _closed_paths_tolerated():
        SVGExporter(plot.getPlotItem()).export(path)


@contextlib.contextmanager
def _closed_paths_tolerated() -> Iterator[None]:
    """Let pyqtgraph 0.14's SVG exporter read the closed paths Qt 6.11 writes.

    Its coordinate correction splits a path's ``d`` into "x,y" pairs and fails on the "Z"
    that closes a subpath (pyqtgraph issue #3495: legend swatches, symbols and the view box
    all end in one). For the time of one export the correction sees the path without its
    "Z"s, which are put back after, so the drawing is unchanged.
    """
    module = importlib.import_module("pyqtgraph.exporters.SVGExporter")
    original = getattr(module, "correctCoordinates", None)
    if original is None:  # a pyqtgraph without that step: nothing to work around
        yield
        return

    def correct(node, defs, item, options):
        closed = []
        for element in node.getElementsByTagName("path"):
            d = element.getAttribute("d")
            if "Z" in d or "z" in d:
                element.setAttribute("d", " ".join(d.replace("Z", " ").replace("z", " ").split()))
                closed.append(element)
        original(node, defs, item, options)
        for element in closed:
            element.setAttribute("d", f"{element.getAttribute('d').rstrip()} Z")

    module.correctCoordinates = correct
    try:
        yield
    finally:
        module.correctCoordinates = original


def plotted_series(plot: pg.PlotWidget) -> list[Series]:
    """The named curves of `plot` as (name, x, y), in the plot's data units (not log10)."""
    series: list[Series] = []
    for item in plot.getPlotItem().listDataItems():
        if not isinstance(item, pg.PlotDataItem) or not item.name():
            continue
        xs, ys = item.getOriginalDataset()
        if xs is None or len(xs) == 0:
            continue
        series.append((item.name(), list(map(float, xs)), list(map(float, ys))))
    return series


def csv_number(value: float | None) -> str | int | float:
    """A CSV cell: empty for no value, whole numbers without ``.0``, others exact."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if float(value).is_integer() and abs(value) < 1e15:
        return int(value)
    return float(value)


def series_rows(series: Sequence[Series]) -> list[list[Any]]:
    """One row per distinct x over all `series` (sorted), a column per series, blank where a
    series has no point at that x."""
    lookups = [dict(zip(xs, ys, strict=True)) for _name, xs, ys in series]
    xs_all = sorted({x for _name, xs, _ys in series for x in xs})
    return [[csv_number(x), *(csv_number(lookup.get(x)) for lookup in lookups)] for x in xs_all]


def write_series_csv(path: str, x_header: str, y_header: str, series: Sequence[Series]) -> None:
    """The plotted curves as CSV: `x_header`, then "<name> <y_header>" per curve."""
    header = [x_header, *(f"{name} {y_header}" for name, _xs, _ys in series)]
    write_csv(path, header, series_rows(series))


@dataclass
class ExportTarget:
    """Something a tab can save: a plot (PNG, SVG and CSV) or a table (CSV only)."""

    title: str  # "busbw plot", shown in the menu and the file dialog
    stem: str  # default file name without suffix
    write_csv: Callable[[str], None]
    plot: pg.PlotWidget | None = None

    @property
    def formats(self) -> tuple[str, ...]:
        """The file formats this target can be saved in."""
        return ("png", "svg", "csv") if self.plot is not None else ("csv",)

    def write(self, fmt: str, path: str) -> None:
        """Save in `fmt` ("png", "svg" or "csv") to `path`."""
        if fmt == "csv":
            self.write_csv(path)
        elif fmt == "png" and self.plot is not None:
            export_png(self.plot, path)
        elif fmt == "svg" and self.plot is not None:
            export_svg(self.plot, path)
        else:
            raise ValueError(f"{self.title} cannot be saved as {fmt}")


class ExportButton(QToolButton):
    """An "Export" button whose menu saves each target in each of its formats.

    `on_error(text)` hears why a file could not be written; `on_saved(path)` that one was.
    """

    def __init__(
        self,
        name: str,
        targets: list[ExportTarget],
        on_error: Callable[[str], None],
        on_saved: Callable[[str], None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setText("Export")
        self.setToolTip("Save a plot as PNG or SVG, or its data as CSV")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.targets = targets
        self.on_error = on_error
        self.on_saved = on_saved
        menu = QMenu(self)
        menu.setObjectName(f"{name}Menu")
        for i, target in enumerate(targets):
            if i:
                menu.addSeparator()
            for fmt in target.formats:
                action = menu.addAction(f"{target.title} as {fmt.upper()}…")
                action.setObjectName(f"{name}_{target.stem}_{fmt}")
                action.triggered.connect(lambda _=False, t=target, f=fmt: self.ask_and_save(t, f))
        self.setMenu(menu)

    def ask_and_save(self, target: ExportTarget, fmt: str) -> str | None:
        """Ask where to save `target` as `fmt`, then save; the path written, or None."""
        path, _ = QFileDialog.getSaveFileName(
            self,
            f"Export {target.title} as {fmt.upper()}",
            f"{target.stem}.{fmt}",
            f"{FORMATS[fmt]} (*.{fmt})",
        )
        if not path:
            return None
        if Path(path).suffix.lower() != f".{fmt}":
            path = f"{path}.{fmt}"
        try:
            target.write(fmt, path)
        except Exception as exc:  # a full disk, a read-only folder, an exporter failure
            self.on_error(f"Cannot write {path}: {exc}")
            return None
        if self.on_saved is not None:
            self.on_saved(path)
        return path
