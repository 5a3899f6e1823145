"""Read-only result tables: creation, filling with readable numbers, and reading back.

The results tabs and the library dock show engine figures in `QTableWidget`s built here, and
export them as CSV from the texts the user sees.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem


def make_table(name: str, header: list[str]) -> QTableWidget:
    """A read-only, row-selecting table with `header` columns."""
    table = QTableWidget(0, len(header))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(header)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setVisible(False)
    return table


def set_header(table: QTableWidget, header: list[str]) -> None:
    """Give the table exactly the columns of `header`: the first stretches, the others fit
    their contents (a comparison's scenario names stay readable)."""
    if table_header(table) == header:
        return
    table.setColumnCount(len(header))
    table.setHorizontalHeaderLabels(header)
    fit_columns(table)


def fit_columns(table: QTableWidget) -> None:
    """The first column stretches, the others fit their contents and titles."""
    view = table.horizontalHeader()
    view.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for column in range(1, table.columnCount()):
        view.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)


def fill_table(table: QTableWidget, rows: list[list[Any]]) -> None:
    """Replace the table's rows (large numbers with thousands separators, small ones with 4
    significant digits)."""
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(cell_text(value)))


def cell_text(value: Any) -> str:
    """How a table shows one value: text as it is, numbers readable at a glance."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def table_rows(table: QTableWidget) -> list[list[str]]:
    """The table's cell texts, row by row."""
    return [
        [table.item(r, c).text() if table.item(r, c) else "" for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def table_header(table: QTableWidget) -> list[str]:
    """The table's column titles."""
    return [
        table.horizontalHeaderItem(c).text() if table.horizontalHeaderItem(c) else ""
        for c in range(table.columnCount())
    ]
