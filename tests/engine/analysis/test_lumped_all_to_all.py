"""An all-to-all run by kinds of flows and links (`engine.collectives.lumped_all_to_all`)
against the same all-to-all run flow by flow, and through the transport study."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.analysis import load_preset
from engine.analysis.results import TransportWorkload
from engine.analysis.transport_study import transport_study
from engine.catalog.devices import default_catalog
from engine.collectives.lumped_all_to_all import DRAWS, lumped_all_to_all
from engine.model.scenario import Failures, LinkFailure
from engine.routing.router import Router
from engine.topology import generators as gen
from engine.topology.expand import expand
from engine.topology.symmetry import fabric_colours
from engine.transport.from_scenario import scenario_network, scenario_transport_config
from engine.transport.simulate import simulate
from engine.transport.spray import bundle_sprayed


@pytest.fixture(scope="module")
def catalog():
    return default_catalog()


def tapered(catalog, gpus: int, technology: str):
    """A leaf-spine of `gpus` GPUs at 4:1 with every flow sprayed: the uplinks congest."""
    server, switch = ("dgx-h100", "qm9700") if technology == "ib" else ("hgx-h100", "sn5600")
    scenario = gen.leaf_spine(
        gpus, server, switch, oversubscription=4.0, speed_gbps=400, catalog=catalog
    )
    scenario.routing = replace(scenario.routing, mode="spray")
    return scenario, expand(scenario, catalog)


def flow_by_flow(fabric, catalog, nbytes: float):
    """The all-to-all's network with every GPU pair on different servers routed."""
    n = fabric.n_gpus
    src, dst = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    routed = Router(fabric).route(
        src[cross],
        dst[cross],
        fabric.scenario.routing,
        connection_bytes=np.full(cross.sum(), nbytes),
    )
    bundled = bundle_sprayed(routed, fabric, fabric.link_capacity)
    return scenario_network(fabric, bundled.routed, catalog, ports=bundled.ports), bundled


def mean_finish(result) -> float:
    return float(np.average(result.finish_s, weights=result.network.classes.multiplicity))


def test_by_kinds_is_flow_by_flow_on_infiniband(catalog):
    """Credits and no draws: the kinds' run is the flow-by-flow run, link kind by link kind."""
    scenario, fabric = tapered(catalog, 64, "ib")
    lumped = lumped_all_to_all(fabric, 1e6, catalog)
    assert not isinstance(lumped, str)
    config = scenario_transport_config(scenario, catalog)
    by_kind = simulate(lumped.lumped.network, config)
    network, bundled = flow_by_flow(fabric, catalog, 1e6)
    whole = simulate(network, config)
    assert lumped.pairs == network.classes.multiplicity.sum()
    np.testing.assert_allclose(by_kind.finish_s.max(), whole.finish_s.max(), rtol=1e-9)
    np.testing.assert_allclose(mean_finish(by_kind), mean_finish(whole), rtol=1e-9)
    colour = fabric_colours(fabric).link
    mask = fabric.network_link_mask()
    used = np.unique(bundled.routed.entry_link[mask[bundled.routed.entry_link]])
    ports = np.ones(used.size) if network.links.ports is None else network.links.ports
    per_port = whole.max_queue_bytes / ports
    assert per_port.max() > 100e3  # the taper congests the uplinks
    for j, kind in enumerate(lumped.lumped.kind_of_link.tolist()):
        mine = by_kind.max_queue_bytes[j] / lumped.lumped.network.links.ports[j]
        np.testing.assert_allclose(mine, per_port[colour[used] == kind].max(), rtol=1e-9)


def weighted_quantile(result, q: float) -> float:
    """The finish time by which a share `q` of the flows (not classes) have finished."""
    order = np.argsort(result.finish_s)
    flows = np.cumsum(result.network.classes.multiplicity[order])
    return float(result.finish_s[order][np.searchsorted(flows, q * flows[-1])])


def test_by_kinds_against_flow_by_flow_on_roce(catalog):
    """RoCE with PFC, ECN and DCQCN on a 128-GPU leaf-spine at 4:1, 100 KB per pair. DCQCN as
    its published mean field draws nothing: the same run. Its reaction point draws each
    class's cuts: the kinds' `DRAWS` classes each against 15,360 classes each drawing give
    the mean flow finish and the 99th percentile within 10% (the tolerance set before the
    first run). The last finish is not compared: it is one flow's luck. Flow by flow it is
    0.86 ms, one of 15,360 (the 99th percentile 0.604); by kinds 0.61, 0.61, 0.85 and
    0.60 ms at 16, 64, 256 and 1,024 draws, while the mean stays within 2%."""
    scenario, fabric = tapered(catalog, 128, "roce")
    config = scenario_transport_config(scenario, catalog)
    assert config.mechanisms.dcqcn and not config.dcqcn.published_mean_field
    network, _ = flow_by_flow(fabric, catalog, 100e3)
    # The same FIFO bins in both (2 us: the flow-by-flow network's 35,000 queued entries
    # would widen its bins to that under the rings' memory bound, engine.transport.fifo_shape).
    mean_field = replace(
        config, dcqcn=replace(config.dcqcn, published_mean_field=True), fifo_bin_s=2e-6
    )
    one = lumped_all_to_all(fabric, 100e3, catalog)
    a, b = simulate(one.lumped.network, mean_field), simulate(network, mean_field)
    np.testing.assert_allclose(a.finish_s.max(), b.finish_s.max(), rtol=1e-9)
    np.testing.assert_allclose(mean_finish(a), mean_finish(b), rtol=1e-9)
    drawn = lumped_all_to_all(fabric, 100e3, catalog, DRAWS)
    a, b = simulate(drawn.lumped.network, config), simulate(network, config)
    assert b.ecn_mark_fraction.max() > 0.05  # DCQCN has something to react to
    assert mean_finish(a) == pytest.approx(mean_finish(b), rel=0.10)
    assert weighted_quantile(a, 0.99) == pytest.approx(weighted_quantile(b, 0.99), rel=0.10)


def test_a_failed_cable_makes_more_kinds_not_a_wrong_answer(catalog):
    """One uplink cable down: its leaf's flows spray over one link fewer. The colours split
    (more kinds) and the run by kinds is still the flow-by-flow run."""
    scenario, _ = tapered(catalog, 64, "ib")
    regular = lumped_all_to_all(expand(scenario, catalog), 1e6, catalog)
    scenario.failures = Failures(links=[LinkFailure(scenario.bundles[-1].id, 1)])
    fabric = expand(scenario, catalog)
    lumped = lumped_all_to_all(fabric, 1e6, catalog)
    assert not isinstance(lumped, str), lumped
    assert lumped.lumped.network.links.n_links > regular.lumped.network.links.n_links
    config = scenario_transport_config(scenario, catalog)
    by_kind = simulate(lumped.lumped.network, config)
    whole = simulate(flow_by_flow(fabric, catalog, 1e6)[0], config)
    np.testing.assert_allclose(by_kind.finish_s.max(), whole.finish_s.max(), rtol=1e-9)
    np.testing.assert_allclose(mean_finish(by_kind), mean_finish(whole), rtol=1e-9)


def test_hashing_runs_by_kinds_only_where_it_spreads_evenly(catalog):
    """Per-flow ECMP: refused where it hashes too few flows onto each link for them to
    spread evenly (64 GPUs: under a thousand), and where switches hash alike (polarization);
    on the 16k preset (some 15,000 flows per uplink) it runs at its balanced limit, said."""
    scenario, _ = tapered(catalog, 64, "ib")
    ecmp = replace(scenario, routing=replace(scenario.routing, mode="ecmp"))
    assert "flows onto each link" in lumped_all_to_all(expand(ecmp, catalog), 1e6, catalog)
    big = load_preset("h100-ib-ndr-16k")
    big.routing = replace(big.routing, mode="ecmp", hash_scope="tier")
    assert "polarization" in lumped_all_to_all(expand(big, catalog), 1e6, catalog)
    big.routing = replace(big.routing, hash_scope="switch")
    lumped = lumped_all_to_all(expand(big, catalog), 1e6, catalog)
    assert not isinstance(lumped, str), lumped
    assert any("per-flow ECMP taken at its balanced limit" in n for n in lumped.notes)


def test_the_16k_all_to_all_through_the_study(catalog):
    """Every GPU of the 16,384-GPU InfiniBand preset, 64 KiB per pair: 268 million
    connections in three kinds; a non-blocking fabric with every flow spread runs at its
    ideal."""
    study = transport_study(
        load_preset("h100-ib-ndr-16k"),
        TransportWorkload(kind="all-to-all", bytes_per_flow=65536.0),
        catalog,
    )
    assert study.flows == 16384**2 - 2048 * 64
    assert study.classes == 3
    assert study.finished and study.efficiency == pytest.approx(1.0, abs=1e-3)
    assert any("kinds of flows" in note for note in study.notes)
    assert any("adaptive routing taken at its balanced limit" in n for n in study.notes)
    assert "(1 of 16,384 links alike)" in study.hottest[0].link


def test_a_part_of_a_large_fabric_runs_by_its_own_kinds(catalog):
    """The first 1,024 GPUs of the 16k preset (a million pairs): their kinds, as seen by
    them, with the rest of the fabric around them."""
    study = transport_study(
        load_preset("h100-ib-ndr-16k"),
        TransportWorkload(kind="all-to-all", ranks=1024, bytes_per_flow=65536.0),
        catalog,
    )
    assert study.flows == 1024**2 - 128 * 64 and study.finished
    assert any("all-to-all over 1,024 GPUs" in note for note in study.notes)


@pytest.mark.parametrize(
    "ranks",
    [np.arange(40), np.arange(3, 61, 2), np.array([0, 1, 2, 9, 17, 18, 33, 40, 41, 42, 50, 63])],
    ids=["first-40", "every-other", "scattered"],
)
def test_a_part_by_kinds_is_the_part_pair_by_pair(catalog, ranks):
    """Parts of the 64-GPU leaf-spine at 4:1 on InfiniBand, aligned with nothing: the
    colours set the part's GPUs apart, more kinds come out, and the run by kinds is the run
    pair by pair (to 1e-9)."""
    scenario, fabric = tapered(catalog, 64, "ib")
    lumped = lumped_all_to_all(fabric, 1e6, catalog, ranks=ranks)
    assert not isinstance(lumped, str), lumped
    src, dst = np.repeat(ranks, ranks.size), np.tile(ranks, ranks.size)
    cross = fabric.gpu_server[src] != fabric.gpu_server[dst]
    routed = Router(fabric).route(
        src[cross], dst[cross], scenario.routing, connection_bytes=np.full(cross.sum(), 1e6)
    )
    bundled = bundle_sprayed(routed, fabric, fabric.link_capacity)
    whole = scenario_network(fabric, bundled.routed, catalog, ports=bundled.ports)
    config = scenario_transport_config(scenario, catalog)
    a, b = simulate(lumped.lumped.network, config), simulate(whole, config)
    assert lumped.pairs == int(cross.sum())
    np.testing.assert_allclose(a.finish_s.max(), b.finish_s.max(), rtol=1e-9)
    np.testing.assert_allclose(mean_finish(a), mean_finish(b), rtol=1e-9)
