"""Dotted-path overrides: the what-if mechanism of ``--set``, of sweeps and of the GUI's edits.

A path names a field of the scenario (``routing.mode``, ``transport.ecn_kmin_bytes``) and picks
list elements by id or position; the text is read as the field's type, within its bounds.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import types
import typing
from typing import Any

from engine.model.limits import limit_of
from engine.model.scenario import Scenario, _bounded, _convert, _fail, _hints, _text


def _parse_text(text: str, tp: Any, path: str) -> Any:
    """A command-line value for a field of type `tp`."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if text.lower() in ("none", "null", "default", ""):
            return None
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    try:
        if tp is bool:
            lowered = text.lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            raise ValueError
        if tp is int:
            try:
                return int(text)
            except ValueError:
                value = float(text)  # "1e3" is a whole number too
                if not value.is_integer():
                    raise
                return int(value)
        if tp is float:
            value = float(text)
            if not math.isfinite(value):
                raise ValueError
            return value
        if tp is str:
            return text
        return _convert(json.loads(text), tp, path)
    except (ValueError, json.JSONDecodeError):
        name = getattr(tp, "__name__", str(tp))
        raise _fail(path, f"cannot read {text!r} as {name}") from None


def _field_type(obj: Any, name: str, path: str) -> Any:
    if not dataclasses.is_dataclass(obj):
        parent = path.rsplit(".", 1)[0]
        raise _fail(path, f"{parent} is a plain value; it has no field {name!r}")
    hints = _hints(type(obj))
    if name not in hints:
        known = ", ".join(f.name for f in dataclasses.fields(obj))
        raise _fail(path, f"no field {name!r} here; known: {known}")
    return hints[name]


def _select(items: list[Any], key: str, path: str) -> Any:
    for item in items:
        if getattr(item, "id", None) == key:
            return item
    if key.isdigit() and int(key) < len(items):
        return items[int(key)]
    ids = ", ".join(str(getattr(i, "id", n)) for n, i in enumerate(items))
    raise _fail(path, f"no element {key!r}; have: {ids or 'none'}")


def apply_override(scenario: Scenario, path: str, text: str) -> Scenario:
    """A copy of `scenario` with the field at dotted `path` set from the text `text`.

    Paths name fields (``routing.mode``, ``fabric.switch_latency_ns``) and pick list elements
    by id or position (``groups.leaf.count``, ``bundles.0.speed_gbps``). Overriding a dict
    field entry works too (``groups.leaf.overrides.latency_ns``).
    """
    parts = [p for p in path.split(".") if p]
    if not parts:
        raise _fail("--set", "empty path")
    result = copy.deepcopy(scenario)
    obj: Any = result
    walked = ""
    i = 0
    while i < len(parts) - 1:
        name = parts[i]
        walked = f"{walked}.{name}" if walked else name
        if isinstance(obj, dict):
            raise _fail(walked, "cannot descend into a value")
        _field_type(obj, name, walked)
        value = getattr(obj, name)
        if isinstance(value, list):
            i += 1
            walked = f"{walked}.{parts[i]}"
            if i == len(parts) - 1:
                raise _fail(walked, "a whole element cannot be set; name one of its fields")
            value = _select(value, parts[i], walked)
        elif isinstance(value, dict) and i + 1 == len(parts) - 1:
            key = parts[-1]
            limit = limit_of(type(obj).__name__, name)
            value[key] = _bounded(_parse_text(text, float, f"{walked}.{key}"), limit, walked)
            return result
        obj = value
        i += 1
    name = parts[-1]
    full = f"{walked}.{name}" if walked else name
    tp = _field_type(obj, name, full)
    parsed = _parse_text(text, tp, full)
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        parsed = _bounded(parsed, limit_of(type(obj).__name__, name), full)
    elif isinstance(parsed, str):
        parsed = _text(parsed, full)
    setattr(obj, name, parsed)
    return result
