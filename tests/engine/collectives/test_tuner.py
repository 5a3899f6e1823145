"""NCCL's own pick: its static tuner chooses, the fabric's congestion then times the choice."""

from __future__ import annotations

import numpy as np
import pytest

from engine.collectives.placement import placement
from engine.collectives.technology import PROTOCOLS
from engine.collectives.timing import CollectiveEngine
from engine.model.errors import ScenarioError
from engine.topology import generators as gen
from engine.topology.expand import expand

SIZES = 8.0 * 4.0 ** np.arange(0, 16, 3)  # 8 B .. 8 GiB


@pytest.fixture(scope="module")
def ib_64(catalog):
    fabric = expand(gen.rail_optimized(1024, "dgx-h100", "qm9700", catalog=catalog), catalog)
    return fabric, CollectiveEngine(fabric, catalog)


def test_auto_runs_the_pair_nccl_s_tuner_times_fastest(ib_64):
    fabric, engine = ib_64
    ranks = placement(fabric, 64)
    auto = engine.run("all-reduce", ranks, SIZES)
    forced = {}
    for algo in engine.algorithms("all-reduce", ranks):
        for proto in PROTOCOLS:
            try:
                forced[(algo, proto)] = engine.run("all-reduce", ranks, SIZES, algo, proto).rows
            except ScenarioError:  # NVLS and NVLS-tree refuse LL and LL128
                continue
    assert len(forced) >= 6
    for i, row in enumerate(auto.rows):
        tuner = {pair: rows[i]["tuner_time_s"] for pair, rows in forced.items()}
        pair = (row["algorithm"], row["protocol"])
        assert row["tuner_time_s"] == pytest.approx(min(tuner.values()), rel=1e-12)
        assert tuner[pair] == pytest.approx(min(tuner.values()), rel=1e-12)
        # What runs is timed on the fabric, like the same pair forced.
        assert row["time_s"] == pytest.approx(forced[pair][i]["time_s"], rel=1e-12)
        # The what-if: the fastest pair under the transport, never slower than the pick.
        fastest = min(rows[i]["time_s"] for rows in forced.values())
        assert row["fastest_time_s"] == pytest.approx(fastest, rel=1e-12)
        assert row["fastest_time_s"] <= row["time_s"]
        assert row["fastest_time_s"] == pytest.approx(
            min(curve[i] for curve in auto.curves.values()), rel=1e-12
        )
    # Small messages go to a latency-optimised algorithm, large ones run near the NICs' rate.
    assert auto.rows[0]["algorithm"] != "ring"
    assert auto.rows[-1]["busbw_GBps"] > 300


def test_the_pick_does_not_see_the_fabric_past_the_nics(catalog):
    """NCCL's tuner knows the NICs, not the switches: a 4:1 oversubscribed spine changes the
    times, never the choice."""
    picks, times = [], []
    for over in (1.0, 4.0):
        scenario = gen.rail_optimized(
            1024, "hgx-h100", "qm9700", oversubscription=over, catalog=catalog
        )
        scenario.routing.mode = "ecmp"
        fabric = expand(scenario, catalog)
        result = CollectiveEngine(fabric, catalog).run("all-reduce", placement(fabric, 1024), SIZES)
        picks.append([(r["algorithm"], r["protocol"]) for r in result.rows])
        times.append(np.array([r["time_s"] for r in result.rows]))
        tuner = np.array([r["tuner_time_s"] for r in result.rows])
        assert np.all(tuner > 0)
    assert picks[0] == picks[1]
    assert times[1][-1] > 1.5 * times[0][-1]  # the spine is what the large sizes pay for


def test_tuner_time_of_a_ring_is_nccl_s_formula(catalog):
    """Eight servers with one rank each on one switch: NCCL's tuner times a ring all-reduce
    with Simple as base + 2(N-1) network steps (with one GPU a server, the tree's NET
    latency), x 1.4 past the plateau size, plus 2(n-1)/n S over the bus bandwidth: one 400G
    NIC's search channels, 2 x 24 GB/s (nccl-model.md 1.2-1.5, 1.7, NCCL 2.23-2.30)."""
    scenario = gen.single_switch(64, "dgx-h100", "qm9700", catalog=catalog)
    fabric = expand(scenario, catalog)
    ranks = fabric.server_first_gpu[:8].astype(np.int64)
    n = ranks.size
    sizes = np.array([2.0**30, 2.0**34])
    rows = CollectiveEngine(fabric, catalog).run("all-reduce", ranks, sizes, "ring", "simple").rows
    latency = (8.4 + 2 * (n - 1) * 14.0) * 1.4 * 1e-6
    for size, row in zip(sizes, rows, strict=True):
        expected = latency + 2 * (n - 1) / n * size / 48e9
        assert row["tuner_time_s"] == pytest.approx(expected, rel=0.01)
