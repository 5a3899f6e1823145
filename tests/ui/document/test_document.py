"""The scenario document: undoable dotted-path edits, refusals, structural problems."""

from __future__ import annotations

import copy

from engine.presets.scenarios import DEFAULT_PRESET, load_preset
from ui.document.document import ScenarioDocument


def test_an_edit_is_undoable_and_undo_restores_the_exact_scenario(qtbot, catalog):
    doc = ScenarioDocument(load_preset(DEFAULT_PRESET), catalog)
    original = copy.deepcopy(doc.scenario)
    with qtbot.waitSignal(doc.changed, timeout=1000):
        assert doc.set_field("groups.leaf.count", "64") is None
    assert doc.scenario.group("leaf").count == 64
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert doc.scenario == original
    doc.undo_stack.redo()
    assert doc.scenario.group("leaf").count == 64


def test_a_bad_override_is_refused_with_a_message_and_no_undo_entry(qtbot, catalog):
    doc = ScenarioDocument(load_preset(DEFAULT_PRESET), catalog)
    before = doc.scenario
    with qtbot.assertNotEmitted(doc.changed):
        message = doc.set_field("groups.leaf.count", "many")
    assert message and "cannot read 'many'" in message
    assert doc.set_field("groups.nosuch.count", "3")
    assert doc.undo_stack.count() == 0
    assert doc.scenario is before


def test_setting_the_current_value_pushes_nothing(qtbot, catalog):
    doc = ScenarioDocument(load_preset(DEFAULT_PRESET), catalog)
    assert doc.set_field("groups.leaf.count", str(doc.scenario.group("leaf").count)) is None
    assert doc.undo_stack.count() == 0


def test_structural_problems_are_reported_at_once_and_cleared_by_undo(qtbot, catalog):
    doc = ScenarioDocument(load_preset(DEFAULT_PRESET), catalog)
    assert doc.problems == []
    with qtbot.waitSignal(doc.problemsChanged, timeout=1000) as blocker:
        doc.set_field("groups.leaf.model", "no-such-switch")
    problems = blocker.args[0]
    assert any(p.where == "groups[leaf]" for p in problems)
    doc.undo_stack.undo()
    assert doc.problems == []
