"""The catalog's reading boundary: any damage is a `CatalogError` that names its place."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.catalog.devices import Catalog, load_catalog_file, parse_catalog
from engine.catalog.errors import CatalogError
from engine.catalog.reader import MAX_DEPTH, parse_catalog_text
from engine.runtime.resources import resource_path

SHIPPED_TEXT = resource_path("catalog.json").read_text(encoding="utf-8")


def shipped() -> dict[str, Any]:
    return json.loads(SHIPPED_TEXT)


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Every place in a JSON document (keys and indices from the root)."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


PLACES = [p for p in _paths(shipped()) if p]

hostile_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["\ud800", "x" * 100_001, "", "infiniband", "switch"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _replace(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PLACES), hostile_values)
def test_any_damaged_place_is_a_catalog_error_or_a_catalog(place: tuple, value: Any) -> None:
    """One value anywhere replaced by anything JSON (or Python's NaN) makes a catalog or a
    clear refusal, never another exception."""
    try:
        catalog = parse_catalog(_replace(shipped(), place, value))
    except CatalogError as exc:
        assert str(exc).startswith(("catalog", "not a FabricLab catalog"))
    else:
        assert isinstance(catalog, Catalog)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=len(SHIPPED_TEXT) - 1), st.binary(max_size=8))
def test_damaged_bytes_are_a_catalog_error_or_a_catalog(tmp_path_factory, at: int, junk: bytes):
    raw = SHIPPED_TEXT.encode("utf-8")
    path = Path(tmp_path_factory.mktemp("cat")) / "catalog.json"
    path.write_bytes(raw[:at] + junk + raw[at + len(junk) :])
    try:
        catalog = load_catalog_file(path)
    except CatalogError as exc:
        assert str(exc).startswith(("catalog", "not a FabricLab catalog"))
    else:
        assert isinstance(catalog, Catalog)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "fabriclab-catalog", "sources": {"a": NaN}}', "NaN is not a number"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"format": "fabriclab-catalog", "devices": {}}', "catalog devices: must be a JSON list"),
    ],
)
def test_refusals_say_what_and_where(text: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog_text(text)


def test_the_offending_field_is_named_by_its_path() -> None:
    doc = shipped()
    doc["devices"][3]["fields"]["latency_ns"] = {"value": 1e300, "assumption": "x"}
    with pytest.raises(CatalogError, match=r"devices\[3\]\.fields\.latency_ns\.value: 1e\+300"):
        parse_catalog(doc)
    doc = shipped()
    doc["devices"][0]["fields"]["port_modes"] = {"value": _nest(MAX_DEPTH + 1), "assumption": "x"}
    with pytest.raises(CatalogError, match="nested deeper"):
        parse_catalog(doc)


def test_a_file_that_is_not_utf8_or_too_large_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(SHIPPED_TEXT.replace("NVIDIA", "NVIDIA\xe9").encode("latin-1"))
    with pytest.raises(CatalogError, match="not UTF-8"):
        load_catalog_file(bad)
    with pytest.raises(CatalogError, match="not a regular file"):
        load_catalog_file(tmp_path)
    with pytest.raises(CatalogError, match="cannot read catalog"):
        load_catalog_file(tmp_path / "missing.json")


def test_the_shipped_catalog_passes_and_its_numbers_are_finite() -> None:
    catalog = load_catalog_file(resource_path("catalog.json"))
    for device in [*catalog.devices.values(), *catalog.technologies.values()]:
        for figure in device.fields.values():
            if isinstance(figure.value, float):
                assert math.isfinite(figure.value)


def _nest(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"k": value}
    return value
