"""The open formats, as the front ends reach them: export a scenario's fabric and traffic
(ns-3 RDMA/SimAI, htsim, ASTRA-sim, GraphML), import a topology (GraphML, CSV link list)
as a grouped scenario, and read a traffic matrix (CSV, htsim ``.cm``).

Thin on purpose: the work is in `engine.formats`; this module names the calls and keeps the
front ends from reaching below the door (docs/formats.md describes every format).
"""

from __future__ import annotations

from pathlib import Path

from engine.analysis.astra_training import astra_training_layers
from engine.catalog.devices import Catalog, default_catalog
from engine.formats.export import FORMATS as EXPORT_FORMATS
from engine.formats.export import SUFFIXES as EXPORT_SUFFIXES
from engine.formats.export import export_texts, write_export
from engine.formats.graph import Flow
from engine.formats.importer import TOPOLOGY_SUFFIXES, TRAFFIC_SUFFIXES
from engine.formats.importer import import_topology as _import_topology
from engine.formats.importer import import_traffic as _import_traffic
from engine.model.scenario import Scenario

__all__ = [
    "EXPORT_FORMATS",
    "EXPORT_SUFFIXES",
    "TOPOLOGY_SUFFIXES",
    "TRAFFIC_SUFFIXES",
    "Flow",
    "export_fabric",
    "export_preview",
    "import_topology",
    "import_traffic",
]


def export_fabric(
    scenario: Scenario,
    fmt: str,
    out: str | Path,
    catalog: Catalog | None = None,
    simai: bool = False,
) -> list[Path]:
    """Write the scenario's expanded fabric and traffic in `fmt` (one of `EXPORT_FORMATS`)
    to `out` (a folder for ``ns3``, else a file or a folder to put it in); every file is
    read back and compared first. Returns the files written. For ``astra`` a training
    workload is written as its step's layers (`engine.analysis.astra_training`)."""
    catalog = catalog or default_catalog()
    training = _training(scenario, fmt, catalog)
    return write_export(scenario, fmt, Path(out), catalog, simai, training)


def export_preview(
    scenario: Scenario, fmt: str, catalog: Catalog | None = None, simai: bool = False
) -> dict[str, str]:
    """File name -> text of the export, without writing anything (a notebook's view)."""
    catalog = catalog or default_catalog()
    return export_texts(scenario, fmt, catalog, simai, _training(scenario, fmt, catalog))


def _training(scenario: Scenario, fmt: str, catalog: Catalog) -> tuple[str, list] | None:
    """ASTRA-sim's layered workload of a training scenario (None for anything else)."""
    if fmt != "astra" or scenario.workload.kind != "training":
        return None
    return astra_training_layers(scenario, catalog)


def import_topology(
    path: str | Path, catalog: Catalog | None = None, switch_model: str | None = None
) -> Scenario:
    """A grouped scenario from a GraphML file or a CSV link list (``node,port,node,port,
    rate``); `switch_model` names the switches' catalog model where the file does not."""
    return _import_topology(Path(path), catalog or default_catalog(), switch_model)


def import_traffic(path: str | Path) -> list[Flow]:
    """The flows of a traffic matrix: CSV ``src,dst,bytes[,start_s]`` or an htsim ``.cm``."""
    return _import_traffic(Path(path))
