"""Size text as the CLI and the scenario read it: units, ranges, factors, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.errors import ScenarioError
from engine.model.scenario import Workload
from engine.model.sizes import MAX_POINTS, check_sizes, curve_sizes, parse_size, parse_sizes


def test_units_are_binary_as_nccl_tests_prints_them():
    assert parse_size("8") == 8
    assert parse_size("64K") == 64 * 2**10
    assert parse_size("8GiB") == parse_size("8g") == 8 * 2**30


def test_ranges_step_by_the_factor_and_a_third_part_sets_it():
    assert list(parse_sizes("1K:8K")) == [1024, 2048, 4096, 8192]
    assert list(parse_sizes("1K:16K:4")) == [1024, 4096, 16384]
    assert list(parse_sizes("8G:8G")) == [8 * 2**30]


def test_the_curve_keeps_the_default_when_empty_and_steps_by_four():
    default = np.array([1.0, 2.0])
    assert curve_sizes("", default) is default
    assert list(curve_sizes("1M:64M", default)) == [2**20, 2**22, 2**24, 2**26]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1M:lots", "lots"),
        ("8G:1M", "below"),
        ("1K:1M:1", "factor"),
        ("1:1:2:3", "MIN:MAX"),
        (f"1:{2**40}:1.1", f"at most {MAX_POINTS}"),
    ],
)
def test_bad_text_is_named_in_the_workload(text, words):
    problems = check_sizes(Workload(sizes=text))
    assert len(problems) == 1
    assert problems[0].where == "workload" and problems[0].field == "sizes"
    assert words in problems[0].message
    with pytest.raises(ScenarioError):
        curve_sizes(text, np.zeros(0))


def test_a_message_below_one_byte_is_named():
    (problem,) = check_sizes(Workload(message_bytes=0.5))
    assert problem.field == "message_bytes"
