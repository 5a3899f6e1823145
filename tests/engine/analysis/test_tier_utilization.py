"""Link utilization per tier as the canvas colours it: folded directions, per tier, per bundle."""

from __future__ import annotations

import pytest

from engine.analysis.evaluation import evaluate
from engine.analysis.results import TierUtilization
from engine.analysis.tier_utilization import bundle_tier_labels, tier_peak, tier_utilization
from engine.model.scenario import LinkBundle
from engine.presets.scenarios import DEFAULT_PRESET, load_preset


def _tier(mean: float) -> TierUtilization:
    return TierUtilization(min=0.0, mean=mean, max=1.0, links=8, idle_fraction=0.0)


STATS = {
    "server->leaf": _tier(0.2),
    "leaf->server": _tier(0.5),
    "leaf->spine": _tier(0.7),
    "nvlink": _tier(0.9),  # inside the servers: no tier pair, not on the canvas
}


def test_each_tier_pair_gets_its_busier_direction():
    assert tier_utilization(STATS) == {
        "server->leaf": 0.5,
        "leaf->server": 0.5,
        "leaf->spine": 0.7,  # no spine->leaf reported: the one direction counts
    }


def test_no_report_gives_no_figures():
    assert tier_utilization(None) == {}
    assert tier_utilization({}) == {}
    assert tier_peak({}, "leaf") is None


def test_a_tier_gets_the_busiest_pair_touching_it():
    folded = tier_utilization(STATS)
    assert tier_peak(folded, "leaf") == 0.7
    assert tier_peak(folded, "spine") == 0.7
    assert tier_peak(folded, "server") == 0.5
    assert tier_peak(folded, "core") is None


def test_bundles_are_labelled_as_the_engine_labels_their_links(catalog):
    scenario = load_preset(DEFAULT_PRESET)
    labels = bundle_tier_labels(scenario)
    assert labels == {"servers-leaf": "server->leaf", "leaf-spine": "leaf->spine"}
    reported = evaluate(scenario, catalog, parts=("permutation",)).permutation.link_utilization
    folded = tier_utilization(reported)
    for label in labels.values():
        assert label in reported
        source, target = label.split("->")
        reverse = reported[f"{target}->{source}"].mean
        assert folded[label] == pytest.approx(max(reported[label].mean, reverse))


def test_a_bundle_to_a_missing_group_gets_no_label():
    scenario = load_preset(DEFAULT_PRESET)
    scenario.bundles.append(LinkBundle(id="dangling", a="leaf", b="nowhere", pattern="full"))
    assert "dangling" not in bundle_tier_labels(scenario)
