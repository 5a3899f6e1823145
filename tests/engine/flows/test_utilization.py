"""The link-utilization histogram per tier pair that the Links tab draws, and the ranking
of the hottest links."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.evaluation import permutation_test
from engine.flows.utilization import (
    split_tier_label,
    tier_label,
    tier_pair_label,
    top_indices,
    utilization_histogram,
)
from engine.topology import generators as gen
from engine.topology.expand import NVLINK_BUNDLE, expand


@pytest.fixture(scope="module")
def single_switch(catalog):
    """Eight DGX H100 on one non-blocking switch."""
    return expand(gen.single_switch(64, "dgx-h100", "qm9700", catalog=catalog), catalog)


@pytest.fixture(scope="module")
def oversubscribed(catalog):
    """A 2:1 oversubscribed leaf-spine, where the permutation leaves links half used."""
    scenario = gen.leaf_spine(320, "dgx-h100", "qm9700", oversubscription=2.0, catalog=catalog)
    return expand(scenario, catalog)


def reference_histogram(fabric, util, bins):
    """Link by link: its tier label and the bin its clipped utilization falls in."""
    counts: dict[str, list[int]] = {}
    for link in range(fabric.n_links):
        label = tier_label(fabric, int(fabric.link_bundle[link]), bool(fabric.link_upward[link]))
        u = min(max(float(util[link]), 0.0), 1.0)
        index = min(math.floor(u * bins), bins - 1)
        counts.setdefault(label, [0] * bins)[index] += 1
    return counts


def test_counts_add_up_to_the_links_of_each_tier(oversubscribed):
    result = permutation_test(oversubscribed)
    histogram = result["utilization_histogram"]
    per_tier = result["link_utilization"]
    assert set(histogram["tiers"]) == set(per_tier)
    for label, counts in histogram["tiers"].items():
        assert sum(counts) == per_tier[label]["links"], label
    assert sum(sum(c) for c in histogram["tiers"].values()) == oversubscribed.n_links
    edges = histogram["edges"]
    assert edges[0] == 0.0 and edges[-1] == 1.0
    assert all(len(c) == len(edges) - 1 for c in histogram["tiers"].values())


def test_oversubscribed_links_are_spread_over_several_bins(oversubscribed):
    histogram = permutation_test(oversubscribed)["utilization_histogram"]
    up = histogram["tiers"]["leaf->spine"]
    assert sum(1 for c in up if c > 0) >= 2  # ECMP collisions: some links full, some not


def test_permutation_on_one_switch_fills_every_nic_link_and_no_nvlink(single_switch):
    # Closed form: each GPU sends one flow and receives one through a non-blocking switch, so
    # every flow gets line rate: every NIC link (either way) is full, NVLink carries nothing.
    fabric = single_switch
    tiers = permutation_test(fabric)["utilization_histogram"]["tiers"]
    nic_links = fabric.n_gpus  # one rail NIC per GPU
    for label in ("server->leaf", "leaf->server"):
        assert tiers[label][-1] == nic_links
        assert sum(tiers[label][:-1]) == 0
    nvlink_links = int(np.count_nonzero(fabric.link_bundle == NVLINK_BUNDLE))
    assert tiers["nvlink"][0] == nvlink_links > 0
    assert sum(tiers["nvlink"][1:]) == 0


@pytest.mark.parametrize("bins", [1, 4, 10, 7])
def test_a_made_up_utilization_matches_the_link_by_link_reference(single_switch, bins):
    fabric = single_switch
    rng = np.random.default_rng(bins)
    util = rng.uniform(-0.05, 1.05, fabric.n_links)  # some just outside 0..1: clipped
    util[:5] = [0.0, 1.0, 0.5, 1.0 + 1e-12, 0.25]  # edges and rounding past full
    result = utilization_histogram(fabric, util, bins)
    assert result["tiers"] == reference_histogram(fabric, util, bins)
    assert result["edges"] == pytest.approx(list(np.linspace(0.0, 1.0, bins + 1)))


def test_full_and_idle_links_land_in_the_last_and_first_bins(single_switch):
    fabric = single_switch
    util = np.where(fabric.link_bundle == NVLINK_BUNDLE, 0.0, 1.0)
    tiers = utilization_histogram(fabric, util, 5)["tiers"]
    assert tiers["nvlink"] == [int(np.sum(fabric.link_bundle == NVLINK_BUNDLE)), 0, 0, 0, 0]
    assert tiers["server->leaf"][-1] == fabric.n_gpus


@pytest.mark.parametrize("bins", [0, -3, 2.5])
def test_a_histogram_without_bins_is_refused_with_a_message(single_switch, bins):
    with pytest.raises(ValueError, match="at least one bin"):
        utilization_histogram(single_switch, np.zeros(single_switch.n_links), bins)


def test_a_tier_label_splits_back_into_its_tiers(oversubscribed):
    labels = set(permutation_test(oversubscribed)["link_utilization"])
    assert {"server->leaf", "leaf->server", "leaf->spine", "spine->leaf"} <= labels
    for label in labels - {"nvlink"}:
        source, target = split_tier_label(label)
        assert tier_pair_label(source, target) == label
    assert split_tier_label("nvlink") is None
    assert tier_pair_label("leaf", "spine") == "leaf->spine"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=0, max_size=60),
    st.integers(min_value=0, max_value=70),
)
def test_top_indices_rank_by_value_then_index(values: list[float], count: int) -> None:
    """The top-k by partition equals a full sort by (value descending, index ascending),
    whatever the ties: the hottest links are the same on every machine."""
    expected = sorted(range(len(values)), key=lambda i: (-values[i], i))[:count]
    assert top_indices(np.array(values), count).tolist() == expected
