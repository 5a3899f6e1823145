"""Sprayed flows under the transport: each set of links a flow splits over, as one link.

The bundle is exact for even spraying: with no rate control (which a sprayed queue pair
runs once, for all its packets), the same flows split path by path over every link of
every set finish at the same times. Sets that overlap without being equal are refused with
the reason, and a sprayed permutation runs through the transport instead of at the ideal.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.analysis import evaluate
from engine.catalog.devices import default_catalog
from engine.flows.traffic import permutation
from engine.model.overrides import apply_override
from engine.model.scenario import LinkFailure
from engine.routing.router import RoutedFlows, Router
from engine.topology.expand import NVLINK_BUNDLE, expand
from engine.topology.templates import generate
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.params import Mechanisms
from engine.transport.simulate import simulate
from engine.transport.spray import bundle_sprayed
from engine.transport.spray_kernels import (
    EVEN,
    UNEVEN_SHARE,
    count_hops,
    hop_sets,
    hop_sets_reference,
    sets_agree,
    sets_agree_reference,
)

# Tolerance written before the first run: the same fluid model either way, so the finish
# times agree to float rounding of sums taken in another order.
SAME_RTOL = 1e-9


def sprayed_fabric(technology_switch: str = "sn5600"):
    """256 GPUs on leaves 2:1 oversubscribed, every flow sprayed over every spine."""
    scenario = generate(
        "rail-optimized",
        gpus=256,
        server="hgx-h100",
        switch=technology_switch,
        oversubscription=2.0,
    )
    return expand(apply_override(scenario, "routing.mode", "spray"), default_catalog())


def sprayed_permutation(fabric, nbytes: float = 2e6) -> RoutedFlows:
    src, dst = permutation(fabric, 3)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    return Router(fabric).route(
        src[cross], dst[cross], fabric.scenario.routing, connection_bytes=nbytes
    )


def leaf_to_leaf(fabric, nbytes: float = 8e6) -> RoutedFlows:
    """Every GPU under the first two leaves sends to one under the third, on another
    server: more flows than the third leaf has links down from the spines, two per NIC."""
    gpu_node = fabric.link_src[fabric.gpu_nvlink_up]
    cable = np.flatnonzero(fabric.link_bundle != NVLINK_BUNDLE)
    leaf_of_node = dict(
        zip(fabric.link_src[cable].tolist(), fabric.link_dst[cable].tolist(), strict=True)
    )
    leaf_of = np.array([leaf_of_node[int(n)] for n in gpu_node])
    first, second, third = np.unique(leaf_of)[:3]
    src = np.flatnonzero((leaf_of == first) | (leaf_of == second))
    into = np.flatnonzero(leaf_of == third)
    dst = np.concatenate([np.roll(into, into.size // 2), np.roll(into, into.size // 4)])
    return Router(fabric).route(src, dst, fabric.scenario.routing, connection_bytes=nbytes)


def path_by_path(fabric, routed: RoutedFlows) -> tuple[RoutedFlows, np.ndarray]:
    """Each sprayed flow as one flow per path through its hops' sets (bytes split evenly),
    with the flow each came from."""
    links, ptrs, owner, flow_bytes = [], [0], [], []
    for f in range(routed.n_flows):
        entries = routed.entry_link[routed.flow_ptr[f] : routed.flow_ptr[f + 1]]
        weights = routed.entry_weight[routed.flow_ptr[f] : routed.flow_ptr[f + 1]]
        hops, level, total = [], [], 0.0
        for link, weight in zip(entries.tolist(), weights.tolist(), strict=True):
            level.append(link)
            total += weight
            if total > 1 - 1e-9:
                hops.append(level)
                level, total = [], 0.0
        paths = [[]]
        for hop in hops:
            paths = [
                [*p, link]
                for p in paths
                for link in hop
                if not p or fabric.link_dst[p[-1]] == fabric.link_src[link]
            ]
        for p in paths:
            links.extend(p)
            ptrs.append(ptrs[-1] + len(p))
            owner.append(f)
            flow_bytes.append(routed.flow_bytes[f] / len(paths))
    owner = np.array(owner)
    split = replace(
        routed,
        connection=routed.connection[owner],
        src_gpu=routed.src_gpu[owner],
        dst_gpu=routed.dst_gpu[owner],
        flow_bytes=np.array(flow_bytes),
        flow_ptr=np.array(ptrs, dtype=np.int64),
        entry_link=np.array(links, dtype=routed.entry_link.dtype),
        entry_weight=np.ones(len(links)),
        latency=routed.latency[owner],
        key="",
    )
    return split, owner


@pytest.mark.parametrize(("lossless", "nbytes"), [("pfc", 8e6), ("none", 2e6)])
def test_a_set_run_as_one_link_finishes_every_flow_when_its_paths_do(
    lossless: str, nbytes: float
) -> None:
    fabric = sprayed_fabric()
    catalog = default_catalog()
    routed = leaf_to_leaf(fabric, nbytes)
    bundled = bundle_sprayed(routed, fabric, fabric.link_capacity)
    assert not isinstance(bundled, str), bundled
    assert bundled.ports.max() > 1  # some hop really is a set
    config = scenario_transport_config(fabric.scenario, catalog)
    # The same FIFO bins in both runs: the path-by-path network is large enough that the
    # rings' memory bound would widen its bins past the sets' (engine.transport.fifo_shape).
    config = replace(config, mechanisms=Mechanisms(lossless, False, False), fifo_bin_s=10e-6)
    as_sets = scenario_network(fabric, bundled.routed, catalog, ports=bundled.ports)
    split, owner = path_by_path(fabric, routed)
    as_paths = scenario_network(fabric, split, catalog)
    assert as_paths.classes.n_classes > as_sets.classes.n_classes
    run_sets = simulate(as_sets, config)
    run_paths = simulate(as_paths, config)
    assert run_sets.finished and run_paths.finished
    by_set = run_sets.finish_s[as_sets.flow_class]
    by_path = np.zeros(routed.n_flows)
    np.maximum.at(by_path, owner, run_paths.finish_s[as_paths.flow_class])
    np.testing.assert_allclose(by_set, by_path, rtol=SAME_RTOL)
    if lossless == "pfc":
        assert run_sets.pause_fraction.max() > 0  # the uplinks really are congested
    else:
        assert run_sets.dropped_bytes.sum() > 0
        np.testing.assert_allclose(
            run_sets.dropped_bytes.sum(), run_paths.dropped_bytes.sum(), rtol=SAME_RTOL
        )


def test_sets_that_overlap_without_being_equal_are_refused_with_the_reason() -> None:
    fabric = sprayed_fabric()
    routed = sprayed_permutation(fabric)
    # One flow leaves out one link of a set the others spray over evenly.
    f = next(
        f
        for f in range(routed.n_flows)
        if np.any(routed.entry_weight[routed.flow_ptr[f] : routed.flow_ptr[f + 1]] < 1)
    )
    lo, hi = routed.flow_ptr[f], routed.flow_ptr[f + 1]
    weight = routed.entry_weight.copy()
    link = routed.entry_link.copy()
    k = int(np.flatnonzero(weight[lo:hi] < 1)[0]) + lo
    n = round(float(1 / weight[k]))
    link[k + n - 1] = link[k]  # the set's last link replaced by its first: shares still even
    broken = replace(routed, entry_link=link)
    reason = bundle_sprayed(broken, fabric, fabric.link_capacity)
    assert reason == "flows spray over sets of links that overlap without being equal"
    uneven = weight.copy()
    uneven[k], uneven[k + 1] = uneven[k] * 1.5, uneven[k + 1] * 0.5
    reason = bundle_sprayed(replace(routed, entry_weight=uneven), fabric, fabric.link_capacity)
    assert reason == "a flow splits unevenly over the links of a hop"
    slower = fabric.link_capacity.copy()
    slower[routed.entry_link[k]] /= 2
    reason = bundle_sprayed(routed, fabric, slower)
    assert reason == "the links a flow sprays over differ in capacity"


def test_a_sprayed_permutation_runs_through_the_transport_without_collisions() -> None:
    """Static ECMP collides flows on the uplinks (a quarter of line rate at the worst, less
    through the transport); spraying spreads every flow over every uplink, and through the
    transport each gets its line rate."""
    catalog = default_catalog()
    fraction = {}
    for mode in ("ecmp", "spray"):
        scenario = apply_override(sprayed_fabric().scenario, "routing.mode", mode)
        transport = evaluate(scenario, catalog, ("permutation",)).permutation.transport
        assert "sprayed" not in transport.note
        fraction[mode] = transport.throughput_fraction.min
    assert fraction["ecmp"] < 0.5
    assert fraction["spray"] == pytest.approx(1.0, abs=1e-6)


def test_a_failed_cable_makes_spraying_uneven_and_the_note_says_so() -> None:
    """With one leaf-spine cable down, the spine that lost it passes on more per link to
    the leaf than the others: the sets are uneven, and the permutation runs at the ideal
    with the reason."""
    scenario = sprayed_fabric().scenario
    scenario.failures.links.append(LinkFailure("leaf-spine", 1))
    transport = evaluate(scenario, default_catalog(), ("permutation",)).permutation.transport
    assert transport.throughput_fraction is None
    assert transport.note.startswith("sprayed flows not run: ")


def test_the_kernels_agree_with_their_plain_python_twins() -> None:
    fabric = sprayed_fabric()
    routed = sprayed_permutation(fabric)
    ptr, link, weight = routed.flow_ptr, routed.entry_link, routed.entry_weight
    uneven = weight.copy()
    k = int(np.flatnonzero(weight < 1)[0])
    uneven[k], uneven[k + 1] = uneven[k] * 1.5, uneven[k + 1] * 0.5
    for shares in (weight, uneven):
        status, hops_of_flow, lowest, size, signature = hop_sets_reference(ptr, link, shares)
        n = count_hops(ptr, shares)
        got = (np.zeros(routed.n_flows, dtype=np.int64), np.zeros(n, dtype=np.int64))
        got += (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.uint64))
        assert hop_sets(ptr, link, shares, *got) == status
        if status == EVEN:
            assert [a.tolist() for a in got] == [hops_of_flow, lowest, size, signature]
            set_of = np.full(fabric.n_links, -1, dtype=np.int64)
            assert sets_agree(ptr, link, *got, set_of) == sets_agree_reference(
                ptr, link, hops_of_flow, lowest, size, signature
            )
    assert status == UNEVEN_SHARE
