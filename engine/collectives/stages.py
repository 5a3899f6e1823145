"""The parts every collective schedule is built of: a stage of concurrent flows, and ranks by server.

A `Stage` is what timing routes and runs once per schedule step; a `RankLayout` says which
server each rank sits on, which every algorithm needs to tell NVLink steps from network ones.
`refuse` words an algorithm that cannot run on a layout as the scenario error the user sees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.model.errors import Problem, ScenarioError


@dataclass(frozen=True)
class Pipeline:
    """How a stage's flows pass data on: per flow its pipeline (`pipe`: a ring of one
    channel, one tree of one channel) and its `phase` (0: toward a tree's root or along a
    ring, 1: down from the root). A flow passes on what reaches its source over a flow of
    the same pipeline and phase, and a tree's root turns what comes up into what goes
    down (`engine.collectives.pipeline`)."""

    pipe: np.ndarray
    phase: np.ndarray


@dataclass
class Stage:
    """Concurrent flows ``src[i] -> dst[i]`` of ``share[i] * S`` bytes, `repeat` times.

    `net_steps` / `nvlink_steps` count the steps that pay a network or NVLink step latency.
    `analytic_s_per_byte` replaces routed flows for stages whose traffic the switches
    themselves reduce (SHARP, NVLS): seconds per byte of S, with no pattern to route.
    `overlap` marks a stage pipelined with the one before it (NVLS-tree's NVLink and network
    halves run at once): the pair's bandwidth time is the slower one's, not their sum.
    `pipeline` says which flows pass on which flows' data (rings and trees; None when the
    flows are independent, as in an all-to-all): the transport then keeps them in step.
    `lumped` marks an all-to-all of every pair at once too large to list: `src` and `dst`
    are empty, `share` holds the one share of every pair, and the stage is profiled by
    kinds of flows (`engine.collectives.lumped_stage`).
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
    pipeline: Pipeline | None = None
    lumped: bool = False


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


def refuse(op: str, algo: str, message: str) -> ScenarioError:
    """The error of algorithm `algo` refusing collective `op`, naming why."""
    return ScenarioError(Problem("workload", f"{algo} {op}: {message}", "algorithm"))


def flows(
    src: list[np.ndarray], dst: list[np.ndarray], share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Concatenated sources and destinations, every flow with the same `share`."""
    s = np.concatenate(src).astype(np.int64, copy=False)  # fresh already: no second copy
    d = np.concatenate(dst).astype(np.int64, copy=False)
    return s, d, np.full(s.shape[0], share)


def merged_pipeline(stages: tuple[Stage, ...] | list[Stage]) -> Pipeline | None:
    """The pipeline of stages of concurrent groups run as one: each group's pipelines
    numbered after the ones before (None when the stages have none)."""
    if any(st.pipeline is None for st in stages):
        return None
    pipes, offset = [], 0
    for st in stages:
        pipes.append(st.pipeline.pipe + offset)
        offset += int(st.pipeline.pipe.max(initial=-1)) + 1
    phase = np.concatenate([st.pipeline.phase for st in stages])
    return Pipeline(np.concatenate(pipes), phase)
