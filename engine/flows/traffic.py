"""Traffic patterns to probe a fabric with, as (source GPU, destination GPU) arrays."""

from __future__ import annotations

import numpy as np

from engine.model.errors import Problem, ScenarioError
from engine.topology.expand import Fabric


def permutation(fabric: Fabric, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A random permutation: every GPU sends to one GPU and receives from one, on other servers.

    The same seed gives the same pattern. With a single server there is no other server, so
    the permutation stays inside it.
    """
    n = fabric.n_gpus
    rng = np.random.default_rng(seed)
    dst = rng.permutation(n)
    server = fabric.gpu_server
    if fabric.n_servers < 2:
        return np.arange(n, dtype=np.int64), dst.astype(np.int64)
    for _ in range(1000):
        clash = np.flatnonzero(server[dst] == server)
        if clash.size == 0:
            break
        # Swap each clashing target with a random other position; repeat until none clash.
        partners = rng.integers(0, n, size=clash.size)
        for i, j in zip(clash, partners, strict=False):
            dst[i], dst[j] = dst[j], dst[i]
    return np.arange(n, dtype=np.int64), dst.astype(np.int64)


def traffic_matrix(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The flows of the scenario's traffic matrix (`workload.matrix`) as (source GPU,
    destination GPU, bytes, start s) arrays; a GPU the fabric does not have is refused,
    naming the flow."""
    matrix = fabric.scenario.workload.matrix
    src = np.array([f.src for f in matrix], dtype=np.int64)
    dst = np.array([f.dst for f in matrix], dtype=np.int64)
    beyond = np.flatnonzero((src >= fabric.n_gpus) | (dst >= fabric.n_gpus))
    if beyond.size:
        i = int(beyond[0])
        raise ScenarioError(
            Problem(
                f"workload.matrix[{i}]",
                f"GPU {max(int(src[i]), int(dst[i]))} does not exist: the fabric has "
                f"{fabric.n_gpus} GPUs (0..{fabric.n_gpus - 1}); {beyond.size} flow(s) point past it",
            )
        )
    nbytes = np.array([f.bytes for f in matrix], dtype=np.float64)
    start = np.array([f.start_s for f in matrix], dtype=np.float64)
    return src, dst, nbytes, start
