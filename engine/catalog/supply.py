"""Supply and openness of catalog parts: who makes each one, how many others could replace it.

An operator choosing a fabric weighs more than price and speed: whether a part has a second
source (an interchangeable part from another vendor: an 800G OSFP optic made by several module
makers, against an InfiniBand switch made by one), how long it takes to get (a public lead time
where one exists, otherwise "unknown", never a guess), and whether its interfaces follow an open
standard that several vendors implement. The catalog's top-level ``supply`` section holds this
per part id, each figure with its source or its assumption, as every other figure. A figure may
differ by technology (a ConnectX-7 has no second source on InfiniBand but several on RoCE): its
value is then an object keyed ``infiniband`` / ``roce``.

A part without a ``supply`` entry is not an error here (a part added later may not have one
yet); `Catalog.supply_of` answers ``None`` and the front ends say "no supply data".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.catalog.errors import CatalogError

SUPPLY_FIGURES = ("second_sources", "lead_time_weeks", "open_standard")
TECHNOLOGY_KEYS = ("infiniband", "roce")


@dataclass(frozen=True)
class Supply:
    """Supply facts of one catalog part; `figures` holds each figure's `Figure` (value and
    provenance) by name: ``second_sources``, ``lead_time_weeks``, ``open_standard``."""

    part_id: str
    vendor: str
    figures: dict[str, Any]

    def _value(self, name: str, technology: str) -> Any:
        value = self.figures[name].value
        if isinstance(value, dict):
            return value.get(technology)
        return value

    def second_sources(self, technology: str) -> int | None:
        """How many other vendors make a part that can replace this one on `technology`."""
        value = self._value("second_sources", technology)
        return None if value is None else int(value)

    def open_standard(self, technology: str) -> bool | None:
        """Whether the part's interfaces follow a standard several vendors implement."""
        value = self._value("open_standard", technology)
        return None if value is None else bool(value)

    def lead_time_text(self) -> str:
        """The public lead time as text ("36-52 weeks"), or "unknown" when none is known."""
        value = self.figures["lead_time_weeks"].value
        if value is None:
            return "unknown"
        low, high = value
        return f"{low:g} weeks" if low == high else f"{low:g}-{high:g} weeks"

    def provenance(self, name: str) -> str:
        """Where the figure `name` comes from (its source or its assumption)."""
        return self.figures[name].provenance()


def _check_value(name: str, value: Any, where: str) -> None:
    """Refuse a supply value of the wrong shape, naming the place."""
    if isinstance(value, dict) and name != "lead_time_weeks":
        unknown = sorted(set(value) - set(TECHNOLOGY_KEYS))
        if unknown:
            raise CatalogError(f"catalog {where}: unknown technology key {unknown[0]!r}")
        for key, item in value.items():
            _check_value(name, item, f"{where}.{key}")
        return
    if name == "second_sources":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CatalogError(f"catalog {where}: must be a whole number >= 0, not {value!r}")
    elif name == "open_standard":
        if not isinstance(value, bool):
            raise CatalogError(f"catalog {where}: must be true or false, not {value!r}")
    elif value is not None:
        ok = (
            isinstance(value, list)
            and len(value) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            and 0 <= value[0] <= value[1]
        )
        if not ok:
            raise CatalogError(
                f"catalog {where}: must be null (unknown) or [low, high] weeks, not {value!r}"
            )


def parse_supply(
    raw: Any, device_ids: set[str], parse_figures: Any, sources: dict[str, Any]
) -> dict[str, Supply]:
    """The ``supply`` section as `Supply` by part id; `CatalogError` names a malformed entry,
    an unknown part id, or a figure without a source or an assumption (`parse_figures` is
    the catalog's own figure parser)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CatalogError("catalog supply: must be a JSON object keyed by part id")
    supply = {}
    for part_id, entry in raw.items():
        where = f"supply.{part_id}"
        if part_id not in device_ids:
            raise CatalogError(f"catalog {where}: no device {part_id!r} in the catalog")
        if not isinstance(entry, dict):
            raise CatalogError(f"catalog {where}: must be an object")
        vendor = entry.get("vendor")
        if not isinstance(vendor, str) or not vendor:
            raise CatalogError(f"catalog {where}.vendor: must be non-empty text")
        missing = [name for name in SUPPLY_FIGURES if name not in entry]
        if missing:
            raise CatalogError(f"catalog {where}: missing {missing[0]!r}")
        unknown = sorted(set(entry) - {"vendor", *SUPPLY_FIGURES})
        if unknown:
            raise CatalogError(f"catalog {where}: unknown key {unknown[0]!r}")
        figures = parse_figures(where, {n: entry[n] for n in SUPPLY_FIGURES}, sources)
        for name, figure in figures.items():
            _check_value(name, figure.value, f"{where}.{name}")
        supply[part_id] = Supply(part_id, vendor, figures)
    return supply
