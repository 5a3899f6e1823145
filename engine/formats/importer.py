"""Import: a topology file (GraphML, or a CSV link list) into a grouped scenario, and a
traffic matrix (CSV ``src,dst,bytes[,start_s]`` or an htsim ``.cm``) into flows.

The file's kind is told by its suffix (``.graphml``/``.xml``, ``.csv``; for traffic
``.cm``, ``.csv``). Every refusal names the file and, where it has one, the line.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from engine.catalog.devices import Catalog, default_catalog
from engine.formats.graph import Flow
from engine.formats.graphml import read_graphml
from engine.formats.grouping import to_scenario
from engine.formats.htsim import read_cm
from engine.formats.lines import refuse
from engine.formats.linklist import graphml_link_list, read_link_csv
from engine.model.scenario import Scenario

TOPOLOGY_SUFFIXES = (".graphml", ".xml", ".csv")
TRAFFIC_SUFFIXES = (".cm", ".csv")


def read_file_text(path: Path) -> str:
    """The text of `path`, or a refusal naming it (missing, unreadable, not UTF-8)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise refuse(str(path), None, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise refuse(str(path), None, f"cannot read the file: {exc}") from None


def topology_from_text(
    text: str, source: str, catalog: Catalog | None = None, switch_model: str | None = None
) -> Scenario:
    """A grouped scenario from the text of a topology file named `source` (its suffix
    tells GraphML from CSV)."""
    suffix = Path(source).suffix.lower()
    if suffix not in TOPOLOGY_SUFFIXES:
        raise refuse(
            source, None, f"unknown topology file type {suffix or '(none)'!r}; use .graphml or .csv"
        )
    links = (
        read_link_csv(text, source)
        if suffix == ".csv"
        else graphml_link_list(read_graphml(text, source), source)
    )
    return to_scenario(links, catalog or default_catalog(), switch_model)


def import_topology(
    path: Path, catalog: Catalog | None = None, switch_model: str | None = None
) -> Scenario:
    """A grouped scenario from a GraphML or CSV link list file."""
    return topology_from_text(read_file_text(path), str(path), catalog, switch_model)


def traffic_from_text(text: str, source: str) -> list[Flow]:
    """The flows of a traffic matrix: an htsim ``.cm``, or CSV rows ``src,dst,bytes`` with an
    optional fourth column ``start_s`` (a first row that is not numbers is a header)."""
    suffix = Path(source).suffix.lower()
    if suffix == ".cm":
        return read_cm(text, source)[1]
    if suffix != ".csv":
        raise refuse(
            source, None, f"unknown traffic file type {suffix or '(none)'!r}; use .cm or .csv"
        )
    flows = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if len(cells) not in (3, 4):
            raise refuse(source, number, f"{len(cells)} columns; expected src,dst,bytes[,start_s]")
        if not flows and not cells[0].isdigit():
            continue  # the header
        flows.append(_traffic_row(cells, source, number))
    if not flows:
        raise refuse(source, None, "no flows: expected rows of src,dst,bytes")
    return flows


def _traffic_row(cells: list[str], source: str, number: int) -> Flow:
    names = ("src", "dst")
    ends = []
    for name, cell in zip(names, cells[:2], strict=True):
        if not cell.isdigit():
            raise refuse(source, number, f"{name} {cell!r} is not a GPU number (0, 1, ...)")
        ends.append(int(cell))
    try:
        size = float(cells[2])
        start = float(cells[3]) if len(cells) == 4 else 0.0
    except ValueError:
        raise refuse(source, number, "bytes and start_s must be numbers") from None
    if not (math.isfinite(size) and size > 0 and size.is_integer()):
        raise refuse(source, number, f"bytes {cells[2]!r} must be a positive whole number")
    if not (math.isfinite(start) and start >= 0):
        raise refuse(source, number, f"start_s {cells[3]!r} must be a time >= 0 in seconds")
    if ends[0] == ends[1]:
        raise refuse(source, number, f"a flow from GPU {ends[0]} to itself")
    return Flow(ends[0], ends[1], int(size), start)


def import_traffic(path: Path) -> list[Flow]:
    """The flows of a traffic matrix file (``.cm`` or ``.csv``)."""
    return traffic_from_text(read_file_text(path), str(path))
