"""The inspector's routing fields: the ECMP hash scope beside the routing mode."""

from __future__ import annotations

import pytest

from engine.model.scenario import RoutingPolicy
from engine.topology.generators import single_switch
from ui.document.document import ScenarioDocument
from ui.inspector import Inspector


@pytest.fixture
def inspector(qtbot):
    document = ScenarioDocument(single_switch(16, "dgx-h100", "sn5600"))
    widget = Inspector(document)
    qtbot.addWidget(widget)
    return widget


def choose(combo, text):
    """Pick the entry `text` as a user does (the combo's `activated`)."""
    index = combo.findText(text)
    assert index >= 0, text
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def test_the_hash_scope_shows_every_scope_and_the_scenarios_value(inspector):
    combo = inspector.hash_scope_combo
    assert [combo.itemText(i) for i in range(combo.count())] == list(RoutingPolicy.HASH_SCOPES)
    assert combo.currentText() == inspector.document.scenario.routing.hash_scope == "switch"


def test_choosing_a_hash_scope_is_an_undoable_edit(inspector):
    doc = inspector.document
    choose(inspector.hash_scope_combo, "tier")
    assert doc.scenario.routing.hash_scope == "tier"
    assert inspector.error_label.text() == ""
    doc.undo_stack.undo()
    assert doc.scenario.routing.hash_scope == "switch"
    assert inspector.hash_scope_combo.currentText() == "switch"


def test_an_unknown_hash_scope_from_a_file_is_shown_as_it_is(inspector):
    doc = inspector.document
    assert doc.set_field("routing.hash_scope", "vendor") is None
    assert inspector.hash_scope_combo.currentText() == "vendor"
    assert any(p.field == "hash_scope" for p in doc.problems)
