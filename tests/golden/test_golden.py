"""The CLI's JSON on every preset is exactly what was recorded (tests/golden/cases.py)."""

from __future__ import annotations

import pytest

from tests.golden.cases import COMMANDS, PRESET_NAMES, fixture_path, run_case


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("command", COMMANDS)
def test_cli_json_matches_the_recording(command: str, preset: str) -> None:
    expected = fixture_path(command, preset).read_text(encoding="utf-8")
    assert run_case(command, preset) == expected
