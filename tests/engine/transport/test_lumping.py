"""Links and classes of one kind run as one (`engine.transport.lumping`): the same model.

Copies of a network side by side are the plainest case of kinds: link i of every copy is
one kind, class c of every copy another. Lumped, they must run as one copy does, flow for
flow and port for port. With two or four copies the scaling is by a power of two, which
floating point carries exactly, so the runs agree bit for bit, whatever the mechanisms.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.transport.defaults import transport_config
from engine.transport.lumping import lump
from engine.transport.network import TransportNetwork
from engine.transport.simulate import simulate
from engine.transport.workloads import incast, switch_spec
from tests.engine.transport.networks import configs, small_networks
from tests.engine.transport.test_copies import joined


def lumped_copies(network: TransportNetwork, k: int, draws: int = 1):
    """`k` copies of `network` side by side, lumped by each link's place in its copy."""
    whole = joined([network] * k)
    n = network.links.n_links
    kinds = np.tile(np.arange(n), k)
    ports = np.full(n, k)
    return lump(whole, kinds, ports, np.ones(whole.classes.n_classes), draws)


def assert_runs_alike(one, lumped_result, k: int) -> None:
    """Per flow and per port the lumped run is the single copy's."""
    per_flow = lambda r: r.delivered_bytes / r.network.classes.multiplicity  # noqa: E731
    assert np.array_equal(lumped_result.finish_s, one.finish_s, equal_nan=True)
    assert np.array_equal(per_flow(lumped_result), per_flow(one))
    assert np.array_equal(lumped_result.max_queue_bytes / k, one.max_queue_bytes)
    assert np.array_equal(lumped_result.dropped_bytes / k, one.dropped_bytes)
    assert np.array_equal(lumped_result.pause_fraction, one.pause_fraction)
    assert np.array_equal(lumped_result.ecn_mark_fraction, one.ecn_mark_fraction)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_networks(max_bytes=100e3), configs(), st.sampled_from([2, 4]))
def test_copies_lumped_run_as_one_copy(network, config, k):
    network = replace(network, gates=None)
    lumped = lumped_copies(network, k)
    assert lumped.network.links.n_links == network.links.n_links
    assert lumped.network.classes.n_classes == network.classes.n_classes
    assert np.array_equal(lumped.network.classes.multiplicity, network.classes.multiplicity * k)
    assert_runs_alike(simulate(network, config), simulate(lumped.network, config), k)


def test_a_lumped_nic_link_gives_each_flow_one_nic():
    """Four 2:1 incasts lumped: the senders' links are one link of 4 ports, but a flow still
    sends at one NIC's line rate, not four."""
    catalog_config = transport_config(_catalog(), "infiniband", "qm9700")
    one = incast(2, switch_spec(_catalog(), "qm9700", 400), 2e6)
    lumped = lumped_copies(one, 4)
    links = lumped.network.links
    assert np.all(links.ports == 4)
    np.testing.assert_array_equal(links.flow_capacity_Bps(), one.links.capacity_Bps)
    assert_runs_alike(simulate(one, catalog_config), simulate(lumped.network, catalog_config), 4)


def test_draws_split_a_kind_into_equal_shares():
    """Without anything drawn (InfiniBand credits), a kind run as 4 classes of a quarter
    each runs as the kind in one class does (to rounding: four quarters of a queue add up
    to it within the last bits)."""
    config = transport_config(_catalog(), "infiniband", "qm9700")
    one = incast(4, switch_spec(_catalog(), "qm9700", 400), 1e6)
    single = lumped_copies(one, 2)
    drawn = lumped_copies(one, 2, draws=4)
    cl = drawn.network.classes
    assert cl.n_classes == 4 * single.network.classes.n_classes
    assert np.array_equal(cl.multiplicity, np.repeat(single.network.classes.multiplicity / 4, 4))
    a, b = simulate(single.network, config), simulate(drawn.network, config)
    np.testing.assert_allclose(b.finish_s, np.repeat(a.finish_s, 4), rtol=1e-12)
    np.testing.assert_allclose(b.max_queue_bytes, a.max_queue_bytes, rtol=1e-12)


def test_draws_part_a_kind_under_dcqcns_reaction_point():
    """Under DCQCN's reaction point the classes of a kind draw their cuts apart: a
    synchronised 8:1 incast lumped in 8 draws does not finish all its flows at once."""
    catalog = _catalog()
    config = transport_config(catalog, "roce", "sn5600")
    assert config.mechanisms.dcqcn and not config.dcqcn.published_mean_field
    spec = switch_spec(catalog, "sn5600", 400)
    one = incast(8, spec, 4e6)
    assert one.links.n_links == 9 and one.classes.n_classes == 8
    senders = one.classes.links[one.classes.ptr[:-1]]
    kinds = np.ones(one.links.n_links, dtype=np.int64)
    kinds[senders] = 0  # every sender's link one kind, the receiver's the other
    ports = np.array([8, 1])
    lumped = lump(one, kinds, ports, np.ones(one.classes.n_classes), draws=8)
    assert lumped.network.classes.n_classes == 8
    finish = simulate(lumped.network, config).finish_s
    assert np.all(np.isfinite(finish))
    assert np.ptp(finish) > 0.02 * finish.max()


def test_links_of_a_kind_must_be_alike():
    one = incast(2, switch_spec(_catalog(), "qm9700", 400), 1e6)
    two = joined([one, one])
    capacity = two.links.capacity_Bps.copy()
    capacity[one.links.n_links] /= 2  # the second copy's first link
    different = replace(two, links=replace(two.links, capacity_Bps=capacity))
    kinds = np.tile(np.arange(one.links.n_links), 2)
    with pytest.raises(ValueError, match="differ in capacity_Bps per port"):
        lump(different, kinds, np.full(3, 2), np.ones(two.classes.n_classes))
    with pytest.raises(ValueError, match="draws must be at least 1"):
        lump(two, kinds, np.full(3, 2), np.ones(two.classes.n_classes), draws=0)


def _catalog():
    from engine.catalog.devices import default_catalog

    return default_catalog()
