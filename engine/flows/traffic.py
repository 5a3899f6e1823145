"""Traffic patterns to probe a fabric with, as (source GPU, destination GPU) arrays."""

from __future__ import annotations

import numpy as np

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
