"""An all-to-all stage profiled by kinds of flows (`engine.collectives.lumped_stage`)
against the same stage listed pair by pair."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import engine.collectives.schedules as schedules
from engine.catalog.devices import default_catalog
from engine.collectives.timing import CollectiveEngine
from engine.collectives.work_cache import SCHEDULES
from engine.topology import generators as gen
from engine.topology.expand import expand

SIZES = np.array([2.0**20, 2.0**26, 2.0**30])
PAIR_LIMIT = schedules.MAX_ALL_AT_ONCE_PAIRS


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def run(catalog, scenario, monkeypatch, by_kinds: bool):
    """The all-to-all of every GPU, by kinds (the pair limit lowered under the pairs) or
    listed pair by pair, on a fresh engine (no profile carried over)."""
    fabric = expand(scenario, catalog)
    limit = 10 if by_kinds else PAIR_LIMIT
    monkeypatch.setattr(schedules, "MAX_ALL_AT_ONCE_PAIRS", limit)
    SCHEDULES.clear()  # a schedule is kept by its ranks, not by the limit
    engine = CollectiveEngine(fabric, catalog)
    return engine.run("all-to-all", np.arange(fabric.n_gpus), SIZES, algorithm="all-at-once")


@pytest.mark.parametrize("model", ["ideal", "mechanistic"])
def test_by_kinds_times_the_stage_as_pair_by_pair(catalog, monkeypatch, model):
    """A 64-GPU leaf-spine at 4:1 on InfiniBand, every flow sprayed: the uplinks are the
    bottleneck. By kinds the collective takes the time it takes pair by pair: to 1e-9 at the
    ideal, within 1% through the transport (its runs differ in length: a run's class-step
    budget buys the 2 classes of the kinds more time than the 3,584 of the pairs)."""
    scenario = gen.leaf_spine(
        64, "dgx-h100", "qm9700", oversubscription=4.0, speed_gbps=400, catalog=catalog
    )
    scenario.routing = replace(scenario.routing, mode="spray")
    scenario.transport = replace(scenario.transport, model=model)
    kinds = run(catalog, scenario, monkeypatch, by_kinds=True)
    pairs = run(catalog, scenario, monkeypatch, by_kinds=False)
    assert "by kinds" in kinds.breakdown[0]["stage"]
    assert "by kinds" not in pairs.breakdown[0]["stage"]
    rtol = 1e-9 if model == "ideal" else 0.01
    times = lambda result: np.array([row["time_s"] for row in result.rows])  # noqa: E731
    np.testing.assert_allclose(times(kinds), times(pairs), rtol=rtol)
    nic_bound = 2.0**30 * 56 / 64 / 48e9  # a GPU's bytes to other servers at NCCL's NIC rate
    assert times(kinds)[-1] > 1.2 * nic_bound  # the taper binds, not the NICs
