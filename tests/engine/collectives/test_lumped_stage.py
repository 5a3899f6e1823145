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
from engine.model.errors import ScenarioError
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


def tapered_ib(catalog):
    scenario = gen.leaf_spine(
        64, "dgx-h100", "qm9700", oversubscription=4.0, speed_gbps=400, catalog=catalog
    )
    scenario.routing = replace(scenario.routing, mode="spray")
    return expand(scenario, catalog)


def test_one_engine_keeps_each_part_by_its_ranks(catalog, monkeypatch):
    """Two parts of one size by kinds on one engine: each gets its own stage, as it does on
    an engine of its own (the first 32 GPUs share their leaves less than every other one)."""
    fabric = tapered_ib(catalog)
    monkeypatch.setattr(schedules, "MAX_ALL_AT_ONCE_PAIRS", 10)
    parts = (np.arange(32), np.arange(0, 64, 2))

    def time_s(engine, ranks):
        result = engine.run("all-to-all", ranks, SIZES[-1:], algorithm="all-at-once")
        return result.rows[-1]["time_s"]

    shared = CollectiveEngine(fabric, catalog)
    together = [time_s(shared, r) for r in parts]
    alone = [time_s(CollectiveEngine(fabric, catalog), r) for r in parts]
    assert together == alone
    assert together[0] != together[1]


def test_concurrent_all_to_alls_too_large_to_list_are_refused(catalog, monkeypatch):
    fabric = tapered_ib(catalog)
    monkeypatch.setattr(schedules, "MAX_ALL_AT_ONCE_PAIRS", 10)
    SCHEDULES.clear()
    engine = CollectiveEngine(fabric, catalog)
    with pytest.raises(ScenarioError, match="fewer ranks per group") as refused:
        engine.run(
            "all-to-all",
            np.arange(32),
            SIZES,
            algorithm="all-at-once",
            concurrent=[np.arange(32, 64)],
        )
    assert refused.value.problems[0].field == "ranks"
