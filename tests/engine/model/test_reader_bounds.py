"""The scenario reader refuses what no fabric can be, before anything is built, and never
raises anything but a `ScenarioError` naming the field (engine.model.limits)."""

from __future__ import annotations

import copy
import dataclasses
import json
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.model import scenario as model
from engine.model.errors import ScenarioError
from engine.model.limits import LIMITS
from engine.model.overrides import apply_override
from engine.model.scenario import from_json, to_json
from engine.model.validation import check_structure
from engine.presets.scenarios import load_preset

BASE = json.loads(to_json(load_preset("dgx-h100-ib-ndr-1k")))


def _numbers_in(tp: typing.Any) -> bool:
    """Whether a field type holds numbers (directly or in a list, tuple, dict, Optional)."""
    if tp in (int, float):
        return True
    return any(_numbers_in(a) for a in typing.get_args(tp) if a is not type(None))


def _dataclasses() -> list[type]:
    return [
        obj
        for obj in vars(model).values()
        if dataclasses.is_dataclass(obj) and obj.__module__ == model.__name__
    ]


def test_every_number_in_a_scenario_has_a_bound():
    unbounded = [
        f"{cls.__name__}.{name}"
        for cls in _dataclasses()
        for name, tp in typing.get_type_hints(cls).items()
        if _numbers_in(tp) and (cls.__name__, name) not in LIMITS
    ]
    assert unbounded == []


def _refusal(doc: dict) -> str:
    with pytest.raises(ScenarioError) as info:
        from_json(json.dumps(doc))
    return str(info.value)


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("groups", 0, "count"), 2**70, "groups[0].count"),
        (("groups", 0, "count"), 10**9, "groups[0].count"),
        (("bundles", 0, "links_per_pair"), 2**70, "bundles[0].links_per_pair"),
        (("bundles", 0, "length_m"), 1e308, "bundles[0].length_m"),
        (("routing", "flows_per_connection"), 2**70, "routing.flows_per_connection"),
        (("workload", "placement"), [0, 2**70], "workload.placement[1]"),
        (("workload", "training", "micro_batch"), 10**400, "workload.training.micro_batch"),
        (("workload", "training", "overrides"), {"layers": 1e30}, "training.overrides.layers"),
        (("fabric", "mtu_bytes"), 10**308, "fabric.mtu_bytes"),
        (("fabric", "switch_latency_ns"), 1e300, "fabric.switch_latency_ns"),
        (("metadata", "name"), "a\udc80b", "metadata.name"),
    ],
)
def test_a_value_beyond_its_bound_is_refused_by_name(path, value, field):
    doc = copy.deepcopy(BASE)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    message = _refusal(doc)
    assert field in message
    if not isinstance(value, str):
        assert "at most" in message


def test_nesting_a_thousand_deep_is_a_clear_refusal():
    text = '{"format": "fabriclab-scenario", "version": 1, "metadata": ' + "[" * 5000
    text += "]" * 5000 + "}"
    with pytest.raises(ScenarioError, match="nested too deeply"):
        from_json(text)


@pytest.mark.parametrize(
    ("path", "text", "field"),
    [
        ("groups.leaf.count", "1e12", "groups.leaf.count"),
        ("fabric.switch_latency_ns", "1e300", "fabric.switch_latency_ns"),
        ("workload.training.overrides.layers", "1e30", "workload.training.overrides"),
        ("metadata.name", "a\udc80", "metadata.name"),
    ],
)
def test_an_override_beyond_its_bound_is_refused(path, text, field):
    with pytest.raises(ScenarioError, match=field.replace(".", r"\.")):
        apply_override(load_preset("dgx-h100-ib-ndr-1k"), path, text)


def test_values_within_bounds_still_read_and_round_trip():
    scenario = load_preset("h100-roce-128k")
    assert from_json(to_json(scenario)) == scenario


# ---- fuzz: valid, or a ScenarioError whose problems each name a place -----------------------

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12),
    st.sampled_from([10**400, -(10**400), 1e308, "\udc80", "", "leaf", "spray", "server"]),
)
_json_value = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(doc, prefix=()):
    """Every path to a value inside `doc`."""
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _paths(value, (*prefix, i))


PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.sampled_from(PATHS), _json_value), min_size=1, max_size=3))
def test_a_damaged_scenario_is_read_or_refused_by_name(edits, catalog):
    doc = copy.deepcopy(BASE)
    for path, value in edits:
        target = doc
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit replaced what this path went through
    text = json.dumps(doc, allow_nan=True)
    try:
        scenario = from_json(text)
        problems = check_structure(scenario, catalog)
    except ScenarioError as exc:
        problems = exc.problems
        assert problems
    for problem in problems:
        assert problem.where and problem.message
        str(problem).encode("utf-8")  # printable on any terminal
