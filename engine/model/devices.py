"""A scenario's own catalog entries: the `CustomDevice` it carries, and its JSON values.

A scenario may define servers, switches and NICs the shipped catalog lacks (a 1-GPU, 1-NIC
host as packet simulators use, a switch with another radix). They are saved inside the
scenario, so a library file shared with a colleague carries them; the engine merges them
over the shipped catalog for that scenario only (`engine.model.catalogs.scenario_catalog`).
The entry's form is the one `engine.catalog.custom` documents (also a user catalog's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from engine.model.errors import Problem, ScenarioError

MAX_VALUE_DEPTH = 4  # a figure is a number, text, a flag, a list of speeds or speed -> ports
MAX_MAGNITUDE = 1e18  # the catalog reader's bound: past any price, rate, size or time


@dataclass
class CustomDevice:
    """A user-defined catalog entry: `kind` ``server``, ``switch`` or ``nic``; `fields`
    maps catalog field names to values (over those of `based_on`, a catalog entry of the
    same kind, when given); `note` says where the values come from."""

    id: str
    kind: str
    name: str = ""
    vendor: str = ""
    technology: str | None = None
    based_on: str = ""
    note: str = ""
    fields: dict[str, Any] = field(default_factory=dict)

    def entry(self) -> dict[str, Any]:
        """The entry as `engine.catalog.custom` reads it (unset keys left out)."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind}
        for key in ("name", "vendor", "technology", "based_on", "note"):
            value = getattr(self, key)
            if value:
                out[key] = value
        out["fields"] = dict(self.fields)
        return out

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> CustomDevice:
        """The device an entry of a user catalog describes (keys as in `entry`)."""
        return cls(
            id=str(entry.get("id", "")),
            kind=str(entry.get("kind", "")),
            name=str(entry.get("name", "")),
            vendor=str(entry.get("vendor", "")),
            technology=entry.get("technology"),
            based_on=str(entry.get("based_on", "")),
            note=str(entry.get("note", "")),
            fields=dict(entry.get("fields", {})),
        )


def json_value(value: Any, path: str, depth: int = 0) -> Any:
    """`value` if it is a catalog figure's JSON value (finite numbers of physical size,
    text, flags, null, and lists or objects of them, shallow); else a `ScenarioError`."""
    if depth > MAX_VALUE_DEPTH:
        raise ScenarioError(Problem(path, f"nested deeper than {MAX_VALUE_DEPTH} levels"))
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            raise ScenarioError(Problem(path, f"{value!r} is not a finite figure"))
        return value
    if isinstance(value, list):
        return [json_value(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): json_value(v, f"{path}.{k}", depth + 1) for k, v in value.items()}
    raise ScenarioError(
        Problem(path, f"expected a number, text, true/false or a list, not {value!r}")
    )
