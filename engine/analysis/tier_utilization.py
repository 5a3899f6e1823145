"""Link utilization per tier, as the fabric canvas colours it: one figure per edge and per node.

The permutation test reports the mean utilization of each directed tier pair
(``leaf->spine`` and ``spine->leaf``, `engine.flows.utilization.tier_label`). The canvas draws
one undirected edge per bundle and one node per group, so it needs the busier direction of
each tier pair, the busiest pair touching each tier, and which tier pair each bundle joins.
Those three are computed here, so the front end only looks the figures up.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.analysis.results import TierUtilization
from engine.flows.utilization import split_tier_label, tier_pair_label
from engine.model.scenario import Scenario


def tier_utilization(link_utilization: Mapping[str, TierUtilization] | None) -> dict[str, float]:
    """Mean utilization per tier label, each the higher of its two directions.

    `link_utilization` is a result's ``permutation.link_utilization`` (label -> its
    `TierUtilization`). Both ``leaf->spine`` and ``spine->leaf`` map to the same folded
    figure; labels naming no tier pair (``nvlink``) are left out.
    """
    stats_by_label = link_utilization or {}
    out: dict[str, float] = {}
    for label, stats in stats_by_label.items():
        pair = split_tier_label(label)
        if pair is None:
            continue
        source, target = pair
        reverse = stats_by_label.get(tier_pair_label(target, source))
        out[label] = max(float(stats.mean), float(reverse.mean) if reverse else 0.0)
    return out


def tier_peak(utilization: Mapping[str, float], tier: str) -> float | None:
    """The highest of the `tier_utilization` figures whose tier pair touches `tier`.

    ``None`` when no tier pair touches it (a tier without links, or no report yet).
    """
    values = [
        u
        for label, u in utilization.items()
        if (pair := split_tier_label(label)) is not None and tier in pair
    ]
    return max(values) if values else None


def bundle_tier_labels(scenario: Scenario) -> dict[str, str]:
    """The tier label of each bundle (its ``a`` end's tier first, as the engine's upward
    direction), for every bundle whose two ends are groups of `scenario`."""
    tiers = {g.id: g.tier for g in scenario.groups}
    return {
        b.id: tier_pair_label(tiers[b.a], tiers[b.b])
        for b in scenario.bundles
        if b.a in tiers and b.b in tiers
    }
