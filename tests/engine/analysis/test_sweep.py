"""Sweeps: the same table serially, on a process pool and on a Dask cluster; cancel; Pareto."""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from engine.analysis.comparison import convert_technology
from engine.analysis.sweeps import pareto_front, parse_values, sweep
from engine.model.errors import ScenarioError
from engine.presets.scenarios import load_preset

LATENCIES = parse_values("100:10000:64")


@pytest.fixture(scope="module")
def scenario():
    s = load_preset("dgx-h100-ib-ndr-1k")
    s.workload.message_bytes = 2.0**20
    s.workload.ranks = 64
    return s


@pytest.fixture(scope="module")
def serial(scenario):
    return sweep(scenario, [("fabric.switch_latency_ns", LATENCIES)], "busbw_GBps")


def test_a_64_point_sweep_gives_a_curve(serial):
    assert len(serial.points) == 64
    assert not np.any(np.isnan(serial.results))
    # More switch latency, less bus bandwidth at 1 MiB: a latency-bound size.
    assert np.all(np.diff(serial.results) <= 1e-12)
    assert serial.results[0] > 1.2 * serial.results[-1]


def test_a_process_pool_gives_the_identical_table(scenario, serial):
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = sweep(scenario, [("fabric.switch_latency_ns", LATENCIES)], "busbw_GBps", pool)
    np.testing.assert_array_equal(pooled.results, serial.results)


def test_a_dask_local_cluster_gives_the_identical_table(scenario, serial):
    from dask import distributed

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = sweep(
            scenario,
            [("fabric.switch_latency_ns", LATENCIES)],
            "busbw_GBps",
            client.get_executor(),
        )
    np.testing.assert_array_equal(remote.results, serial.results)


def test_two_parameters_make_a_grid(scenario):
    result = sweep(
        scenario,
        [("fabric.switch_latency_ns", ["100", "5000"]), ("routing.mode", ["ecmp", "spray"])],
        "busbw_GBps",
    )
    assert result.grid().shape == (2, 2)
    assert result.table()["routing.mode"] == ["ecmp", "spray", "ecmp", "spray"]
    assert "busbw_GBps" in result.to_csv().splitlines()[0]


def test_cancel_keeps_the_finished_points(scenario):
    seen = []
    result = sweep(
        scenario,
        [("fabric.switch_latency_ns", LATENCIES[:10])],
        "busbw_GBps",
        progress=lambda done, total: seen.append(done),
        cancelled=lambda: len(seen) >= 3,
    )
    assert result.cancelled
    finished = ~np.isnan(result.results)
    assert finished.sum() == 3
    assert not math.isnan(result.results[0])


def test_cancel_on_a_pool_drops_pending_points(scenario):
    seen = []
    with ProcessPoolExecutor(max_workers=1) as pool:
        result = sweep(
            scenario,
            [("fabric.switch_latency_ns", LATENCIES[:12])],
            "busbw_GBps",
            pool,
            progress=lambda done, total: seen.append(done),
            cancelled=lambda: len(seen) >= 2,
        )
    assert result.cancelled
    assert 2 <= np.count_nonzero(~np.isnan(result.results)) < 12


def test_a_bad_path_or_metric_fails_before_anything_runs(scenario):
    with pytest.raises(ScenarioError, match="no field"):
        sweep(scenario, [("fabric.no_such_field", ["1"])], "busbw_GBps")
    with pytest.raises(ScenarioError, match="unknown metric"):
        sweep(scenario, [("fabric.switch_latency_ns", ["1"])], "speed")


def test_values_parse_lists_and_ranges():
    assert parse_values("1,2, 4") == ["1", "2", "4"]
    assert parse_values("0:10:3") == ["0", "5", "10"]
    with pytest.raises(ScenarioError, match="start:stop:count"):
        parse_values("a:b:c")


def test_pareto_front_keeps_only_undominated_points():
    cost = [10, 20, 15, 30, 12]
    perf = [1.0, 3.0, 2.0, 2.5, 0.5]
    assert pareto_front(cost, perf) == [0, 2, 1]


def test_infiniband_fabric_converts_to_roce_with_the_same_topology():
    ib = load_preset("dgx-h100-ib-ndr-1k")
    roce = convert_technology(ib, "roce")
    assert roce.fabric.technology == "roce"
    assert [g.count for g in roce.groups] == [g.count for g in ib.groups]
    assert all(g.model in ("sn5600", "th5-51t") for g in roce.groups if g.kind == "switch")
    assert [b.speed_gbps for b in roce.bundles] == [b.speed_gbps for b in ib.bundles]


def test_conversion_that_needs_more_ports_than_any_switch_has_is_refused():
    with pytest.raises(ScenarioError, match="no infiniband switch"):
        convert_technology(load_preset("hgx-h100-roce-ecmp-1k"), "infiniband")


def test_interruptions_per_day_grow_by_the_same_step_per_server_added():
    """Goodput metrics in a sweep: each server adds its GPUs, NICs and cables to the same
    switch, so interruptions per day are affine in the server count; some goodput is lost."""
    from engine.topology.generators import single_switch

    scenario = single_switch(16, "dgx-h100", "sn5600")
    counts = [("groups.servers.count", ["2", "4", "6"])]
    per_day = sweep(scenario, counts, "interruptions_per_day").results
    assert per_day[2] - per_day[1] == pytest.approx(per_day[1] - per_day[0], rel=1e-9)
    assert per_day[1] > per_day[0] > 0
    share = sweep(scenario, counts, "goodput_share").results
    assert all(0 < s < 1 for s in share)
