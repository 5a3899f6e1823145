"""The traffic of a transport study: which GPU pairs send how many bytes.

`engine.analysis.transport_study` runs one workload through the transport mechanisms; this
module turns the workload's description (`TransportWorkload`) into its connections on an
expanded fabric (an N:1 incast with an optional victim that shares the first sender's
uplink, a permutation, an all-to-all, or the first network stage of a collective), and
refuses, naming the workload field, what no fabric could run or the model could not run
in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.analysis.results import TransportWorkload
from engine.collectives.placement import placement
from engine.collectives.schedules import ALGORITHMS, OPS, build_schedule, layout
from engine.flows.traffic import permutation, traffic_matrix
from engine.model.errors import Problem, ScenarioError
from engine.routing.router import RoutedFlows, Router
from engine.topology.expand import Fabric

KINDS = ("incast", "permutation", "all-to-all", "collective", "traffic")
MAX_CLASSES = 20_000  # distinct paths the model runs in seconds (as engine.collectives)
MAX_PAIRS = 1_000_000  # all-to-all connections routed before the class count is known


def refuse(message: str, name: str) -> ScenarioError:
    """A workload problem, named by its `TransportWorkload` field."""
    return ScenarioError(Problem("transport", message, name))


@dataclass
class Demand:
    """The workload's connections: GPU pairs and bytes, the victim's index (-1: none)."""

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    victim: int = -1
    notes: list[str] = field(default_factory=list)
    start_s: np.ndarray | None = None  # per connection (a traffic matrix's starts), or all 0


def check_workload(w: TransportWorkload) -> None:
    """Refuse what no fabric could run, before anything is expanded."""
    if w.kind not in KINDS:
        raise refuse(f"unknown workload {w.kind!r}; use one of {', '.join(KINDS)}", "kind")
    if not (math.isfinite(w.bytes_per_flow) and w.bytes_per_flow > 0):
        raise refuse(f"bytes per flow must be positive, not {w.bytes_per_flow!r}", "bytes_per_flow")
    if not (math.isfinite(w.horizon_s) and w.horizon_s >= 0):
        raise refuse(
            f"the horizon must be 0 (run to the end) or a positive time, not {w.horizon_s!r}",
            "horizon_s",
        )
    if w.victim and w.kind != "incast":
        raise refuse("a victim flow belongs to an incast; use kind incast", "victim")
    if w.kind == "incast" and w.senders < 1:
        raise refuse(f"an incast needs at least 1 sender, not {w.senders}", "senders")
    if w.kind in ("all-to-all", "collective") and (w.ranks < 0 or w.ranks == 1):
        raise refuse(f"ranks must be 0 (every GPU) or at least 2, not {w.ranks}", "ranks")
    if w.kind == "collective":
        if w.op not in OPS:
            raise refuse(f"unknown collective {w.op!r}; use one of {', '.join(OPS)}", "op")
        if w.algorithm not in ALGORITHMS[w.op]:
            raise refuse(
                f"{w.op} runs {', '.join(ALGORITHMS[w.op])}, not {w.algorithm!r} (the study "
                "runs one algorithm; auto chooses per message size)",
                "algorithm",
            )


def _ranks(fabric: Fabric, w: TransportWorkload) -> np.ndarray:
    """The first `w.ranks` GPUs in placement order (all when 0)."""
    if w.ranks > fabric.n_gpus:
        raise refuse(f"{w.ranks} ranks asked for, the fabric has {fabric.n_gpus} GPUs", "ranks")
    return placement(fabric, w.ranks)


def demand(fabric: Fabric, w: TransportWorkload) -> Demand:
    """The connections of workload `w` on `fabric`."""
    if w.kind == "incast":
        return _incast(fabric, w)
    if w.kind == "permutation":
        src, dst = permutation(fabric, w.seed)
        cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
        return Demand(src[cross], dst[cross], np.full(int(cross.sum()), w.bytes_per_flow))
    if w.kind == "all-to-all":
        return _all_to_all(fabric, w)
    if w.kind == "traffic":
        return _traffic(fabric)
    return _collective(fabric, w)


def _traffic(fabric: Fabric) -> Demand:
    """The flows of the scenario's traffic matrix between servers, each with its own bytes
    and start time (the transport model runs them as they arrive)."""
    if not fabric.scenario.workload.matrix:
        raise refuse(
            "a traffic study needs the scenario's traffic matrix (workload.matrix; on the "
            "command line --traffic FILE)",
            "kind",
        )
    src, dst, nbytes, start = traffic_matrix(fabric)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    demand = Demand(src[cross], dst[cross], nbytes[cross])
    if not cross.all():
        demand.notes.append(f"{int((~cross).sum())} flows inside servers (NVLink) left out")
    if np.any(start[cross] > 0):
        demand.start_s = start[cross]
    if not cross.any():
        raise refuse("every flow of the traffic matrix stays inside one server", "kind")
    return demand


def _incast(fabric: Fabric, w: TransportWorkload) -> Demand:
    """GPU 0 of servers 1..N to GPU 0 of server 0, and the victim when asked."""
    first = fabric.server_first_gpu
    if w.senders > fabric.n_servers - 1:
        raise refuse(
            f"{w.senders}:1 needs {w.senders + 1} servers (one GPU of each sends); the fabric "
            f"has {fabric.n_servers}",
            "senders",
        )
    src = first[1 : w.senders + 1].astype(np.int64)
    dst = np.full(w.senders, first[0], dtype=np.int64)
    demand = Demand(src, dst, np.full(w.senders, w.bytes_per_flow))
    if w.victim:
        v_src, v_dst = _victim(fabric, int(src[0]), int(dst[0]), w.senders)
        demand.src = np.append(src, v_src)
        demand.dst = np.append(dst, v_dst)
        demand.nbytes = np.append(demand.nbytes, w.bytes_per_flow)
        demand.victim = w.senders
        demand.notes.append(
            f"victim: gpu {v_src} -> gpu {v_dst}, sharing the uplink of gpu {int(src[0])}"
        )
    return demand


def _victim(fabric: Fabric, sender: int, receiver: int, senders: int) -> tuple[int, int]:
    """The victim's GPUs: from the first sender's server (another GPU of it whose NIC cable
    is the sender's, else the sender itself) to GPU 0 of a server that neither receives
    nor, where the fabric has one more, sends."""
    if fabric.n_servers < 3:
        raise refuse("a victim needs a third server to send to", "victim")
    first = fabric.server_first_gpu
    home = int(fabric.gpu_server[sender])  # server 1; the victim goes to the next free one
    v_dst = int(first[senders + 1 if senders + 1 < fabric.n_servers else 2])
    local = np.arange(first[home], first[home + 1], dtype=np.int64)
    candidates = np.append(local[local != sender], sender)
    router = Router(fabric)
    policy = fabric.scenario.routing
    mask = fabric.network_link_mask()

    def first_cables(routed: RoutedFlows) -> list[set[int]]:
        out: list[set[int]] = [set() for _ in range(routed.n_connections)]
        for f in range(routed.n_flows):
            path = routed.entry_link[routed.flow_ptr[f] : routed.flow_ptr[f + 1]]
            path = path[mask[path]]
            if path.size:
                out[int(routed.connection[f])].add(int(path[0]))
        return out

    own = first_cables(router.route(np.array([sender]), np.array([receiver]), policy))[0]
    tried = first_cables(router.route(candidates, np.full(candidates.size, v_dst), policy))
    for gpu, cables in zip(candidates, tried, strict=True):
        if cables and cables <= own:
            return int(gpu), v_dst
    return sender, v_dst


def all_to_all_too_large(fabric: Fabric, w: TransportWorkload) -> str:
    """Why all-to-all `w` has too many connections to route one by one ("" when it has
    not): with a NIC of its own at each rank every pair is a distinct path."""
    ranks = _ranks(fabric, w)
    servers = fabric.gpu_server[ranks]
    _, per_server = np.unique(servers, return_counts=True)
    pairs = int(ranks.size**2 - np.sum(per_server.astype(np.int64) ** 2))
    own_nics = not fabric.scenario.routing.pxn and bool(np.all(fabric.gpu_line_rate[ranks] > 0))
    if pairs <= (MAX_CLASSES if own_nics else MAX_PAIRS):
        return ""
    return (
        f"an all-to-all over {ranks.size:,} ranks has {pairs:,} connections between "
        f"servers, over the {MAX_CLASSES:,} distinct paths the model runs one by one"
    )


def _all_to_all(fabric: Fabric, w: TransportWorkload) -> Demand:
    """Every ordered pair of the ranks on different servers (pairs inside a server stay
    on NVLink, outside the transport)."""
    too_large = all_to_all_too_large(fabric, w)
    if too_large:
        raise refuse(too_large + "; use fewer ranks", "ranks")
    ranks = _ranks(fabric, w)
    _, per_server = np.unique(fabric.gpu_server[ranks], return_counts=True)
    src = np.repeat(ranks, ranks.size)
    dst = np.tile(ranks, ranks.size)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    demand = Demand(src[cross], dst[cross], np.full(int(cross.sum()), w.bytes_per_flow))
    if int(np.sum(per_server.astype(np.int64) * (per_server - 1))):
        demand.notes.append("pairs inside a server (NVLink) are left out")
    return demand


def _collective(fabric: Fabric, w: TransportWorkload) -> Demand:
    """The first stage of the collective that crosses servers, one step of it: each flow
    carries `bytes_per_flow` times its share over the largest share."""
    lay = layout(_ranks(fabric, w), fabric.gpu_server)
    try:
        stages = build_schedule(w.op, w.algorithm, lay)
    except ScenarioError as exc:
        raise ScenarioError(
            [Problem("transport", p.message, p.field) for p in exc.problems]
        ) from None
    server = fabric.gpu_server
    for i, stage in enumerate(stages):
        if stage.src.size == 0 or stage.share.max(initial=0.0) <= 0.0:
            continue
        keep = (server[stage.src] != server[stage.dst]) & (stage.share > 0)
        if not keep.any():
            continue
        nbytes = w.bytes_per_flow * stage.share[keep] / stage.share.max()
        demand = Demand(stage.src[keep].astype(np.int64), stage.dst[keep].astype(np.int64), nbytes)
        demand.notes.append(f"one step of stage {i + 1} of {len(stages)}: {stage.name}")
        if not keep.all():
            demand.notes.append(f"{int((~keep).sum())} flows inside servers (NVLink) left out")
        return demand
    raise refuse(
        f"no stage of {w.algorithm} {w.op} sends over the network here (switch-reduced or "
        "inside servers); use another algorithm or more ranks",
        "ranks" if lay.n_servers < 2 else "algorithm",
    )
