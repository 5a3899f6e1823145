"""Path latencies summed per path shape equal the entry-by-entry sums, term for term."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.flows.traffic import permutation
from engine.model.scenario import RoutingPolicy
from engine.routing.path_latency import (
    SIGNATURES,
    path_codes,
    path_codes_reference,
    path_latencies_reference,
    path_signatures,
    signature_latencies,
)
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import expand


@pytest.fixture(scope="module")
def fabric(catalog):
    return expand(gen.leaf_spine(512, "dgx-h100", "qm9700", catalog=catalog), catalog)


@pytest.mark.parametrize("mode", ["ecmp", "adaptive", "spray"])
def test_route_latencies_equal_the_entry_by_entry_sums(catalog, mode):
    # the first ask sums entry by entry; every later latency (a sweep) comes from the shapes
    scenario = gen.leaf_spine(256, "dgx-h100", "qm9700", catalog=catalog)
    seen = set()
    for latency_ns in (None, 700.0, 2500.0):
        scenario.fabric.switch_latency_ns = latency_ns
        fabric = expand(scenario, catalog)
        src, dst = permutation(fabric, seed=5)
        routed = Router(fabric).route(src, dst, RoutingPolicy(mode=mode, seed=2))
        expected = path_latencies_reference(
            routed.flow_ptr, routed.entry_link, routed.entry_weight, fabric.link_latency
        )
        assert np.array_equal(routed.latency, expected)
        seen.add(float(routed.latency.max()))
    assert len(seen) == 3
    assert any(k.startswith(routed.key) for k in SIGNATURES._items)  # shapes were used


def test_few_shapes_stand_for_many_flows_and_follow_every_class(fabric):
    src, dst = permutation(fabric, seed=5)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="ecmp"))
    shapes = path_signatures(
        routed.flow_ptr,
        routed.entry_link,
        routed.entry_weight,
        fabric.link_latency_class,
        fabric.class_latency.shape[0],
    )
    n_flows = routed.flow_ptr.shape[0] - 1
    assert shapes.rep_ptr.shape[0] - 1 < n_flows / 10  # leaf-local and leaf-spine-leaf shapes
    # Any new set of class latencies gives the sums over the links carrying them.
    rng = np.random.default_rng(1)
    for _ in range(3):
        class_latency = rng.uniform(1e-9, 1e-5, fabric.class_latency.shape[0])
        link_latency = class_latency[fabric.link_latency_class]
        expected = path_latencies_reference(
            routed.flow_ptr, routed.entry_link, routed.entry_weight, link_latency
        )
        assert np.array_equal(signature_latencies(shapes, class_latency), expected)


def test_weighted_entries_keep_one_shape_per_flow():
    flow_ptr = np.array([0, 2, 4])
    entry_link = np.array([0, 1, 0, 1])
    weights = np.array([0.5, 0.5, 1.0, 1.0])
    link_class = np.array([0, 1])
    shapes = path_signatures(flow_ptr, entry_link, weights, link_class, 2)
    assert shapes.flow_signature.tolist() == [0, 1]
    got = signature_latencies(shapes, np.array([2.0, 4.0]))
    assert got.tolist() == [3.0, 6.0]


def test_equal_shapes_share_one_signature_and_order_matters():
    flow_ptr = np.array([0, 2, 4, 6])
    entry_link = np.array([0, 1, 2, 3, 1, 0])  # links 0, 2 in class 0; 1, 3 in class 1
    link_class = np.array([0, 1, 0, 1])
    shapes = path_signatures(flow_ptr, entry_link, np.ones(6), link_class, 2)
    sig = shapes.flow_signature.tolist()
    assert sig[0] == sig[1] != sig[2]
    assert dataclasses.asdict(shapes)["rep_ptr"].tolist() == [0, 2, 4]


def test_the_code_kernel_matches_its_reference(fabric):
    src, dst = permutation(fabric, seed=9)
    routed = Router(fabric).route(src, dst, RoutingPolicy(mode="ecmp", seed=4))
    link_class = fabric.link_latency_class.astype(np.int64)
    base = fabric.class_latency.shape[0] + 1
    got = path_codes(routed.flow_ptr, routed.entry_link, link_class, base)
    assert np.array_equal(
        got, path_codes_reference(routed.flow_ptr, routed.entry_link, link_class, base)
    )
