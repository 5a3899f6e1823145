"""The Compare dialog's verdict range, driven as a user would: compare an InfiniBand fabric
with its RoCE twin, ask for the range, read the tornado plot and the band's sources."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.analysis import convert_technology
from engine.topology import generators as gen
from ui.results.compare_view import Candidate, CompareDialog

TIMEOUT_MS = 120_000


@pytest.fixture
def dialog(qtbot, catalog):
    ib = gen.rail_optimized(64, "dgx-h100", "qm9700", catalog=catalog)
    ib.workload.message_bytes = 256 * 2**20
    ib.metadata.name = "ib-64"
    roce = convert_technology(ib, "roce", catalog)
    roce.metadata.name = "roce-64"
    d = CompareDialog([Candidate("ib-64", ib), Candidate("roce-64", roce)], catalog)
    qtbot.addWidget(d)
    d.show()
    yield d
    d.done(0)


def test_the_verdict_range_draws_a_bar_per_unknown_largest_first(qtbot, dialog):
    assert not dialog.range_button.isEnabled()  # nothing compared yet
    with qtbot.waitSignal(dialog.compared, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.compare_button, Qt.MouseButton.LeftButton)
    assert dialog.range_button.isEnabled()
    with qtbot.waitSignal(dialog.worker.finished, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(dialog.range_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0] == "range"
    assert dialog.views.currentWidget() is dialog.verdict
    result = dialog.verdict.result
    assert result is not None and (result.a, result.b) == ("ib-64", "roce-64")
    bars = dialog.verdict.bars.opts
    assert list(bars["x0"]) == [s.low for s in result.swings]
    assert list(bars["y"]) == sorted(bars["y"], reverse=True)  # the largest swing on top
    summary = dialog.verdict.summary.text()
    assert f"{result.baseline:.3f} at the catalog's defaults" in summary
    assert f"{result.low:.3f} to {result.high:.3f}" in summary
    sources = dialog.verdict.sources.toPlainText()
    assert "not published" in sources and "Source:" in sources
    assert sources.count("•") == len(result.swings) + len(result.notes)
