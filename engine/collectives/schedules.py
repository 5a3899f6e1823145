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

from dataclasses import dataclass

import numpy as np

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


@dataclass
class Stage:
    """Concurrent flows ``src[i] -> dst[i]`` of ``share[i] * S`` bytes, `repeat` times.

    `net_steps` / `nvlink_steps` count the steps that pay a network or NVLink step latency.
    `analytic_s_per_byte` replaces routed flows for stages whose traffic the switches
    themselves reduce (SHARP, NVLS): seconds per byte of S, with no pattern to route.
    `overlap` marks a stage pipelined with the one before it (NVLS-tree's NVLink and network
    halves run at once): the pair's bandwidth time is the slower one's, not their sum.
    """

    name: str
    src: np.ndarray
    dst: np.ndarray
    share: np.ndarray
    repeat: int = 1
    net_steps: int = 0
    nvlink_steps: int = 0
    latency_class: str = "ring"
    analytic_s_per_byte: float | None = None
    analytic_links: str = ""  # "nic" or "nvlink": which links a switch-reduced stage loads
    analytic_share: float = 0.0  # bytes per byte of S on each of those links, each direction
    overlap: bool = False


@dataclass
class RankLayout:
    """Ranks (GPU ids in placement order) grouped by server."""

    ranks: np.ndarray
    server: np.ndarray  # server index (0..N-1 in order of first appearance) of each rank
    per_server: int  # ranks per server when every server has the same number, else 0
    n_servers: int

    @property
    def n(self) -> int:
        """Number of ranks."""
        return int(self.ranks.shape[0])

    def by_server(self) -> np.ndarray:
        """Ranks as an (N, g) array, row = server; only for uniform layouts."""
        return self.ranks.reshape(self.n_servers, self.per_server)


def layout(ranks: np.ndarray, gpu_server: np.ndarray) -> RankLayout:
    """Group ranks by their server; the rank order inside a server is kept."""
    servers = gpu_server[ranks]
    _, first, inverse = np.unique(servers, return_index=True, return_inverse=True)
    order_of_first = np.argsort(np.argsort(first))
    server = order_of_first[inverse]
    counts = np.bincount(server)
    uniform = int(counts[0]) if np.all(counts == counts[0]) else 0
    contiguous = np.all(np.diff(server) >= 0)
    return RankLayout(
        ranks=ranks,
        server=server,
        per_server=uniform if contiguous else 0,
        n_servers=int(counts.shape[0]),
    )


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


def _refuse(op: str, algo: str, message: str) -> ScenarioError:
    return ScenarioError(Problem("workload", f"{algo} {op}: {message}", "algorithm"))


def _flows(
    src: list[np.ndarray], dst: list[np.ndarray], share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = np.concatenate(src).astype(np.int64)
    d = np.concatenate(dst).astype(np.int64)
    return s, d, np.full(s.shape[0], share)


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


def _ring_stage(name: str, lay: RankLayout, steps: int, share_per_step: float) -> Stage:
    orders = ring_orders(lay)
    src = [o for o in orders]
    dst = [np.roll(o, -1) for o in orders]
    s, d, _ = _flows(src, dst, 0.0)
    share = np.full(s.shape[0], share_per_step / len(orders))
    # NCCL's ring latency (tuning.cc, 2.23 on): of the `steps` pipelined steps, the ones that
    # cross servers (2 (N - 1) for all-reduce, N - 1 otherwise) pay the network latency.
    per_pass = lay.n_servers - 1 if lay.n_servers > 1 else 0
    inter = min(steps, per_pass * (2 if steps > lay.n - 1 else 1))
    return Stage(name, s, d, share, repeat=steps, net_steps=inter, nvlink_steps=steps - inter)


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
        s, d, share = _flows(src, dst, 1.0 / len(orders))
        inter = lay.n_servers - 1
        return [
            Stage(f"pipelined chain {op}", s, d, share, net_steps=inter, nvlink_steps=n - 1 - inter)
        ]
    if op == "send-recv":
        s, d, share = _flows([lay.ranks], [np.roll(lay.ranks, -1)], 1.0)
        net = 1 if lay.n_servers > 1 else 0
        return [
            Stage("send/recv to the next rank", s, d, share, net_steps=net, nvlink_steps=1 - net)
        ]
    raise _refuse(op, "ring", "not a ring collective")


def nccl_btree_parents(n: int) -> np.ndarray:
    """Parent of each of n positions in NCCL's binary tree (-1: the root, position 0).

    NCCL's tree alternates leaves and inner nodes: a position's parent clears its lowest
    set bit and sets the next one up (or only clears it when that falls outside), so odd
    positions are leaves and the root has a single child (src/graph/trees.cc).
    """
    parent = np.full(n, -1, dtype=np.int64)
    for r in range(1, n):
        bit = r & -r
        up = (r ^ bit) | (bit << 1)
        parent[r] = up if up < n else r ^ bit
    return parent


def nccl_dtree_parents(n: int) -> tuple[np.ndarray, np.ndarray]:
    """NCCL's double binary tree over n positions: the tree and its mirror (or shift).

    With an even count the second tree mirrors the first (position r takes the role of
    n - 1 - r), with an odd count it shifts it by one, so every position is an inner node of
    at most one of the two and the load of inner nodes is split between them.
    """
    a = nccl_btree_parents(n)
    r = np.arange(n)
    if n % 2 == 0:
        role = n - 1 - r
        b = np.where(a[role] >= 0, n - 1 - a[role], -1)
    else:
        role = (r - 1) % n
        b = np.where(a[role] >= 0, (a[role] + 1) % n, -1)
    return a, b


def _tree_depth(parent: np.ndarray) -> int:
    depth = 0
    for i in range(parent.shape[0]):
        d, j = 0, i
        while parent[j] >= 0:
            j, d = parent[j], d + 1
        depth = max(depth, d)
    return depth


def _tree(op: str, lay: RankLayout) -> list[Stage]:
    if op != "all-reduce":
        raise _refuse(op, "tree", "tree is an all-reduce algorithm")
    if lay.per_server == 0:
        raise _refuse(op, "tree", "needs the same number of ranks on every server, in server order")
    g, n_nodes = lay.per_server, lay.n_servers
    channels = g if n_nodes > 1 else 1
    s, d, share, depth = _double_binary_trees(lay, channels, with_chains=g > 1)
    return [
        Stage(
            "double binary tree all-reduce",
            s,
            d,
            share,
            net_steps=2 * depth,
            nvlink_steps=2 * (g - 1),
            latency_class="tree",
        )
    ]


def _double_binary_trees(
    lay: RankLayout, channels: int, with_chains: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Flows of NCCL's double binary tree between servers, one pair of trees per channel.

    Channel c joins the servers' local rank c (its rail); with `with_chains` the other ranks
    of each server hang below it in a chain over NVLink. Every tree carries half of its
    channel's share, up (reduce) and down (broadcast) at once, as NCCL pipelines them.
    Returns sources, destinations, shares and the depth of the trees between servers.
    """
    n_nodes = lay.n_servers
    grid = lay.by_server()
    parent_a, parent_b = nccl_dtree_parents(n_nodes)
    src, dst = [], []
    for c in range(channels):
        chain = np.roll(grid, -c, axis=1)  # head of every server: local rank c
        for parent in (parent_a, parent_b):
            child = np.flatnonzero(parent >= 0)
            up_src, up_dst = chain[child, 0], chain[parent[child], 0]
            src += [up_src, up_dst]  # reduce up, then broadcast down (pipelined together)
            dst += [up_dst, up_src]
            if with_chains:
                lo, hi = chain[:, 1:].ravel(), chain[:, :-1].ravel()
                src += [lo, hi]
                dst += [hi, lo]
    s, d, share = _flows(src, dst, 0.5 / channels)
    # NCCL's tuner counts floor(log2 N) network steps each way (its trees are that deep
    # for a power of two); the path latency rides on the same count.
    depth = int(np.floor(np.log2(n_nodes))) if n_nodes > 1 else 0
    return s, d, share, depth


def _pow2(op: str, algo: str, n: int) -> int:
    if n < 2 or n & (n - 1):
        raise _refuse(op, algo, f"needs a power-of-two number of ranks, not {n}")
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
    raise _refuse(op, "halving-doubling", "not supported")


def _recursive_doubling(op: str, lay: RankLayout) -> list[Stage]:
    k = _pow2(op, "recursive-doubling", lay.n)
    return [_exchange_stage(f"doubling step {i + 1}", lay, 1 << i, 1.0) for i in range(k)]


def _hierarchical(op: str, lay: RankLayout) -> list[Stage]:
    if lay.per_server <= 1 or lay.n_servers < 2:
        raise _refuse(op, "hierarchical", "needs several servers with several ranks each")
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
        return Stage(
            name,
            rails_src,
            rails_dst,
            np.full(rails_src.shape[0], 1.0 / (g * n_nodes)),
            repeat=steps,
            net_steps=steps,
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
    raise _refuse(op, "hierarchical", "not supported")


def _sharp(op: str, lay: RankLayout, nic_s_per_byte: float) -> list[Stage]:
    """NVLink reduce-scatter, the switches reduce each rail's shard, NVLink all-gather.

    With reduction in the switches every cable carries each shard once up and once down, so
    the network stage is timed by the slowest NIC: ``S/g`` bytes at its rate.
    """
    if op != "all-reduce":
        raise _refuse(op, "sharp", "in-network reduction is modelled for all-reduce")
    if lay.n_servers < 2 or lay.per_server == 0:
        raise _refuse(op, "sharp", "needs ranks on several servers, the same number on each")
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
            )
        )
    return stages


def _nvls(op: str, lay: RankLayout, nvlink_s_per_byte: float) -> list[Stage]:
    """NVLink SHARP inside one server: the NVSwitch reduces and multicasts.

    Each GPU's NVLink carries S plus its S/g shard in each direction (load-reduce of all
    shards, then a multicast store of its own).
    """
    if op != "all-reduce":
        raise _refuse(op, "nvls", "NVLink SHARP is modelled for all-reduce")
    if lay.n_servers != 1:
        raise _refuse(op, "nvls", "modelled inside one server (NVLink domain) only")
    g = lay.n
    empty = np.empty(0, dtype=np.int64)
    return [
        Stage(
            "NVLink SHARP all-reduce",
            empty,
            empty,
            np.empty(0),
            nvlink_steps=1,
            latency_class="nvls",
            analytic_s_per_byte=nvlink_s_per_byte * (1 + 1 / g),
            analytic_links="nvlink",
            analytic_share=1 + 1 / g,
        )
    ]


def _nvlstree(op: str, lay: RankLayout, nvlink_s_per_byte: float) -> list[Stage]:
    """NCCL's NVLSTree: NVLink SHARP inside each server, a double binary tree per rail between.

    The NVSwitch reduces the server's data onto each GPU's S/g shard and multicasts the
    result back (each GPU's NVLink carries S + S/g each way, as in NVLS); between servers the
    GPUs of one rail reduce and broadcast their shard over two binary trees. NCCL pipelines
    the two, so the slower half sets the bandwidth time.
    """
    if op != "all-reduce":
        raise _refuse(op, "nvlstree", "NVLS-tree is an all-reduce algorithm")
    if lay.n_servers < 2 or lay.per_server < 2:
        raise _refuse(op, "nvlstree", "needs several servers with several ranks each")
    g = lay.per_server
    s, d, share, depth = _double_binary_trees(lay, g, with_chains=False)
    empty = np.empty(0, dtype=np.int64)
    return [
        Stage(
            "NVLink SHARP in each server",
            empty,
            empty,
            np.empty(0),
            nvlink_steps=1,
            latency_class="nvlstree",
            analytic_s_per_byte=nvlink_s_per_byte * (1 + 1 / g),
            analytic_links="nvlink",
            analytic_share=1 + 1 / g,
        ),
        Stage(
            "double binary tree per rail between servers",
            s,
            d,
            share,
            net_steps=2 * depth,
            latency_class="nvlstree",
            overlap=True,
        ),
    ]


def _all_to_all(op: str, algo: str, lay: RankLayout) -> list[Stage]:
    n = lay.n
    net = 1 if lay.n_servers > 1 else 0
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


def build_schedule(
    op: str, algo: str, lay: RankLayout, nic_s_per_byte: float = 0.0, nvlink_s_per_byte: float = 0.0
) -> list[Stage]:
    """The stages of collective `op` by algorithm `algo` over the ranks of `lay`."""
    if op not in OPS:
        raise ScenarioError(
            Problem("workload", f"unknown collective {op!r}; use one of {', '.join(OPS)}", "op")
        )
    if algo not in ALGORITHMS[op]:
        raise _refuse(op, algo, f"not available; {op} runs {', '.join(ALGORITHMS[op])} or auto")
    if lay.n < 2:
        raise _refuse(op, algo, "needs at least 2 ranks")
    if algo == "ring":
        return _ring(op, lay)
    if algo == "tree":
        return _tree(op, lay)
    if algo == "halving-doubling":
        return _halving_doubling(op, lay)
    if algo == "recursive-doubling":
        return _recursive_doubling(op, lay)
    if algo == "hierarchical":
        return _hierarchical(op, lay)
    if algo == "sharp":
        return _sharp(op, lay, nic_s_per_byte)
    if algo == "nvls":
        return _nvls(op, lay, nvlink_s_per_byte)
    if algo == "nvlstree":
        return _nvlstree(op, lay, nvlink_s_per_byte)
    return _all_to_all(op, algo, lay)


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw = algbw x factor (NVIDIA/nccl-tests doc/PERFORMANCE.md)."""
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op in ("all-gather", "reduce-scatter", "all-to-all"):
        return (n - 1) / n
    return 1.0
