"""Classes from flows, path checks, headroom arithmetic, catalog defaults and the fabric
adapter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.flows.traffic import permutation
from engine.presets.scenarios import load_preset
from engine.routing.router import Router
from engine.topology.expand import expand
from engine.transport.defaults import dcqcn_params, switch_port_buffer_bytes, transport_config
from engine.transport.fabric import network_from_routes
from engine.transport.headroom import (
    credit_limited_rate_Bps,
    credit_round_trip_s,
    pfc_headroom_bytes,
    pfc_is_lossless,
    pfc_thresholds,
    response_bytes,
)
from engine.transport.network import group_into_classes
from engine.transport.tables import derive_links
from engine.transport.workloads import incast, switch_spec


def test_flows_on_the_same_path_with_the_same_bytes_share_a_class():
    ptr = np.array([0, 2, 4, 6, 8])
    links = np.array([0, 5, 1, 5, 0, 5, 0, 5])
    classes, of_flow = group_into_classes(ptr, links, np.array([10.0, 10.0, 10.0, 20.0]))
    assert classes.n_classes == 3
    assert of_flow.tolist() == [0, 1, 0, 2]
    assert classes.multiplicity.tolist() == [2.0, 1.0, 1.0]
    assert classes.bytes.tolist() == [20.0, 10.0, 20.0]
    assert classes.path(0).tolist() == [0, 5]


def test_a_link_cannot_be_both_a_nic_link_and_a_switch_hop(catalog):
    net = incast(2, switch_spec(catalog, "sn5600", 400), 1e6)
    bad_ptr = np.array([0, 2, 4])
    bad_links = np.array([0, 1, 2, 0])  # link 0 is the first hop of one class, the last of another
    classes, of_flow = group_into_classes(bad_ptr, bad_links, np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="first hop of one class and a later hop"):
        type(net)(net.links, classes, of_flow)


def test_pfc_headroom_is_cable_response_and_two_mtus(catalog):
    pfc = transport_config(catalog, "roce", "sn5600").pfc
    capacity, prop = np.array([50e9]), np.array([100 * 4.9e-9])
    headroom = pfc_headroom_bytes(capacity, prop, np.array([400.0]), 4096.0, pfc)
    # 2 x 490 ns x 50 GB/s + 905 quanta x 64 B + 2 x 4096 B
    assert headroom[0] == pytest.approx(2 * 490e-9 * 50e9 + 57920 + 8192)
    # A speed missing from the table keeps the response time of the nearest one.
    assert response_bytes(np.array([800.0, 350.0]), pfc).tolist() == [115840.0, 57920 * 350 / 400]


def test_pfc_thresholds_follow_the_catalog_rule_and_report_missing_headroom(catalog):
    pfc = transport_config(catalog, "roce", "sn5600").pfc
    buffer, headroom = np.array([1e6, 50e3]), np.array([80e3, 80e3])
    xoff, xon = pfc_thresholds(buffer, headroom, 4096.0, pfc)
    assert xoff.tolist() == [920e3, 4096.0]  # buffer - headroom, at least one MTU
    assert xon.tolist() == [920e3 - 3072, 4096.0 - 3072]
    assert pfc_is_lossless(buffer, xoff, headroom).tolist() == [True, False]


def test_credits_cap_a_link_at_buffer_over_round_trip():
    rtt = credit_round_trip_s(np.array([1e-6]), 0.5e-6)
    assert rtt[0] == pytest.approx(2.5e-6)
    assert credit_limited_rate_Bps(np.array([50e9]), np.array([100e3]), rtt)[0] == pytest.approx(
        40e9
    )
    assert credit_limited_rate_Bps(np.array([10e9]), np.array([100e3]), rtt)[0] == 10e9


def test_defaults_come_from_the_catalog(catalog):
    ib = transport_config(catalog, "infiniband", "qm9700")
    assert (ib.mechanisms.lossless, ib.mechanisms.dcqcn, ib.mechanisms.ib_cc) == (
        "credit",
        False,
        False,
    )
    roce = transport_config(catalog, "roce", "sn5600")
    assert (roce.mechanisms.lossless, roce.mechanisms.dcqcn) == ("pfc", True)
    assert (roce.ecn.kmin_bytes, roce.ecn.kmax_bytes, roce.ecn.pmax) == (150000.0, 1500000.0, 1.0)
    paper = dcqcn_params(catalog, "dcqcn-paper")
    assert paper.decrease_interval_s == pytest.approx(50e-6) and paper.alpha_gain == 1 / 256
    nvidia = dcqcn_params(catalog, "dcqcn-nvidia")
    assert nvidia.decrease_interval_s == pytest.approx(4e-6) and nvidia.byte_counter_bytes == 32767
    assert paper.clamp_target_always and not nvidia.clamp_target_always
    # Spectrum-4: 128 MB shared over 128 ports at 400G; Quantum-2: per port and VL.
    assert switch_port_buffer_bytes(catalog, "sn5600", 400) == pytest.approx(1e6)
    assert switch_port_buffer_bytes(catalog, "qm9700", 400) == 131072


def test_links_into_nics_need_no_headroom_and_are_lossless(catalog):
    config = transport_config(catalog, "roce", "sn5600")
    net = incast(3, switch_spec(catalog, "sn5600", 400), 1e6)
    derived = derive_links(net, config)
    into = net.links.into_switch
    assert derived.lossless.all()
    assert np.all(derived.headroom_bytes[~into] == 0) and np.all(derived.headroom_bytes[into] > 0)


@pytest.mark.parametrize(
    "preset,technology",
    [("dgx-h100-roce-spectrumx-1k", "roce"), ("dgx-h100-ib-ndr-1k", "infiniband")],
)
def test_a_routed_permutation_becomes_classes_over_the_cables_it_uses(catalog, preset, technology):
    scenario = load_preset(preset)
    fabric = expand(scenario, catalog)
    src, dst = permutation(fabric, seed=1)
    routed = Router(fabric).route(src, dst, scenario.routing, 2e6)
    net = network_from_routes(fabric, routed, catalog)
    links = net.links
    assert net.classes.n_classes == routed.n_flows  # a permutation has no shared whole path
    assert np.all(net.flow_class >= 0)
    assert np.all(links.capacity_Bps > 0) and np.all(links.propagation_s > 0)
    first = net.classes.links[net.classes.ptr[:-1]]
    assert not links.from_switch[first].any() and links.into_switch[first].all()
    last = net.classes.links[net.classes.ptr[1:] - 1]
    assert not links.into_switch[last].any() and np.all(np.isinf(links.buffer_bytes[last]))
    assert np.all(np.isfinite(links.buffer_bytes[links.into_switch]))
    has_ecn = links.ecn_pmax[links.from_switch] > 0
    assert has_ecn.all() if technology == "roce" else not has_ecn.any()


def _grouping_reference(ptr, links, sizes, start, fb):
    """Flow by flow: a dict of (path, bytes, start, delay) to class, in first-seen order."""
    index: dict[tuple, int] = {}
    of_flow, first = [], []
    for f in range(len(ptr) - 1):
        key = (tuple(links[ptr[f] : ptr[f + 1]]), sizes[f], start[f], fb[f])
        if key not in index:
            index[key] = len(first)
            first.append(f)
        of_flow.append(index[key])
    return of_flow, first


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 4), min_size=1, max_size=4),
            st.sampled_from([1.0, 2.0]),
            st.sampled_from([0.0, 1e-6]),
            st.sampled_from([0.0, 2e-6]),
        ),
        min_size=0,
        max_size=30,
    )
)
def test_grouping_matches_the_flow_by_flow_definition(flows) -> None:
    """Equal flows (path, bytes, start, feedback delay) share a class, classes numbered in
    the order of their first flow, as the plain loop over flows has it."""
    ptr = np.zeros(len(flows) + 1, dtype=np.int64)
    np.cumsum([len(f[0]) for f in flows], out=ptr[1:])
    links = np.array([x for f in flows for x in f[0]], dtype=np.int64)
    sizes, start, fb = (np.array([f[i] for f in flows], dtype=float) for i in (1, 2, 3))
    classes, of_flow = group_into_classes(ptr, links, sizes, start, fb)
    ref_of_flow, ref_first = _grouping_reference(ptr, links.tolist(), sizes, start, fb)
    assert of_flow.tolist() == ref_of_flow
    assert classes.n_classes == len(ref_first)
    for c, f in enumerate(ref_first):
        assert classes.path(c).tolist() == links[ptr[f] : ptr[f + 1]].tolist()
        assert classes.multiplicity[c] == ref_of_flow.count(c)
        assert classes.bytes[c] == sizes[f] * ref_of_flow.count(c)
