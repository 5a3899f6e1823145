"""The transport study: one traffic pattern through the transport mechanisms of a scenario.

`transport_study` is the door to `engine.transport` (the CLI's ``transport`` command, the
app's Congestion tab). It expands the scenario, builds the workload's flows (an N:1 incast,
with a victim if asked, a permutation, an all-to-all, or the first stage of a collective
that crosses the network), routes them, runs the fluid transport model (IB credits or RoCE
PFC, ECN, DCQCN, IB CC as the scenario's technology and transport settings say) and sums
the run up as a `TransportStudy`: throughput per flow against the max-min ideal, the hottest
ports and their queues over time, pause and mark shares per bundle, drops, headroom, the
victim's slowdown. The transport speaks of compact links and flow classes, the front ends of
fabric links, bundles and GPU pairs: transport link i is fabric link ``used[i]``, the cables
the flows cross in increasing id (as `engine.transport.fabric.network_from_routes` keeps
them). Sprayed flows run over the sets of links they split over, each set one link of
several ports (`engine.transport.spray`), shown per port. What the model cannot run
(sprayed flows over uneven sets, over `MAX_CLASSES` distinct paths, a workload that
crosses no cable) is refused with a `ScenarioError` naming the field.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.analysis.results import (
    FlowSeries,
    PortFigures,
    PortSeries,
    Stats,
    TransportStudy,
    TransportWorkload,
)
from engine.analysis.transport_demand import (
    MAX_CLASSES,
    Demand,
    all_to_all_too_large,
    check_workload,
    refuse,
)
from engine.analysis.transport_demand import demand as build_demand
from engine.catalog.devices import Catalog
from engine.collectives.lumped_all_to_all import draws_per_kind, lumped_all_to_all
from engine.collectives.placement import placement
from engine.flows.utilization import summary_stats
from engine.model.catalogs import scenario_catalog
from engine.model.errors import Problem, ScenarioError
from engine.model.scenario import Scenario
from engine.routing.router import RoutedFlows, Router
from engine.runtime.progress import Progress, checkpoint
from engine.topology.expand import NVLINK_BUNDLE, Fabric, describe_link, expand
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.ideal import ideal_result
from engine.transport.network import TransportNetwork
from engine.transport.result import TransportResult
from engine.transport.simulate import simulate
from engine.transport.spray import bundle_sprayed
from engine.transport.tables import HistoryTooLongError

SERIES_POINTS = 400  # time-series rows kept per series
HOTTEST_PORTS = 10
PORT_SERIES = 4
FLOW_SERIES = 4
# FIFO bins wider than this lose part of the gaps a pause leaves in a sender's bytes
# (docs/transport.md, "The FIFO closes it": 1 us keeps them, 3 us loses part).
FINEST_GAP_S = 1e-6


def _spray_refused(reason: str) -> ScenarioError:
    return ScenarioError(
        Problem(
            "routing",
            f"these sprayed flows cannot run through the transport model: {reason}; "
            "use routing.mode ecmp or adaptive",
            "mode",
        )
    )


def transport_study(
    scenario: Scenario,
    workload: TransportWorkload,
    catalog: Catalog | None = None,
    progress: Progress | None = None,
) -> TransportStudy:
    """Run `workload` through the transport mechanisms of `scenario` and sum it up.

    Raises `ScenarioError` for a scenario that cannot be built (every problem, as
    `evaluate`) and for a workload the model cannot run, naming the field (``kind``,
    ``senders``, ``ranks``, ``op``, ``algorithm``, ``bytes_per_flow``, ``victim``,
    ``horizon_s``; ``routing.mode`` for spraying). `progress` hears the stages and can stop
    the study between them and between the simulation's windows (`RunCancelledError`).
    """
    started = time.perf_counter()
    catalog = scenario_catalog(scenario, catalog)
    check_workload(workload)
    checkpoint(progress, 0.0, "expand")
    fabric = expand(scenario, catalog)
    checkpoint(progress, 0.05, "flows")
    if workload.kind == "all-to-all" and (too_large := all_to_all_too_large(fabric, workload)):
        return _lumped_study(scenario, workload, fabric, catalog, too_large, (started, progress))
    demand = build_demand(fabric, workload)
    checkpoint(progress, 0.1, "route")
    routed = Router(fabric).route(
        demand.src, demand.dst, scenario.routing, connection_bytes=demand.nbytes
    )
    bundled = bundle_sprayed(routed, fabric, fabric.link_capacity)  # sprayed: sets of links
    if isinstance(bundled, str):
        raise _spray_refused(bundled)
    routed, ports = bundled.routed, bundled.ports
    checkpoint(progress, 0.2, "transport network")
    starts = None if demand.start_s is None else demand.start_s[routed.connection]
    network = scenario_network(fabric, routed, catalog, start_s=starts, ports=ports)
    n_classes = network.classes.n_classes
    size_field = "ranks" if workload.kind in ("all-to-all", "collective") else "kind"
    if n_classes == 0:
        raise refuse(
            "no flow of this workload crosses a cable (they stay inside servers, over "
            "NVLink); use more ranks or servers",
            size_field,
        )
    if n_classes > MAX_CLASSES:
        raise refuse(
            f"{n_classes:,} distinct paths (over {MAX_CLASSES:,}) would take the transport "
            "model minutes; use fewer ranks or a smaller fabric",
            size_field,
        )
    used = np.unique(routed.entry_link[fabric.network_link_mask()[routed.entry_link]])
    if used.shape[0] != network.links.n_links:
        raise RuntimeError("transport links do not match the fabric links the flows use")
    per_link = np.ones(used.size, dtype=np.int64) if ports is None else ports[used]
    run = _Run(network, routed, (used, per_link), (used, np.arange(used.size)))
    return _run_and_sum_up(scenario, workload, fabric, catalog, run, demand, (started, progress))


@dataclass(frozen=True)
class _Run:
    """What a study runs and how its figures map back: the network, the routed
    connections, per run link a fabric link and the ports it stands for, every fabric link
    the run speaks for with its run link (for per-bundle figures), and per connection the
    connections of the workload it stands for (None: itself)."""

    network: TransportNetwork
    routed: RoutedFlows
    links: tuple[np.ndarray, np.ndarray]
    bundle_links: tuple[np.ndarray, np.ndarray]
    weight: np.ndarray | None = None
    alike: str = "sprayed alike"


def _lumped_study(
    scenario: Scenario,
    workload: TransportWorkload,
    fabric: Fabric,
    catalog: Catalog,
    too_large: str,
    clock: tuple[float, Progress | None],
) -> TransportStudy:
    """An all-to-all run by kinds of flows and links (`engine.collectives.lumped_all_to_all`),
    when it has too many connections to route."""
    checkpoint(clock[1], 0.1, "kinds of flows")
    draws = draws_per_kind(scenario_transport_config(scenario, catalog))
    ranks = placement(fabric, workload.ranks)
    lumped = lumped_all_to_all(fabric, workload.bytes_per_flow, catalog, draws, ranks=ranks)
    if isinstance(lumped, str):
        raise refuse(f"{too_large}; nor can it run by kinds of flows: {lumped}", "ranks")
    kinds = lumped.kind_links
    run = _Run(
        lumped.lumped.network,
        lumped.routed,
        (lumped.rep_link, lumped.lumped.network.links.ports),
        (np.concatenate(kinds), np.repeat(np.arange(len(kinds)), [k.size for k in kinds])),
        lumped.connection_weight,
        "alike",
    )
    demand = Demand(lumped.routed.src_gpu, lumped.routed.dst_gpu, lumped.routed.flow_bytes)
    demand.notes.extend(lumped.notes)
    return _run_and_sum_up(scenario, workload, fabric, catalog, run, demand, clock)


def _run_and_sum_up(
    scenario: Scenario,
    workload: TransportWorkload,
    fabric: Fabric,
    catalog: Catalog,
    run: _Run,
    demand: Demand,
    clock: tuple[float, Progress | None],
) -> TransportStudy:
    """Simulate `run` under the scenario's transport and sum it up as a study."""
    started, progress = clock
    config = scenario_transport_config(scenario, catalog)
    checkpoint(progress, 0.3, "transport")
    ideal = scenario.transport.model == "ideal"
    try:
        result = (
            ideal_result(run.network)
            if ideal
            else simulate(
                run.network,
                config,
                workload.horizon_s or None,
                progress=None if progress is None else progress.part(0.3, 0.95),
            )
        )
    except HistoryTooLongError as exc:
        raise ScenarioError(Problem("fabric", str(exc), "switch_latency_ns")) from None
    checkpoint(progress, 0.95, "summary")
    m = config.mechanisms
    mechanisms = (m.lossless,) + (("dcqcn",) if m.dcqcn else ()) + (("ib_cc",) if m.ib_cc else ())
    if ideal:
        mechanisms = ("ideal",)
        demand.notes.append(
            "transport.model is ideal: max-min fair rates re-shared as flows finish, with "
            "no queue, pause, mark or drop (the bound every run of the mechanisms is held to)"
        )
    study = _summary(fabric, run, result, demand, workload)
    checkpoint(progress, 1.0, "done")
    return TransportStudy(
        scenario=scenario.metadata.name,
        technology=scenario.fabric.technology,
        mechanisms=mechanisms,
        workload=workload,
        engine_s=time.perf_counter() - started,
        **study,
    )


def _summary(
    fabric: Fabric, run: _Run, result: TransportResult, demand: Demand, w: TransportWorkload
) -> dict:
    """The study's figures from a finished (or stopped) run of `run`."""
    routed = run.routed
    used, ports = run.links
    network = result.network
    cl = network.classes
    flow_class = network.flow_class
    end = result.end_s
    crossing = flow_class >= 0
    f_class = flow_class[crossing]
    conn = routed.connection[crossing]
    n_conn = routed.n_connections
    per_flow_delivered = result.delivered_bytes[f_class] / cl.multiplicity[f_class]
    c_bytes = np.bincount(conn, weights=routed.flow_bytes[crossing], minlength=n_conn)
    c_done = np.bincount(conn, weights=per_flow_delivered, minlength=n_conn)
    c_finish = np.zeros(n_conn)
    np.maximum.at(c_finish, conn, result.finish_s[f_class])
    c_ideal = np.zeros(n_conn)
    np.maximum.at(c_ideal, conn, result.ideal_finish_s[f_class])
    present = np.zeros(n_conn, dtype=bool)
    present[conn] = True
    weight = np.ones(n_conn) if run.weight is None else run.weight
    present &= weight > 0
    finished = np.isfinite(c_finish)
    c_start = np.zeros(n_conn) if demand.start_s is None else demand.start_s
    took, ideal_took = c_finish - c_start, c_ideal - c_start  # each from its own start
    ran = np.maximum(end - c_start, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        thr = np.where(finished, c_bytes / took, c_done / np.where(ran > 0, ran, 1.0))
        ideal_thr = np.where(ideal_took > 0, c_bytes / ideal_took, 0.0)
    thr_p, ideal_p, weight_p = thr[present], ideal_thr[present], weight[present]
    ideal_makespan = float(result.ideal_finish_s.max())
    notes = list(demand.notes)
    moving = bool(np.all(thr_p > 0))  # an unfinished flow's finish is projected at its pace
    with np.errstate(divide="ignore", invalid="ignore"):
        projected = np.where(finished, c_finish, c_start + c_bytes / thr)[present]
    makespan = float(projected.max()) if moving else end
    efficiency = ideal_makespan / makespan if makespan > 0 and moving else 0.0
    if not result.finished:
        left = int(np.sum(present & ~finished))
        why = "the horizon" if w.horizon_s else "the step limit"
        notes.append(
            f"{left} of {int(present.sum())} flows unfinished at {end * 1e3:.4g} ms ({why}): "
            "their throughput is bytes delivered over that time, the makespan projected at it"
        )
    if routed.unreachable.size:
        notes.append(f"{routed.unreachable.size} connections unreachable, left out")
    if result.fifo_bin_s > FINEST_GAP_S:
        notes.append(
            f"egress queues served in {result.fifo_bin_s * 1e6:.3g} us bins (the FIFO rings' "
            "memory bound at this size): the gaps PFC pauses leave among a sender's bytes are "
            "not replayed finer than that"
        )
    dropped = float(result.dropped_bytes.sum())
    if dropped > 0:
        notes.append(f"{dropped / 1e6:.4g} MB dropped and sent again")
    victim = None
    if demand.victim >= 0 and thr[demand.victim] > 0:
        victim = float(ideal_thr[demand.victim] / thr[demand.victim])
    bundles = _bundle_ids(fabric, used)
    hottest = _hottest(fabric, result, used, ports, (bundles, run.alike))
    every_link, run_link = run.bundle_links
    every_bundle = _bundle_ids(fabric, every_link)
    return {
        "flows": int(weight_p.sum() + 0.5),
        "classes": int(cl.n_classes),
        "throughput_Bps": _weighted_stats(thr_p, weight_p),
        "ideal_throughput_Bps": _weighted_stats(ideal_p, weight_p),
        "makespan_s": float(makespan),
        "ideal_makespan_s": ideal_makespan,
        "efficiency": float(efficiency),
        "finished": bool(result.finished),
        "dropped_bytes": dropped,
        "lossless": bool(np.all(result.lossless)) and dropped == 0.0,
        "hottest": hottest,
        "port_series": _port_series(result, hottest[:PORT_SERIES], used, ports),
        "flow_series": _flow_series(routed, result, demand),
        "bundle_pause_fraction": _per_bundle(every_bundle, result.pause_fraction[run_link]),
        "bundle_mark_fraction": _per_bundle(every_bundle, result.ecn_mark_fraction[run_link]),
        "steps": int(result.steps),
        "jumps": int(result.jumps),
        "victim_slowdown": victim,
        "notes": tuple(notes),
    }


def _weighted_stats(values: np.ndarray, weight: np.ndarray) -> Stats:
    """Min, mean and max of `values`, each standing for `weight` connections."""
    stats = summary_stats(values)
    if values.size:
        stats["mean"] = float(np.average(values, weights=weight))
    return Stats(**stats)


def _bundle_ids(fabric: Fabric, used: np.ndarray) -> list[str]:
    """The bundle id of each transport link ("nvlink" inside servers, as the fabric results)."""
    bundles = fabric.scenario.bundles
    return [
        "nvlink" if b == NVLINK_BUNDLE else bundles[b].id for b in fabric.link_bundle[used].tolist()
    ]


def _per_bundle(bundles: list[str], values: np.ndarray) -> dict[str, float]:
    """The largest of `values` over each bundle's links."""
    out: dict[str, float] = {}
    for b, v in zip(bundles, values.tolist(), strict=True):
        out[b] = max(out.get(b, 0.0), float(v))
    return out


def _hottest(
    fabric: Fabric,
    result: TransportResult,
    used: np.ndarray,
    ports: np.ndarray,
    labels: tuple[list[str], str],
) -> tuple[PortFigures, ...]:
    """The ports with the largest queue (then paused share, then utilization). A run's
    link that stands for a sprayed set of k ports is shown as one of them: its queue and
    drops over k, its shares as they are (every port of the set has the same)."""
    bundles, alike = labels
    q, pause, util = result.max_queue_bytes / ports, result.pause_fraction, result.utilization
    order = np.lexsort((-util, -pause, -q))
    active = order[(q[order] > 0) | (pause[order] > 0) | (util[order] > 0)]
    return tuple(
        PortFigures(
            link=describe_link(fabric, int(used[i]))
            + (f" (1 of {ports[i]:,} links {alike})" if ports[i] > 1 else ""),
            index=int(used[i]),
            bundle=bundles[i],
            max_queue_bytes=float(q[i]),
            mean_queue_bytes=float(result.mean_queue_bytes[i] / ports[i]),
            pause_fraction=float(pause[i]),
            ecn_mark_fraction=float(result.ecn_mark_fraction[i]),
            dropped_bytes=float(result.dropped_bytes[i] / ports[i]),
            utilization=float(util[i]),
            headroom_ok=bool(result.lossless[i]),
        )
        for i in active[:HOTTEST_PORTS].tolist()
    )


def _downsample(result: TransportResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The time series' buckets (runs of consecutive rows, at most `SERIES_POINTS`, the
    same for every series): the time each ends at, its first row, and each row's duration."""
    t = result.time_s
    n = t.shape[0]
    starts = np.unique(np.linspace(0, n, min(n, SERIES_POINTS) + 1)[:-1].astype(np.int64))
    if n == 0:
        return np.zeros(0), starts, np.zeros(0)
    ends = np.append(starts[1:], n) - 1
    duration = np.diff(t, prepend=0.0)
    return t[ends], starts, duration


def _mean_rows(values: np.ndarray, starts: np.ndarray, duration: np.ndarray) -> np.ndarray:
    """Duration-weighted mean of `values` rows (time x k) over each bucket."""
    total = np.add.reduceat(duration, starts)
    summed = np.add.reduceat(values * duration[:, None], starts, axis=0)
    return summed / np.where(total > 0, total, 1.0)[:, None]


def _port_series(
    result: TransportResult,
    ports: tuple[PortFigures, ...],
    used: np.ndarray,
    per_link: np.ndarray,
) -> tuple[PortSeries, ...]:
    """Queue (largest sample per bucket) and paused share (mean) of the first hot ports
    (a sprayed set's queue per port: over the `per_link` ports it stands for)."""
    times, starts, duration = _downsample(result)
    if not ports or starts.size == 0:
        return ()
    where = {int(link): i for i, link in enumerate(used.tolist())}
    local = np.array([where[p.index] for p in ports], dtype=np.int64)
    queue = np.maximum.reduceat(result.queue_bytes[:, local] / per_link[local], starts, axis=0)
    paused = _mean_rows(result.paused_share[:, local], starts, duration)
    t = tuple(times.tolist())
    return tuple(
        PortSeries(
            p.link, p.index, p.bundle, t, tuple(queue[:, j].tolist()), tuple(paused[:, j].tolist())
        )
        for j, p in enumerate(ports)
    )


def _flow_series(
    routed: RoutedFlows, result: TransportResult, demand: Demand
) -> tuple[FlowSeries, ...]:
    """Delivery rate over time of the slowest classes (per-flow bytes over finish time, as
    the throughput), and of the victim's class when it is not among them."""
    times, starts, duration = _downsample(result)
    cl = result.network.classes
    if starts.size == 0 or cl.n_classes == 0:
        return ()
    per_flow = cl.bytes / cl.multiplicity
    with np.errstate(divide="ignore", invalid="ignore"):
        pace = np.where(
            np.isfinite(result.finish_s),
            per_flow / result.finish_s,
            result.delivered_bytes / cl.multiplicity / max(result.end_s, 1e-300),
        )
    flow_class = result.network.flow_class
    crossing = np.flatnonzero(flow_class >= 0)
    classes, first = np.unique(flow_class[crossing], return_index=True)
    first_flow = dict(zip(classes.tolist(), crossing[first].tolist(), strict=True))
    # A class with no flow of its own is one of its kind's draws (a lumped run's,
    # engine.transport.lumping), named by the kind's first class: the slowest draw of each
    # kind is shown, so that the series show kinds apart, not one kind's draws.
    owner = np.maximum.accumulate(
        np.where(np.isin(np.arange(cl.n_classes), classes), np.arange(cl.n_classes), 0)
    )
    chosen, seen = [], set()
    for c in np.argsort(pace, kind="stable").tolist():
        if int(owner[c]) not in seen and len(chosen) < FLOW_SERIES:
            seen.add(int(owner[c]))
            chosen.append(int(c))
    victim_class = -1
    if demand.victim >= 0:
        v_flows = np.flatnonzero((routed.connection == demand.victim) & (flow_class >= 0))
        if v_flows.size:
            victim_class = int(flow_class[v_flows[0]])
            if victim_class not in chosen:
                chosen.append(victim_class)
    rates = _mean_rows(result.class_rate_Bps[:, chosen], starts, duration)
    t = tuple(times.tolist())
    series = []
    for j, c in enumerate(chosen):
        f = first_flow[int(owner[c])]
        label = f"gpu {int(routed.src_gpu[f])} -> gpu {int(routed.dst_gpu[f])}"
        if c > owner[c] or (c + 1 < cl.n_classes and owner[c + 1] == c):
            label += " (its kind's slowest draw)"
        if c == victim_class:
            label += " (victim)"
        series.append(FlowSeries(label, int(cl.multiplicity[c]), t, tuple(rates[:, j].tolist())))
    return tuple(series)
