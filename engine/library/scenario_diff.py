"""What changed between two scenarios, field by field.

The library's history and compare views show two versions side by side; `diff` lists the
fields that differ as dotted paths (lists of items with an ``id`` matched by id, so a moved
group is not reported as every group changing) with both values.
"""

from __future__ import annotations

from typing import Any

from engine.model.scenario import Scenario, to_dict


def diff(a: Scenario, b: Scenario) -> list[dict[str, Any]]:
    """Field-by-field differences of two scenarios as dotted paths with both values."""
    changes: list[dict[str, Any]] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y)):
                walk(x.get(key), y.get(key), f"{path}.{key}" if path else key)
        elif (
            isinstance(x, list)
            and isinstance(y, list)
            and all(isinstance(v, dict) and "id" in v for v in x + y)
        ):
            xs, ys = {v["id"]: v for v in x}, {v["id"]: v for v in y}
            for key in list(dict.fromkeys([*xs, *ys])):
                walk(xs.get(key), ys.get(key), f"{path}.{key}")
        elif x != y:
            changes.append({"path": path, "a": x, "b": y})

    walk(to_dict(a), to_dict(b), "")
    return changes
