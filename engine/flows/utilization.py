"""Link utilization summarized for people: per tier pair, as a histogram, the hottest links.

Both the permutation probe and the collective timing report utilization this way, so it lives
below both of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from engine.topology.expand import NVLINK_BUNDLE, Fabric, describe_link


def summary_stats(values: np.ndarray) -> dict[str, float]:
    """Min, mean and max of `values` (zeros when empty), as plain floats for JSON."""
    if values.size == 0:
        return {"min": 0.0, "mean": 0.0, "max": 0.0}
    return {"min": float(values.min()), "mean": float(values.mean()), "max": float(values.max())}


HISTOGRAM_BINS = 10  # utilization bins of 10 % each
TIER_SEPARATOR = "->"


def tier_pair_label(source: str, target: str) -> str:
    """The label of the links from tier `source` to tier `target`, e.g. ``leaf->spine``."""
    return f"{source}{TIER_SEPARATOR}{target}"


def split_tier_label(label: str) -> tuple[str, str] | None:
    """The (source, target) tiers of a `tier_label`; ``None`` for one naming no tier pair
    (``nvlink``, the links inside a server)."""
    if TIER_SEPARATOR not in label:
        return None
    source, target = label.split(TIER_SEPARATOR, 1)
    return source, target


def tier_label(fabric: Fabric, bundle: int, upward: bool) -> str:
    """The tier pair a link belongs to, e.g. ``leaf->spine`` or ``nvlink``."""
    if bundle == NVLINK_BUNDLE:
        return "nvlink"
    b = fabric.scenario.bundles[bundle]
    ta, tb = fabric.scenario.group(b.a).tier, fabric.scenario.group(b.b).tier
    return tier_pair_label(ta, tb) if upward else tier_pair_label(tb, ta)


def tier_masks(fabric: Fabric) -> dict[str, np.ndarray]:
    """A boolean mask over the directed links for each tier pair (`tier_label`) that has any."""
    labels: dict[str, np.ndarray] = {}
    for b in range(-1, len(fabric.scenario.bundles)):
        for upward in (True, False):
            mask = (fabric.link_bundle == b) & (fabric.link_upward == upward)
            if np.any(mask):
                label = tier_label(fabric, b, upward)
                labels[label] = mask if label not in labels else labels[label] | mask
    return labels


def utilization_by_tier(fabric: Fabric, util: np.ndarray) -> dict[str, dict[str, float]]:
    """Min, mean and max utilization and idle share of the links of each tier pair."""
    result = {}
    for label, mask in tier_masks(fabric).items():
        u = util[mask]
        result[label] = {
            **summary_stats(u),
            "links": int(mask.sum()),
            "idle_fraction": float(np.mean(u <= 1e-12)),
        }
    return result


def utilization_histogram(
    fabric: Fabric, util: np.ndarray, bins: int = HISTOGRAM_BINS
) -> dict[str, Any]:
    """How many links of each tier pair fall in each utilization bin, for the results plot.

    ``edges`` are the `bins` + 1 bin edges, evenly over 0..1 (a fraction of capacity);
    ``tiers`` maps each tier pair (`tier_label`) to its link count per bin, so a tier's counts
    add up to its number of directed links. Bins are half-open ``[lo, hi)`` except the last,
    which holds full links (utilization 1). Utilization is rounded to nine decimals and
    clipped to 0..1 first, so a value a few ulps off an edge or just past 1 counts where it
    belongs.
    """
    if int(bins) != bins or bins < 1:
        raise ValueError(f"a utilization histogram needs at least one bin, not {bins!r}")
    edges = np.round(np.linspace(0.0, 1.0, int(bins) + 1), 12)  # 0.3, not 0.30000000000000004
    # Rounded to 1e-9 first: utilizations that are exact fractions (a link carrying k of n
    # equal flows) sit on bin edges, and the last bits of a division must not move them.
    clipped = np.clip(np.round(np.asarray(util, dtype=float), 9), 0.0, 1.0)
    tiers = {
        label: [int(c) for c in np.histogram(clipped[mask], bins=edges)[0]]
        for label, mask in tier_masks(fabric).items()
    }
    return {"edges": [float(e) for e in edges], "tiers": tiers}


def top_indices(values: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` largest `values`, largest first, ties by ascending index.

    One pass keeping the best `count` in order (`_top_k`). numpy's partition, used before,
    slows down more than tenfold on arrays of few distinct values, which is what link
    utilizations are (most links idle or at one share): 17 ms a call on the 16k preset, 4.4
    of the Training tab's 6.4 s latency curve (numpy 2.4, 2026-12-06)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if count <= 0 or values.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return _top_k(values, min(int(count), values.shape[0]))


@njit(cache=True, nogil=True)
def _top_k(values: np.ndarray, count: int) -> np.ndarray:
    """The indices of the `count` largest `values` (1 <= count <= len), largest first, ties
    by ascending index: a value displaces a kept one only when strictly larger, so among
    equals the one met first stays ahead."""
    best = np.empty(count, dtype=np.float64)
    index = np.empty(count, dtype=np.int64)
    kept = 0
    for i in range(values.shape[0]):
        v = values[i]
        if kept == count:
            if not v > best[count - 1]:
                continue
        else:
            kept += 1
        at = kept - 1
        while at > 0 and best[at - 1] < v:
            best[at] = best[at - 1]
            index[at] = index[at - 1]
            at -= 1
        best[at] = v
        index[at] = i
    return index[:kept]


def hottest_links(fabric: Fabric, util: np.ndarray, count: int = 10) -> list[dict[str, Any]]:
    """The busiest links: readable name, index, bundle id ("nvlink" inside servers), utilization.

    Equal utilizations rank by link index, so the list is the same on every machine (an
    unstable sort orders ties by whatever SIMD kernel the CPU picks)."""
    top = top_indices(util, count)

    def bundle_id(link: int) -> str:
        b = int(fabric.link_bundle[link])
        return "nvlink" if b == NVLINK_BUNDLE else fabric.scenario.bundles[b].id

    return [
        {
            "link": describe_link(fabric, int(i)),
            "index": int(i),
            "bundle": bundle_id(int(i)),
            "utilization": float(util[i]),
        }
        for i in top
        if util[i] > 0
    ]
