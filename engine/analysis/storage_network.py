"""The storage network's part of `evaluate`: what it holds and how fast a checkpoint goes.

A design with a storage network (`engine.model.networks`) is evaluated on its compute fabric;
this summary says what the storage network beside it holds (nodes, switches, cables), the
bandwidth at each end (the GPU servers' front-end ports, the storage nodes' ports and what
their drives write) and one checkpoint written over it, timed by the same max-min model as
a shared cluster's checkpoint job (`engine.jobs.interference`): the design's first
checkpoint job, or else every GPU writing the workload's message size. The checkpoint's
aggregate rate is set against the three end limits to name what bounds it; a rate below
all three is the network's (a thin cross-section or writes spread unevenly over nodes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.jobs.interference import interference
from engine.model.errors import ScenarioError
from engine.model.jobs import Job
from engine.model.networks import NODE
from engine.topology.fabric import Fabric

_BOUND_RTOL = 1e-6  # an aggregate rate this close to an end's limit is bound by it


def _checkpoint_job(fabric: Fabric) -> tuple[Job, str]:
    """The design's first checkpoint job, or every GPU writing the workload's size."""
    s = fabric.scenario
    for job in s.jobs:
        if job.kind == "checkpoint":
            return job, f"job {job.name}"
    job = Job("checkpoint", fabric.n_gpus, "checkpoint", message_bytes=s.workload.message_bytes)
    return job, "every GPU writes the workload's message size"


def _bound(rate: float, limits: dict[str, float | None]) -> str:
    """Which end limit an aggregate `rate` reaches, else the network's links."""
    for name, limit in limits.items():
        if limit is not None and rate >= limit * (1 - _BOUND_RTOL):
            return name
    return "storage network links"


def storage_summary(fabric: Fabric) -> dict[str, Any] | None:
    """The storage network of an expanded design as `StorageSummary`'s fields; ``None``
    when the design has none."""
    net = fabric.storage
    if net is None:
        return None
    gpu_servers = fabric.n_servers
    groups = net.scenario.groups
    node_models: dict[str, int] = {}
    for g in groups:
        if g.kind == "server" and g.model.endswith(NODE):
            base = g.model.removesuffix(NODE)
            node_models[base] = node_models.get(base, 0) + g.count
    switches: dict[str, int] = {}
    for g in groups:
        if g.kind == "switch":
            switches[g.tier] = switches.get(g.tier, 0) + g.count
    cable = net.network_link_mask()
    src_gpu, dst_gpu = net.link_src < net.n_gpus, net.link_dst < net.n_gpus
    src_server = net.gpu_server[np.where(src_gpu, net.link_src, 0)]
    dst_server = net.gpu_server[np.where(dst_gpu, net.link_dst, 0)]
    out_of_servers = cable & src_gpu & (src_server < gpu_servers)
    into_nodes = cable & dst_gpu & (dst_server >= gpu_servers)
    frontend_Bps = float(net.link_capacity[out_of_servers].sum())
    node_ports_Bps = float(net.link_capacity[into_nodes].sum())
    drives = None
    if net.server_write_Bps is not None:
        caps = net.server_write_Bps[gpu_servers:]
        drives = float(caps.sum()) if np.isfinite(caps).all() else None
    ups = net.bundle_cables_up
    front = {b.id for b in net.scenario.bundles if net.scenario.group(b.a).kind == "server"}
    front_ports = sum(
        int(ups[i])
        for i, b in enumerate(net.scenario.bundles)
        if b.id in front and not net.scenario.group(b.a).model.endswith(NODE)
    )
    job, source = _checkpoint_job(fabric)
    found: dict[str, Any] = {
        "nodes": sum(node_models.values()),
        "node_models": node_models,
        "switches": switches,
        "cables_total": int(net.bundle_cables.sum()),
        "cables_working": int(ups.sum()),
        "frontend_ports": front_ports,
        "frontend_Bps": frontend_Bps,
        "node_ports_Bps": node_ports_Bps,
        "node_drives_Bps": drives,
        "checkpoint_gpus": job.gpus,
        "checkpoint_bytes_per_gpu": float(job.message_bytes),
        "checkpoint_source": source,
    }
    try:
        traffic, alone, _ = interference(fabric, [job])[0]
    except ScenarioError as exc:
        return {**found, "checkpoint_error": exc.brief()}
    moved = float(traffic.src.size) * float(traffic.flow_bytes)
    transfer = alone.time_s - alone.latency_s
    rate = moved / transfer if transfer > 0 else float("inf")
    # writers' share of the front-end: all of it when every GPU writes
    share = job.gpus / fabric.n_gpus if fabric.n_gpus else 1.0
    limits = {
        "storage nodes' drives": drives,
        "storage nodes' ports": node_ports_Bps,
        "servers' front-end ports": frontend_Bps * share,
    }
    return {
        **found,
        "checkpoint_s": alone.time_s,
        "checkpoint_Bps": rate,
        "checkpoint_bound": _bound(rate, limits),
    }
