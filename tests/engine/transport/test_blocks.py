"""A network run one cache-sized block at a time is the network run whole, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.analysis import load_preset
from engine.flows.traffic import permutation
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.transport import blocks, live
from engine.transport.blocks import arrange
from engine.transport.defaults import transport_config
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.simulate import simulate
from engine.transport.tables import build_tables
from engine.transport.workloads import incast, switch_spec
from tests.engine.transport.networks import assert_same_result, configs, small_networks
from tests.engine.transport.test_copies import joined


def _blocked(monkeypatch, block_elements: int) -> None:
    monkeypatch.setattr(blocks, "BLOCK_ELEMENTS", block_elements)
    monkeypatch.setattr(blocks, "MIN_ELEMENTS", 1)


def _whole(monkeypatch) -> None:
    monkeypatch.setattr(blocks, "MIN_ELEMENTS", 2**62)


def _n_blocks(network, config) -> int:
    arranged = arrange(network, build_tables(network, config)[0].gates)
    ordered = network if arranged is None else arranged[0]
    return build_tables(ordered, config)[0].blocks.classes.size - 1


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(small_networks(max_bytes=100e3), min_size=2, max_size=4),
    configs(),
    st.integers(1, 40),
    st.sampled_from([None, 20e-6]),
    st.booleans(),
)
def test_blocks_give_the_whole_run(monkeypatch, parts, config, block_elements, horizon, drop):
    network = joined(parts)
    monkeypatch.setattr(live, "MIN_CLASSES", 1)
    with monkeypatch.context() as m:
        _blocked(m, block_elements)
        n_blocks = _n_blocks(network, config)
        stepped = simulate(network, config, horizon_s=horizon, drop_finished=drop)
    with monkeypatch.context() as m:
        _whole(m)
        whole = simulate(network, config, horizon_s=horizon, drop_finished=drop)
    event(f"{n_blocks} blocks")  # most draws make 2-3 (`pytest --hypothesis-show-statistics`)
    assert stepped.network is network
    assert_same_result(stepped, whole)


def test_joined_parts_make_several_blocks(monkeypatch, catalog) -> None:
    # the property above would hold trivially if every network stayed one block
    config = transport_config(catalog, "roce", "sn5600")
    spec = switch_spec(catalog, "sn5600", 400)
    network = joined([incast(2, spec, 1e5), incast(3, spec, 1e5), incast(2, spec, 2e5)])
    _blocked(monkeypatch, 4)
    assert _n_blocks(network, config) == 3


def test_a_1k_permutation_in_blocks_is_the_whole_run(monkeypatch, catalog) -> None:
    fabric = expand(load_preset("hgx-h100-roce-ecmp-1k"), catalog)
    src, dst = permutation(fabric, fabric.scenario.workload.seed)
    routed = Router(fabric).route(src, dst, fabric.scenario.routing, connection_bytes=2e6)
    network = scenario_network(fabric, routed, catalog)
    config = scenario_transport_config(fabric.scenario, catalog)
    with monkeypatch.context() as m:
        _blocked(m, 1024)
        assert _n_blocks(network, config) > 4
        stepped = simulate(network, config, run_copies_once=False)
    with monkeypatch.context() as m:
        _whole(m)
        whole = simulate(network, config, run_copies_once=False)
    assert np.all(np.isfinite(whole.finish_s))
    assert_same_result(stepped, whole)
