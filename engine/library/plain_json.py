"""Engine results as plain JSON data, so they can be kept in the library.

Engine reports carry numpy arrays and scalars, tuples, sets and non-string keys; the
library stores cached results as JSON text, so they pass through `json_safe` first.
"""

from __future__ import annotations

from typing import Any


def json_safe(value: Any) -> Any:
    """`value` as plain JSON data: numpy arrays and tuples become lists, numpy scalars Python
    numbers, mapping keys strings, anything else unknown its ``str``.

    Engine reports carry numpy values; cached results are stored as JSON, so they pass
    through here first. Non-finite floats stay floats (Python's json reads them back).
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value if type(value) in (int, float) else _plain_number(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [json_safe(v) for v in items]
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, without importing numpy
    if callable(tolist):
        return json_safe(tolist())
    return str(value)


def _plain_number(value: int | float) -> int | float:
    """An int or float subclass (numpy.float64, IntEnum...) as the plain Python number."""
    return int(value) if isinstance(value, int) else float(value)
