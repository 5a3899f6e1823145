"""Link errors: the post-FEC loss of an RS code in closed form, and what the loss costs a
training step through the engine's own loss recovery (engine.analysis.link_errors)."""

from __future__ import annotations

import itertools
import math

import pytest

from engine.analysis.link_errors import _step_s, link_errors, with_fec_latency
from engine.analysis.probes import training_run
from engine.catalog.devices import default_catalog
from engine.model.errors import ScenarioError
from engine.presets.scenarios import load_preset
from engine.reliability.link_errors import (
    FecCode,
    codeword_loss_probability,
    combined_loss,
    expected_losses,
    link_profile,
    packet_loss_per_link,
)

TINY = FecCode("RS(3,1)", symbols=3, data_symbols=1, symbol_bits=1, correctable_symbols=1)
KP4 = FecCode("RS(544,514)", 544, 514, 10, 15)


def test_codeword_loss_is_the_binomial_tail_in_closed_form():
    # 3 one-bit symbols, one corrected: lost when 2 or 3 are wrong.
    for b in (1e-6, 1e-3, 0.1, 0.4):
        assert codeword_loss_probability(b, TINY) == pytest.approx(
            3 * b**2 * (1 - b) + b**3, rel=1e-12
        )


def test_kp4_tail_matches_a_direct_sum():
    b = 1e-3
    q = 1 - (1 - b) ** 10
    direct = sum(math.comb(544, k) * q**k * (1 - q) ** (544 - k) for k in range(16, 545))
    assert codeword_loss_probability(b, KP4) == pytest.approx(direct, rel=1e-9)


def test_zero_ber_loses_nothing_and_loss_grows_with_ber():
    assert codeword_loss_probability(0.0, KP4) == 0.0
    assert packet_loss_per_link(0.0, 4178, KP4) == 0.0
    bers = [1e-5, 1e-4, 2.4e-4, 5e-4, 1e-3, 2e-3]
    losses = [packet_loss_per_link(b, 4178, KP4) for b in bers]
    assert all(a < b for a, b in itertools.pairwise(losses))
    # A packet of k codewords is lost when any one is: 1 - (1 - p)^k, k = ceil(bits / 5140).
    p_cw = codeword_loss_probability(1e-3, KP4)
    assert packet_loss_per_link(1e-3, 4178, KP4) == pytest.approx(1 - (1 - p_cw) ** 7)
    with pytest.raises(ValueError):
        codeword_loss_probability(1.5, KP4)


def test_losses_grow_with_links_crossed():
    p = 1e-4
    per = [expected_losses(1e6, links, p) for links in (1, 2, 4, 6)]
    assert all(a < b for a, b in itertools.pairwise(per))
    assert per[2] == pytest.approx(1e6 * (1 - (1 - p) ** 4))
    assert expected_losses(1e6, 4, 0.0) == 0.0
    assert combined_loss(0.01, 0.0) == 0.01
    assert combined_loss(0.01, 0.02) == pytest.approx(1 - 0.99 * 0.98)


def test_catalog_profile_per_technology():
    cat = default_catalog()
    ib, roce = link_profile(cat, "infiniband"), link_profile(cat, "roce")
    assert ib.link_retry and not roce.link_retry
    assert ib.code == roce.code == KP4
    assert ib.pre_fec_ber_limit == pytest.approx(2.4e-4)


@pytest.fixture(scope="module")
def roce():
    return load_preset("hgx-h100-roce-ecmp-1k")


def test_zero_ber_gives_exactly_the_old_step(roce):
    cat = default_catalog()
    old = training_run(roce, cat).step_s
    result = link_errors(roce, cat, 0.0)
    assert result.base_step_s == old
    assert result.packet_loss_per_link == 0.0 and result.expected_losses_per_step == 0.0
    assert all(c.step_s == old and c.cost_s == 0.0 for c in result.costs)
    # Through the engine's lossy path with nothing lost: the same step, bit for bit.
    for recovery in ("go-back-n", "selective-repeat", "link-retransmit"):
        assert _step_s(roce, cat, 0.0, recovery) == old


def test_cost_grows_with_ber_and_link_retry_costs_less_than_go_back_n(roce):
    cat = default_catalog()
    low, high = link_errors(roce, cat, 5e-4), link_errors(roce, cat, 1e-3)
    assert low.recovery == "go-back-n" and not low.link_retry  # Ethernet: no link retry
    assert 0 < low.cost_s < high.cost_s
    assert low.expected_losses_per_step < high.expected_losses_per_step
    costs = {c.recovery: c.cost_s for c in high.costs}
    assert costs["link-retransmit"] < costs["selective-repeat"] < costs["go-back-n"]
    assert not high.within_limit and low.fec_path_latency_ns == 4 * low.fec_latency_ns


def test_infiniband_recovers_at_the_link():
    result = link_errors(load_preset("dgx-h100-ib-ndr-1k"), default_catalog(), 1e-3)
    assert result.link_retry and result.recovery == "link-retransmit"
    assert result.costs[0].recovery == "link-retransmit"


def test_bad_ber_names_the_field(roce):
    with pytest.raises(ScenarioError) as err:
        link_errors(roce, default_catalog(), 1.0)
    assert "pre_fec_ber" in str(err.value.problems[0])


def test_fec_latency_adds_exactly_one_decode_per_link_of_the_path(roce):
    cat = default_catalog()
    result = link_errors(roce, cat, 0.0)
    assert result.links_per_path == 4  # NIC-leaf-spine-leaf-NIC
    assert result.fec_path_latency_added_s == pytest.approx(4 * 100e-9, rel=1e-9)
    assert result.fec_latency_cost_s > 0
    # where the scenario sets the latencies fabric-wide, those carry it
    roce.fabric.switch_latency_ns, roce.fabric.nic_latency_ns = 500.0, 1000.0
    try:
        shifted = with_fec_latency(roce, cat, 100.0)
        assert shifted.fabric.switch_latency_ns == 600.0
        assert shifted.fabric.nic_latency_ns == 1050.0
        again = link_errors(roce, cat, 0.0)
        assert again.fec_path_latency_added_s == pytest.approx(4 * 100e-9, rel=1e-9)
    finally:
        roce.fabric.switch_latency_ns = roce.fabric.nic_latency_ns = None
