"""How a collective's time is composed from its routed stages: NCCL's latency, then bandwidth.

`StageProfile` is what routing and the transport leave of one stage at one byte of message
(seconds per byte, path latencies, loss, the transport's completion curve); `collective_times`
turns a schedule's profiles into the time at every message size as NCCL's tuner composes
it (`engine.collectives.nccl_model`): the algorithm's latency once, each stage's transfer at
the share of bandwidth the protocol keeps (pipelined stages overlapping), under NCCL's caps,
with the factors of the scenario's calibration applied on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.collectives.chunk_pipeline import pipeline_fill
from engine.collectives.nccl_model import (
    NcclModel,
    algbw_per_busbw,
    bandwidth_factor,
    bus_bandwidth_cap,
    channel_count,
    latency_s,
    tree_correction,
)
from engine.collectives.schedules import NCCL_CLASS
from engine.collectives.stage_transport import StageTransport
from engine.collectives.stages import RankLayout, Stage
from engine.model.scenario import Calibration


@dataclass
class StageProfile:
    """A routed stage at one byte of message: seconds per byte and its path latencies."""

    seconds_per_byte: float
    net_latency_s: float
    nvlink_latency_s: float
    link_bytes_per_byte: np.ndarray | None
    loss_log_survival_per_byte: float = 0.0  # log P(no packet of a step lost), per byte of S
    loss_rtt_s: float = 0.0  # round trip a step waits for when one of its packets was lost
    transport: StageTransport | None = None  # what the transport mechanisms made of it
    transport_scale: float = 1.0  # bytes per flow per byte of message, in the curve's units
    # Seconds per byte with only NVLink and the NICs limiting (NCCL's tuner's view,
    # engine.collectives.tuner); None: the same as seconds_per_byte.
    tuner_seconds_per_byte: float | None = None


def collective_times(
    m: NcclModel,
    cal: Calibration,
    op: str,
    algo: str,
    lay: RankLayout,
    stages: list[Stage],
    protocol: str,
    sizes: np.ndarray,
    profiles: list[StageProfile],
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Time of `algo` with `protocol` at each size, and each stage's part of it.

    Latency: NCCL's own formula for its algorithm (`nccl_model.latency_s`), or for
    MPI-style schedules NCCL's per-step latencies summed over the steps; either way plus
    the fabric's path latency per step and the expected wait of loss recovery. Bandwidth:
    the stages' transfer times (the slower of pipelined ones), over the share of the
    bandwidth the protocol keeps (and the tree's size correction), never faster than
    NCCL's caps on the protocol's bus bandwidth, and longer by the fill and drain of
    NCCL's chunk pipeline where a chunk passes several stages in a row
    (`engine.collectives.chunk_pipeline`).
    """
    cls = NCCL_CLASS.get(algo)
    family = cls or "ring"
    n_nodes = lay.n_servers
    nccl_lat = latency_s(m, cls, op, protocol, lay.n, n_nodes, sizes) if cls else None
    if nccl_lat is None:
        total = np.full(sizes.shape[0], m.base_s[family][protocol] * cal.latency_scale)
    else:
        nccl_lat = nccl_lat * cal.latency_scale
        total = nccl_lat.copy()
    keep = np.full(sizes.shape[0], bandwidth_factor(m, family, protocol, n_nodes))
    if protocol == "simple":
        keep = keep * cal.simple_efficiency
    if family == "tree" and op == "all-reduce":
        keep = keep * tree_correction(m, protocol, sizes)
    parts = []
    transfer = np.zeros(sizes.shape[0])
    group = np.zeros(sizes.shape[0])
    for stage, prof in zip(stages, profiles, strict=True):
        scls = stage.latency_class
        lat = stage.net_steps * prof.net_latency_s + stage.nvlink_steps * prof.nvlink_latency_s
        if nccl_lat is None:
            lat += stage.net_steps * m.step_net_s[scls][protocol] * cal.latency_scale
            lat += stage.nvlink_steps * m.step_nvlink_s[scls][protocol] * cal.latency_scale
        # A step that lost a packet waits one more round trip (end-to-end recovery).
        lat = (
            lat
            + stage.repeat * -np.expm1(prof.loss_log_survival_per_byte * sizes) * prof.loss_rtt_s
        )
        ideal = stage.repeat * prof.seconds_per_byte * sizes
        bw = ideal
        if prof.transport is not None and prof.transport.ran:
            # The stage's flows carry repeat x scale x S bytes each over the collective.
            moved = stage.repeat * prof.transport_scale * sizes
            bw = np.maximum(ideal, prof.transport.time_s(moved))
        network = bw  # the transport's time, before NCCL's protocol share and caps
        bw = bw / keep
        if stage.net_steps > 0 or stage.analytic_links == "nic":
            bw = bw / cal.nic_efficiency  # the share of the NIC rate this cluster reaches
        if stage.overlap:
            group = np.maximum(group, bw)  # pipelined with the stage before it
        else:
            transfer += group
            group = bw
        total = total + lat
        parts.append(
            {
                "stage": stage.name,
                "latency_s": lat,
                "bandwidth_s": bw,
                "ideal_s": ideal,
                "network_s": network,
            }
        )
    transfer += group
    if nccl_lat is not None and parts:
        # NCCL's formula times the whole collective; the first stage shows it.
        parts[0]["latency_s"] = parts[0]["latency_s"] + nccl_lat
    channels = channel_count(m, n_nodes, lay.per_server or lay.n // max(1, n_nodes))
    cap = bus_bandwidth_cap(m, family, protocol, n_nodes, channels)
    if np.isfinite(cap):
        floor = sizes / (cap * algbw_per_busbw(family, op, lay.n))
        slower = floor > transfer
        if np.any(slower):
            scale = np.where(slower & (transfer > 0), floor / np.maximum(transfer, 1e-300), 1.0)
            for part in parts:
                part["bandwidth_s"] = part["bandwidth_s"] * scale
            transfer = np.maximum(transfer, floor)
    if m.chunk_rules is not None:
        # The fill and drain of NCCL's chunk pipeline (NVLS, NVLS-tree, Simple chains).
        nvls_channels = m.nvls_channels["1" if n_nodes <= 1 else "2+"]
        fill = pipeline_fill(
            m.chunk_rules, cls, op, protocol, lay.n, n_nodes, channels, nvls_channels, sizes
        )
        if np.any(fill != 1.0):
            transfer = transfer * fill
            for part in parts:
                part["bandwidth_s"] = part["bandwidth_s"] * fill
    return total + transfer, parts
