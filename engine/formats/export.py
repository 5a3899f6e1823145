"""Export a scenario to an open format, each file re-read and compared before it is kept.

`export_texts` gives the files' names and text; `write_export` puts them on disk. The
formats: ``ns3`` (topology.txt and flow.txt, a folder), ``htsim`` (a ``.cm`` connection
matrix), ``astra`` (ASTRA-sim's analytical network YAML) and ``graphml``. A file that does
not read back as what was meant to be written is a bug, raised as such rather than saved.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from engine.catalog.devices import Catalog
from engine.formats import astra, graphml, htsim, ns3
from engine.formats.astra_workload import (
    COLLECTIVES,
    Layer,
    read_layers,
    read_micro,
    write_layers,
    write_micro,
)
from engine.formats.graph import FabricGraph, Flow, fabric_graph, workload_flows
from engine.formats.htsim_topology import (
    fat_tree_params,
    read_fat_tree_topo,
    switch_counts,
    write_fat_tree_topo,
)
from engine.formats.lines import refuse
from engine.formats.steps import collective_steps
from engine.model.catalogs import scenario_catalog
from engine.model.scenario import Scenario
from engine.topology.expand import expand

FORMATS = ("ns3", "htsim", "astra", "graphml")
SUFFIXES = {"htsim": ".cm", "astra": ".yml", "graphml": ".graphml"}
SECOND_SUFFIX = {"htsim": ".topo", "astra": ".workload.txt"}  # the file beside OUT


class RoundTripError(AssertionError):
    """An exported file did not read back as what was written: a bug in an exporter."""


def export_texts(
    scenario: Scenario,
    fmt: str,
    catalog: Catalog | None = None,
    simai: bool = False,
    training: tuple[str, list[Layer]] | None = None,
) -> dict[str, str]:
    """File name -> text of `scenario` in format `fmt` (one of `FORMATS`), checked by
    reading it back; `simai` writes the ns-3 topology with SimAI's wider first line.
    `training` (the parallelism and layers of a training step, `engine.analysis` makes
    them) is ASTRA-sim's workload in place of the collective's."""
    if fmt not in FORMATS:
        raise refuse(
            "--format", None, f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"
        )
    fabric = expand(scenario, catalog)
    graph = fabric_graph(fabric)
    steps: list[list[Flow]] = []
    if scenario.workload.kind == "collective":
        algorithm, steps = collective_steps(fabric)
        flows = steps[0] if steps else []
    else:
        flows = workload_flows(fabric)
    if fmt == "htsim" and steps:
        w = scenario.workload
        note = (
            f"{algorithm} {w.op} of {w.message_bytes:.0f} bytes: {len(steps)} steps, each "
            "started by a barrier on the step before"
        )
        text = htsim.write_dag(steps, len(graph.hosts), graph, note)
        _check_steps(htsim.dag_steps(htsim.read_cm_dag(text)), steps)
        files = {"traffic.cm": text}
        _add_fat_tree(files, scenario, fabric, catalog, graph)
    elif fmt == "ns3":
        files = {
            "topology.txt": ns3.write_topology(graph, simai),
            "flow.txt": ns3.write_flows(flows),
        }
        _check_ns3(files, graph, flows)
    elif fmt == "htsim":
        text = htsim.write_cm(flows, len(graph.hosts), graph)
        _check_flows(htsim.read_cm(text)[1], flows, "htsim")
        files = {"traffic.cm": text}
        _add_fat_tree(files, scenario, fabric, catalog, graph)
    elif fmt == "astra":
        rate = float(np.max(fabric.gpu_line_rate)) if fabric.n_gpus else 0.0
        config = astra.network_config(graph, rate)
        text = astra.write_network_yaml(config, graph)
        if astra.read_network_yaml(text) != config:
            raise RoundTripError("the ASTRA-sim network YAML did not read back as written")
        files = {"network.yml": text}
        w = scenario.workload
        size = round(w.message_bytes)
        workload = write_micro(w.op, size)
        if training is not None:
            files["workload.txt"] = write_layers(*training)
            if read_layers(files["workload.txt"]) != training:
                raise RoundTripError("the ASTRA-sim training workload did not read back")
        elif workload is not None:
            if read_micro(workload) != [("collective", COLLECTIVES[w.op], size)]:
                raise RoundTripError("the ASTRA-sim workload did not read back as written")
            files["workload.txt"] = workload
    else:
        text = graphml.write_graphml(graph)
        _check_graphml(graphml.read_graphml(text), graph)
        files = {"fabric.graphml": text}
    return files


def write_export(
    scenario: Scenario,
    fmt: str,
    out: Path,
    catalog: Catalog | None = None,
    simai: bool = False,
    training: tuple[str, list[Layer]] | None = None,
) -> list[Path]:
    """Write `scenario` in format `fmt` to `out`; returns the files written.

    ``ns3`` writes two files into the folder `out` (created if missing). The others write
    one file: `out` itself, or a file named after the format inside `out` if it is a folder;
    ``htsim`` adds its fat-tree topology beside it (`out` with suffix ``.topo``) when the
    fabric is a 3-tier fat-tree htsim can build, ``astra`` the collective's text workload
    (suffix ``.workload.txt``).
    """
    files = export_texts(scenario, fmt, catalog, simai, training)
    if fmt == "ns3":
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / name for name in files]
    elif out.is_dir():
        paths = [out / name for name in files]
    else:
        paths = [out, out.with_suffix(SECOND_SUFFIX.get(fmt, ".2"))][: len(files)]
    for path, text in zip(paths, files.values(), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _check_ns3(files: dict[str, str], graph: FabricGraph, flows: list[Flow]) -> None:
    topo = ns3.read_topology(files["topology.txt"])
    if topo.nodes != len(graph.nodes) or list(topo.switch_ids) != graph.switch_ids:
        raise RoundTripError("the ns-3 topology's nodes or switches did not read back")
    if len(topo.links) != len(graph.cables):
        raise RoundTripError("the ns-3 topology's link count did not read back")
    for link, cable in zip(topo.links, graph.cables, strict=True):
        if (link.src, link.dst) != (cable.a, cable.b) or not (
            math.isclose(link.rate_gbps, cable.rate_gbps, rel_tol=1e-9, abs_tol=1e-6)
            and math.isclose(link.delay_ns, cable.latency_ns, rel_tol=1e-9, abs_tol=1e-5)
        ):
            raise RoundTripError(f"ns-3 link {cable.a}-{cable.b} did not read back")
    read = ns3.read_flows(files["flow.txt"], hosts=len(graph.hosts))
    _check_flows(read, sorted(flows, key=lambda f: f.start_s), "ns-3")


def _check_flows(read: list[Flow], flows: list[Flow], fmt: str) -> None:
    if len(read) != len(flows) or any(
        (r.src, r.dst, r.size_bytes) != (f.src, f.dst, f.size_bytes)
        or not _close(r.start_s, f.start_s)
        for r, f in zip(read, flows, strict=True)
    ):
        raise RoundTripError(f"the {fmt} flows did not read back as written")


def _check_graphml(read: graphml.GraphmlGraph, graph: FabricGraph) -> None:
    if list(read.nodes) != [f"n{n.id}" for n in graph.nodes]:
        raise RoundTripError("the GraphML nodes did not read back")
    for (a, b, data), c in zip(read.edges, graph.cables, strict=True):
        if (a, b) != (f"n{c.a}", f"n{c.b}") or data.get("rate_gbps") != c.rate_gbps:
            raise RoundTripError(f"GraphML edge {c.a}-{c.b} did not read back")
    if len(read.edges) != len(graph.cables):
        raise RoundTripError("the GraphML edge count did not read back")


def _add_fat_tree(files, scenario: Scenario, fabric, catalog: Catalog | None, graph) -> None:
    """Add htsim's fat-tree topology to `files` where the fabric is one htsim builds."""
    params = fat_tree_params(scenario, fabric, scenario_catalog(scenario, catalog))
    if params is not None:
        files["fat_tree.topo"] = write_fat_tree_topo(params, graph.name)
        _check_fat_tree(files["fat_tree.topo"], params, scenario)


def _check_steps(read: list[list[Flow]], steps: list[list[Flow]]) -> None:
    if len(read) != len(steps):
        raise RoundTripError("the htsim DAG's steps did not read back")
    for r, s in zip(read, steps, strict=True):
        _check_flows(r, s, "htsim DAG")


def _check_fat_tree(text: str, params: dict, scenario: Scenario) -> None:
    read = read_fat_tree_topo(text)
    counts = {g.tier: g.count for g in scenario.groups}
    if read != params or switch_counts(read) != (counts["leaf"], counts["spine"], counts["core"]):
        raise RoundTripError("htsim's fat-tree topology does not rebuild the fabric's switches")
