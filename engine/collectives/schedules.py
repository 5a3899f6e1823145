"""Collective algorithms as schedules of flow stages, the way NCCL and MPI libraries run them.

A schedule is a list of `Stage`s run one after another. A stage is a set of concurrent
GPU-to-GPU flows, each carrying ``share * S`` bytes of an S-byte collective, repeated
`repeat` times in a row (a ring's 2(n-1) identical steps), plus how many of its steps pay
a network or an NVLink step latency. Timing (`engine.collectives.timing`) routes each stage's
pattern once and scales it to every message size.

Algorithms: ``ring`` (one ring per NIC rail, as NCCL's channels), ``tree`` (NCCL's double
binary tree between servers with a chain inside each), ``halving-doubling`` (Rabenseifner),
``recursive-doubling``, ``hierarchical`` (reduce-scatter over NVLink, one ring per rail
between servers, all-gather over NVLink), ``sharp`` (in-network reduction in the switches),
``nvls`` (NVLink SHARP inside one server), ``nvlstree`` (NVLink SHARP inside each server
pipelined with a double binary tree per rail between servers, NCCL's NVLSTree), ``pairwise``
and ``all-at-once`` all-to-all.
"""

from __future__ import annotations

import numpy as np

from engine.collectives.stages import (
    Pipeline,
    RankLayout,
    Stage,
    flows,
    layout,
    merged_pipeline,
    refuse,
)
from engine.collectives.switch_reduced import nvls_schedule, nvlstree_schedule, sharp_schedule
from engine.collectives.trees import (
    double_binary_trees,
    nccl_btree_parents,
    nccl_dtree_parents,
    tree_depth,
    tree_schedule,
)
from engine.model.errors import Problem, ScenarioError

OPS = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "broadcast",
    "reduce",
    "all-to-all",
    "send-recv",
)
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "all-reduce": (
        "ring",
        "tree",
        "halving-doubling",
        "recursive-doubling",
        "hierarchical",
        "sharp",
        "nvls",
        "nvlstree",
    ),
    "all-gather": ("ring", "hierarchical", "halving-doubling"),
    "reduce-scatter": ("ring", "hierarchical", "halving-doubling"),
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "all-to-all": ("all-at-once", "pairwise"),
    "send-recv": ("ring",),
}


# What `auto` chooses from: the algorithms NCCL itself runs (its tuner picks among them).
# halving-doubling, recursive-doubling and hierarchical are MPI-style and run when asked for.
NCCL_ALGORITHMS = ("ring", "tree", "sharp", "nvls", "nvlstree", "all-at-once")
# NCCL's algorithm family (its tuner's row) of each schedule; MPI-style ones time as rings.
NCCL_CLASS = {
    "ring": "ring",
    "tree": "tree",
    "sharp": "collnet",
    "nvls": "nvls",
    "nvlstree": "nvlstree",
}


# Connections of one all-at-once all-to-all: a million (1,024 ranks) take 1.6 s and 0.3 GB,
# 16.8 million (4,096 ranks of the 16k preset) 29 s and 3.1 GB (2026-12-06). Past this many,
# routing and the flows' arrays took minutes and tens of GB before the router's own limit
# refused them (16,384 ranks: 268 M connections, 103 s and 22 GB to a refusal).
MAX_ALL_AT_ONCE_PAIRS = 20_000_000


def ring_orders(lay: RankLayout) -> list[np.ndarray]:
    """One rank order per channel; consecutive servers hand over on the same rail.

    Channel c visits server s starting at local rank (c - s) mod g, so the last rank of
    server s and the first of server s+1 share a rail (NIC index), as NCCL's rings do.
    """
    if lay.n_servers == 1 or lay.per_server <= 1:
        return [lay.ranks]
    g = lay.per_server
    grid = np.asarray(lay.by_server())
    servers = np.arange(lay.n_servers)[:, None]
    local = np.arange(g)[None, :]
    # row s of channel c, rolled left by (c - s) mod g: element j is grid[s, (j + c - s) mod g]
    return [
        np.take_along_axis(grid, (local + c - servers) % g, axis=1).reshape(-1) for c in range(g)
    ]


def by_channel(parts: list[np.ndarray]) -> Pipeline:
    """The pipeline of flows listed channel by channel (`parts`: each channel's sources):
    each channel one pipeline, every flow passing on what the one before it delivers."""
    pipe = np.concatenate([np.full(p.shape[0], c, dtype=np.int64) for c, p in enumerate(parts)])
    return Pipeline(pipe, np.zeros(pipe.shape[0], dtype=np.int8))


def _ring_stage(name: str, lay: RankLayout, steps: int, share_per_step: float) -> Stage:
    orders = ring_orders(lay)
    src = [o for o in orders]
    dst = [np.roll(o, -1) for o in orders]
    s, d, _ = flows(src, dst, 0.0)
    share = np.full(s.shape[0], share_per_step / len(orders))
    # NCCL's ring latency (tuning.cc, 2.23 on): of the `steps` pipelined steps, the ones that
    # cross servers (2 (N - 1) for all-reduce, N - 1 otherwise) pay the network latency.
    per_pass = lay.n_servers - 1 if lay.n_servers > 1 else 0
    inter = min(steps, per_pass * (2 if steps > lay.n - 1 else 1))
    return Stage(
        name,
        s,
        d,
        share,
        repeat=steps,
        net_steps=inter,
        nvlink_steps=steps - inter,
        pipeline=by_channel(src),
    )


def _ring(op: str, lay: RankLayout) -> list[Stage]:
    n = lay.n
    if op == "all-reduce":
        return [_ring_stage("ring all-reduce", lay, 2 * (n - 1), 1.0 / n)]
    if op in ("all-gather", "reduce-scatter"):
        return [_ring_stage(f"ring {op}", lay, n - 1, 1.0 / n)]
    if op in ("broadcast", "reduce"):
        orders = ring_orders(lay)
        src = [o[:-1] for o in orders] if op == "broadcast" else [o[1:] for o in orders]
        dst = [o[1:] for o in orders] if op == "broadcast" else [o[:-1] for o in orders]
        s, d, share = flows(src, dst, 1.0 / len(orders))
        inter = lay.n_servers - 1
        return [
            Stage(
                f"pipelined chain {op}",
                s,
                d,
                share,
                net_steps=inter,
                nvlink_steps=n - 1 - inter,
                pipeline=by_channel(src),
            )
        ]
    if op == "send-recv":
        s, d, share = flows([lay.ranks], [np.roll(lay.ranks, -1)], 1.0)
        net = 1 if lay.n_servers > 1 else 0
        return [
            Stage("send/recv to the next rank", s, d, share, net_steps=net, nvlink_steps=1 - net)
        ]
    raise refuse(op, "ring", "not a ring collective")


def _pow2(op: str, algo: str, n: int) -> int:
    if n < 2 or n & (n - 1):
        raise refuse(op, algo, f"needs a power-of-two number of ranks, not {n}")
    return n.bit_length() - 1


def _exchange_stage(name: str, lay: RankLayout, distance: int, share: float) -> Stage:
    idx = np.arange(lay.n)
    partner = idx ^ distance
    net = int(np.any(lay.server != lay.server[partner]))
    return Stage(
        name,
        lay.ranks,
        lay.ranks[partner],
        np.full(lay.n, share),
        net_steps=net,
        nvlink_steps=1 - net,
    )


def _halving_doubling(op: str, lay: RankLayout) -> list[Stage]:
    k = _pow2(op, "halving-doubling", lay.n)
    halving = [
        _exchange_stage(f"halving step {i + 1}", lay, lay.n >> (i + 1), 1.0 / (2 << i))
        for i in range(k)
    ]
    doubling = [
        _exchange_stage(f"doubling step {i + 1}", lay, lay.n >> (k - i), 1.0 / (2 << (k - 1 - i)))
        for i in range(k)
    ]
    if op == "all-reduce":
        return halving + doubling
    if op == "reduce-scatter":
        return halving
    if op == "all-gather":
        return doubling
    raise refuse(op, "halving-doubling", "not supported")


def _recursive_doubling(op: str, lay: RankLayout) -> list[Stage]:
    k = _pow2(op, "recursive-doubling", lay.n)
    return [_exchange_stage(f"doubling step {i + 1}", lay, 1 << i, 1.0) for i in range(k)]


def _hierarchical(op: str, lay: RankLayout) -> list[Stage]:
    if lay.per_server <= 1 or lay.n_servers < 2:
        raise refuse(op, "hierarchical", "needs several servers with several ranks each")
    g, n_nodes = lay.per_server, lay.n_servers
    grid = lay.by_server()
    intra_src, intra_dst = grid.ravel(), np.roll(grid, -1, axis=1).ravel()
    rails_src, rails_dst = grid.ravel(), np.roll(grid, -1, axis=0).ravel()

    def intra(name: str) -> Stage:
        return Stage(
            name,
            intra_src,
            intra_dst,
            np.full(intra_src.shape[0], 1.0 / g),
            repeat=g - 1,
            nvlink_steps=g - 1,
        )

    def inter(steps: int, name: str) -> Stage:
        rail = np.arange(rails_src.shape[0], dtype=np.int64) % g  # one ring per rail
        return Stage(
            name,
            rails_src,
            rails_dst,
            np.full(rails_src.shape[0], 1.0 / (g * n_nodes)),
            repeat=steps,
            net_steps=steps,
            pipeline=Pipeline(rail, np.zeros(rail.shape[0], dtype=np.int8)),
        )

    if op == "all-reduce":
        return [
            intra("reduce-scatter over NVLink"),
            inter(2 * (n_nodes - 1), "all-reduce per rail"),
            intra("all-gather over NVLink"),
        ]
    if op == "reduce-scatter":
        return [intra("reduce-scatter over NVLink"), inter(n_nodes - 1, "reduce-scatter per rail")]
    if op == "all-gather":
        return [inter(n_nodes - 1, "all-gather per rail"), intra("all-gather over NVLink")]
    raise refuse(op, "hierarchical", "not supported")


def _all_to_all(op: str, algo: str, lay: RankLayout) -> list[Stage]:
    n = lay.n
    net = 1 if lay.n_servers > 1 else 0
    if algo == "all-at-once" and n * (n - 1) > MAX_ALL_AT_ONCE_PAIRS:
        # Too many pairs to list (over half a minute and 4 GB to route): every rank's pairs
        # at once, profiled by kinds of flows where the fabric allows it.
        empty = np.zeros(0, dtype=np.int64)
        name = "all-to-all, every pair at once (by kinds of flows)"
        share = np.array([1.0 / n])
        return [Stage(name, empty, empty, share, net_steps=net, nvlink_steps=1 - net, lumped=True)]
    if algo == "all-at-once":
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        keep = i != j
        s, d = lay.ranks[i[keep]], lay.ranks[j[keep]]
        return [
            Stage(
                "all-to-all, every pair at once",
                s,
                d,
                np.full(s.shape[0], 1.0 / n),
                net_steps=net,
                nvlink_steps=1 - net,
            )
        ]
    stages = []
    for k in range(1, n):
        dst = lay.ranks[(np.arange(n) + k) % n]
        crosses = int(np.any(lay.server != lay.server[(np.arange(n) + k) % n]))
        stages.append(
            Stage(
                f"pairwise step {k}",
                lay.ranks,
                dst,
                np.full(n, 1.0 / n),
                net_steps=crosses,
                nvlink_steps=1 - crosses,
            )
        )
    return stages


def refuse_merging_lumped(per_group: list[list[Stage]]) -> None:
    """Refuse concurrent groups whose all-to-alls are each too large to list: a stage by
    kinds of flows runs one all-to-all, not several side by side."""
    if len(per_group) > 1 and any(stage.lumped for stages in per_group for stage in stages):
        raise ScenarioError(
            Problem(
                "workload",
                "concurrent all-to-all groups each too large to list pair by pair are not "
                "modelled; give fewer ranks per group, or one group of all of them",
                "ranks",
            )
        )


def merge_concurrent(op: str, per_group: list[list[Stage]]) -> list[Stage]:
    """One schedule of the concurrent groups' schedules of `op`, merged stage by stage (their
    flows side by side, each stage as long as its slowest group's); refused when the groups
    differ in shape or are all-to-alls too large to list."""
    if len(per_group) == 1:
        return per_group[0]
    refuse_merging_lumped(per_group)
    if len({len(p) for p in per_group}) != 1:
        raise ScenarioError(
            Problem(
                "workload",
                f"concurrent {op} groups differ in shape; give groups of equal size and layout",
                "ranks",
            )
        )
    merged = []
    for stages in zip(*per_group, strict=True):
        first = stages[0]
        merged.append(
            Stage(
                first.name,
                np.concatenate([st.src for st in stages]),
                np.concatenate([st.dst for st in stages]),
                np.concatenate([st.share for st in stages]),
                repeat=first.repeat,
                net_steps=max(st.net_steps for st in stages),
                nvlink_steps=max(st.nvlink_steps for st in stages),
                latency_class=first.latency_class,
                analytic_s_per_byte=None
                if first.analytic_s_per_byte is None
                else max(st.analytic_s_per_byte for st in stages),
                analytic_links=first.analytic_links,
                analytic_share=first.analytic_share,
                overlap=first.overlap,
                pipeline=merged_pipeline(stages),
            )
        )
    return merged


def build_schedule(
    op: str, algo: str, lay: RankLayout, nic_s_per_byte: float = 0.0, nvlink_s_per_byte: float = 0.0
) -> list[Stage]:
    """The stages of collective `op` by algorithm `algo` over the ranks of `lay`."""
    if op not in OPS:
        raise ScenarioError(
            Problem("workload", f"unknown collective {op!r}; use one of {', '.join(OPS)}", "op")
        )
    if algo not in ALGORITHMS[op]:
        raise refuse(op, algo, f"not available; {op} runs {', '.join(ALGORITHMS[op])} or auto")
    if lay.n < 2:
        raise refuse(op, algo, "needs at least 2 ranks")
    if algo == "ring":
        return _ring(op, lay)
    if algo == "tree":
        return tree_schedule(op, lay)
    if algo == "halving-doubling":
        return _halving_doubling(op, lay)
    if algo == "recursive-doubling":
        return _recursive_doubling(op, lay)
    if algo == "hierarchical":
        return _hierarchical(op, lay)
    if algo == "sharp":
        return sharp_schedule(op, lay, nic_s_per_byte)
    if algo == "nvls":
        return nvls_schedule(op, lay, nvlink_s_per_byte)
    if algo == "nvlstree":
        return nvlstree_schedule(op, lay, nvlink_s_per_byte)
    return _all_to_all(op, algo, lay)


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw = algbw x factor (NVIDIA/nccl-tests doc/PERFORMANCE.md)."""
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op in ("all-gather", "reduce-scatter", "all-to-all"):
        return (n - 1) / n
    return 1.0


__all__ = [
    "ALGORITHMS",
    "NCCL_ALGORITHMS",
    "NCCL_CLASS",
    "OPS",
    "RankLayout",
    "Stage",
    "build_schedule",
    "bus_factor",
    "double_binary_trees",
    "layout",
    "nccl_btree_parents",
    "nccl_dtree_parents",
    "ring_orders",
    "tree_depth",
]
