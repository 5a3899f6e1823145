"""The expanded graph is kept between evaluations and never outlives an edit of its inputs."""

from __future__ import annotations

import numpy as np
import pytest

from engine.model.overrides import apply_override
from engine.presets.scenarios import load_preset
from engine.topology.expand import expand
from engine.topology.graph_cache import GRAPHS

ARRAYS = ("link_src", "link_dst", "link_capacity", "link_bundle", "node_group", "gpu_line_rate")


@pytest.fixture
def base():
    GRAPHS.clear()
    return load_preset("dgx-h100-ib-ndr-1k")


def cold(scenario, catalog):
    GRAPHS.clear()
    return expand(scenario, catalog)


def test_a_latency_edit_shares_the_graph_and_gets_its_own_latencies(base, catalog):
    first = expand(base, catalog)
    edited = apply_override(base, "fabric.switch_latency_ns", "5000")
    second = expand(edited, catalog)
    for name in ARRAYS:
        assert getattr(second, name) is getattr(first, name)
    assert second.scenario is edited
    assert not np.array_equal(second.link_latency, first.link_latency)
    uncached = cold(edited, catalog)
    assert np.array_equal(second.link_latency, uncached.link_latency)
    assert second.link_latency.max() > first.link_latency.max()


@pytest.mark.parametrize(
    ("path", "value", "changed"),
    [
        ("bundles.1.speed_gbps", "200", "link_capacity"),
        ("groups.0.count", "64", "link_src"),
        ("fabric.mtu_bytes", "1024", "link_capacity"),
    ],
)
def test_an_edit_of_what_the_graph_reads_expands_again(base, catalog, path, value, changed):
    first = expand(base, catalog)
    edited = apply_override(base, path, value)
    second = expand(edited, catalog)
    assert getattr(second, changed) is not getattr(first, changed)
    uncached = cold(edited, catalog)
    assert np.array_equal(getattr(second, changed), getattr(uncached, changed))


def test_shared_arrays_cannot_be_written(base, catalog):
    fabric = expand(base, catalog)
    with pytest.raises(ValueError):
        fabric.link_capacity[0] = 1.0


def test_parallel_cables_have_different_names(base, catalog):
    from engine.topology.expand import describe_link

    scenario = apply_override(base, "bundles.leaf-spine.links_per_pair", "2")
    fabric = expand(scenario, catalog)
    src, dst = fabric.link_src, fabric.link_dst
    first = int(np.flatnonzero(fabric.link_bundle == 1)[0])
    twins = np.flatnonzero((src == src[first]) & (dst == dst[first]))
    assert twins.size == 2
    names = [describe_link(fabric, int(t)) for t in twins]
    assert names[0] != names[1] and names[0].endswith("#1/2 (leaf-spine)")
