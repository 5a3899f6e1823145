"""The CLI's JSON on every preset is what was recorded (tests/golden/cases.py): the same
structure, texts and counts, floats to a few units in the last place."""

from __future__ import annotations

import json

import pytest

from tests.golden.cases import COMMANDS, PRESET_NAMES, differences, fixture_path, run_case


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("command", COMMANDS)
def test_cli_json_matches_the_recording(command: str, preset: str) -> None:
    expected = json.loads(fixture_path(command, preset).read_text(encoding="utf-8"))
    assert differences(json.loads(run_case(command, preset)), expected) == []


def test_differences_tell_a_rounding_from_a_change() -> None:
    recorded = {"busbw": 0.25000000000000006, "links": ["a", "b"], "n": 3}
    assert differences({"busbw": 0.25, "links": ["a", "b"], "n": 3}, recorded) == []
    assert differences({"busbw": 0.2500001, "links": ["a", "b"], "n": 3}, recorded)
    assert differences({"busbw": 0.25, "links": ["b", "a"], "n": 3}, recorded)
    assert differences({"busbw": 0.25, "links": ["a", "b"], "n": 4}, recorded)
    assert differences({"busbw": 0.25, "links": ["a", "b"]}, recorded)
