"""Where a training job's ranks sit on the fabric, and the rank groups of each parallelism.

Rank r is GPU r in placement order (servers in order, GPUs by index). Ranks are laid out
tensor-parallel innermost, then context-parallel, then data-parallel (whose consecutive
blocks of `ep` ranks form the expert-parallel groups), then pipeline stages outermost:
Megatron-core's order ``tp-cp-ep-dp-pp``, which keeps the large data-parallel traffic within
neighbouring servers. Presets may ask for Llama 3's order ``tp-cp-pp-dp`` instead (data
parallel outermost; ``pp_outermost`` false). Tensor-parallel groups are consecutive GPUs of
one server (NVLink) unless the job asks for TP across servers.

The step model times stage 0 (the stage that finishes last in 1F1B), so every group here is
one group of stage 0 to measure plus the groups of the same stage that run the same
collective beside it, at most `limit` of them, the nearest in rank order, to bound the
routing work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.training.layout import Layout


def rank_grid(layout: Layout) -> np.ndarray:
    """GPU id of every rank as an array indexed [pp, dp, cp, tp]."""
    shape = (layout.pp, layout.dp, layout.cp, layout.tp)
    ranks = np.arange(layout.gpus, dtype=np.int64)
    if layout.pp_outermost:  # Megatron: rank = t + tp (c + cp (d + dp p))
        return ranks.reshape(shape)
    # Llama 3: rank = t + tp (c + cp (p + pp d))
    return ranks.reshape(layout.dp, layout.pp, layout.cp, layout.tp).transpose(1, 0, 2, 3)


@dataclass
class Groups:
    """One measured rank group and the groups running the same collective beside it."""

    ranks: np.ndarray
    concurrent: list[np.ndarray]
    available: int  # concurrent groups before the bound

    @property
    def size(self) -> int:
        """Ranks in the measured group."""
        return int(self.ranks.shape[0])


def _bounded(groups: list[np.ndarray], limit: int) -> Groups:
    rest = groups[1:]
    return Groups(groups[0], rest[:limit], len(rest))


def tp_groups(grid: np.ndarray, limit: int, spans_servers: bool = False) -> Groups:
    """The first TP group: consecutive GPUs, inside one server (NVLink only, timed alone) or,
    when TP spans servers, timed with the other TP groups of stage 0 sharing the network."""
    if not spans_servers:
        return Groups(grid[0, 0, 0, :], [], 0)
    _, dp, cp, _ = grid.shape
    return _bounded([grid[0, d, c, :] for d in range(dp) for c in range(cp)], limit)


def cp_groups(grid: np.ndarray, limit: int) -> Groups:
    """CP groups of stage 0, replica 0: one per TP position."""
    return _bounded([grid[0, 0, :, t] for t in range(grid.shape[3])], limit)


def dp_groups(grid: np.ndarray, limit: int) -> Groups:
    """Gradient-reduction groups of stage 0: the DP x CP ranks of each TP position."""
    return _bounded([np.sort(grid[0, :, :, t].ravel()) for t in range(grid.shape[3])], limit)


def expert_dp_groups(grid: np.ndarray, ep: int, limit: int) -> Groups:
    """Expert-gradient groups of stage 0: ranks holding the same experts (DP/EP x CP)."""
    groups = [
        np.sort(grid[0, e::ep, :, t].ravel()) for t in range(grid.shape[3]) for e in range(ep)
    ]
    return _bounded(groups, limit)


def ep_groups(grid: np.ndarray, ep: int, limit: int) -> Groups:
    """Expert-parallel groups of stage 0: `ep` consecutive DP ranks per (CP, TP) position."""
    _, dp, cp, tp = grid.shape
    groups = [
        grid[0, k * ep : (k + 1) * ep, c, t]
        for k in range(dp // ep)
        for c in range(cp)
        for t in range(tp)
    ]
    return _bounded(groups, limit)


def pp_groups(grid: np.ndarray, limit: int) -> Groups:
    """Stage 0 to stage 1 rank pairs, one per (DP, CP, TP) position."""
    first, second = grid[0].ravel(), grid[1].ravel()
    pairs = [np.array([a, b]) for a, b in zip(first, second, strict=True)]
    return _bounded(pairs, limit)
