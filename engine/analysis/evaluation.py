"""Evaluation of a scenario: its topology summary and a permutation-traffic test.

The permutation test is the classic probe of a fabric's routing: every GPU sends to one GPU
on another server at once. On a non-blocking fabric with perfect load balance every flow gets
line rate; static ECMP hash collisions, oversubscription and failures show up as flows below
it. `topology_summary`, `permutation_test` and the other probes give plain dicts of numbers
(SI units, fractions) ready for JSON; `evaluate`, the door, wraps them in one typed
`EvaluationResult` (`engine.analysis.results`) for the CLI and the UI.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.analysis.permutation_transport import permutation_transport
from engine.analysis.results import (
    CollectiveSummary,
    CostReport,
    EvaluationResult,
    PermutationResult,
    TopologySummary,
    TrainingResult,
)
from engine.analysis.results.storage import StorageSummary
from engine.analysis.storage_network import storage_summary
from engine.catalog.devices import Catalog, default_catalog
from engine.collectives.stage_rates import route_rates
from engine.flows.arrivals import phase_rates
from engine.flows.solver import link_loads
from engine.flows.traffic import permutation, traffic_matrix
from engine.flows.utilization import (
    hottest_links,
    summary_stats,
    utilization_by_tier,
    utilization_histogram,
)
from engine.model.catalogs import scenario_catalog
from engine.model.errors import ScenarioError
from engine.model.scenario import Scenario
from engine.routing.router import Router
from engine.runtime.progress import Progress, checkpoint
from engine.runtime.side_by_side import Lane, run_lanes
from engine.topology.expand import NODE_SWITCH, NVLINK_BUNDLE, Fabric, expand


def topology_summary(fabric: Fabric) -> dict[str, Any]:
    """GPUs, servers, switches per tier, cables per bundle, bisection and oversubscription."""
    s = fabric.scenario
    switches: dict[str, int] = {}
    for g in s.groups:
        if g.kind == "switch":
            switches[g.tier] = switches.get(g.tier, 0) + g.count
    cables = {b.id: int(fabric.bundle_cables[i]) for i, b in enumerate(s.bundles)}
    up = fabric.link_upward & fabric.network_link_mask()
    tiers_order = ["server", "leaf", "spine", "core"]
    capacity_up: dict[str, float] = {}
    for i, b in enumerate(s.bundles):
        lower = s.group(b.a).tier
        mask = up & (fabric.link_bundle == i)
        capacity_up[lower] = capacity_up.get(lower, 0.0) + float(fabric.link_capacity[mask].sum())
    oversubscription = {}
    for lower, upper in itertools.pairwise(tiers_order):
        if capacity_up.get(lower) and capacity_up.get(upper):
            oversubscription[upper] = capacity_up[lower] / capacity_up[upper]
    cuts = [v for v in capacity_up.values() if v > 0]
    return {
        "name": s.metadata.name,
        "gpus": fabric.n_gpus,
        "servers": fabric.n_servers,
        "switches": switches,
        "switches_total": int(np.count_nonzero(fabric.node_kind == NODE_SWITCH)),
        "cables": cables,
        "cables_total": int(fabric.bundle_cables.sum()),
        "cables_working": int(fabric.bundle_cables_up.sum()),
        "directed_links": fabric.n_links,
        "endpoint_bandwidth_Bps": float(fabric.gpu_line_rate.sum()),
        "bisection_bandwidth_Bps": min(cuts) / 2 if cuts else 0.0,
        "oversubscription": oversubscription,
    }


def permutation_test(
    fabric: Fabric,
    router: Router | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
    catalog: Catalog | None = None,
) -> dict[str, Any]:
    """Throughput of every flow of a random permutation (or, for a ``traffic`` workload, of
    its matrix's flows between servers), as a fraction of its NIC's line rate: under
    max-min fair rates (the ideal) and through the transport mechanisms. A traffic matrix
    whose flows start at different times is taken in phases: the flows of one start time
    share the links, phases follow each other (`engine.flows.arrivals.phase_rates`)."""
    s = fabric.scenario
    catalog = scenario_catalog(s, catalog)
    router = router or Router(fabric)
    nbytes: np.ndarray | float = s.workload.message_bytes
    start = None
    if s.workload.kind == "traffic":
        src, dst, nbytes, start = traffic_matrix(fabric)
    else:
        src, dst = permutation(fabric, s.workload.seed if seed is None else seed)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    src, dst = src[cross], dst[cross]
    nbytes = nbytes[cross] if isinstance(nbytes, np.ndarray) else nbytes
    start = None if start is None or np.unique(start[cross]).size < 2 else start[cross]
    t0 = time.perf_counter()
    routed = router.route(src, dst, s.routing, connection_bytes=nbytes)
    t_route = time.perf_counter() - t0
    checkpoint(progress, 0.7, "max-min rates")
    t0 = time.perf_counter()
    # The route's key names the fabric's capacities too: the same paths, the same rates.
    rates = route_rates(
        routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity, routed.key
    )
    loads = None
    if start is not None:  # flows of one start time form a phase; phases follow each other
        rates, loads = phase_rates(
            routed.flow_ptr,
            routed.entry_link,
            routed.entry_weight,
            fabric.link_capacity,
            start[routed.connection],
        )
    t_solve = time.perf_counter() - t0
    checkpoint(progress, 0.8, "transport")
    per_conn = np.bincount(routed.connection, weights=rates, minlength=routed.n_connections)
    line_rate = fabric.gpu_line_rate[src]
    line_rate = np.where(line_rate > 0, line_rate, np.max(fabric.gpu_line_rate))
    reached = np.setdiff1d(np.arange(routed.n_connections), routed.unreachable)
    fraction = per_conn[reached] / line_rate[reached]
    if loads is None:
        loads = link_loads(
            routed.flow_ptr, routed.entry_link, routed.entry_weight, rates, fabric.n_links
        )
    util = loads / fabric.link_capacity
    # Flows whose path climbs above the leaf tier: more than two network hops.
    network = fabric.link_bundle[routed.entry_link] != NVLINK_BUNDLE
    hops = np.add.reduceat(np.where(network, routed.entry_weight, 0.0), routed.flow_ptr[:-1])
    conn_hops = np.zeros(routed.n_connections)
    np.maximum.at(conn_hops, routed.connection, hops)
    cross_leaf = conn_hops[reached] > 2 + 1e-9
    per_tier = utilization_by_tier(fabric, util)
    hottest = hottest_links(fabric, util)
    return {
        "connections": int(routed.n_connections),
        "flows": int(routed.n_flows),
        "unreachable": int(routed.unreachable.size),
        "routing": s.routing.mode,
        "flows_per_connection": int(s.routing.flows_per_connection),
        "throughput_fraction": summary_stats(fraction),
        "cross_leaf_throughput_fraction": summary_stats(fraction[cross_leaf]),
        "cross_leaf_connections": int(cross_leaf.sum()),
        "below_99pct_fraction": float(np.mean(fraction < 0.99)) if fraction.size else 0.0,
        "aggregate_throughput_Bps": float(per_conn.sum()),
        "mean_path_latency_s": float(routed.latency.mean()) if routed.latency.size else 0.0,
        "link_utilization": per_tier,
        "utilization_histogram": utilization_histogram(fabric, util),
        "hottest_links": hottest,
        "route_s": t_route,
        "solve_s": t_solve,
        "transport": permutation_transport(
            fabric, routed, catalog or default_catalog(), line_rate, progress
        ),
    }


def collective_summary(
    fabric: Fabric,
    router: Router,
    catalog: Catalog,
    sizes: np.ndarray | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The scenario's collective (workload op, algorithm, ranks) at `sizes` bytes
    (default: the workload's `message_bytes`)."""
    from engine.collectives.placement import placement
    from engine.collectives.timing import CollectiveEngine

    w = fabric.scenario.workload
    engine = CollectiveEngine(fabric, catalog, router)
    sizes = np.array([w.message_bytes]) if sizes is None else np.asarray(sizes, dtype=float)
    result = engine.run(
        w.op, placement(fabric, w.ranks), sizes, w.algorithm, w.protocol, progress=progress
    )
    return result.to_dict()


def training_summary(
    fabric: Fabric, catalog: Catalog, progress: Progress | None = None
) -> dict[str, Any]:
    """One training step of the scenario's training job (`progress` can stop it)."""
    from engine.training.step import train_step

    return train_step(fabric, fabric.scenario.workload.training, catalog, progress=progress)


def evaluate(
    scenario: Scenario,
    catalog: Catalog | None = None,
    parts: tuple[str, ...] = ("permutation", "collective", "training"),
    collective_sizes: np.ndarray | None = None,
    progress: Progress | None = None,
    keep_going: bool = False,
    side_by_side: bool = False,
) -> EvaluationResult:
    """Expand, route and probe a scenario; raises `ScenarioError` for a broken one.

    `parts` chooses the probes: the permutation test, the workload's collective, one
    training step of its training job and the cost report; the parts not chosen are
    ``None`` in the result. `progress` hears how far the run got and can stop it between
    chunks (`engine.runtime.progress.RunCancelledError`). With `keep_going`, a training step
    or cost report that cannot be computed leaves its reason in ``training_error`` /
    ``cost_error`` and the rest of the result stands. With `side_by_side`, the training
    step runs on a thread of its own beside the permutation test and the collective
    (`engine.runtime.side_by_side`; the same result, in the time of the longer lane on a
    machine with two cores), on fabrics of up to `SIDE_BY_SIDE_MAX_GPUS`. A design with a storage network gets its summary and a
    checkpoint over it (`engine.analysis.storage_network`) whatever the parts.
    """
    checkpoint(progress, 0.0, "expand")
    t0 = time.perf_counter()
    fabric = expand(scenario, catalog)
    catalog = scenario_catalog(scenario, catalog)  # after expand, which names every problem
    t_expand = time.perf_counter() - t0
    router = Router(fabric)
    found: dict[str, Any] = {"topology": TopologySummary.from_dict(topology_summary(fabric))}
    spans = _part_spans(parts)
    probes: dict[str, Callable[[Progress], dict[str, Any]]] = {
        "permutation": lambda p: {
            "permutation": PermutationResult.from_dict(
                permutation_test(fabric, router, progress=p, catalog=catalog)
            )
        },
        "collective": lambda p: {
            "collective": CollectiveSummary.from_dict(
                collective_summary(fabric, router, catalog, collective_sizes, p)
            )
        },
        "training": lambda p: _training_part(fabric, catalog, keep_going, p),
    }
    side_by_side = side_by_side and fabric.n_gpus <= SIDE_BY_SIDE_MAX_GPUS
    lanes = [
        _lane([(name, probes[name]) for name in names]) for names in _lanes(parts, side_by_side)
    ]
    if lanes:
        chosen = [p for p in parts if p in probes]
        span = (min(spans[p][0] for p in chosen), max(spans[p][1] for p in chosen))
        for lane_found in run_lanes(lanes, _sub(progress, span), None if side_by_side else 1):
            found.update(lane_found)
    if "cost" in parts:
        from engine.cost.report import cost_report

        checkpoint(progress, spans["cost"][0], "cost")
        collective, training = found.get("collective"), found.get("training")
        busbw = collective.rows[-1].busbw_GBps if collective and collective.rows else None
        tokens = training.tokens_per_s if training else None
        try:
            found["cost"] = CostReport.from_dict(
                cost_report(fabric, catalog, busbw_GBps=busbw, tokens_per_s=tokens)
            )
        except ScenarioError as exc:
            if not keep_going:
                raise
            found["cost_error"] = exc.brief()
    if fabric.storage is not None:  # beside the compute fabric: its parts and a checkpoint
        found["storage"] = StorageSummary.from_dict(storage_summary(fabric))
    checkpoint(progress, 1.0, "done")
    return EvaluationResult(
        **found, warnings=tuple(str(w) for w in fabric.warnings), expand_s=t_expand
    )


def _training_part(
    fabric: Fabric, catalog: Catalog, keep_going: bool, progress: Progress
) -> dict[str, Any]:
    """The training part of `evaluate`: its result, or (`keep_going`) why there is none."""
    try:
        return {"training": TrainingResult.from_dict(training_summary(fabric, catalog, progress))}
    except ScenarioError as exc:
        if not keep_going:
            raise
        return {"training_error": exc.brief()}


# Past this many GPUs the probes' working sets are hundreds of MB each and would add up side
# by side: the 131,072-GPU preset's cold evaluation peaks at 1.08-1.12 GB so (1.01 GB one
# after another, its budget 1.2 GB) to save 0.2 of 2.7 s. Below it they are tens of MB.
SIDE_BY_SIDE_MAX_GPUS = 65_536

_PROBE_LABELS = {
    "permutation": "permutation test",
    "collective": "collective",
    "training": "training step",
}


def _lanes(parts: tuple[str, ...], side_by_side: bool) -> list[list[str]]:
    """The chosen probes in lanes: one lane in order, or the training step in a lane of its
    own (the permutation test and the collective share the evaluation's `Router`, which is
    not for two threads at once)."""
    chosen = [p for p in _PROBE_LABELS if p in parts]
    if not side_by_side:
        return [chosen] if chosen else []
    lanes = [[p for p in chosen if p != "training"], [p for p in chosen if p == "training"]]
    return [lane for lane in lanes if lane]


def _lane(steps: list[tuple[str, Callable[[Progress], dict[str, Any]]]]) -> tuple[float, Lane]:
    """A lane of probes run in order, its weight, its progress split by `_PART_WEIGHTS`."""
    weights = [_PART_WEIGHTS[name] for name, _ in steps]
    total = sum(weights)

    def run(progress: Progress) -> dict[str, Any]:
        found: dict[str, Any] = {}
        done = 0.0
        for (name, probe), weight in zip(steps, weights, strict=True):
            span = (done / total, (done + weight) / total)
            checkpoint(progress, span[0], _PROBE_LABELS[name])
            found.update(probe(progress.part(*span)))
            done += weight
        return found

    return total, run


# Rough share of each part in the run time of a large fabric (131,072 GPUs: expansion 0.5 s,
# permutation 5 s, collective 10 s, training 1.5 s), so the progress bar moves evenly.
_PART_WEIGHTS = {"expand": 0.5, "permutation": 5.0, "collective": 10.0, "training": 1.5}


def _part_spans(parts: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    """The slice of 0..1 that each chosen part of `evaluate` fills in a progress report."""
    chosen = [
        "expand",
        *(p for p in ("permutation", "collective", "training", "cost") if p in parts),
    ]
    weights = [_PART_WEIGHTS.get(p, 0.2) for p in chosen]
    total = sum(weights)
    spans, start = {}, 0.0
    for part, weight in zip(chosen, weights, strict=True):
        spans[part] = (start, start + weight / total)
        start += weight / total
    return spans


def _sub(progress: Progress | None, span: tuple[float, float]) -> Progress | None:
    return None if progress is None else progress.part(*span)
