"""File > Export fabric…, File > Import topology… and File > Import traffic matrix…, driven
as a user would: the menu actions, the file dialogs answered, the job finishing off the GUI
thread, the files written and the scenario replaced (undoable)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from engine.analysis import generate
from tests.ui.windows import shown_window
from ui.formats import EXPORT_FILTERS
from ui.settings import app_settings

pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py
SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "formats" / "samples"
TIMEOUT_MS = 60_000


@pytest.fixture
def win(qtbot):
    w = shown_window(qtbot, settings=app_settings())
    return w


def _filter(fmt: str) -> str:
    return next(text for text, f in EXPORT_FILTERS.items() if f == fmt)


def _run(qtbot, win, action, signal: str = "finished") -> None:
    """Trigger `action` and wait for its file job to end with `signal`."""
    with qtbot.waitSignal(getattr(win.file_worker(), signal), timeout=TIMEOUT_MS):
        action.trigger()


def test_the_file_menu_holds_the_actions(win):
    titles = [a.text() for a in win.file_menu.actions()]
    for title in ("E&xport fabric…", "&Import topology…", "Import traffic &matrix…"):
        assert title in titles
    assert win.export_fabric_action.shortcut().toString() == "Ctrl+E"
    assert win.import_topology_action.shortcut().toString() == "Ctrl+I"


def test_export_fabric_writes_the_chosen_format(qtbot, win, tmp_path, monkeypatch):
    small = generate("leaf-spine", gpus=128, server="dgx-h100", switch="qm9700")
    win.document.replace_with(small, "small")
    answer = (str(tmp_path / "fabric"), _filter("graphml"))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: answer)
    _run(qtbot, win, win.export_fabric_action)
    written = tmp_path / "fabric.graphml"  # the suffix is added
    assert written.read_text().count("<edge ") == 384
    # the status bar may already say "Evaluating…" (the replaced scenario re-evaluates)
    assert win.last_file_job.result == [str(written)]
    answer = (str(tmp_path / "ns3"), _filter("ns3"))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: answer)
    _run(qtbot, win, win.export_fabric_action)
    assert (tmp_path / "ns3" / "topology.txt").read_text().startswith("150 22 384\n")
    assert (tmp_path / "ns3" / "flow.txt").read_text().startswith("128\n")


def test_import_topology_replaces_the_scenario_undoably(qtbot, win, monkeypatch):
    before = win.document.scenario
    path = str(SAMPLES / "two-leaves.links.csv")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (path, ""))
    _run(qtbot, win, win.import_topology_action)
    s = win.document.scenario
    assert [(g.id, g.count) for g in s.groups] == [("servers", 4), ("leaf", 2), ("spine", 1)]
    assert [b.pattern for b in s.bundles] == ["full", "full"]
    assert win.last_file_job.path == path
    win.document.undo_stack.undo()
    assert win.document.scenario == before


def test_a_bad_file_is_reported_with_its_line(qtbot, win, tmp_path, monkeypatch):
    bad = tmp_path / "bad.csv"
    bad.write_text("srv1,nic0,leaf1,p1,400\nsrv1,nic1,leaf1,p2\n")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    before = win.document.scenario
    _run(qtbot, win, win.import_topology_action, "failed")
    assert f"{bad}:2: 4 columns" in shown[0]
    assert win.document.scenario is before


def test_import_traffic_matrix_sets_the_workload_undoably(qtbot, win, monkeypatch):
    before = win.document.scenario
    path = str(SAMPLES / "traffic.csv")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (path, ""))
    _run(qtbot, win, win.import_traffic_action)
    w = win.document.scenario.workload
    assert w.kind == "traffic"
    flows = [(f.src, f.dst, f.bytes) for f in w.matrix]
    assert flows == [(0, 8, 1048576.0), (8, 0, 1048576.0), (1, 9, 4096.0)]
    assert win.document.scenario.groups == before.groups  # only the workload changed
    win.document.undo_stack.undo()
    assert win.document.scenario == before
    bad = SAMPLES / "two-leaves.links.csv"  # not a traffic matrix
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    _run(qtbot, win, win.import_traffic_action, "failed")
    assert str(bad) in shown[0]


def test_cancelled_dialogs_do_nothing(win, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: ("", ""))
    assert win.export_fabric() is False
    assert win.import_topology_file() is False
    assert win.import_traffic_file() is False
    assert getattr(win, "file_tasks", None) is None  # no job was started
