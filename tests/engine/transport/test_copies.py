"""Independent copies inside a network run once: the run of the copies' smaller network,
its figures handed to every copy, must be the run of the whole network, bit for bit."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis import load_preset
from engine.flows.traffic import permutation
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.transport.copies import find_copies
from engine.transport.defaults import transport_config
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.gates import Gates, gates_from_edges, no_gates
from engine.transport.network import FlowClasses, LinkSpec, TransportNetwork
from engine.transport.simulate import simulate
from engine.transport.tables import build_tables
from engine.transport.workloads import incast, switch_spec
from tests.engine.transport.networks import assert_same_result, configs, small_networks


def joined(parts: list[TransportNetwork]) -> TransportNetwork:
    """The parts side by side on links of their own, their classes dealt out in turn (the
    first class of each part, then the second of each, ...), each part's in its order."""
    offsets = np.cumsum([0] + [p.links.n_links for p in parts])
    spec = {}
    for f in fields(LinkSpec):
        values = [getattr(p.links, f.name) for p in parts]
        spec[f.name] = None if values[0] is None else np.concatenate(values)
    order = sorted(
        (c, i) for i, p in enumerate(parts) for c in range(p.classes.n_classes)
    )  # class c of every part before class c + 1 of any
    paths, cls = [], {k: [] for k in ("multiplicity", "bytes", "start_s", "feedback_delay_s")}
    for c, i in order:
        p = parts[i].classes
        paths.append(p.path(c) + offsets[i])
        for k, out in cls.items():
            out.append(getattr(p, k)[c])
    ptr = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in paths], out=ptr[1:])
    classes = FlowClasses(
        ptr=ptr, links=np.concatenate(paths), **{k: np.array(v) for k, v in cls.items()}
    )
    return TransportNetwork(
        LinkSpec(**spec), classes, np.arange(len(paths)), gates=_joined_gates(parts, order)
    )


def _joined_gates(parts: list[TransportNetwork], order: list[tuple[int, int]]) -> Gates | None:
    """The parts' gates on the joined classes (class c of part i is at its place in `order`)."""
    if all(p.gates is None for p in parts):
        return None
    place = {key: k for k, key in enumerate(order)}
    feeder, forwarder, slack = [], [], np.zeros(len(order))
    for i, p in enumerate(parts):
        g = p.gates if p.gates is not None else no_gates(p.classes.n_classes)
        for c in range(p.classes.n_classes):
            slack[place[(c, i)]] = g.slack_bytes[c]
            for k in range(g.ptr[c], g.ptr[c + 1]):
                feeder.append(place[(int(g.cls[k]), i)])
                forwarder.append(place[(c, i)])
    return gates_from_edges(len(order), np.array(feeder), np.array(forwarder), slack)


def assert_same_run(whole: TransportNetwork, config, **kwargs) -> None:
    once = simulate(whole, config, **kwargs)
    every = simulate(whole, config, run_copies_once=False, **kwargs)
    assert once.network is whole
    assert_same_result(once, every)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_networks(max_bytes=100e3), small_networks(max_bytes=100e3), configs(), st.data())
def test_copies_run_once_give_the_whole_run(first, other, config, data):
    copies = data.draw(st.integers(2, 3))
    whole = joined([first] * copies + [other])
    found = find_copies(whole, build_tables(whole, config)[0])
    assert found is not None
    n = whole.classes.n_classes
    assert found.network.classes.n_classes <= n - (copies - 1) * first.classes.n_classes
    # Every class and link maps onto one of the smaller network's with the same numbers.
    small = found.network
    np.testing.assert_array_equal(small.classes.bytes[found.class_of], whole.classes.bytes)
    np.testing.assert_array_equal(small.links.capacity_Bps[found.link_of], whole.links.capacity_Bps)
    horizon = data.draw(st.sampled_from([None, 20e-6]))
    assert_same_run(whole, config, horizon_s=horizon)


def test_parts_that_differ_in_one_number_both_run(catalog):
    spec = switch_spec(catalog, "qm9700", 400)
    config = transport_config(catalog, "infiniband", "qm9700")
    a = incast(4, spec, 1e6)
    b = incast(4, replace(spec, port_buffer_bytes=spec.port_buffer_bytes / 2), 1e6)
    for parts, found in (([a, b], False), ([a, a], True)):
        whole = joined(parts)
        assert (find_copies(whole, build_tables(whole, config)[0]) is not None) is found


@pytest.mark.parametrize("preset", ["dgx-h100-ib-ndr-1k", "hgx-h100-roce-ecmp-1k"])
def test_a_permutation_on_a_1k_fabric_runs_its_copies_once(preset, catalog):
    fabric = expand(load_preset(preset), catalog)
    src, dst = permutation(fabric, fabric.scenario.workload.seed)
    routing = replace(fabric.scenario.routing, mode="ecmp")
    routed = Router(fabric).route(src, dst, routing, connection_bytes=2e6)
    network = scenario_network(fabric, routed, catalog)
    config = scenario_transport_config(fabric.scenario, catalog)
    found = find_copies(network, build_tables(network, config)[0])
    assert found is not None and found.network.classes.n_classes < network.classes.n_classes
    assert_same_run(network, config, horizon_s=30e-6)
