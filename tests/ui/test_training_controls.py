"""The Training tab's step-model knobs, driven as a user would: a choice is one undoable edit of
the document's training job and a new evaluation, the step table shows what changed
(recomputation appears, the bubble shrinks under ZB-H1, FP8 shortens the matmuls), the
controls follow undo, and a TP typed in the Workload dock across servers warns in the tab."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from engine.topology.generators import rail_optimized
from tests.ui.windows import shown_window

TIMEOUT_MS = 60_000


@pytest.fixture
def win(qtbot):
    """64 DGX H100 GPUs on Quantum-2, Llama 3 70B with 4 pipeline stages, evaluated once."""
    scenario = rail_optimized(64, "dgx-h100", "qm9700")
    scenario.workload.training.model = "llama3-70b"
    scenario.workload.training.pp = 4
    w = shown_window(qtbot, scenario)
    w.results.tabs.setCurrentWidget(w.results.training_tab)
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        w.evaluate_now()
    yield w
    w.results.shutdown()
    w.congestion_tab.shutdown()
    w.sweep_panel.shutdown()
    w.worker.shutdown()


def bar(w):
    return w.results.training_tab.controls


def rows(w) -> dict[str, float]:
    table = w.results.training_table
    return {
        table.item(r, 0).text().strip(): float(table.item(r, 1).text().replace(",", ""))
        for r in range(table.rowCount())
    }


def choose(qtbot, w, combo, text):
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS):
        combo.setCurrentIndex(combo.findText(text))
    qtbot.wait(10)


def test_the_bar_shows_the_documents_knobs(win):
    controls = bar(win)
    assert controls.isVisible()
    assert controls.virtual_spin.text() == "preset"
    assert controls.choice_combos["schedule"].currentText() == "1F1B"
    assert controls.choice_combos["recompute"].currentText() == "none"
    assert controls.choice_combos["fp8"].currentText() == "BF16"


def test_fp8_shortens_the_matmul_row(qtbot, win):
    matmuls = rows(win)["matmuls"]
    choose(qtbot, win, bar(win).choice_combos["fp8"], "FP8")
    assert win.document.scenario.workload.training.overrides["fp8"] == 1.0
    assert rows(win)["matmuls"] < 0.8 * matmuls


def test_choosing_full_recomputation_is_one_undoable_edit_shown_in_the_table(qtbot, win):
    controls, stack = bar(win), win.document.undo_stack
    assert "recomputation" not in rows(win)
    before = stack.count()
    choose(qtbot, win, controls.choice_combos["recompute"], "full")
    assert stack.count() == before + 1
    assert win.document.scenario.workload.training.overrides["recompute"] == 2.0
    assert rows(win)["recomputation"] > 0
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        stack.undo()
    assert controls.choice_combos["recompute"].currentText() == "none"
    assert "recompute" not in win.document.scenario.workload.training.overrides


def test_zero_bubble_shrinks_the_plain_1f1b_bubble_row(qtbot, win):
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        bar(win).virtual_spin.setValue(1)  # Llama 3 70B's preset interleaves 5 chunks
    assert win.last_report.training.layout["virtual_stages"] == 1
    bubble = rows(win)["pipeline bubble"]
    choose(qtbot, win, bar(win).choice_combos["schedule"], "ZB-H1")
    assert 0 < rows(win)["pipeline bubble"] < bubble


def test_typing_a_tp_across_servers_in_the_workload_dock_warns_in_the_tab(qtbot, win):
    spin = win.workload_panel.numbers["tp"]
    spin.setFocus()
    spin.selectAll()
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        qtbot.keyClicks(spin, "16")
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert win.document.scenario.workload.training.tp == 16
    assert any("spans 2 servers" in n for n in win.last_report.training.notes)


def test_the_experts_load_and_sequence_parallelism_are_edits_of_the_job(qtbot, win):
    controls = bar(win)
    box = controls.moe_spins["expert_imbalance"]
    assert box.text() == "even"
    with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS):
        box.setValue(2.0)
    assert win.document.scenario.workload.training.overrides["expert_imbalance"] == 2.0
    choose(qtbot, win, controls.choice_combos["sequence_parallel"], "off")
    assert win.last_report.training.layout["sequence_parallel"] is False
