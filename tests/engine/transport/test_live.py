"""A run that goes on with its live part (finished classes and their idle links dropped)
is the run of the whole network, bit for bit."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from engine.analysis import load_preset
from engine.flows.traffic import permutation
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.transport import live
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.simulate import simulate
from tests.engine.transport.networks import assert_same_result, configs, small_networks


@pytest.fixture
def count_shrinks(monkeypatch):
    """Let runs of any size drop their finished part, and count how often they do."""
    calls = []
    original = live.shrink

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(live, "MIN_CLASSES", 1)
    monkeypatch.setattr("engine.transport.simulate.shrink", counted)
    return calls


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(small_networks(max_bytes=100e3), configs())
def test_dropping_finished_classes_changes_nothing(count_shrinks, network, config):
    kept = simulate(network, config, drop_finished=True)
    whole = simulate(network, config, drop_finished=False)
    assert_same_result(kept, whole)


def test_a_1k_permutation_goes_on_with_its_live_part_and_ends_the_same(count_shrinks, catalog):
    fabric = expand(load_preset("hgx-h100-roce-ecmp-1k"), catalog)
    src, dst = permutation(fabric, fabric.scenario.workload.seed)
    routed = Router(fabric).route(src, dst, fabric.scenario.routing, connection_bytes=2e6)
    network = scenario_network(fabric, routed, catalog)
    config = scenario_transport_config(fabric.scenario, catalog)
    kept = simulate(network, config)
    assert count_shrinks, "the run never dropped its finished part"
    assert_same_result(kept, simulate(network, config, drop_finished=False))
