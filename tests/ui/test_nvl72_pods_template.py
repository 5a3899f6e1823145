"""The 3-tier NVL72 template in the app, built as a user builds it: New from template, nvl72,
4,608 GPUs of GB200 NVL72 racks on Quantum-2 gives 8 pods of one scalable unit each under
one core, each pod drawn inside a frame of its own ("Pod 1" ... "Pod 8") holding its racks,
leaves and spines and nothing of another pod, the core outside every frame; the design
evaluates without a problem at full bisection. A size of no whole scalable units is refused
in the dialog with the sizes that build."""

from __future__ import annotations

import pytest

from tests.ui.test_features import click_ok, fill_dialog, pick_server
from tests.ui.windows import shown_window
from ui.settings import app_settings

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


def test_the_nvl72_template_builds_a_64_rack_superpod_drawn_as_pods(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "nvl72", 4608, switch="qm9700")
    pick_server(dialog, "gb200-nvl72")
    assert dialog.oversub_spin.isEnabled() and dialog.oversub_spin.value() == 1.0
    with qtbot.waitSignal(win.worker.finished, timeout=120_000):
        click_ok(qtbot, dialog)
    assert not dialog.isVisible() and dialog.error_label.text() == ""
    s = win.document.scenario
    pods = [[f"p{p}-servers", f"p{p}-leaf", f"p{p}-spine"] for p in range(1, 9)]
    assert set(win.canvas.nodes) == {g for pod in pods for g in pod} | {"core"}
    assert all(s.group(pod[0]).count == 8 for pod in pods)  # one scalable unit a pod
    assert win.canvas.tiers == ["server", "leaf", "spine", "core"]
    frames = win.canvas.pod_frames
    assert [f.title for f in frames] == [f"Pod {p}" for p in range(1, 9)]
    for frame, pod in zip(frames, pods, strict=True):
        inside = {
            gid
            for gid, node in win.canvas.nodes.items()
            if frame.sceneBoundingRect().contains(node.sceneBoundingRect())
        }
        assert inside == set(pod)  # its own racks, leaves and spines; no other pod's, no core
    assert win.document.problems == []
    report = win.last_report
    assert report is not None and report.topology.gpus == 4608
    ratios = report.topology.oversubscription  # 1:1 at the leaves and the spines: full bisection
    assert set(ratios) == {"leaf", "spine"} and all(
        r == pytest.approx(1.0) for r in ratios.values()
    )
    win.close()


def test_racks_of_no_whole_scalable_units_are_refused_in_the_dialog(qtbot):
    win = shown_window(qtbot, settings=app_settings())
    dialog = win.new_from_template()
    fill_dialog(qtbot, dialog, "nvl72", 72 * 33, switch="qm9700")
    pick_server(dialog, "gb200-nvl72")
    click_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert "the nearest GPU counts that build are 2,304 or 2,880" in dialog.error_label.text()
    assert win.document.undo_stack.count() == 0
    win.close()
