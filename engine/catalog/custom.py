"""User-defined devices: servers, switches and NICs a scenario or a user catalog defines.

A user-defined entry is a plain JSON object, the same in a scenario (its ``devices`` list)
and in a user catalog file beside the library (`USER_CATALOG_NAME`)::

    {"id": "host-1x400", "kind": "server", "name": "1-GPU host", "vendor": "lab",
     "technology": "infiniband", "based_on": "dgx-h100", "note": "the ns-3 host",
     "fields": {"gpus_per_server": 1, "nics_per_server": 1, "price_usd": 40000}}

`based_on` (optional) names a catalog entry of the same kind whose fields (with their
sources) the entry starts from; `fields` then replaces or adds values, each recorded as an
assumption ("user-defined", with the entry's `note`) since no public source stands behind
it. Without `based_on` every field the engine needs must be given (`engine.catalog.schema`).

`merge_devices` checks the entries with the reader's checks (the same code that reads the
shipped catalog: finite numbers, text bounds, shapes) and the schema's, then returns a new
catalog: the shipped one plus the entries, marked `Device.user_defined`. A refusal is a
`DeviceEntryError` naming the entry (its index and id) and the field.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from engine.catalog.devices import Catalog, Device, Figure
from engine.catalog.errors import CatalogError
from engine.catalog.reader import check_document
from engine.catalog.schema import REQUIRED, check_device

USER_CATALOG_NAME = "user-catalog.json"
USER_CATALOG_FORMAT = "fabriclab-user-catalog"
ENTRY_KEYS = ("id", "kind", "name", "vendor", "technology", "based_on", "note", "fields")
TECHNOLOGY_VALUES = ("infiniband", "ethernet", "both")
_MERGED: OrderedDict[tuple[int, str], tuple[Catalog, Catalog]] = OrderedDict()
_MERGED_KEEP = 32


class DeviceEntryError(CatalogError):
    """A user-defined device the engine cannot use: `index` and `field` say where."""

    def __init__(self, index: int, device_id: str, field: str | None, message: str) -> None:
        self.index, self.device_id, self.field, self.message = index, device_id, field, message
        at = f" field {field!r}" if field else ""
        super().__init__(f"user-defined device {device_id!r} (devices[{index}]){at}: {message}")


def entries_key(entries: list[dict[str, Any]]) -> str:
    """A digest of the entries' content: the same entries give the same key."""
    text = json.dumps(entries, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _refuse(i: int, entry: dict[str, Any], field: str | None, message: str) -> DeviceEntryError:
    return DeviceEntryError(i, str(entry.get("id", "")), field, message)


def _check_shape(i: int, entry: Any) -> None:
    """The reader's own checks of one entry, in its catalog-document form."""
    if not isinstance(entry, dict):
        raise DeviceEntryError(i, "", None, "must be an object")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise _refuse(i, entry, None, f"unknown key {unknown[0]!r}; known: {', '.join(ENTRY_KEYS)}")
    fields = entry.get("fields", {})
    if not isinstance(fields, dict):
        raise _refuse(i, entry, "fields", "must be an object of field name to value")
    document = {
        "format": "fabriclab-catalog",
        "devices": [
            {
                **{
                    k: entry[k]
                    for k in ("id", "kind", "name", "vendor", "technology")
                    if k in entry
                },
                "fields": {name: {"value": value} for name, value in fields.items()},
            }
        ],
    }
    try:
        check_document(document)
    except CatalogError as exc:
        text = str(exc).removeprefix("catalog ").replace("devices[0].", "")
        raise _refuse(i, entry, None, text) from None
    for key in ("based_on", "note"):
        if not isinstance(entry.get(key, ""), str):
            raise _refuse(i, entry, key, "must be text")
    technology = entry.get("technology")
    if technology is not None and technology not in TECHNOLOGY_VALUES:
        raise _refuse(
            i, entry, "technology", f"{technology!r}; use {', '.join(TECHNOLOGY_VALUES)} or null"
        )


def _device(i: int, entry: dict[str, Any], devices: dict[str, Device]) -> Device:
    """One checked entry as a catalog `Device` (over its `based_on`, if any)."""
    _check_shape(i, entry)
    dev_id, kind = entry["id"], entry.get("kind")
    if kind not in REQUIRED:
        raise _refuse(i, entry, "kind", f"{kind!r}; a user may define {', '.join(REQUIRED)}")
    if dev_id in devices:
        owner = (
            "another user-defined device" if devices[dev_id].user_defined else "a catalog device"
        )
        raise _refuse(i, entry, "id", f"{dev_id!r} is already {owner}; choose another id")
    figures: dict[str, Figure] = {}
    technology, vendor = entry.get("technology"), entry.get("vendor", "")
    based_on = entry.get("based_on", "")
    if based_on:
        base = devices.get(based_on)
        if base is None or base.kind != kind:
            known = ", ".join(d.id for d in devices.values() if d.kind == kind)
            raise _refuse(i, entry, "based_on", f"no {kind} {based_on!r}; known: {known}")
        figures.update(base.fields)
        technology = entry.get("technology", base.technology)
        vendor = vendor or base.vendor
    note = entry.get("note", "")
    assumption = "user-defined" + (f": {note}" if note else " (no source given)")
    for name, value in entry.get("fields", {}).items():
        figures[name] = Figure(value=value, source=None, assumption=assumption)
    kinds = {d.id: d.kind for d in devices.values()}
    try:
        check_device(dev_id, kind, {n: f.value for n, f in figures.items()}, kinds, "x")
    except CatalogError as exc:
        field, _, message = str(exc).removeprefix("x field ").partition(": ")
        raise _refuse(i, entry, field.strip("'"), message) from None
    return Device(
        id=dev_id,
        kind=kind,
        name=entry.get("name") or dev_id,
        vendor=vendor or "user-defined",
        technology=technology,
        fields=figures,
        user_defined=True,
    )


def merge_devices(catalog: Catalog, entries: list[dict[str, Any]]) -> Catalog:
    """`catalog` (its shipped part) with the user-defined `entries` added; the same merge
    is answered from memory, and merging the entries a catalog already holds returns it."""
    shipped = catalog.shipped or catalog
    if not entries:
        return shipped
    key = entries_key(entries)
    if catalog.user_key == key:
        return catalog
    known = _MERGED.get((id(shipped), key))
    if known is not None and known[0] is shipped:
        _MERGED.move_to_end((id(shipped), key))
        return known[1]
    devices = dict(shipped.devices)
    for i, entry in enumerate(entries):
        device = _device(i, entry, devices)
        devices[device.id] = device
    merged = Catalog(
        devices,
        shipped.technologies,
        shipped.sources,
        shipped.updated,
        user_key=key,
        shipped=shipped,
        supply=shipped.supply,
    )
    _MERGED[(id(shipped), key)] = (shipped, merged)
    while len(_MERGED) > _MERGED_KEEP:
        _MERGED.popitem(last=False)
    return merged


def user_catalog_path(library_path: Path) -> Path:
    """The user catalog file beside a library file."""
    return Path(library_path).parent / USER_CATALOG_NAME


def read_user_catalog(path: Path, catalog: Catalog) -> list[dict[str, Any]]:
    """The entries of the user catalog at `path` (none when there is no file), each checked
    against `catalog`; `CatalogError` names the file and the entry."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CatalogError(f"user catalog {path}: cannot be read ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != USER_CATALOG_FORMAT:
        raise CatalogError(f"user catalog {path}: missing format {USER_CATALOG_FORMAT!r}")
    entries = data.get("devices", [])
    if not isinstance(entries, list):
        raise CatalogError(f"user catalog {path}: 'devices' must be a list")
    try:
        merge_devices(catalog, entries)
    except CatalogError as exc:
        raise CatalogError(f"user catalog {path}: {exc}") from None
    return entries


def write_user_catalog(path: Path, entries: list[dict[str, Any]]) -> None:
    """Write `entries` as the user catalog at `path` (the directory is made if needed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"format": USER_CATALOG_FORMAT, "version": 1, "devices": entries}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
