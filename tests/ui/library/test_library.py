"""The Library dock and the library in the main window, driven as a user would.

Every test uses a library in tmp_path and settings in tmp_path, never the user's own.
"""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLineEdit,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
)

from engine.analysis import AppReport, open_library
from engine.library.scenario_diff import diff
from engine.library.store import Library
from engine.model.scenario import from_json, to_json
from engine.presets.scenarios import DEFAULT_PRESET, load_preset
from ui.app import open_main_window
from ui.library.cache import RESULT_KIND, cached_report
from ui.main_window import MainWindow
from ui.settings import app_settings

TIMEOUT_MS = 60_000
OTHER = "rail-only-h100-1k"


pytestmark = pytest.mark.usefixtures("temp_settings")  # tests/conftest.py


@pytest.fixture
def lib_path(tmp_path):
    return tmp_path / "lib.fabriclab"


@pytest.fixture
def library(lib_path):
    lib = open_library(lib_path)
    yield lib
    lib.close()


def new_window(qtbot, library: Library) -> MainWindow:
    """A shown main window on `library` (the default preset, not evaluated yet)."""
    win = MainWindow(settings=app_settings(), library=library, evaluate_on_start=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture
def win(qtbot, library):
    w = new_window(qtbot, library)
    yield w
    w.close()  # while the library is still open (the session writes on close)


def panel_of(win):
    return win.library_session.panel


def wait_idle(qtbot, win):
    """Wait for the window's evaluation to finish (if one runs)."""
    qtbot.waitUntil(lambda: not win.worker.running, timeout=TIMEOUT_MS)


def row(tree: QTreeWidget, text: str) -> QTreeWidgetItem:
    items = tree.findItems(text, Qt.MatchFlag.MatchExactly, 0)
    assert items, f"{text!r} not listed in {tree.objectName()}"
    tree.scrollToItem(items[0])
    return items[0]


def click_row(qtbot, tree, text, modifier=Qt.KeyboardModifier.NoModifier):
    point = tree.visualItemRect(row(tree, text)).center()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, modifier, point)


def double_click_row(qtbot, tree, text):
    """A double-click as the mouse sends it: the first click, then the double-click."""
    point = tree.visualItemRect(row(tree, text)).center()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=point)


def open_from_list(qtbot, win, name):
    """Double-click `name` in the library list and wait for its results."""
    double_click_row(qtbot, panel_of(win).list, name)
    assert win.document.scenario.metadata.name == name
    wait_idle(qtbot, win)


def click_box_button(qtbot, box: QMessageBox, text: str) -> None:
    qtbot.waitUntil(box.isVisible, timeout=2000)
    buttons = [b for b in box.buttons() if b.text() == text]
    assert buttons, [b.text() for b in box.buttons()]
    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)


def answer_text(qtbot, dialog: QInputDialog, text: str) -> None:
    """Type `text` into an open input dialog and click OK."""
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    edit = dialog.findChild(QLineEdit)
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


def edit_count(qtbot, win, group_id, text):
    """Click a group on the canvas and type a new count into the inspector."""
    canvas = win.canvas
    canvas.fit()
    point = canvas.mapFromScene(canvas.nodes[group_id].scenePos())
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: win.inspector.group_id == group_id, timeout=2000)
    spin = win.inspector.count_spin
    spin.setFocus()
    spin.selectAll()
    with qtbot.waitSignal(win.document.changed, timeout=2000):
        qtbot.keyClicks(spin, text)
        qtbot.keyClick(spin, Qt.Key.Key_Return)


def press_ctrl(qtbot, win, key, shift=False):
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=2000)
    modifiers = Qt.KeyboardModifier.ControlModifier
    if shift:
        modifiers |= Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(win, key, modifiers)


# ---- browsing --------------------------------------------------------------------------------


def test_the_dock_lists_the_library_beside_the_palette(win, library):
    dock = win.findChild(QDockWidget, "libraryDock")
    assert dock is not None and dock.isVisible()
    assert win.dockWidgetArea(dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert dock in win.tabifiedDockWidgets(win.findChild(QDockWidget, "paletteDock"))
    assert sorted(panel_of(win).visible_names()) == sorted(library.names())
    texts = [a.text() for a in win.file_menu.actions()]
    for text in ("&Save", "Save with &Note…", "Save &As…", "&Import JSON…", "&Export JSON…"):
        assert text in texts


def test_typing_a_description_word_filters_the_list(qtbot, win, library):
    panel = panel_of(win)
    word = "SuperPOD"
    expected = sorted(e.name for e in library.list() if word.lower() in e.description.lower())
    assert 0 < len(expected) < len(library.names())
    qtbot.keyClicks(panel.search_edit, word)
    qtbot.waitUntil(lambda: sorted(panel.visible_names()) == expected, timeout=3000)
    panel.search_edit.clear()
    qtbot.waitUntil(lambda: len(panel.visible_names()) == len(library.names()), timeout=3000)
    qtbot.keyClicks(panel.search_edit, "no-such-word-anywhere")
    qtbot.waitUntil(lambda: panel.visible_names() == [], timeout=3000)
    assert "nothing matches" in panel.message.text()


def test_the_tag_filter_offers_every_tag_and_filters_by_it(qtbot, win, library):
    panel = panel_of(win)
    combo = panel.tag_filter
    offered = [combo.itemText(i) for i in range(1, combo.count())]
    assert combo.itemText(0) == "All tags"
    assert offered == sorted({t for e in library.list() for t in e.tags})
    tag = "infiniband"
    expected = sorted(e.name for e in library.list() if tag in e.tags)
    assert 0 < len(expected) < len(library.names())
    combo.setCurrentIndex(combo.findText(tag))
    assert sorted(panel.visible_names()) == expected
    qtbot.keyClicks(panel.search_edit, "16k")  # search and tag together
    qtbot.waitUntil(
        lambda: panel.visible_names() == [n for n in expected if n in library.search("16k")],
        timeout=3000,
    )


def test_the_list_sorts_by_modified_and_by_name(qtbot, win, library):
    panel = panel_of(win)
    by_modified = [e.name for e in library.list(sort="modified")]
    assert panel.visible_names() == by_modified
    header = panel.list.header()
    name_column = QPoint(header.sectionViewportPosition(0) + 5, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=name_column)
    by_name = sorted(by_modified, key=str.lower)
    first = panel.visible_names()
    assert first in (by_name, by_name[::-1])
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=name_column)
    assert panel.visible_names() == first[::-1]


# ---- open, edit, save --------------------------------------------------------------------------


def test_open_edit_and_ctrl_s_puts_a_new_version_on_top(qtbot, win, library):
    panel = panel_of(win)
    open_from_list(qtbot, win, OTHER)
    assert win.document.scenario == library.load(OTHER)
    assert OTHER in win.windowTitle() and "•" not in win.windowTitle()
    before = len(library.versions(OTHER))
    servers = library.load(OTHER).group("servers").count
    edit_count(qtbot, win, "servers", str(servers // 2))
    assert win.windowTitle().endswith("•")
    press_ctrl(qtbot, win, Qt.Key.Key_S)
    assert len(library.versions(OTHER)) == before + 1
    assert library.load(OTHER).group("servers").count == servers // 2
    assert "•" not in win.windowTitle()
    top = panel.versions.topLevelItem(0)
    assert top.text(0) == f"v{before + 1}"
    assert panel.selected_names() == [OTHER]
    assert "Saved" in win.statusBar().currentMessage()


def test_save_with_a_note_and_find_it_by_the_note(qtbot, win, library):
    panel = panel_of(win)
    open_from_list(qtbot, win, OTHER)
    edit_count(qtbot, win, "servers", "32")
    win.library_session.save_note_action.trigger()
    answer_text(qtbot, win.library_session.dialog, "tried quarter size")
    assert library.versions(OTHER)[-1]["note"] == "tried quarter size"
    assert panel.versions.topLevelItem(0).text(2) == "tried quarter size"
    qtbot.keyClicks(panel.search_edit, "quarter")
    qtbot.waitUntil(lambda: panel.visible_names() == [OTHER], timeout=3000)


def test_double_clicking_an_old_version_opens_that_version(qtbot, win, library):
    panel = panel_of(win)
    open_from_list(qtbot, win, OTHER)
    original = library.load(OTHER)
    edit_count(qtbot, win, "servers", "16")
    press_ctrl(qtbot, win, Qt.Key.Key_S)
    assert library.load(OTHER) != original
    double_click_row(qtbot, panel.versions, "v1")
    assert win.document.scenario == library.load(OTHER, version=1) == original
    assert "version 1" in win.statusBar().currentMessage()
    assert "•" not in win.windowTitle()
    wait_idle(qtbot, win)


def test_save_as_asks_a_name_and_refuses_a_taken_one(qtbot, win, library):
    open_from_list(qtbot, win, OTHER)
    press_ctrl(qtbot, win, Qt.Key.Key_S, shift=True)
    answer_text(qtbot, win.library_session.dialog, "my rail-only study")
    assert "my rail-only study" in library.names() and OTHER in library.names()
    assert library.load("my rail-only study").metadata.name == "my rail-only study"
    assert "my rail-only study" in win.windowTitle() and "•" not in win.windowTitle()
    assert "my rail-only study" in panel_of(win).visible_names()
    versions = len(library.versions(DEFAULT_PRESET))
    win.library_session.save_as_action.trigger()
    answer_text(qtbot, win.library_session.dialog, DEFAULT_PRESET)
    box = win.library_session.dialog
    assert isinstance(box, QMessageBox) and "exists already" in box.text()
    click_box_button(qtbot, box, "OK")
    assert len(library.versions(DEFAULT_PRESET)) == versions
    assert win.document.scenario.metadata.name == "my rail-only study"


def test_opening_another_scenario_asks_about_unsaved_changes(qtbot, win, library):
    open_from_list(qtbot, win, OTHER)
    edit_count(qtbot, win, "servers", "8")
    edited = win.document.scenario
    double_click_row(qtbot, panel_of(win).list, DEFAULT_PRESET)
    box = win.library_session.dialog
    assert "unsaved changes" in box.text()
    click_box_button(qtbot, box, "Cancel")
    assert win.document.scenario is edited
    double_click_row(qtbot, panel_of(win).list, DEFAULT_PRESET)
    click_box_button(qtbot, win.library_session.dialog, "Discard")
    assert win.document.scenario == library.load(DEFAULT_PRESET)
    assert library.load(OTHER) != edited  # discarded, not saved
    wait_idle(qtbot, win)


# ---- duplicate, trash ----------------------------------------------------------------------------


def test_duplicate_asks_a_new_name(qtbot, win, library):
    panel = panel_of(win)
    click_row(qtbot, panel.list, OTHER)
    qtbot.mouseClick(panel.duplicate_button, Qt.MouseButton.LeftButton)
    answer_text(qtbot, panel.dialog, "rail-only variant")
    assert "rail-only variant" in library.names()
    assert panel.selected_names() == ["rail-only variant"]
    assert library.load("rail-only variant").groups == library.load(OTHER).groups
    assert "Duplicated" in panel.message.text()
    qtbot.mouseClick(panel.duplicate_button, Qt.MouseButton.LeftButton)
    answer_text(qtbot, panel.dialog, OTHER)  # taken: refused with a message
    assert "exists already" in panel.message.text()


def test_delete_goes_to_the_trash_and_restore_brings_it_back(qtbot, win, library):
    panel = panel_of(win)
    click_row(qtbot, panel.list, OTHER)
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    click_box_button(qtbot, panel.dialog, "Cancel")
    assert OTHER in library.names()
    qtbot.mouseClick(panel.delete_button, Qt.MouseButton.LeftButton)
    click_box_button(qtbot, panel.dialog, "Move to Trash")
    assert OTHER not in library.names() and OTHER not in panel.visible_names()
    qtbot.mouseClick(panel.trash_check, Qt.MouseButton.LeftButton)
    assert panel.visible_names() == [OTHER]
    assert not panel.open_button.isEnabled() and not panel.delete_button.isEnabled()
    click_row(qtbot, panel.list, OTHER)
    assert panel.restore_button.isEnabled()
    qtbot.mouseClick(panel.restore_button, Qt.MouseButton.LeftButton)
    assert panel.visible_names() == []
    qtbot.mouseClick(panel.trash_check, Qt.MouseButton.LeftButton)
    assert OTHER in panel.visible_names() and OTHER in library.names()


# ---- JSON files ------------------------------------------------------------------------------


def test_export_writes_the_current_scenario_and_import_adds_and_opens_one(
    qtbot, win, library, tmp_path, monkeypatch
):
    out = tmp_path / "out.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    edit_count(qtbot, win, "servers", "64")
    win.library_session.export_action.trigger()
    assert from_json(out.read_text()) == win.document.scenario
    assert win.windowTitle().endswith("•")  # an export is not a save into the library
    wait_idle(qtbot, win)
    win.document.undo_stack.setClean()

    study = load_preset(OTHER)
    study.metadata.name = "imported study"
    study.metadata.tags = ["from-a-colleague"]
    source = tmp_path / "study.json"
    source.write_text(to_json(study))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(source), ""))
    win.library_session.import_action.trigger()
    assert library.load("imported study") == study
    assert win.document.scenario == study
    assert "imported study" in panel_of(win).visible_names()
    combo = panel_of(win).tag_filter
    assert combo.findText("from-a-colleague") > 0
    wait_idle(qtbot, win)


def test_importing_a_malformed_file_says_why(qtbot, win, library, tmp_path, monkeypatch):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fabriclab-scenario", "version": 1, "groups": 3}')
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    names, before = library.names(), win.document.scenario
    win.library_session.import_action.trigger()
    box = win.library_session.dialog
    assert isinstance(box, QMessageBox) and "Cannot import" in box.text()
    click_box_button(qtbot, box, "OK")
    assert library.names() == names and win.document.scenario is before
    assert "Cannot import" in panel_of(win).message.text()


# ---- autosave and recovery ---------------------------------------------------------------------


def test_autosave_after_a_crash_is_offered_back(qtbot, win, library, lib_path):
    assert library.recover() is None
    edit_count(qtbot, win, "servers", "48")
    edited = win.document.scenario
    qtbot.waitUntil(lambda: library.recover() is not None, timeout=10_000)  # idle autosave
    assert library.recover() == edited
    # the first window never closes cleanly: a second app opens the same library file
    other_lib = Library(lib_path)
    try:
        second = new_window(qtbot, other_lib)
        qtbot.waitUntil(lambda: second.library_session.recovery_box is not None, timeout=3000)
        box = second.library_session.recovery_box
        assert "unsaved changes" in box.text() and edited.metadata.name in box.text()
        click_box_button(qtbot, box, "Restore")
        assert second.document.scenario == edited
        assert second.windowTitle().endswith("•")
        wait_idle(qtbot, second)
        second.close()  # unsaved: the changes stay offered
        assert other_lib.recover() == edited
        third = new_window(qtbot, other_lib)
        qtbot.waitUntil(lambda: third.library_session.recovery_box is not None, timeout=3000)
        click_box_button(qtbot, third.library_session.recovery_box, "Discard")
        assert other_lib.recover() is None
        assert third.document.scenario == load_preset(DEFAULT_PRESET)
        third.close()
    finally:
        other_lib.close()


def test_a_save_or_a_clean_close_clears_the_autosave(qtbot, library):
    first = new_window(qtbot, library)
    edit_count(qtbot, first, "servers", "96")
    assert first.library_session.autosave_now()
    assert library.recover() is not None
    press_ctrl(qtbot, first, Qt.Key.Key_S)
    assert library.recover() is None
    wait_idle(qtbot, first)
    library.autosave(first.document.scenario)
    first.close()  # clean (just saved): nothing to offer next time
    assert library.recover() is None


# ---- cached results ----------------------------------------------------------------------------


def test_reopening_shows_the_cached_result_without_a_run(qtbot, win, library):
    open_from_list(qtbot, win, OTHER)
    first_report = win.last_report
    cached = library.cached_result(win.document.scenario, RESULT_KIND)
    assert cached is not None and cached["topology"] == first_report.topology.to_dict()
    summary = win.results.summary.text()
    open_from_list(qtbot, win, DEFAULT_PRESET)
    assert win.results.summary.text() != summary
    runs = []
    win.worker.started.connect(runs.append)
    double_click_row(qtbot, panel_of(win).list, OTHER)
    assert win.results.summary.text() == summary
    assert win.last_report == AppReport.from_dict(cached)
    assert win.engine_label.text() == "engine: cached"
    assert "cached" in win.statusBar().currentMessage()
    assert win.canvas.utilization  # canvas colours from the cached link utilization
    qtbot.wait(400)  # longer than the edit debounce
    assert runs == [] and not win.worker.running


def test_a_cached_report_of_an_older_shape_is_evaluated_again_not_a_crash(qtbot, win, library):
    scenario = library.load(OTHER)
    old = {"topology": {"gpus": 1024}, "permutation": {"mean": 0.9}}  # before typed results
    library.cache_result(scenario, RESULT_KIND, old)
    assert cached_report(library, scenario) is None
    runs = []
    win.worker.started.connect(runs.append)
    open_from_list(qtbot, win, OTHER)
    assert runs  # no usable cached report: the scenario was evaluated
    assert win.last_report is not None and win.last_report.topology.name == OTHER
    assert win.engine_label.text() != "engine: cached"
    kept = library.cached_result(scenario, RESULT_KIND)  # the new run replaced the old entry
    assert AppReport.from_dict(kept) == cached_report(library, scenario)


# ---- compare -----------------------------------------------------------------------------------


def test_compare_two_scenarios_pins_both_and_shows_the_diff(qtbot, win, library, monkeypatch):
    pinned = []
    real_pin = win.results.pin_report

    def pin(label, report):
        pinned.append((label, report))
        real_pin(label, report)

    monkeypatch.setattr(win.results, "pin_report", pin)
    panel = panel_of(win)
    a, b = DEFAULT_PRESET, "hgx-h100-roce-ecmp-1k"
    click_row(qtbot, panel.list, a)
    click_row(qtbot, panel.list, b, Qt.KeyboardModifier.ControlModifier)
    assert sorted(panel.selected_names()) == sorted([a, b])
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    dialog = win.library_session.diff_dialog
    assert dialog.isVisible()
    assert dialog.table.rowCount() == len(diff(library.load(a), library.load(b))) > 0
    qtbot.waitUntil(lambda: len(pinned) == 2, timeout=TIMEOUT_MS)
    assert {label for label, _ in pinned} == {a, b}
    assert sorted(win.results.pinned_labels()) == sorted([a, b])
    assert all(report.collective_sweep is not None for _, report in pinned)
    assert win.worker.current_request is None  # the window's own worker was not used
    assert library.cached_result(library.load(b), RESULT_KIND) is not None


def test_compare_one_scenario_with_the_current_one(qtbot, win, library, monkeypatch):
    pinned = []
    real_pin = win.results.pin_report
    monkeypatch.setattr(
        win.results, "pin_report", lambda label, r: (pinned.append(label), real_pin(label, r))
    )
    edit_count(qtbot, win, "servers", "64")
    panel = panel_of(win)
    click_row(qtbot, panel.list, OTHER)
    qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(pinned) == 2, timeout=TIMEOUT_MS)
    assert set(pinned) == {f"{DEFAULT_PRESET} (current)", OTHER}
    assert set(win.results.pinned_labels()) == set(pinned)
    rows = win.library_session.diff_dialog.table.rowCount()
    assert rows == len(diff(win.document.scenario, library.load(OTHER)))
    wait_idle(qtbot, win)


# ---- start-up and unusable libraries ----------------------------------------------------------


def test_start_opens_the_default_preset_then_the_last_scenario_used(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "start.fabriclab"
    monkeypatch.setenv("FABRICLAB_LIBRARY", str(path))
    first = open_main_window(app_settings())
    qtbot.addWidget(first)
    assert path.exists() and first.library is not None
    assert first.document.scenario == first.library.load(DEFAULT_PRESET)
    wait_idle(qtbot, first)
    open_from_list(qtbot, first, OTHER)
    first.close()
    first.library.close()
    second = open_main_window(app_settings())
    qtbot.addWidget(second)
    try:
        assert second.document.scenario.metadata.name == OTHER
        assert second.engine_label.text() == "engine: cached"  # evaluated in the first run
        assert not second.worker.running
    finally:
        second.close()
        second.library.close()


def test_a_corrupt_library_at_start_is_reported_and_left_untouched(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "broken.fabriclab"
    path.write_bytes(b"SQLite format 3\x00" + b"\x13\x37" * 2000)
    before = path.read_bytes()
    monkeypatch.setenv("FABRICLAB_LIBRARY", str(path))
    window = open_main_window(app_settings())
    qtbot.addWidget(window)
    assert window.library is None and window.library_session is None
    assert window.findChild(QDockWidget, "libraryDock") is None
    box = window.findChild(QMessageBox, "libraryMessageBox")
    assert box is not None and box.isVisible()
    assert str(path) in box.text() and "without a library" in box.text()
    assert "No library" in window.statusBar().currentMessage()
    click_box_button(qtbot, box, "OK")
    assert path.read_bytes() == before
    wait_idle(qtbot, window)
    assert window.last_report is not None  # the app works on the default preset


def test_a_newer_library_is_read_only_with_a_banner(qtbot, lib_path):
    open_library(lib_path).close()
    conn = sqlite3.connect(lib_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    lib = Library(lib_path)
    try:
        win = new_window(qtbot, lib)
        panel = panel_of(win)
        assert panel.banner.isVisible() and "newer FabricLab" in panel.banner.text()
        assert not win.library_session.save_action.isEnabled()
        assert not win.library_session.import_action.isEnabled()
        click_row(qtbot, panel.list, OTHER)
        assert panel.open_button.isEnabled() and panel.compare_button.isEnabled()
        assert not panel.delete_button.isEnabled() and not panel.duplicate_button.isEnabled()
        versions = len(lib.versions(DEFAULT_PRESET))
        edit_count(qtbot, win, "servers", "64")
        press_ctrl(qtbot, win, Qt.Key.Key_S)  # disabled: nothing written
        assert len(lib.versions(DEFAULT_PRESET)) == versions
        win.library_session.save()  # called anyway: a message, not a traceback
        assert "read-only" in win.library_session.dialog.text()
        wait_idle(qtbot, win)
        win.close()
        assert lib.recover() is None
    finally:
        lib.close()
