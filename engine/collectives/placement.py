"""Which GPUs a collective's ranks are: the scenario's placement order.

Rank r is the r-th GPU of ``workload.placement`` when the scenario gives one (checked to be
distinct GPU ids of the fabric), else GPU r: servers in order, GPUs by index.
"""

from __future__ import annotations

import numpy as np

from engine.model.errors import Problem, ScenarioError
from engine.topology.expand import Fabric


def placement(fabric: Fabric, count: int = 0) -> np.ndarray:
    """The first `count` ranks (all when 0) in placement order.

    The order is the scenario's ``workload.placement`` (GPU ids, rank by rank) when given,
    else servers in order and GPUs by index.
    """
    given = fabric.scenario.workload.placement
    order = np.asarray(given, dtype=np.int64) if given else np.arange(fabric.n_gpus, dtype=np.int64)
    if given and (
        order.min() < 0 or order.max() >= fabric.n_gpus or np.unique(order).size != order.size
    ):
        raise ScenarioError(
            Problem(
                "workload",
                f"placement must list distinct GPU ids from 0 to {fabric.n_gpus - 1}",
                "placement",
            )
        )
    n = order.size if count <= 0 else count
    if n > order.size:
        raise ScenarioError(
            Problem(
                "workload", f"{n} ranks asked for, the placement has {order.size} GPUs", "ranks"
            )
        )
    return order[:n]
