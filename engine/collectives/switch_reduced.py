"""Schedules whose reduction happens in a switch: SHARP in the network, NVLink SHARP in the server.

The switches reduce (and multicast) the data themselves, so these stages have no GPU-to-GPU
pattern to route: each carries seconds per byte on the links it loads, NIC or NVLink.
NVLS-tree pipelines NVLink SHARP inside each server with NCCL's double binary tree between.
"""

from __future__ import annotations

import numpy as np

from engine.collectives.stages import RankLayout, Stage, refuse
from engine.collectives.trees import double_binary_trees


def sharp_schedule(op: str, lay: RankLayout, nic_s_per_byte: float) -> list[Stage]:
    """NVLink reduce-scatter, the switches reduce each rail's shard, NVLink all-gather.

    With reduction in the switches every cable carries each shard once up and once down, so
    the network stage is timed by the slowest NIC: ``S/g`` bytes at its rate. NCCL's
    CollNet streams chunks through all three at once (a chunk is reduced over NVLink, sent
    up, and gathered back while the next is on its way), so the stages are pipelined: the
    slowest of them times the collective.
    """
    if op != "all-reduce":
        raise refuse(op, "sharp", "in-network reduction is modelled for all-reduce")
    if lay.n_servers < 2 or lay.per_server == 0:
        raise refuse(op, "sharp", "needs ranks on several servers, the same number on each")
    g = lay.per_server
    stages = []
    if g > 1:
        grid = lay.by_server()
        s, d = grid.ravel(), np.roll(grid, -1, axis=1).ravel()
        stages.append(
            Stage(
                "reduce-scatter over NVLink",
                s,
                d,
                np.full(s.shape[0], 1.0 / g),
                repeat=g - 1,
                nvlink_steps=g - 1,
            )
        )
    empty = np.empty(0, dtype=np.int64)
    stages.append(
        Stage(
            "in-network reduction",
            empty,
            empty,
            np.empty(0),
            net_steps=1,
            latency_class="collnet",
            analytic_s_per_byte=nic_s_per_byte / g,
            analytic_links="nic",
            analytic_share=1 / g,
            overlap=g > 1,
        )
    )
    if g > 1:
        stages.append(
            Stage(
                "all-gather over NVLink",
                stages[0].src,
                stages[0].dst,
                stages[0].share,
                repeat=g - 1,
                nvlink_steps=g - 1,
                overlap=True,
            )
        )
    return stages


def _nvlink_sharp(name: str, latency_class: str, g: int, nvlink_s_per_byte: float) -> Stage:
    """The NVSwitch's load-reduce and multicast over `g` GPUs: each GPU's NVLink carries
    S + S/g each way, with no GPU-to-GPU pattern to route."""
    empty = np.empty(0, dtype=np.int64)
    return Stage(
        name,
        empty,
        empty,
        np.empty(0),
        nvlink_steps=1,
        latency_class=latency_class,
        analytic_s_per_byte=nvlink_s_per_byte * (1 + 1 / g),
        analytic_links="nvlink",
        analytic_share=1 + 1 / g,
    )


def nvls_schedule(op: str, lay: RankLayout, nvlink_s_per_byte: float) -> list[Stage]:
    """NVLink SHARP inside one server: the NVSwitch reduces and multicasts.

    Each GPU's NVLink carries S plus its S/g shard in each direction (load-reduce of all
    shards, then a multicast store of its own).
    """
    if op != "all-reduce":
        raise refuse(op, "nvls", "NVLink SHARP is modelled for all-reduce")
    if lay.n_servers != 1:
        raise refuse(op, "nvls", "modelled inside one server (NVLink domain) only")
    return [_nvlink_sharp("NVLink SHARP all-reduce", "nvls", lay.n, nvlink_s_per_byte)]


def nvlstree_schedule(op: str, lay: RankLayout, nvlink_s_per_byte: float) -> list[Stage]:
    """NCCL's NVLSTree: NVLink SHARP inside each server, a double binary tree per rail between.

    The NVSwitch reduces the server's data onto each GPU's S/g shard and multicasts the
    result back (each GPU's NVLink carries S + S/g each way, as in NVLS); between servers the
    GPUs of one rail reduce and broadcast their shard over two binary trees. NCCL pipelines
    the two, so the slower half sets the bandwidth time.
    """
    if op != "all-reduce":
        raise refuse(op, "nvlstree", "NVLS-tree is an all-reduce algorithm")
    if lay.n_servers < 2 or lay.per_server < 2:
        raise refuse(op, "nvlstree", "needs several servers with several ranks each")
    g = lay.per_server
    s, d, share, depth, pipeline = double_binary_trees(lay, g, with_chains=False)
    return [
        _nvlink_sharp("NVLink SHARP in each server", "nvlstree", g, nvlink_s_per_byte),
        Stage(
            "double binary tree per rail between servers",
            s,
            d,
            share,
            net_steps=2 * depth,
            latency_class="nvlstree",
            overlap=True,
            pipeline=pipeline,
        ),
    ]
