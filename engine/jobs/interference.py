"""Interference between the jobs of a shared cluster: each job timed alone and together.

Each job's traffic is the flow set that bounds it. A ``collective`` job runs NCCL's
hierarchical ring: inside each server over NVLink (the same alone or shared, left out), then
one ring per GPU index across its servers, GPU r of server i sending to GPU r of the next
server; every ring flow carries ``factor x S / gpus_per_server`` bytes (factor 2(k-1)/k for
an all-reduce over k servers, (k-1)/k for an all-gather or a reduce-scatter), all at once. A
``checkpoint`` job's GPUs each write S bytes to the storage nodes (the servers no job holds,
round robin, same GPU index). An ``inference`` job's GPUs each take S bytes of requests
from a front-end (the same free servers, round robin) and send S bytes of responses back,
both at once: a steady request/response pattern, one path latency each way. The flows are
routed with the scenario's policy and given
max-min fair rates (the ideal transport): alone, the job's flows by themselves; shared,
every job's flows together. A job lasts as long as its slowest flow plus one path latency
per ring step, so its slowdown is what the others' traffic costs it. Two jobs on disjoint
halves of a non-blocking fabric keep their speed; two whose rings cross one link share it.
A design with a storage network (`engine.model.networks`) runs its checkpoint writes there,
from the GPU servers' front-end ports to its storage nodes, so they share no link with the
jobs on the compute fabric and slow only each other; so do its inference jobs' requests
and responses (north-south traffic, between the serving GPUs' and the front-ends' front-end
ports), background traffic that meets the checkpoints there. A storage node takes writes
no faster than its drives (catalog ``drives`` x ``drive_write_GBps``), shared max-min
fairly like a link, so a checkpoint bound by the drives takes bytes / (nodes x drive
bandwidth).
"""

# Names carry their unit as the engine spells it (Bps: bytes per second).
# ruff: noqa: N815

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.collectives.stage_rates import route_rates
from engine.jobs.placement import place_jobs
from engine.model.jobs import Job
from engine.routing.router import RoutedFlows, Router
from engine.topology.expand import Fabric


@dataclass
class JobTraffic:
    """One job's servers and flows: GPU pairs, bytes per flow and the ring steps paying a
    path latency each."""

    job: Job
    servers: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    flow_bytes: float
    steps: int
    on_storage: bool = False  # runs on the design's storage network, not the compute fabric


def _frontend_ports(net: Fabric, gpus: np.ndarray) -> np.ndarray:
    """The endpoint on the storage (front-end) network `net` through which each of `gpus`
    reaches it: the front-end port of its part of its server (the port's endpoint GPU; the
    PCIe hop to it is not modelled); the GPU itself where its server has no working port
    (the routing then says what is unreachable)."""
    owners = np.flatnonzero(net.gpu_line_rate > 0)
    if owners.size == 0:  # every front-end cable down
        return gpus
    at = owners[np.maximum(np.searchsorted(owners, gpus, side="right") - 1, 0)]
    return np.where(net.gpu_server[at] == net.gpu_server[gpus], at, gpus)


def _storage_writes(net: Fabric, servers: np.ndarray, n_servers: int) -> tuple[np.ndarray, ...]:
    """Checkpoint writes of `servers` on the storage network `net`: each GPU's bytes leave
    through its front-end port (`_frontend_ports`) and go to the storage nodes (the servers
    of `net` after the `n_servers` GPU servers), round robin among the writes leaving by the
    same port, so each port's writes spread over every node."""
    first = net.server_first_gpu
    gpus = np.concatenate([np.arange(first[s], first[s + 1]) for s in servers])
    src = _frontend_ports(net, gpus)
    nodes = first[np.arange(n_servers, net.n_servers)]
    port = src - first[net.gpu_server[src]]  # which front-end port (its endpoint's index)
    order = np.argsort(port, kind="stable")
    starts = np.searchsorted(port[order], port[order])
    turn = np.empty_like(order)
    turn[order] = np.arange(order.shape[0]) - starts  # round robin per front-end port
    return src, nodes[turn % nodes.shape[0]]


def _gpu(fabric: Fabric, servers: np.ndarray, local: np.ndarray) -> np.ndarray:
    return fabric.server_first_gpu[servers] + local


def job_traffic(fabric: Fabric, jobs: list[Job]) -> list[JobTraffic]:
    """Every job's flows on `fabric` (placed in list order)."""
    per = int(np.min(np.diff(fabric.server_first_gpu)))
    placed = place_jobs(jobs, fabric.n_servers, per)
    storage = placed[-1]
    out = []
    for job, servers in zip(jobs, placed, strict=False):
        k = servers.shape[0]
        local = np.tile(np.arange(per), k)
        if job.kind == "checkpoint" and fabric.storage is not None:
            src, dst = _storage_writes(fabric.storage, servers, fabric.n_servers)
            out.append(JobTraffic(job, servers, src, dst, job.message_bytes, 1, True))
            continue
        if job.kind in ("checkpoint", "inference"):
            writers = np.repeat(servers, per)
            targets = storage[np.arange(writers.shape[0]) // per % storage.shape[0]]
            src, dst = _gpu(fabric, writers, local), _gpu(fabric, targets, local)
            front = job.kind == "inference" and fabric.storage is not None
            if front:  # north-south: through both servers' front-end ports
                src = _frontend_ports(fabric.storage, src)
                dst = _frontend_ports(fabric.storage, dst)
            if job.kind == "inference":  # requests in from the front-ends, responses out
                src, dst = np.concatenate([dst, src]), np.concatenate([src, dst])
                out.append(JobTraffic(job, servers, src, dst, job.message_bytes, 2, front))
            else:
                out.append(JobTraffic(job, servers, src, dst, job.message_bytes, 1))
            continue
        factor = 2.0 * (k - 1) / k if job.op == "all-reduce" else (k - 1) / k
        steps = 2 * (k - 1) if job.op == "all-reduce" else k - 1
        if k < 2:  # one server: its ring stays on NVLink
            empty = np.empty(0, dtype=np.int64)
            out.append(JobTraffic(job, servers, empty, empty, 0.0, 0))
            continue
        src = _gpu(fabric, np.repeat(servers, per), local)
        dst = _gpu(fabric, np.repeat(np.roll(servers, -1), per), local)
        out.append(JobTraffic(job, servers, src, dst, factor * job.message_bytes / per, steps))
    return out


@dataclass
class JobTiming:
    """A job's slowest flow rate (bytes/s), path latency (s) and time (s), alone or shared."""

    rate_Bps: float
    latency_s: float
    time_s: float


def _with_write_limits(
    fabric: Fabric, routed: RoutedFlows, dst: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """The rate problem of `routed` (paths, weights, capacities, cache key) with each
    server's write limit (`Fabric.server_write_Bps`: a storage node's drives) as one more
    link at the end of every flow into it, so max-min fairness shares the drives too."""
    plain = (routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_capacity)
    limits = fabric.server_write_Bps
    if limits is None or routed.n_flows == 0:
        return (*plain, routed.key)
    ptr = routed.flow_ptr
    server = fabric.gpu_server[dst[routed.connection]]
    extra = np.isfinite(limits[server]) & (np.diff(ptr) > 0)  # routed flows into a limit
    new_ptr = np.zeros_like(ptr)
    np.cumsum(np.diff(ptr) + extra, out=new_ptr[1:])
    shift = np.cumsum(extra) - extra  # extra entries before each flow
    flow_of = np.repeat(np.arange(routed.n_flows), np.diff(ptr))
    link = np.empty(int(new_ptr[-1]), dtype=routed.entry_link.dtype)
    weight = np.empty(int(new_ptr[-1]), dtype=routed.entry_weight.dtype)
    at = np.arange(ptr[-1]) + shift[flow_of]
    link[at], weight[at] = routed.entry_link, routed.entry_weight
    last = new_ptr[1:][extra] - 1
    link[last], weight[last] = fabric.n_links + server[extra], 1.0
    capacity = np.concatenate([fabric.link_capacity, limits])
    return new_ptr, link, weight, capacity, ""  # no cache key: the capacities differ


def _timings(fabric: Fabric, traffic: list[JobTraffic], router: Router) -> list[JobTiming]:
    """Time of each job when `traffic` (some jobs) runs at once."""
    busy = [t for t in traffic if t.src.size]
    timings = {id(t): JobTiming(float("inf"), 0.0, 0.0) for t in traffic}
    if not busy:
        return [timings[id(t)] for t in traffic]
    src = np.concatenate([t.src for t in busy])
    dst = np.concatenate([t.dst for t in busy])
    owner = np.repeat(np.arange(len(busy)), [t.src.size for t in busy])
    policy = fabric.scenario.routing
    routed = router.route(
        src,
        dst,
        policy,
        connection_bytes=np.repeat([t.flow_bytes for t in busy], [t.src.size for t in busy]),
    )
    rates = route_rates(*_with_write_limits(fabric, routed, dst))
    per_conn = np.bincount(routed.connection, weights=rates, minlength=routed.n_connections)
    flow_of = np.repeat(np.arange(routed.n_flows), np.diff(routed.flow_ptr))
    lat = np.bincount(
        flow_of,
        weights=fabric.link_latency[routed.entry_link] * routed.entry_weight,
        minlength=routed.n_flows,
    )
    conn_lat = np.zeros(routed.n_connections)
    np.maximum.at(conn_lat, routed.connection, lat)
    for j, t in enumerate(busy):
        mine = owner == j
        rate = float(per_conn[mine].min())
        latency = float(conn_lat[mine].max())
        timings[id(t)] = JobTiming(rate, latency, t.flow_bytes / rate + t.steps * latency)
    return [timings[id(t)] for t in traffic]


def interference(fabric: Fabric, jobs: list[Job]) -> list[tuple[JobTraffic, JobTiming, JobTiming]]:
    """Per job its traffic, its timing alone and its timing with every job running."""
    traffic = job_traffic(fabric, jobs)
    nets = {False: fabric, True: fabric.storage}
    routers = {
        on: Router(net)
        for on, net in nets.items()
        if net is not None and any(t.on_storage == on for t in traffic)
    }
    shared: dict[int, JobTiming] = {}
    for on, router in routers.items():
        mine = [t for t in traffic if t.on_storage == on]
        shared.update(zip(map(id, mine), _timings(nets[on], mine, router), strict=True))
    sharing = {on: sum(t.on_storage == on for t in traffic) for on in routers}
    alone = [  # a job alone on its network was just timed: the same demand, not routed again
        shared[id(t)]
        if sharing[t.on_storage] == 1
        else _timings(nets[t.on_storage], [t], routers[t.on_storage])[0]
        for t in traffic
    ]
    return [(t, a, shared[id(t)]) for t, a in zip(traffic, alone, strict=True)]
