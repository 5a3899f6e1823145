"""Scenario > Compare scenarios with a library: the current scenario beside library entries,
three at once, each evaluated off the GUI thread and shown in one table."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.analysis import DEFAULT_PRESET
from tests.ui.windows import shown_window
from ui.results.tables import table_header, table_rows
from ui.settings import app_settings

TIMEOUT_MS = 90_000

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def win(qtbot, library):
    w = shown_window(qtbot, settings=app_settings(), library=library)
    yield w
    w.close()  # while the library is still open


def test_three_scenarios_from_the_library_and_the_window(qtbot, win, library):
    win.compare_action.trigger()
    dialog = win.compare_dialog
    labels = [c.label for c in dialog.candidates]
    current = f"{DEFAULT_PRESET} (current)"
    assert labels[0] == current
    assert {f"library: {name}" for name in library.names()} <= set(labels)
    picked = [current, "library: hgx-h100-roce-ecmp-1k", "library: dgx-h100-roce-spectrumx-1k"]
    picked.sort(key=labels.index)  # after the baseline, the table keeps the list's order
    dialog.set_checked(picked)
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.compare_button, Qt.MouseButton.LeftButton)
    assert table_header(dialog.table) == [
        "figure",
        current,
        picked[1],
        f"Δ {picked[1]}",
        picked[2],
        f"Δ {picked[2]}",
    ]
    result = dialog.table_result
    assert result.labels == tuple(picked)
    rows = {r[0].split(" (")[0]: r[1:] for r in table_rows(dialog.table)}
    capex = result.row("capex")
    assert all(v is not None for v in capex.values)
    assert rows["capex"][0].startswith(f"${capex.values[0]:,.0f}")
    assert sum(cell.endswith("✓") for cell in rows["capex"][::2][:3]) == 1
    assert len(dialog.plot.getPlotItem().listDataItems()) == 3
    assert "Compared 3 scenarios" in dialog.status.text()
    assert win.worker.current_request is None  # the window's own worker was not used


def test_an_entry_gone_from_the_library_is_named_not_raised(win, library):
    dialog = win.open_compare()
    gone = "library: rail-only-h100-1k"
    assert gone in [c.label for c in dialog.candidates]
    library.delete("rail-only-h100-1k")  # to the trash after the list was made
    dialog.set_checked([f"{DEFAULT_PRESET} (current)", gone])
    assert not dialog.compare()
    assert dialog.status.text().startswith(f"Cannot read {gone}: ")
    assert dialog.table_result is None
