"""The catalog's reading boundary: bytes to a checked JSON document, or a `CatalogError`.

Every catalog (the shipped one today, user catalogs beside a library later) passes here
before anything is built from it, so a damaged or hostile file is refused with the place
it goes wrong (`devices[3].fields.latency_ns.value`, `supply.qm9700.second_sources`) and the bound it breaks, never with
another exception: the size of the file, strict UTF-8, nesting depth, non-finite numbers
(JSON's ``NaN`` and ``Infinity``), numbers past any physical figure, text past a short
book, lone surrogates, and the shape of every section the catalog parser reads.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from engine.catalog.errors import CatalogError

MAX_FILE_BYTES = 64 * 2**20  # the shipped catalog is ~100 KiB; a thousand times that is no catalog
MAX_DEPTH = 8  # a figure's value nests at most 3 deep (port modes per speed)
MAX_MAGNITUDE = 1e18  # past any price, rate, size or time a device has, in any unit
MAX_TEXT_CHARS = 100_000  # a title or note longer than a short book is not one
SECTIONS = {"sources": dict, "devices": list, "technologies": list, "supply": dict}
SOURCE_KEYS = ("title", "url", "published", "grade")
FIGURE_KEYS = frozenset({"value", "source", "assumption", "note"})


def read_catalog_text(path: Path) -> Any:
    """The decoded JSON document of the catalog file at `path`, checked by `check_document`."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise CatalogError(f"catalog {path} is not a regular file")
        if size > MAX_FILE_BYTES:
            raise CatalogError(
                f"catalog {path} is {size:,} bytes, over the {MAX_FILE_BYTES:,} a catalog may have"
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogError(f"cannot read catalog {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"catalog {path} is not UTF-8 text (byte {exc.start})") from None
    return parse_catalog_text(text, str(path))


def _no_constant(name: str) -> float:
    raise ValueError(name)


def parse_catalog_text(text: str, where: str = "catalog") -> Any:
    """The decoded and checked JSON document of catalog `text` (`where` names it)."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise CatalogError(
            f"catalog {where} is not valid JSON: {exc.msg} line {exc.lineno}"
        ) from None
    except ValueError as exc:  # NaN, Infinity, -Infinity: no figure is one
        raise CatalogError(f"catalog {where}: {exc} is not a number a catalog may hold") from None
    except RecursionError:
        raise CatalogError(f"catalog {where} is nested too deeply to be a catalog") from None
    check_document(data)
    return data


def check_document(data: Any) -> None:
    """Refuse a decoded catalog whose shape or values the parser could not take, naming
    the dotted path of the first offence."""
    if not isinstance(data, dict) or data.get("format") != "fabriclab-catalog":
        raise CatalogError("not a FabricLab catalog (missing format 'fabriclab-catalog')")
    _check_value(data, "", 0)
    for name, kind in SECTIONS.items():
        if name in data and not isinstance(data[name], kind):
            raise CatalogError(f"catalog {name}: must be a JSON {_json_name(kind)}")
    for key, source in data.get("sources", {}).items():
        if not isinstance(source, dict):
            raise CatalogError(f"catalog sources.{key}: must be an object")
        for field in SOURCE_KEYS:
            if not isinstance(source.get(field), str):
                raise CatalogError(f"catalog sources.{key}.{field}: must be text")
    for section in ("devices", "technologies"):
        for i, entry in enumerate(data.get(section, [])):
            _check_entry(entry, f"{section}[{i}]")
    for part_id, entry in data.get("supply", {}).items():
        if not isinstance(entry, dict):
            raise CatalogError(f"catalog supply.{part_id}: must be an object")
        if "vendor" in entry and not isinstance(entry["vendor"], str):
            raise CatalogError(f"catalog supply.{part_id}.vendor: must be text")
        _check_figures({k: v for k, v in entry.items() if k != "vendor"}, f"supply.{part_id}")


def _check_entry(entry: Any, path: str) -> None:
    if not isinstance(entry, dict):
        raise CatalogError(f"catalog {path}: must be an object")
    if not isinstance(entry.get("id"), str) or not entry["id"]:
        raise CatalogError(f"catalog {path}.id: must be non-empty text")
    for key in ("kind", "name", "vendor"):
        if key in entry and not isinstance(entry[key], str):
            raise CatalogError(f"catalog {path}.{key}: must be text")
    if entry.get("technology") is not None and not isinstance(entry["technology"], str):
        raise CatalogError(f"catalog {path}.technology: must be text or null")
    fields = entry.get("fields", {})
    if not isinstance(fields, dict):
        raise CatalogError(f"catalog {path}.fields: must be an object")
    _check_figures(fields, f"{path}.fields")


def _check_figures(fields: dict[str, Any], path: str) -> None:
    """Each figure an object of known keys whose source, assumption and note are text."""
    for name, spec in fields.items():
        where = f"{path}.{name}"
        if not isinstance(spec, dict):
            raise CatalogError(f"catalog {where}: must be an object with a 'value'")
        unknown = sorted(set(spec) - FIGURE_KEYS)
        if unknown:
            raise CatalogError(f"catalog {where}: unknown key {unknown[0]!r}")
        for key in ("source", "assumption", "note"):
            if spec.get(key) is not None and not isinstance(spec[key], str):
                raise CatalogError(f"catalog {where}.{key}: must be text")


def _check_value(value: Any, path: str, depth: int) -> None:
    """Bounded depth, finite numbers of physical size, text without lone surrogates."""
    if depth > MAX_DEPTH:
        raise CatalogError(f"catalog {path or 'document'}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            raise CatalogError(f"catalog {path}: {_short(value)} is past {MAX_MAGNITUDE:g}")
    elif isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, f"{path} (a key)")
            _check_value(item, f"{path}.{key}" if path else key, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_value(item, f"{path}[{i}]", depth + 1)


def _check_text(text: str, path: str) -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise CatalogError(
            f"catalog {path}: text of {len(text):,} characters, over {MAX_TEXT_CHARS:,}"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise CatalogError(f"catalog {path}: text with a lone surrogate (not Unicode)") from None


def _short(value: float) -> str:
    text = repr(value)
    return text if len(text) <= 24 else f"a number of {len(text)} digits"


def _json_name(kind: type) -> str:
    return "object" if kind is dict else "list"
