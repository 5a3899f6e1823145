"""The device catalog: GPUs, servers, switches, NICs, cables and optics, with sources.

Every figure the engine uses by default comes from ``resources/catalog.json``, where each
value carries the key of a public source (title, URL, publication date, confidence grade) or
an explicit assumption saying why the value is reasonable. Loading refuses a figure that has
neither, so an unsourced number cannot slip in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.catalog.errors import CatalogError
from engine.catalog.reader import check_document, read_catalog_text
from engine.catalog.supply import Supply, parse_supply
from engine.runtime.resources import resource_path

DEVICE_KINDS = ("gpu", "server", "switch", "nic", "cable", "transceiver", "storage")


@dataclass(frozen=True)
class Source:
    """A public document a figure was taken from."""

    key: str
    title: str
    url: str
    published: str
    grade: str


@dataclass(frozen=True)
class Figure:
    """One catalog value with where it came from (a source, an assumption, or both)."""

    value: Any
    source: Source | None
    assumption: str | None = None
    note: str | None = None

    def provenance(self) -> str:
        """A one-line human-readable origin of this value."""
        parts = []
        if self.source is not None:
            s = self.source
            parts.append(f"{s.title} ({s.published}, grade {s.grade}) {s.url}")
        if self.assumption:
            parts.append(f"assumption: {self.assumption}")
        return "; ".join(parts)


@dataclass(frozen=True)
class Device:
    """A catalog entry: its identity and its sourced fields."""

    id: str
    kind: str
    name: str
    vendor: str
    technology: str | None
    fields: dict[str, Figure] = field(default_factory=dict)
    user_defined: bool = False  # defined by a scenario or a user catalog (engine.catalog.custom)

    def has(self, name: str) -> bool:
        """Whether this device defines the field `name`."""
        return name in self.fields

    def value(self, name: str, overrides: dict[str, Any] | None = None) -> Any:
        """The value of field `name`, or the override for it when one is given."""
        if overrides and name in overrides:
            return overrides[name]
        try:
            return self.fields[name].value
        except KeyError:
            raise CatalogError(f"catalog entry {self.id!r} has no field {name!r}") from None


@dataclass(frozen=True)
class Catalog:
    """All devices and technology profiles, looked up by id."""

    devices: dict[str, Device]
    technologies: dict[str, Device]
    sources: dict[str, Source]
    updated: str = ""
    user_key: str = ""  # the digest of the user-defined devices merged in ("" for none)
    shipped: Catalog | None = None  # the catalog they were merged over (None: this one)
    supply: dict[str, Supply] = field(default_factory=dict)

    def get(self, device_id: str, kind: str | None = None) -> Device:
        """The device `device_id`; `KeyError` when unknown or of another kind."""
        device = self.devices.get(device_id)
        if device is None or (kind is not None and device.kind != kind):
            raise KeyError(device_id)
        return device

    def of_kind(self, kind: str) -> list[Device]:
        """Devices of one kind, in catalog order."""
        return [d for d in self.devices.values() if d.kind == kind]

    def supply_of(self, part_id: str) -> Supply | None:
        """The supply facts of part `part_id` (vendor, second sources, lead time, openness),
        or None when the catalog has none for it."""
        return self.supply.get(part_id)

    def technology(self, tech_id: str) -> Device:
        """The technology profile (``infiniband`` or ``roce``)."""
        try:
            return self.technologies[tech_id]
        except KeyError:
            raise KeyError(tech_id) from None

    def switch_port_modes(self, switch_id: str) -> dict[float, int]:
        """Logical ports of a switch at each supported speed (Gb/s → count)."""
        modes = self.get(switch_id, "switch").value("port_modes")
        return {float(k): int(v) for k, v in modes.items()}


def _parse_fields(owner: str, raw: Any, sources: dict[str, Source]) -> dict[str, Figure]:
    if not isinstance(raw, dict):
        raise CatalogError(f"catalog entry {owner!r}: 'fields' must be an object")
    figures = {}
    for name, spec in raw.items():
        where = f"catalog entry {owner!r} field {name!r}"
        if not isinstance(spec, dict) or "value" not in spec:
            raise CatalogError(f"{where}: expected an object with a 'value'")
        key = spec.get("source")
        assumption = spec.get("assumption")
        if key is None and not assumption:
            raise CatalogError(f"{where}: has neither a source nor an assumption")
        if key is not None and key not in sources:
            raise CatalogError(f"{where}: unknown source key {key!r}")
        figures[name] = Figure(
            value=spec["value"],
            source=sources.get(key) if key is not None else None,
            assumption=assumption,
            note=spec.get("note"),
        )
    return figures


def parse_catalog(data: Any) -> Catalog:
    """A `Catalog` from the decoded JSON document; `CatalogError` says what is wrong (the
    reading boundary, `engine.catalog.reader`, checks its shape and values first)."""
    check_document(data)
    sources = {}
    for key, s in data.get("sources", {}).items():
        try:
            sources[key] = Source(key, s["title"], s["url"], s["published"], s["grade"])
        except (KeyError, TypeError):
            raise CatalogError(
                f"catalog source {key!r} lacks title, url, published or grade"
            ) from None
    devices: dict[str, Device] = {}
    for entry in data.get("devices", []):
        dev_id = entry.get("id")
        if not dev_id or entry.get("kind") not in DEVICE_KINDS:
            raise CatalogError(f"catalog device {dev_id!r}: missing id or unknown kind")
        if dev_id in devices:
            raise CatalogError(f"catalog device {dev_id!r} is listed twice")
        devices[dev_id] = Device(
            id=dev_id,
            kind=entry["kind"],
            name=entry.get("name", dev_id),
            vendor=entry.get("vendor", ""),
            technology=entry.get("technology"),
            fields=_parse_fields(dev_id, entry.get("fields", {}), sources),
        )
    technologies = {}
    for entry in data.get("technologies", []):
        tech_id = entry["id"]
        if tech_id in technologies:
            raise CatalogError(f"catalog technology {tech_id!r} is listed twice")
        technologies[tech_id] = Device(
            id=tech_id,
            kind="technology",
            name=entry.get("name", tech_id),
            vendor="",
            technology=tech_id,
            fields=_parse_fields(tech_id, entry.get("fields", {}), sources),
        )
    supply = parse_supply(data.get("supply"), set(devices), _parse_fields, sources)
    return Catalog(devices, technologies, sources, data.get("updated", ""), supply=supply)


def load_catalog_file(path: Path) -> Catalog:
    """A catalog read from `path`; `CatalogError` for a missing, malformed or out-of-bounds
    file, naming the place."""
    return parse_catalog(read_catalog_text(path))


@functools.cache
def default_catalog() -> Catalog:
    """The shipped catalog (read once per process)."""
    return load_catalog_file(resource_path("catalog.json"))
